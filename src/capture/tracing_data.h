// TRACING_DATA: the trace-event formats perf stores so that readers can
// decode tracepoint samples' raw data (perf's trace-event-info layout v0.6):
// magic and version, byte order, long and page size, header_page and
// header_event, the formats of the recorded ftrace and tracepoint events by
// system, an empty kallsyms, printk_formats and saved_cmdlines.
#pragma once

#include <cstdint>
#include <vector>

#include "base/error.h"
#include "capture/tracefs.h"

namespace perfkit::capture {

// Builds the section for the tracepoints `tps` (only their systems and
// formats are stored). Errors name the tracefs file that could not be read.
Expected<std::vector<std::uint8_t>> build_tracing_data(const Tracefs& tracefs,
                                                       const std::vector<Tracepoint>& tps);

}  // namespace perfkit::capture
