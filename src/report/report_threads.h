// perf report -T/--threads: the per-thread counter totals of the READ
// records a recording carries (perf record -s, inherit_stat: each thread's
// counts as it exits), one row per thread and a column per event, in the
// order they first come; --pretty raw gives perf's one-line raw listing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/output.h"

namespace perfkit::report {

class ThreadCounters {
 public:
  // Adds `value` to thread (pid, tid)'s count of event `event` (`name`).
  void add(std::int32_t pid, std::int32_t tid, std::size_t event, const std::string& name,
           std::uint64_t value);
  // The table perf prints after the report ("# PID  TID  event...").
  void print(FdWriter& out, bool raw) const;

 private:
  void print_pretty(FdWriter& out) const;
  void print_raw(FdWriter& out) const;

  struct Counter {
    std::size_t event;
    std::string name;
  };
  std::vector<std::pair<std::int32_t, std::int32_t>> threads_;  // (pid, tid)
  std::vector<Counter> counters_;
  std::vector<std::vector<std::uint64_t>> values_;  // [thread][counter]
};

}  // namespace perfkit::report
