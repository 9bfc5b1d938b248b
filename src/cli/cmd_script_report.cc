// perfkit script report NAME [<script options>] [-- <report options>]: the
// report scripts perf runs through its Python scripting, written in C++ over
// the profile model. perf script's options come before "--", the report's
// after, as perf takes them.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/profile_options.h"
#include "export/flame_tree.h"
#include "export/flamegraph.h"
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

// flamegraph.py's options (argparse), taken from anywhere in the arguments;
// the others are left for perf script's own parser.
struct FlamegraphArgs {
  std::string format = "html", output, colorscheme = "blue-green", template_path;
};

// argparse's way of saying it: usage, then "flamegraph.py: error: WHAT", 2.
int argparse_error(const std::string& what) {
  fmt::print(stderr,
             "usage: flamegraph.py [-h] [-f {{json,html}}] [-o OUTPUT] [--template TEMPLATE]\n"
             "                     [--colorscheme {{blue-green,orange}}]\n"
             "flamegraph.py: error: {}\n",
             what);
  return 2;
}

// Takes flamegraph.py's options out of `args`. Returns 0, or the exit status.
int parse_flamegraph(std::vector<std::string>& args, FlamegraphArgs& f) {
  struct Opt {
    const char *brief, *name, *metavar;
    std::string* value;
    std::vector<std::string> choices;
  };
  const Opt opts[] = {{"-f", "--format", "", &f.format, {"json", "html"}},
                      {"-o", "--output", "OUTPUT", &f.output, {}},
                      {"", "--template", "TEMPLATE", &f.template_path, {}},
                      {"", "--colorscheme", "", &f.colorscheme, {"blue-green", "orange"}}};
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const Opt* hit = nullptr;
    std::optional<std::string> value;
    for (const Opt& o : opts) {
      if (a == o.name || (*o.brief && a == o.brief)) {
        hit = &o;
      } else if (a.starts_with(std::string(o.name) + "=")) {
        hit = &o, value = a.substr(std::string(o.name).size() + 1);
      } else if (*o.brief && a.size() > 2 && a.starts_with(o.brief)) {
        hit = &o, value = a.substr(2);
      }
      if (hit) break;
    }
    if (!hit) {
      rest.push_back(a);
      continue;
    }
    const std::string label = *hit->brief ? std::string(hit->brief) + "/" + hit->name : hit->name;
    if (!value) {
      if (i + 1 >= args.size() || (args[i + 1].starts_with("-") && args[i + 1] != "-"))
        return argparse_error("argument " + label + ": expected one argument");
      value = args[++i];
    }
    if (!hit->choices.empty() &&
        std::find(hit->choices.begin(), hit->choices.end(), *value) == hit->choices.end()) {
      std::string list;
      for (const auto& c : hit->choices) list += (list.empty() ? "'" : ", '") + c + "'";
      return argparse_error("argument " + label + ": invalid choice: '" + *value +
                            "' (choose from " + list + ")");
    }
    *hit->value = *value;
  }
  args = std::move(rest);
  return 0;
}

// The recording's header as the page shows it beside the graph.
std::string header_context(const profile::Profile& p) {
  const profile::Summary& s = p.summary;
  std::string cmdline;
  for (const auto& a : s.cmdline) cmdline += (cmdline.empty() ? "" : " ") + a;
  std::string text;
  auto line = [&](const char* key, const std::string& v) {
    if (!v.empty()) text += fmt::format("# {} : {}\n", key, v);
  };
  line("hostname", s.hostname);
  line("os release", s.os_release);
  line("perf version", s.perf_version);
  line("arch", s.arch);
  line("cpudesc", s.cpu_desc);
  line("cmdline", cmdline);
  if (s.nr_cpus) line("nrcpus online", std::to_string(s.nr_cpus));
  for (const auto& e : p.events)
    text += fmt::format("# event : {} ({} samples)\n", p.strings.at(e.name), e.samples);
  if (s.lost_samples) text += fmt::format("# lost samples : {}\n", s.lost_samples);
  return text;
}

