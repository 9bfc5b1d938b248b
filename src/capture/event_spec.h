// The event-spec parser: perf's -e syntax into attrs, names and per-event
// settings. Pure: it reads the PMU catalog and tracefs it is given, never the
// kernel's perf_event_open. `perfkit record` and `perfkit stat` share it.
//
// Accepted, as perf 6.1 accepts them:
//   cycles, instructions, ...            generic hardware events (and aliases)
//   cpu-clock, page-faults/faults, cs    software events
//   L1-dcache-load-misses, LLC-loads     hardware-cache events (perf's aliases)
//   r1a8, 4:0x1a8                        raw, and numeric TYPE:CONFIG
//   cpu/event=0x3c,umask=0/, msr/tsc/    PMU terms resolved through sysfs format/
//   tsc, cpu/mem-loads,ldlat=30/         named events from sysfs events/
//   sched:sched_switch, sched:sched_*    tracepoints (ids from tracefs; globs)
//   mem:0x1000[/8][:rwx]                 hardware breakpoints
//   EVENT:ukhGHpppSIDWeP                 modifiers; EVENT/.../ukh also works
//   EVENT/period=N,freq=N,call-graph=dwarf,stack-size=N,max-stack=N,name=X,
//         time=0,inherit=0,no-inherit,overwrite,branch_type=any,nr=N/  config terms
//   {a,b}, {a,b}:u, name{a,b}            groups (opened with group_fd)
//
// Contract of the result: every EventSpec has type/config (config1/2/3,
// bp_type/bp_addr/bp_len) and the modifier bits (exclude_*, precise_ip,
// pinned, exclusive) set, plus sample_period = 1 for tracepoints and
// breakpoints as perf does; everything else about sampling is decided later by
// the recorder's configuration (record_config.h), which applies the terms.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "abi/attr.h"
#include "base/error.h"
#include "capture/cgroup.h"
#include "capture/pmu.h"
#include "capture/tracefs.h"

namespace perfkit::capture {

// Per-event config terms (EVENT/term=value/), applied after global options.
struct ConfigTerms {
  std::optional<std::uint64_t> period;
  std::optional<std::uint64_t> freq;
  std::optional<bool> time;
  std::optional<std::string> call_graph;  // "fp", "dwarf", "lbr", "no"
  std::optional<std::uint32_t> stack_size;
  std::optional<std::uint32_t> max_stack;
  std::optional<std::uint64_t> max_events;  // nr=
  std::optional<bool> inherit;
  std::optional<bool> overwrite;
  std::optional<std::string> branch_type;
  std::optional<std::string> driver_config;
  std::optional<std::string> metric_id;
  std::optional<bool> percore;
  std::optional<bool> aux_output;
  std::optional<std::uint32_t> aux_sample_size;

  bool sets_sampling() const { return period || freq; }
};

struct EventSpec {
  abi::EventAttr attr;
  // The name perf gives it: the event's text as written ("cpu-clock:u",
  // "cpu/event=0x3c/"), "SYS:NAME" for tracepoints, or the name= term.
  std::string name;
  ConfigTerms terms;
  std::string pmu;        // sysfs PMU name for PMU events, "" for the generic types
  Tracepoint tracepoint;  // for PERF_TYPE_TRACEPOINT
  std::string unit;       // from events/NAME.unit
  std::optional<double> scale;
  bool sample_read = false;  // :S
  bool precise_max = false;  // :P
  bool weak_group = false;   // :W
  bool exclude_gh = false;   // G or H was given (the guest/host choice is explicit)
  // The tracepoint filter perf record's --filter (and --exclude-perf) after
  // this event's -e sets on it (PERF_EVENT_IOC_SET_FILTER); "" for none.
  std::string filter;
  // -G: recorded only while a task of this cgroup runs (nullptr: any task).
  std::shared_ptr<const Cgroup> cgroup;
  // Index (in the EventList) of this event's group leader; itself when alone.
  std::size_t leader = 0;
  // Index into EventList::groups, or -1 for an event outside braces.
  int group = -1;
};

struct EventGroup {
  std::string name;  // "" for an anonymous group
  std::size_t leader = 0;
  std::size_t nr_members = 0;
};

struct EventList {
  std::vector<EventSpec> events;
  std::vector<EventGroup> groups;

  bool empty() const { return events.empty(); }
  std::size_t size() const { return events.size(); }
  bool is_leader(std::size_t i) const { return events[i].leader == i; }
  // Members of the group led by `leader` (the leader itself when alone).
  std::size_t group_size(std::size_t leader) const;
};

// Where names are resolved. A null tracefs makes tracepoints an error
// ("tracefs not available").
struct EventSources {
  const PmuCatalog* pmus = nullptr;
  const Tracefs* tracefs = nullptr;
};

// Parses one -e argument and appends its events (and groups) to `list`.
// Errors are one line, start with "event syntax error: '<text>'" and say what:
// an unknown event (with "did you mean" suggestions), an unknown PMU or term
// (listing the valid ones), a bad modifier, an unbalanced or nested group, a
// malformed breakpoint, a value too big for a format field, an unknown
// tracepoint ("File .../events/SYS/NAME not found").
Status parse_events(std::string_view text, const EventSources& sources, EventList& list);

// Makes every event one group led by the first (perf record --group).
void group_all(EventList& list);

// The hardware-cache config (id | op << 8 | result << 16) for a name such as
// "L1-dcache-load-misses" or "l1d-loads"; nullopt if it is not one (or names
// an op the cache does not support).
std::optional<std::uint64_t> parse_cache_event(std::string_view name);

// Up to `max` known event names close to `name`, best first.
std::vector<std::string> suggest_events(std::string_view name, const EventSources& sources,
                                        std::size_t max = 3);

// perf's alias tables, shared with `perfkit list`.
struct SymbolicEvent {
  std::string_view name;
  std::string_view alias;  // "" if none
  std::uint32_t type = 0;
  std::uint64_t config = 0;
};
std::span<const SymbolicEvent> symbolic_events();

}  // namespace perfkit::capture
