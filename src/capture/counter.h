// Counting mode: the events of `perfkit stat` opened on every (cpu, thread)
// of a target, enabled and disabled together, and read back, group leaders
// with PERF_FORMAT_GROUP so a group's members are read in one system call.
//
//   std::vector<CounterEvent> events = counting_events(parsed, options);
//   CounterTarget target = {.cpus = {-1}, .threads = {workload.pid()}};
//   PK_ASSIGN(CounterSet set, CounterSet::open(std::move(events), target, ctx, notes));
//   ... workload runs ...
//   CounterReadings now = set.read();   // raw values; scale with abi::scale_count
//
// What perf stat does at open time is done here too: an event the kernel does
// not know (ENOENT, ENXIO, EOPNOTSUPP, EINVAL, ENOSYS) is marked not
// supported and skipped, unless it leads a group of several events; EACCES
// for kernel counting under perf_event_paranoid falls back to user-only;
// anything else (ENOSPC for a fifth breakpoint, EMFILE, ESRCH) is an error
// that explains itself (capture/perf_event.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "abi/attr.h"
#include "abi/read_format.h"
#include "base/error.h"
#include "capture/cgroup.h"
#include "capture/event_spec.h"
#include "capture/perf_event.h"

namespace perfkit::capture {

// perf stat's tool events: counted by the tool, not the kernel (no fd).
enum class ToolEvent { kNone, kDurationTime, kUserTime, kSystemTime };

// "duration_time", "user_time", "system_time"; kNone for anything else.
ToolEvent tool_event(std::string_view name);

// One event to count, as perf stat configures it.
struct CounterEvent {
  abi::EventAttr attr;
  std::string name;
  std::size_t leader = 0;      // index of the group leader (itself when alone)
  std::size_t group_size = 1;  // members of the group this event leads (1 when alone)
  std::string unit;            // "msec" for the clocks, sysfs .unit for PMU events
  double scale = 1.0;          // what a count is multiplied by before display
  std::string pmu;
  bool weak_group = false;            // :W
  ToolEvent tool = ToolEvent::kNone;  // values filled by the caller, in ns
  std::string filter;  // a tracepoint's --filter, set once opened (PERF_EVENT_IOC_SET_FILTER)
  // -G: counts only while a task of this cgroup runs (nullptr: any task).
  std::shared_ptr<const Cgroup> cgroup;
  bool is_leader(std::size_t self) const { return leader == self; }
};

// A tool event as perf stat shows it (unit "ns"; the attr is a dummy).
CounterEvent tool_counter_event(ToolEvent tool);

struct CountingOptions {
  bool inherit = true;          // count the children too (-i / --no-inherit clears it)
  bool identifier = true;       // sample_type = IDENTIFIER (perf does, except in pipe output)
  bool enable_on_exec = false;  // leaders start at the workload's exec
  bool all_user = false;        // --all-user
  bool all_kernel = false;      // --all-kernel
};

// Applies perf stat's attr settings (create_perf_stat_counter) to parsed
// events: read_format TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING (with ID|GROUP in
// groups of more than one), no sample period, leaders disabled (and
// enable_on_exec), inherit; and the clocks' "msec" unit with scale 1e-6.
std::vector<CounterEvent> counting_events(const EventList& list, const CountingOptions& opts);

// The events perf stat 6.1 counts when none is given: task-clock (cpu-clock
// for a cpu target), context-switches, cpu-migrations, page-faults, cycles,
// stalled-cycles-frontend/backend when the core PMU lists them,
// instructions, branches, branch-misses.
std::string default_stat_events(bool cpu_target, const PmuCatalog& pmus);
// perf stat -d's events (`level` 1-3 for -d, -dd, -ddd): the cache and TLB
// events perf appends to the others.
std::string detailed_stat_events(int level);

// Where the events are opened. cpus {-1} counts the threads wherever they
// run; threads {-1} counts every task on the cpus.
struct CounterTarget {
  std::vector<int> cpus = {-1};
  std::vector<pid_t> threads = {-1};
};

// Readings of every event at one moment: values[event][cpu_idx * nthreads +
// thread_idx]. A reading that failed (or a group read whose member count is
// not the group's) has ok false; perf shows the event as not counted then.
struct CounterReadings {
  std::size_t ncpus = 0, nthreads = 0;
  std::vector<std::vector<abi::CounterValue>> values;
  std::vector<std::vector<bool>> ok;
  const abi::CounterValue& at(std::size_t ev, std::size_t cpu, std::size_t thr) const {
    return values[ev][cpu * nthreads + thr];
  }
  bool ok_at(std::size_t ev, std::size_t cpu, std::size_t thr) const {
    return ok[ev][cpu * nthreads + thr];
  }
};

class CounterSet {
 public:
  CounterSet() = default;
  CounterSet(CounterSet&&) = default;
  CounterSet& operator=(CounterSet&&) = default;

  // Opens every event on every (cpu, thread), leaders before their members.
  // Lines perf prints meanwhile (fallback notes) are appended to `notes`.
  // Errors: an event that cannot be opened and is not skippable, explained
  // by explain_open_error ("... (ENOSPC): no free hardware breakpoint slot
  // ..."); a group leader the machine does not support.
  static Expected<CounterSet> open(std::vector<CounterEvent> events, const CounterTarget& target,
                                   const OpenErrorContext& ctx, std::vector<std::string>& notes);

  const std::vector<CounterEvent>& events() const { return events_; }
  // Whether the event was opened (false: perf's "<not supported>"); tool
  // events are always supported and never read here.
  bool supported(std::size_t ev) const { return supported_[ev]; }
  const CounterTarget& target() const { return target_; }
  // The kernel's ids of an event, one per (cpu, thread), cpu-major (0 when not open).
  const std::vector<std::uint64_t>& ids(std::size_t ev) const { return ids_[ev]; }

  // Enables / disables the group leaders (and so their groups).
  Status enable() const;
  Status disable() const;
  // The same for the leaders named `name` alone ("" for all, as enable()):
  // perf's --control "enable NAME". Returns whether one was found.
  Expected<bool> enable_named(const std::string& name, bool on) const;
  // Reads every opened event now.
  CounterReadings read() const;
  // Closes every fd (counting stops; readings taken stay valid).
  void close();

 private:
  std::size_t slot(std::size_t cpu, std::size_t thr) const {
    return cpu * target_.threads.size() + thr;
  }
  Status open_one(std::size_t ev, const OpenErrorContext& ctx, std::vector<std::string>& notes,
                  bool& skipped);
  void read_group(std::size_t leader, std::size_t s, CounterReadings& out) const;

  std::vector<CounterEvent> events_;
  CounterTarget target_;
  std::vector<bool> supported_;
  std::vector<std::vector<EventFd>> fds_;  // [event][slot]
  std::vector<std::vector<std::uint64_t>> ids_;
};

// True for the errors perf stat treats as "this machine does not have the
// event" (the event is skipped and shown as <not supported>).
bool is_unsupported_event_error(int err);

}  // namespace perfkit::capture
