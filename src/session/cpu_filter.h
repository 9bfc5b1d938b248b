// The -C/--cpu filter of perf report and perf script, checked against the
// recording as perf_session__cpu_bitmap does before any record is read.
#pragma once

#include <cstdint>

#include "base/error.h"
#include "perfdata/reader.h"

namespace perfkit::session {

// Errors, as perf words them:
// - the first event of some type lacks PERF_SAMPLE_CPU: "File does not
//   contain CPU events. Remove -C option to proceed.";
// - `max_cpu` is at or past the header's available cpus (NRCPUS; a stream,
//   whose features come later, has none): "Requested CPU N too large.
//   Consider raising MAX_NR_CPUS".
Status check_cpu_filter(const perfdata::Reader& reader, std::int64_t max_cpu);

}  // namespace perfkit::session
