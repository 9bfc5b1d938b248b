// pprof's profile.proto, gzipped, as perf_data_converter (perf_to_profile)
// writes it from perf.data, from the profile model:
//   sample types   two per event, "<event>_sample" (count) and
//                  "<event>_event" (the period sum), both unit "count"
//   mappings       one per DSO with its build-id (addresses are DSO-relative)
//   functions      one per symbol, with its source file when known
//   locations      one per address, its inlined functions as extra lines
//                  (innermost first), a sample's locations leaf first
//   labels         pid, tid, comm, cpu and timestamp_ns per sample
// Written with protobuf's generated messages, one sample at a time, into a
// gzip stream compressed in chunks on the other cores (GzipWriter).
#pragma once

#include "base/error.h"
#include "base/output.h"
#include "profile/profile.h"

namespace perfkit::exports {

// Errors: the output's (naming it).
Status write_pprof(const profile::Profile& p, FdWriter& out);

}  // namespace perfkit::exports
