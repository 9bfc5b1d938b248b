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
#include "analysis/script.h"
#include "analysis/session.h"
#include "base/error.h"
#include "base/output.h"
#include "intelpt/itrace_options.h"
#include "intelpt/synth.h"

namespace perfkit::analysis {

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

// One event perf synthesizes from an Intel PT trace for --itrace.
struct ItraceSynthEvent {
  intelpt::SampleKind kind;
  abi::EventAttr attr;
  std::string name;  // perf's: "branches:u", "instructions:u", "transactions", "cbr", ...
};

// intel_pt_synth_events: the events perf adds for `itrace`, in its order,
// from the intel_pt event's attr `pt`; per-cpu queues keep CPU in the
// samples, timeless decoding drops TIME.
std::vector<ItraceSynthEvent> itrace_synth_events(const abi::EventAttr& pt,
                                                  const intelpt::ItraceOptions& itrace,
                                                  bool per_cpu, bool timeless);

// Whether the recording at `path` holds an Intel PT trace to decode (an
// AUXTRACE_INFO of type intel_pt; other AUX traces, such as ARM ETM, are
// not). False for pipes and unreadable files.
bool has_intel_pt(const std::string& path);

// Runs perf script over the Intel PT trace of `session` (opened from `path`,
// which is read a second time for the trace; pipes are not supported).
// Errors: as run_script, decode errors, "-" as `path`.
Status run_script_itrace(Session& session, ScriptOptions opts, const ScriptItraceOptions& it,
                         const std::string& path, FdWriter& out);

}  // namespace perfkit::analysis
