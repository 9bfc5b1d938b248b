// The fields perf script prints and how -F chooses them: one set of fields
// per output type (hardware, software, tracepoint, hw-cache, raw,
// breakpoint, synthesized, other), perf's defaults for each, and the -F
// grammar:
//
//   -F comm,tid,ip        these fields for every type (where valid)
//   -F sw:comm,ip         these fields for software events only
//   -F +srcline,-period   edit the current fields (every type, or TYPE:+f)
//
// Once the recording is known, check() drops default fields the samples do
// not carry and rejects user-chosen ones they lack, as perf does.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "abi/attr.h"
#include "base/error.h"
#include "perfdata/event_set.h"

namespace perfkit::script {

enum class ScriptField : std::uint8_t {
  kComm,
  kTid,
  kPid,
  kTime,
  kCpu,
  kEvent,
  kTrace,
  kIp,
  kSym,
  kDso,
  kAddr,
  kSymoff,
  kSrcline,
  kPeriod,
  kIregs,
  kBrstack,
  kBrstacksym,
  kDataSrc,
  kWeight,
  kBpfOutput,
  kCallindent,
  kInsn,
  kInsnlen,
  kBrstackinsn,
  kBrstackoff,
  kSynth,
  kPhysAddr,
  kUregs,
  kMetric,
  kMisc,
  kSrccode,
  kIpc,
  kTod,
  kDataPageSize,
  kCodePageSize,
  kInsLat,
  kBrstackinsnlen,
  kMachinePid,
  kVcpu,
  kCount,
};

using FieldMask = std::uint64_t;
constexpr FieldMask field_bit(ScriptField f) { return 1ULL << static_cast<unsigned>(f); }

// perf's output types: attr types below PERF_TYPE_MAX, synthesized, other.
enum OutputType : std::uint8_t {
  kOutHardware,
  kOutSoftware,
  kOutTracepoint,
  kOutHwCache,
  kOutRaw,
  kOutBreakpoint,
  kOutSynth,
  kOutOther,
  kOutTypes,
};

OutputType output_type(std::uint32_t attr_type);

struct OutputConfig {
  FieldMask fields = 0;
  FieldMask invalid = 0;
  FieldMask user_set_fields = 0;
  FieldMask user_unset_fields = 0;
  bool user_set = false;
  bool wildcard_set = false;
  bool has(ScriptField f) const { return (fields & field_bit(f)) != 0; }
};

// What the recording has that check() needs.
struct RecordingTraits {
  bool pipe = false;               // attrs arrive later (perf checks an empty list first)
  bool has_stat = false;           // HEADER_STAT: nothing is checked
  bool has_auxtrace = false;       // HEADER_AUXTRACE: user fields are allowed anyway
  std::uint64_t branch_types = 0;  // the events' branch_sample_type bits, together
  bool has_clock = false;          // HEADER_CLOCK_DATA, for tod
};

using WarnFn = std::function<void(const std::string&)>;

class ScriptFields {
 public:
  ScriptFields();  // perf's defaults

  // Applies one -F argument. Errors: an unknown type or field, +/- mixed
  // with plain fields, an empty list for all types, a field invalid for the
  // type named. Warnings (fields invalid for some types) go to `warn`.
  Status parse(std::string_view arg, const WarnFn& warn);

  // perf_session__check_output_opt: drops default fields the first event of
  // each type cannot print and errors on user-set ones; decides whether
  // callchains are shown (`use_callchain`, in: not -G). Errors name the
  // event and field.
  Status check(const perfdata::EventSet& events, const std::vector<std::string>& names,
               const RecordingTraits& traits, bool& use_callchain);
  // perf's process_attr for an attr learned from a pipe: checks it when it is
  // the first of its type and adds ip,sym for callchains.
  Status check_pipe_attr(const perfdata::EventSet& events, std::size_t index,
                         const std::string& name, const RecordingTraits& traits,
                         bool use_callchain);

  const OutputConfig& of(std::uint32_t attr_type) const { return out_[output_type(attr_type)]; }
  const OutputConfig& of_type(OutputType t) const { return out_[t]; }
  bool print_flags() const { return print_flags_; }
  bool any_user_set() const;

 private:
  // One field of a -F list set or removed (`remove`) for events of `type`
  // (-1: every type, as perf's wildcard). Errors: a field not valid for
  // `type`'s events.
  Status apply_field(int type, unsigned field, bool remove, std::string_view name,
                     const WarnFn& warn);
  Status check_attr(const abi::EventAttr& attr, const std::string& name,
                    const RecordingTraits& traits);

  std::array<OutputConfig, kOutTypes> out_;
  bool print_flags_ = false;
};

// perf's name of a field ("comm", "srcline", ...).
std::string_view field_name(ScriptField f);

}  // namespace perfkit::script
