// perf script over an Intel PT recording: the trace is decoded
// (decode_itrace) and the synthesized samples are printed by the same
// ScriptPrinter as recorded samples, the way perf 6.1 prints them:
//
//   Session records, in time order --> ScriptPrinter (recorded samples, side-band)
//     at AUXTRACE_INFO: synthesized attrs join the event set, ItraceStream starts
//     before each record: ItraceStream samples older than it --> ItraceScript
//
// as perf decodes its queues up to each event's time, so comm and maps are
// as of each sample's time.
//
// Branches print as perf prints BTS-like events (ip => addr, optional
// callindent for --call-trace/--call-ret-trace); power events, psb and
// ptwrite print their synth text; errors print as perf's auxtrace error line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "abi/attr.h"
#include "base/error.h"
#include "base/output.h"
#include "intelpt/itrace_options.h"
#include "intelpt/synth.h"
#include "script/script.h"
#include "session/session.h"

namespace perfkit::script {

struct ScriptItraceOptions {
  intelpt::ItraceOptions itrace = intelpt::itrace_defaults(true);
  // --xed: the instruction text after the insn bytes (Zydis, AT&T syntax as
  // perf's `xed -A` shows it).
  bool disasm = false;
  unsigned jobs = 0;  // decoder threads (0: one per core)
  // --call-trace: dso names in the callindent column padded to this width.
  std::size_t dso_pad = 0;
  // (trace bytes decoded, in all), now and then: ItraceDecodeOptions::progress.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};

// Runs perf script over the Intel PT trace of `session` (opened from `path`,
// which is read a second time for the trace; pipes are not supported).
// Errors: as run_script, decode errors, "-" as `path`.
Status run_script_itrace(session::Session& session, ScriptOptions opts,
                         const ScriptItraceOptions& it, const std::string& path, FdWriter& out);

}  // namespace perfkit::script
