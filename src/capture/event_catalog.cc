#include "capture/event_catalog.h"

#include <algorithm>

#include "abi/event_names.h"
#include "abi/perf_event.h"
#include "base/text.h"
#include "capture/perf_event.h"

namespace perfkit::capture {

using namespace perfkit::abi;

namespace {

// perf's is_event_supported: can this thread count it in user space?
bool openable(std::uint32_t type, std::uint64_t config) {
  EventAttr a;
  a.type = type;
  a.config = config;
  a.set(kAttrDisabled);
  a.set(kAttrExcludeKernel);
  int fd = sys_perf_event_open(a, OpenTarget{0, -1, -1, 0});
  if (fd < 0) return false;
  EventFd close_it(fd);
  return true;
}

std::string with_alias(const SymbolicEvent& s) {
  return s.alias.empty() ? std::string(s.name) : fmt::format("{} OR {}", s.name, s.alias);
}

void add_sorted(std::vector<ListedEvent>& out, std::vector<ListedEvent> part) {
  std::sort(part.begin(), part.end(),
            [](const ListedEvent& a, const ListedEvent& b) { return a.name < b.name; });
  out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
}

}  // namespace

std::vector<ListedEvent> list_events(const EventSources& sources) {
  std::vector<ListedEvent> out;
  std::vector<ListedEvent> hw, sw, cache, pmu;
  for (const auto& s : symbolic_events()) {
    if (s.type == kTypeHardware && openable(s.type, s.config))
      hw.push_back({with_alias(s), "Hardware event", "hw"});
    if (s.type == kTypeSoftware) sw.push_back({with_alias(s), "Software event", "sw"});
  }
  add_sorted(out, std::move(hw));
  add_sorted(out, std::move(sw));
  for (const char* tool : {"duration_time", "user_time", "system_time"})
    out.push_back({tool, "Tool event", "tool"});
  for (unsigned type = 0; type < cache_type_names().size(); ++type)
    for (unsigned op = 0; op < 3; ++op)
      for (unsigned res = 0; res < 2; ++res) {
        std::uint64_t config = type | (op << 8) | (res << 16);
        std::string name = cache_event_name(config);
        if (name.empty() || !parse_cache_event(name)) continue;
        if (openable(kTypeHwCache, config))
          cache.push_back({name, "Hardware cache event", "cache"});
      }
  add_sorted(out, std::move(cache));
  if (sources.pmus)
    for (const auto& p : sources.pmus->pmus())
      for (const auto& e : p.events)
        pmu.push_back({fmt::format("{}/{}/", p.name, e.name), "Kernel PMU event", "pmu"});
  add_sorted(out, std::move(pmu));
  out.push_back({"rNNN", "Raw hardware event descriptor", "raw"});
  out.push_back({"cpu/t1=v1[,t2=v2,t3 ...]/modifier", "Raw hardware event descriptor", "raw"});
  out.push_back({"mem:<addr>[/len][:access]", "Hardware breakpoint", "breakpoint"});
  // perf sorts the whole "system:event" strings ("fib6:..." before "fib:...").
  std::vector<ListedEvent> tps;
  if (sources.tracefs)
    for (const auto& tp : sources.tracefs->list())
      tps.push_back({tp.full(), "Tracepoint event", "tracepoint"});
  add_sorted(out, std::move(tps));
  return out;
}

bool list_filter_matches(const ListedEvent& e, std::string_view f) {
  if (f == "hw" || f == "hardware") return e.group == "hw";
  if (f == "sw" || f == "software") return e.group == "sw" || e.group == "tool";
  if (f == "cache" || f == "hwcache") return e.group == "cache";
  if (f == "pmu") return e.group == "pmu";
  if (f == "tracepoint") return e.group == "tracepoint";
  if (f == "tool") return e.group == "tool";
  // A glob against each spelling ("context-switches OR cs").
  std::string_view n = e.name;
  for (;;) {
    auto sep = n.find(" OR ");
    if (glob_match(f, n.substr(0, sep))) return true;
    if (sep == std::string_view::npos) return false;
    n.remove_prefix(sep + 4);
  }
}

}  // namespace perfkit::capture
