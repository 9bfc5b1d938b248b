// perfkit list: the events this machine offers, by kind, as 'perf list'
// prints them ("  NAME<padding>[Kind]").
#include <algorithm>

#include "base/output.h"
#include "capture/event_catalog.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace perfkit::cli {

int cmd_list(int argc, char** argv) {
  CLI::App app(
      "List all symbolic event types, as 'perf list' does.\n\n"
      " usage: perfkit list [hw|sw|cache|tracepoint|pmu|tool|EVENTGLOB]",
      "list");
  std::vector<std::string> filters;
  app.add_option("filter", filters, "hw, sw, cache, tracepoint, pmu, tool, or a glob");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  capture::SystemPaths paths;
  auto pmus = capture::PmuCatalog::load(paths);
  auto tracefs = capture::Tracefs::locate(paths);
  capture::EventSources sources{&pmus, tracefs ? &*tracefs : nullptr};
  auto out = FdWriter::stdout_writer();
  for (const auto& e : capture::list_events(sources)) {
    if (!filters.empty() && std::none_of(filters.begin(), filters.end(), [&](const auto& f) {
          return capture::list_filter_matches(e, f);
        }))
      continue;
    out.print("  {:<50} [{}]\n", e.name, e.kind);
  }
  auto st = out.flush();
  return st ? 0 : fail("list", st.error());
}

}  // namespace perfkit::cli