// perf script's options of a report script (argv[0]: the script's name)
// parsed and the recording read into `p`. Returns the exit status when the
// command ends here (help, a bad option, an unreadable recording), else none.
std::optional<int> read_script_profile(const std::string& help, const std::string& name,
                                       std::vector<char*>& argv,
                                       std::optional<profile::Profile>& p) {
  CLI::App app(help, name);
  ProfileArgs a;
  add_profile_options(app, a);
  int code = 0;
  if (!parse_options(app, static_cast<int>(argv.size()), argv.data(), code)) return code;
  auto read = read_profile(a);
  if (!read) return fail("script", read.error());
  p = std::move(*read);
  return std::nullopt;
}

int run_flamegraph(std::vector<std::string> args) {
  if (std::find(args.begin(), args.end(), "-h") != args.end() ||
      std::find(args.begin(), args.end(), "--help") != args.end()) {
    fmt::print(
        "usage: flamegraph.py [-h] [-f {{json,html}}] [-o OUTPUT] [--template TEMPLATE]\n"
        "                     [--colorscheme {{blue-green,orange}}]\n\n"
        "Create flame graphs.\n\n"
        "options:\n"
        "  -h, --help            show this help message and exit\n"
        "  -f {{json,html}}, --format {{json,html}}\n"
        "                        output file format\n"
        "  -o OUTPUT, --output OUTPUT\n"
        "                        output file name\n"
        "  --template TEMPLATE   path to flame graph HTML template (perfkit's page\n"
        "                        embeds its own; ignored)\n"
        "  --colorscheme {{blue-green,orange}}\n"
        "                        flame graph color scheme\n");
    return 0;
  }
  FlamegraphArgs f;
  std::erase(args, "--");  // perfkit also takes them after "--"
  if (int st = parse_flamegraph(args, f)) return st;
  std::vector<char*> own{const_cast<char*>("flamegraph")};
  for (auto& a : args) own.push_back(a.data());
  std::optional<profile::Profile> p;
  if (auto st = read_script_profile(
          "Create flame graphs, as 'perf script report flamegraph' does.\n\n"
          " usage: perfkit script report flamegraph [<options>] [-f json|html] [-o OUTPUT]\n"
          "        [--colorscheme blue-green|orange]",
          "script report flamegraph", own, p))
    return *st;
  const exports::FlameTree tree(*p, exports::FlameTreeOptions{});
  const bool html = f.format == "html";
  std::string path = f.output.empty() ? (html ? "flamegraph.html" : "stacks.json") : f.output;
  if (path != "-") fmt::print("dumping data to {}\n", path);
  std::fflush(stdout);
  auto out = OutputFile::create(path);
  if (!out) return fail("script", out.error());
  Status st = ok();
  if (html) {
    exports::FlamegraphHtmlOptions ho;
    ho.colorscheme = f.colorscheme;
    ho.context = header_context(*p);
    st = exports::write_flamegraph_html(tree, ho, out->writer());
  } else {
    st = exports::write_flamegraph_json(tree, out->writer());
  }
  if (st) st = out->commit();
  if (!st) return fail("script", st.error());
  return 0;
}

}  // namespace

int cmd_script_report(int argc, char** argv) {
  // argv: "report", NAME, perf script's options, "--", the script's.
  if (argc >= 2 && std::string_view(argv[1]) == "flamegraph")
    return run_flamegraph(std::vector<std::string>(argv + 2, argv + argc));
  if (argc < 2 || std::string_view(argv[1]) != "stackcollapse") {
    fmt::print(stderr,
               "Please specify a valid report script (perfkit has: flamegraph, stackcollapse)\n");
    return 255;
  }
  std::vector<char*> own{argv[1]};
  std::vector<std::string> script_args;
  int i = 2;
  for (; i < argc && std::string_view(argv[i]) != "--"; ++i) own.push_back(argv[i]);
  for (++i; i < argc; ++i) script_args.emplace_back(argv[i]);

  exports::StackcollapseOptions so;
  if (int st = parse_stackcollapse(script_args, so)) return st;
  std::optional<profile::Profile> p;
  if (auto st = read_script_profile(
          "Fold every sample's call chain, as 'perf script report stackcollapse' does.\n\n"
          " usage: perfkit script report stackcollapse [<options>] [-- <stackcollapse "
          "options>]\n"
          " stackcollapse options: --include-tid --include-pid --no-comm --tidy-java --kernel",
          "script report stackcollapse", own, p))
    return *st;
  FdWriter out = FdWriter::stdout_writer(1 << 20);
  if (auto st = exports::write_stackcollapse(*p, so, out); !st) return fail("script", st.error());
  return 0;
}

}  // namespace perfkit::cli
