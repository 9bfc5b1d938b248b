// perfkit buildid-list: the build-ids in a perf.data file (or of an ELF
// file, or of the running kernel with -k), as 'perf buildid-list' prints them.
#include "buildid/build_id_list.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "elf/build_id.h"

namespace perfkit::cli {

int cmd_buildid_list(int argc, char** argv) {
  CLI::App app("List the build-ids in a perf.data file, as 'perf buildid-list' does.",
               "buildid-list");
  std::string input = "perf.data";
  bool with_hits = false, kernel = false, force = false;
  app.add_option("-i,--input", input, "Input file name")->capture_default_str();
  app.add_flag("-H,--with-hits", with_hits, "Show only DSOs with hits");
  app.add_flag("-k,--kernel", kernel, "Show the current kernel's build-id");
  app.add_flag("-f,--force", force, "Do not complain, do it");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  if (kernel) {
    auto id = elf::kernel_build_id();
    if (!id || id->empty()) return 1;
    fmt::print("{}\n", id->hex());
    return 0;
  }
  if (auto id = elf::read_build_id(input); id && !id->empty()) {
    fmt::print("{}\n", id->hex());
    return 0;
  }
  session::SessionOptions so;
  so.symbols = symbol::symbolizer_options_from_env();
  so.warn = [](const std::string&) {};
  so.prefetch_kernel = false;  // (no symbol is looked up)
  auto session = session::Session::open(input, so);
  if (!session) return fail("buildid-list", session.error());
  FdWriter out = FdWriter::stdout_writer();
  auto st = buildid::list_build_ids(**session, with_hits, out);
  auto fl = out.flush();
  if (!st) return fail("buildid-list", st.error());
  if (!fl) return fail("buildid-list", fl.error());
  return 0;
}

}  // namespace perfkit::cli
