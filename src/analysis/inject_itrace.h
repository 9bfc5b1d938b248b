// perf inject --itrace: a recording's Intel PT trace decoded and written back
// as the samples perf synthesizes (script_itrace.h's events), in place of
// the trace: the AUXTRACE_INFO, AUXTRACE, AUX and ITRACE_START records and
// the AUXTRACE feature go; the side-band records stay; the synthesized
// events join the attrs (and EVENT_DESC) with ids of their own.
#pragma once

#include <string>

#include "base/error.h"
#include "intelpt/itrace_options.h"

namespace perfkit::analysis {

struct InjectItraceOptions {
  intelpt::ItraceOptions itrace = intelpt::itrace_defaults(true);
  unsigned jobs = 0;
};

// Decodes `in_path` (a file, not a pipe) and writes `out_path` in file mode.
// Errors: the reader's, no Intel PT AUXTRACE_INFO, decode errors, the
// writer's (naming the path).
Status run_inject_itrace(const std::string& in_path, const std::string& out_path,
                         const InjectItraceOptions& opts);

}  // namespace perfkit::analysis
