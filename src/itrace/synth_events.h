// The events perf adds to a recording's event set when it decodes an Intel
// PT trace for --itrace (intel_pt_synth_events), which script, inject and
// report all describe the synthesized samples with.
#pragma once

#include <string>
#include <vector>

#include "abi/attr.h"
#include "intelpt/itrace_options.h"
#include "intelpt/synth.h"

namespace perfkit::itrace {

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

}  // namespace perfkit::itrace
