// perf inject --itrace: a recording's Intel PT trace decoded and written back
// as the samples perf synthesizes (script_itrace.h's events), in place of
// the trace: the AUXTRACE_INFO, AUXTRACE, AUX and ITRACE_START records and
// the AUXTRACE feature go; the side-band records stay; the synthesized
// events join the attrs (and EVENT_DESC) with ids of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/error.h"
#include "intelpt/itrace_options.h"

namespace perfkit::inject {

struct InjectItraceOptions {
  intelpt::ItraceOptions itrace = intelpt::itrace_defaults(true);
  unsigned jobs = 0;
  // --strip: the recorded events' samples and the context switch records
  // are left out; only the side-band the synthesized samples need stays.
  bool strip = false;
  // perf report's decode (add_callchain, itrace G): the recorded samples
  // without call chains get one from the thread stacks as of their time,
  // and their events CALLCHAIN. (perf inject writes no such chains.)
  bool add_callchains = false;
  // perf's closing warning ("Warning:\nN instruction trace errors") goes here.
  std::function<void(const std::string&)> warn;
  // (trace bytes decoded, in all), now and then: ItraceDecodeOptions::progress.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};

// Decodes `in_path` (a file, not a pipe) and writes `out_path` in file mode.
// Errors: the reader's, no Intel PT AUXTRACE_INFO, decode errors, the
// writer's (naming the path).
Status run_inject_itrace(const std::string& in_path, const std::string& out_path,
                         const InjectItraceOptions& opts);

// perf report's --itrace default for Intel PT: instructions every 100us with
// call chains, transactions, ptwrite, power events and errors (no branches).
intelpt::ItraceOptions report_itrace_defaults();

}  // namespace perfkit::inject
