// perf inject -s/--sched-stat: each task's last sched:sched_switch sample
// (the call chain where it went to sleep) stands in for its
// sched:sched_stat_* samples, with their time and period (the delay), so
// that a report shows where and for how long tasks slept (perf's
// perf_inject__sched_switch/_sched_stat/_sched_process_exit).
//
//   sched_switch of tid T    -> kept aside as T's (not written)
//   sched_process_exit of T  -> T's dropped (not written)
//   sched_stat_* of pid P    -> P's switch sample, re-encoded with the
//                               stat's time and period (none: not written)
//   every other record       -> written as it is
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "perfdata/reader.h"

namespace perfkit::session {
class TracepointFormatter;
}

namespace perfkit::inject {

class SchedStatMerger {
 public:
  // Errors: perf's, for a sched:sched_switch event without TID in its samples.
  static Expected<std::unique_ptr<SchedStatMerger>> create(const perfdata::Reader& in);
  ~SchedStatMerger();
  SchedStatMerger(const SchedStatMerger&) = delete;
  SchedStatMerger& operator=(const SchedStatMerger&) = delete;

  enum class Action { kWrite, kDrop, kReplace };
  // What becomes of a SAMPLE record of `in` (its event's index `event`):
  // kReplace puts the record to write into `out` (in the output's byte
  // order, `swap_out`).
  Expected<Action> sample(const record::RecordView& v, int event, bool swap_out,
                          std::vector<std::uint8_t>& out);

 private:
  enum class Role : std::uint8_t { kOther, kSwitch, kExit, kStat };
  struct Kept {
    std::vector<std::uint8_t> bytes;
    bool swap = false;
  };
  explicit SchedStatMerger(const perfdata::Reader& in);

  const perfdata::Reader& in_;
  std::vector<Role> roles_;  // by event index
  std::unordered_map<std::uint32_t, Kept> by_tid_;
  std::unique_ptr<session::TracepointFormatter> formats_;
};

}  // namespace perfkit::inject
