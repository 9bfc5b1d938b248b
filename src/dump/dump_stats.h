// Per-type record counts, printed the way perf's "Aggregated stats" are.
#pragma once

#include <array>
#include <cstdint>
#include <map>

#include "base/output.h"

namespace perfkit::dump {

class RecordStats {
 public:
  void count(std::uint32_t type) {
    ++total_;
    if (type < counts_.size())
      ++counts_[type];
    else
      ++unknown_[type];
  }
  std::uint64_t total() const { return total_; }
  std::uint64_t of(std::uint32_t type) const;

  // One line per type present, "%16s events: %10d  (%4.1f%%)", in type order;
  // then the TOTAL line. Unknown types print as UNKNOWN(type).
  void print(FdWriter& out, bool with_percent = true) const;
  // The body of perf report -D's "Aggregated stats:": the TOTAL line first,
  // then each known type present, "%16s events: %10d  (%4.1f%%)".
  void print_perf_dump(FdWriter& out) const;

 private:
  std::array<std::uint64_t, 128> counts_{};
  std::map<std::uint32_t, std::uint64_t> unknown_;
  std::uint64_t total_ = 0;
};

}  // namespace perfkit::dump
