// The Firefox Profiler's processed profile format (preprocessedProfileVersion
// 57, the layout samply writes; the profiler upgrades it on load): one track
// per thread, grouped by process (pid), each with its own frame, function,
// stack and resource tables over one shared string array; samples of one
// event with their times (ms from the first sample) and weights (the period:
// milliseconds of CPU for the clock events, else the event's count);
// categories User and Kernel; the DSOs as libs with their build-ids (codeId,
// breakpadId); context switches and comm/exec changes as instant markers.
#pragma once

#include <cstddef>
#include <string>

#include "base/error.h"
#include "base/output.h"
#include "profile/profile.h"

namespace perfkit::exports {

struct FirefoxOptions {
  std::size_t event = 0;  // the event whose samples the tracks show
  std::string product = "perfkit";
  // The wall-clock time of the first sample, ms since the epoch (0: unknown;
  // data convert derives it from the file's modification time).
  double start_time_ms = 0;
};

// Errors: an event the profile does not have, the output's.
Status write_firefox(const profile::Profile& p, const FirefoxOptions& o, FdWriter& out);

// The Breakpad id of an ELF build-id (hex): its first 16 bytes as a GUID
// (the first three fields byte-swapped), upper case, then the age 0.
std::string breakpad_id(std::string_view build_id_hex);

}  // namespace perfkit::exports
