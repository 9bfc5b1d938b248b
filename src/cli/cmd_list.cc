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
  bool raw_dump = false;
  app.add_option("filter", filters, "hw, sw, cache, tracepoint, pmu, tool, or a glob");
  app.add_flag("--raw-dump", raw_dump, "Only the names, on one line (for shell completion)");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  capture::SystemPaths paths;
  auto pmus = capture::PmuCatalog::load(paths);
  auto tracefs = capture::Tracefs::locate(paths);
  capture::EventSources sources{&pmus, tracefs ? &*tracefs : nullptr};
  auto out = FdWriter::stdout_writer();
  const char* sep = "";
  for (const auto& e : capture::list_events(sources)) {
    if (!filters.empty() && std::none_of(filters.begin(), filters.end(), [&](const auto& f) {
          return capture::list_filter_matches(e, f);
        }))
      continue;
    if (raw_dump) {
      // Aliases ("context-switches OR cs") as names of their own.
      std::string_view names = e.name;
      for (std::size_t at; (at = names.find(" OR ")) != std::string_view::npos;
           names.remove_prefix(at + 4)) {
        out.print("{}{}", sep, names.substr(0, at));
        sep = " ";
      }
      out.print("{}{}", sep, names);
      sep = " ";
      continue;
    }
    out.print("  {:<50} [{}]\n", e.name, e.kind);
  }
  if (raw_dump) out.write(std::string_view("\n"));
  auto st = out.flush();
  return st ? 0 : fail("list", st.error());
}

}  // namespace perfkit::cli
