// perfkit script report NAME [<script options>] [-- <report options>]: the
// report scripts perf runs through its Python scripting, written in C++ over
// the profile model. perf script's options come before "--", the report's
// after, as perf takes them.
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/profile_options.h"
#include "export/folded.h"

namespace perfkit::cli {

namespace {

// optparse's way of saying it: usage, then "NAME.py: error: WHAT", status 2.
int optparse_error(const char* script, const std::string& what) {
  fmt::print(stderr, "Usage: {}.py [options]\n\n{}.py: error: {}\n", script, script, what);
  return 2;
}

// stackcollapse.py's options. Returns 0 to go on, else the exit status.
int parse_stackcollapse(const std::vector<std::string>& args, exports::StackcollapseOptions& o) {
  for (const std::string& a : args) {
    if (a == "--include-tid")
      o.include_tid = true;
    else if (a == "--include-pid")
      o.include_pid = true;
    else if (a == "--no-comm")
      o.include_comm = false;
    else if (a == "--tidy-java")
      o.tidy_java = true;
    else if (a == "--kernel")
      o.annotate_kernel = true;
    else if (a.starts_with("-"))
      return optparse_error("stackcollapse", "no such option: " + a);
    else
      return optparse_error("stackcollapse", "unexpected command line argument");
  }
  if (o.include_tid && !o.include_comm)
    return optparse_error("stackcollapse", "requesting tid but not comm is invalid");
  if (o.include_pid && !o.include_comm)
    return optparse_error("stackcollapse", "requesting pid but not comm is invalid");
  return 0;
}

}  // namespace

int cmd_script_report(int argc, char** argv) {
  // argv: "report", NAME, perf script's options, "--", the script's.
  if (argc < 2 || std::string_view(argv[1]) != "stackcollapse") {
    fmt::print(stderr, "Please specify a valid report script (perfkit has: stackcollapse)\n");
    return 255;
  }
  std::vector<char*> own{argv[1]};
  std::vector<std::string> script_args;
  int i = 2;
  for (; i < argc && std::string_view(argv[i]) != "--"; ++i) own.push_back(argv[i]);
  for (++i; i < argc; ++i) script_args.emplace_back(argv[i]);

  exports::StackcollapseOptions so;
  if (int st = parse_stackcollapse(script_args, so)) return st;
  CLI::App app(
      "Fold every sample's call chain, as 'perf script report stackcollapse' does.\n\n"
      " usage: perfkit script report stackcollapse [<options>] [-- <stackcollapse options>]\n"
      " stackcollapse options: --include-tid --include-pid --no-comm --tidy-java --kernel",
      "script report stackcollapse");
  ProfileArgs a;
  add_profile_options(app, a);
  int code = 0;
  if (!parse_options(app, static_cast<int>(own.size()), own.data(), code)) return code;
  auto p = read_profile(a);
  if (!p) return fail("script", p.error());
  FdWriter out = FdWriter::stdout_writer(1 << 20);
  if (auto st = exports::write_stackcollapse(*p, so, out); !st) return fail("script", st.error());
  return 0;
}

}  // namespace perfkit::cli
