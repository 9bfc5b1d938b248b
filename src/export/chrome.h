// Chrome's Trace Event Format (JSON object form), as Perfetto's UI,
// chrome://tracing and speedscope read it: per thread, its samples as a
// flame chart of nested B/E slices (consecutive samples sharing a stack
// prefix extend the same slices; a slice ends where the next sample leaves
// it, or one sampling interval after the thread's last sample before a
// gap), process and thread names as metadata ("M") events, context
// switches and comm changes as instant events on the thread. Timestamps in
// microseconds from the first sample.
#pragma once

#include <cstddef>

#include "base/error.h"
#include "base/output.h"
#include "profile/profile.h"

namespace perfkit::exports {

struct ChromeOptions {
  std::size_t event = 0;  // the event whose samples make the slices
};

// Errors: an event the profile does not have, the output's.
Status write_chrome_trace(const profile::Profile& p, const ChromeOptions& o, FdWriter& out);

}  // namespace perfkit::exports
