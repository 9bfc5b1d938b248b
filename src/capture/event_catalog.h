// What this machine offers, by kind, in the order and spelling of `perf
// list`: generic hardware and hardware-cache events that can actually be
// opened here, software and tool events, the named events of each PMU, the
// raw and breakpoint syntaxes, and every tracepoint.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "capture/event_spec.h"

namespace perfkit::capture {

struct ListedEvent {
  std::string name;   // "context-switches OR cs", "msr/tsc/", "sched:sched_switch"
  std::string kind;   // "Software event", "Kernel PMU event", "Tracepoint event", ...
  std::string group;  // perf list's selector: "hw", "sw", "cache", "pmu", "tracepoint", "tool", ...
};

// Every event, perf's order: hardware, software, tool, cache, PMU, raw
// descriptors, breakpoint, tracepoints. Hardware and cache events are listed
// only when perf_event_open accepts them on this machine.
std::vector<ListedEvent> list_events(const EventSources& sources);

// perf list's filters: "hw"/"hardware", "sw"/"software", "cache"/"hwcache",
// "pmu", "tracepoint", "tool", or a glob matched against the names (and
// their aliases). True when `event` passes `filter`.
bool list_filter_matches(const ListedEvent& event, std::string_view filter);

}  // namespace perfkit::capture
