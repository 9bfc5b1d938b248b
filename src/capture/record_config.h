// The recording's final event configuration: perf's evsel__config and
// evlist__config applied to the parsed events and the options. Decides every
// attr field perf decides (sample_type, read_format, the tracking event's
// mmap/comm/task flags, freq or period, callchains, inherit, enable_on_exec,
// the sample-id scheme), adds the default event (cycles, falling back to
// cpu-clock at open time) and the tracking dummy for system-wide or delayed
// recordings, and applies the per-event config terms last.
//
// Pure: the only outside input is RecordLimits (read from procfs and CPUID by
// the caller).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "abi/attr.h"
#include "base/error.h"
#include "capture/event_spec.h"
#include "capture/record_options.h"

namespace perfkit::capture {

struct RecordLimits {
  std::uint64_t max_sample_rate = 0;  // kernel.perf_event_max_sample_rate, 0 = unknown
  bool amd = false;                   // an AMD CPU (the default event counts guests there)
};

struct RecordEvent {
  abi::EventAttr attr;
  std::string name;
  // The name is perf's default for the attr and follows it when a fallback
  // changes the attr (the default cycles event becomes "cpu-clock:ppp").
  bool default_name = false;
  std::size_t leader = 0;    // index of the group leader (itself when alone)
  int group = -1;            // index into RecordConfig::groups
  bool tracking = false;     // carries mmap/comm/task (and the other side-band flags)
  bool immediate = false;    // enabled at open (the system-wide tracking dummy)
  bool precise_max = false;  // try precise_ip 3, 2, 1, 0 at open (perf's :P)
  bool sample_read = false;
  std::string pmu;
  Tracepoint tracepoint;
  std::string filter;  // set at open (PERF_EVENT_IOC_SET_FILTER): --filter after its -e
  std::shared_ptr<const Cgroup> cgroup;  // -G: opened as the cgroup's (system-wide)
  std::string unit;
  std::optional<double> scale;
  std::optional<std::uint64_t> max_events;  // nr= term
};

struct RecordConfig {
  std::vector<RecordEvent> events;
  std::vector<EventGroup> groups;
  // Warnings perf prints while configuring (frequency throttled, LBR fallback),
  // one message per entry, possibly several lines each.
  std::vector<std::string> warnings;
  // Informational lines perf prints ("info: Using a maximum frequency rate ...").
  std::vector<std::string> infos;
  std::uint64_t freq = 0;      // effective default frequency (0 with -c)
  std::uint64_t interval = 0;  // effective default period (with -c)
};

// Configures `events` (empty: perf's default cycles event) for `opts`.
// Errors: -c together with -F; -F above the maximum with --strict-freq;
// a frequency or count of zero.
Expected<RecordConfig> configure_record(const EventList& events, const RecordOptions& opts,
                                        const RecordLimits& limits);

// Sets the sample-id scheme perf uses for several events on every attr:
// IDENTIFIER when their sample_types differ (or `force_identifier`), else ID.
void set_sample_ids(std::vector<RecordEvent>& events, bool force_identifier);

}  // namespace perfkit::capture
