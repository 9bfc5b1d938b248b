// The synthesized samples of an Intel PT decode as the records perf delivers
// for them: each a SAMPLE of one of perf's synthesized events (with perf's
// ids and the perf_synth_intel_* RAW payloads), each decode error an
// AUXTRACE_ERROR. perf inject --itrace writes them; report's decode hands
// them to the session as if read from the file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "abi/layout.h"
#include "base/bytes.h"
#include "base/error.h"
#include "intelpt/config.h"
#include "intelpt/itrace_options.h"
#include "intelpt/synth.h"
#include "itrace/itrace.h"
#include "perfdata/event_set.h"

namespace perfkit::itrace {

constexpr std::size_t kSynthKinds = static_cast<std::size_t>(intelpt::SampleKind::kError) + 1;
// The event each sample kind goes to (an index into the event set; -1: none).
using SynthEventOf = std::array<int, kSynthKinds>;

// The recording's Intel PT parameters: its first AUXTRACE_INFO of type
// intel_pt, which perf writes with the first records. Errors: the reader's,
// "no Intel PT AUXTRACE_INFO record to decode with".
Expected<intelpt::PtConfig> read_pt_config(const std::string& path);

// Appends perf's synthesized events for `itrace` (intel_pt_synth_events) to
// `events`, whose recorded events come first, with perf's ids (10^9 past
// the recorded ones) and an instructions period given in ns as TSC ticks.
SynthEventOf add_synth_events(perfdata::EventSet& events, const intelpt::PtConfig& cfg,
                              const intelpt::ItraceOptions& itrace);

// perf's intel_pt event among `events` (the first event when none is).
const abi::EventAttr& pt_event_attr(const perfdata::EventSet& events, std::uint32_t pmu_type);

// Encodes synthesized samples; each record is valid until the next call.
class SynthRecords {
 public:
  explicit SynthRecords(std::uint32_t max_non_turbo) : max_non_turbo_(max_non_turbo) {}
  // The SAMPLE of `is` (neither an error nor a chain) for the event of
  // `layout` and `id`.
  Bytes sample(const ItraceSample& is, const abi::RecordLayout& layout, std::uint64_t id);
  // The AUXTRACE_ERROR record of an error sample.
  Bytes error(const ItraceSample& is);

 private:
  record::U64Array callchain(const intelpt::SynthSample& s);

  std::uint32_t max_non_turbo_;
  std::vector<std::uint8_t> record_, raw_;
  std::vector<std::uint64_t> chain_;
  std::vector<std::uint8_t> brs_;  // the branch stack's entries (itrace l)
};

}  // namespace perfkit::itrace
