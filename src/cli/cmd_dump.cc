// perfkit dump: header features and every record of a perf.data file.
#include "cli/commands.h"
#include "cli/options.h"
#include "dump/dump.h"
#include "dump/itrace_dump.h"
#include "perfdata/reader.h"

namespace perfkit::cli {

int cmd_dump(int argc, char** argv) {
  CLI::App app(
      "Print the header features and every record of a perf.data file, decoded\n"
      "(like 'perf report --header-only' followed by 'perf report -D').",
      "dump");
  std::string input = "perf.data";
  dump::DumpOptions opts;
  bool file_order = false;
  bool no_header = false;
  app.add_option("-i,--input", input, "Input file name ('-' for stdin)")->capture_default_str();
  app.add_flag("--stats", opts.stats_only, "Only print the number of records of each type");
  app.add_flag("--file-order", file_order, "Print records in file order, not perf's time order");
  app.add_flag("--no-header", no_header, "Do not print the header features");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  opts.ordered = !file_order;
  opts.header = !no_header;
  opts.records.auxtrace_dump = dump::intel_pt_auxtrace_dumper();

  perfdata::ReaderOptions ro;
  ro.warn = [](const std::string& m) { fmt::print(stderr, "Warning: {}\n", m); };
  auto reader = perfdata::Reader::open(input, ro);
  if (!reader) return fail("dump", reader.error());
  FdWriter out = FdWriter::stdout_writer();
  auto st = dump::run_dump(**reader, opts, out);
  if (!st) return fail("dump", st.error().with_context((*reader)->name()));
  return 0;
}

}  // namespace perfkit::cli
