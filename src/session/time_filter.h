// perf script --time: one range "start,stop" in seconds (either side may be
// empty), several ranges separated by spaces, or percent slices of the
// recording ("10%/2", "0%-10%,30%-40%", "50%") measured between its first
// and last sample times (HEADER_SAMPLE_TIME). With --reltime the times count
// from the first sample.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace perfkit::session {

struct TimeRange {
  std::uint64_t start = 0;  // 0: open
  std::uint64_t end = 0;    // 0: open
};

// Parses `spec`. `first`/`last` are the recording's sample time bounds (both
// 0 when unknown, which percent and relative specs need). Errors: "Invalid
// time string", or the hint perf gives when the bounds are missing.
Expected<std::vector<TimeRange>> parse_time_ranges(std::string_view spec, std::uint64_t first,
                                                   std::uint64_t last, bool reltime);

// perf_time__ranges_skip_sample: true when `t` is outside every range (a
// sample without a time, t == 0, is never skipped).
bool skip_by_time(const std::vector<TimeRange>& ranges, std::uint64_t t);

}  // namespace perfkit::session
