#include "script/script_fields.h"

#include <fmt/format.h>

#include <vector>

#include "abi/perf_event.h"
#include "base/text.h"

namespace perfkit::script {

using namespace perfkit::abi;
using F = ScriptField;

namespace {

constexpr std::string_view kFieldNames[] = {
    "comm",
    "tid",
    "pid",
    "time",
    "cpu",
    "event",
    "trace",
    "ip",
    "sym",
    "dso",
    "addr",
    "symoff",
    "srcline",
    "period",
    "iregs",
    "brstack",
    "brstacksym",
    "data_src",
    "weight",
    "bpf-output",
    "callindent",
    "insn",
    "insnlen",
    "brstackinsn",
    "brstackoff",
    "synth",
    "phys_addr",
    "uregs",
    "metric",
    "misc",
    "srccode",
    "ipc",
    "tod",
    "data_page_size",
    "code_page_size",
    "ins_lat",
    "brstackinsnlen",
    "machine_pid",
    "vcpu",
};
static_assert(std::size(kFieldNames) == static_cast<std::size_t>(F::kCount));

// The order perf's table lists fields in, for lookups (uregs sits after iregs there).
constexpr F kLookupOrder[] = {
    F::kComm,
    F::kTid,
    F::kPid,
    F::kTime,
    F::kCpu,
    F::kEvent,
    F::kTrace,
    F::kIp,
    F::kSym,
    F::kDso,
    F::kAddr,
    F::kSymoff,
    F::kSrcline,
    F::kPeriod,
    F::kIregs,
    F::kUregs,
    F::kBrstack,
    F::kBrstacksym,
    F::kDataSrc,
    F::kWeight,
    F::kBpfOutput,
    F::kCallindent,
    F::kInsn,
    F::kInsnlen,
    F::kBrstackinsn,
    F::kBrstackoff,
    F::kSynth,
    F::kPhysAddr,
    F::kMetric,
    F::kMisc,
    F::kSrccode,
    F::kIpc,
    F::kTod,
    F::kDataPageSize,
    F::kCodePageSize,
    F::kInsLat,
    F::kBrstackinsnlen,
    F::kMachinePid,
    F::kVcpu,
};

constexpr FieldMask bits(std::initializer_list<F> fs) {
  FieldMask m = 0;
  for (F f : fs) m |= field_bit(f);
  return m;
}

constexpr FieldMask kCommon =
    bits({F::kComm, F::kTid, F::kCpu, F::kTime, F::kEvent, F::kIp, F::kSym, F::kSymoff, F::kDso});

// perf's event_type() names, used in its messages.
std::string_view type_name(int j) {
  switch (j) {
    case kOutHardware:
      return "hardware";
    case kOutSoftware:
      return "software";
    case kOutTracepoint:
      return "tracepoint";
    case kOutHwCache:
      return "hardware-cache";
    default:
      return "unknown";
  }
}

bool is_dummy(const EventAttr& a) { return a.type == 1 && a.config == 9; }

}  // namespace

std::string_view field_name(ScriptField f) { return kFieldNames[static_cast<unsigned>(f)]; }

OutputType output_type(std::uint32_t attr_type) {
  if (attr_type == kAttrTypeSynth) return kOutSynth;
  if (attr_type < 6) return static_cast<OutputType>(attr_type);
  return kOutOther;
}

ScriptFields::ScriptFields() {
  const FieldMask no_trace_bpf = bits({F::kTrace, F::kBpfOutput});
  out_[kOutHardware] = {kCommon | field_bit(F::kPeriod), no_trace_bpf};
  out_[kOutSoftware] = {kCommon | bits({F::kPeriod, F::kBpfOutput}), field_bit(F::kTrace)};
  out_[kOutTracepoint] = {bits({F::kComm, F::kTid, F::kCpu, F::kTime, F::kEvent, F::kTrace}), 0};
  out_[kOutHwCache] = {kCommon | field_bit(F::kPeriod), no_trace_bpf};
  out_[kOutRaw] = {kCommon | bits({F::kPeriod, F::kAddr, F::kDataSrc, F::kWeight, F::kPhysAddr,
                                   F::kDataPageSize, F::kCodePageSize, F::kInsLat}),
                   no_trace_bpf};
  out_[kOutBreakpoint] = {kCommon | field_bit(F::kPeriod), no_trace_bpf};
  out_[kOutSynth] = {kCommon | field_bit(F::kSynth), no_trace_bpf};
  out_[kOutOther] = {kCommon | field_bit(F::kPeriod), no_trace_bpf};
}

bool ScriptFields::any_user_set() const {
  for (const auto& o : out_)
    if (o.user_set) return true;
  return false;
}

namespace {

// The event type a "type:" prefix of -F names ("hw", "sw", "trace", "raw",
// "break", "synth"), or -1.
int type_of_prefix(std::string_view t) {
  if (t == "hw") return kOutHardware;
  if (t == "sw") return kOutSoftware;
  if (t == "trace") return kOutTracepoint;
  if (t == "raw") return kOutRaw;
  if (t == "break") return kOutBreakpoint;
  if (t == "synth") return kOutSynth;
  return -1;
}

}  // namespace

Status ScriptFields::parse(std::string_view arg, const WarnFn& warn) {
  int type = -1;
  std::string_view list = arg;
  const auto colon = arg.find(':');
  if (colon != std::string_view::npos) {
    type = type_of_prefix(arg.substr(0, colon));
    if (type < 0) return make_error("Invalid event type in field string.");
    list = arg.substr(colon + 1);
    if (out_[type].user_set && warn)
      warn(fmt::format("Overriding previous field request for {} events.", type_name(type)));
    if (list.find_first_of("+-") == std::string_view::npos) {
      out_[type].fields = 0;
      out_[type].user_set = true;
      out_[type].wildcard_set = false;
    }
  } else {
    if (arg.empty()) return make_error("Cannot set fields to 'none' for all event types.");
    if (arg.find_first_of("+-") == std::string_view::npos) {
      if (any_user_set() && warn) warn("Overriding previous field request for all events.");
      for (auto& o : out_) {
        o.fields = 0;
        o.user_set = true;
        o.wildcard_set = true;
      }
    }
  }
  enum { kDefault, kSet, kAdd, kRemove } change = kDefault;
  for (std::string_view tok : split(list, ',')) {
    if (tok.empty()) continue;
    if (tok[0] == '+' || tok[0] == '-') {
      if (change == kSet) return make_error("Cannot mix +-field with overridden fields");
      change = tok[0] == '+' ? kAdd : kRemove;
      tok.remove_prefix(1);
    } else {
      if (change != kSet && change != kDefault)
        return make_error("Cannot mix +-field with overridden fields");
      change = kSet;
    }
    int found = -1;
    for (F f : kLookupOrder)
      if (field_name(f) == tok) found = static_cast<int>(f);
    if (found < 0 && tok == "flags") {
      print_flags_ = change != kRemove;
      continue;
    }
    if (found < 0) return make_error("Invalid field requested.");
    PK_TRY(apply_field(type, static_cast<unsigned>(found), change == kRemove, tok, warn));
  }
  return ok();
}

Status ScriptFields::apply_field(int type, unsigned field, bool remove, std::string_view name,
                                 const WarnFn& warn) {
  const FieldMask bit = 1ULL << field;
  if (type >= 0) {
    OutputConfig& o = out_[type];
    if (o.invalid & bit) return make_error("'{}' not valid for {} events.", name, type_name(type));
    if (remove)
      o.fields &= ~bit;
    else
      o.fields |= bit;
    o.user_set = true;
    o.wildcard_set = true;
    return ok();
  }
  for (int j = 0; j < kOutTypes; ++j) {
    OutputConfig& o = out_[j];
    if (o.invalid & bit) {
      if (warn) warn(fmt::format("'{}' not valid for {} events. Ignoring.", name, type_name(j)));
      continue;
    }
    if (remove) {
      o.fields &= ~bit;
      o.user_set_fields &= ~bit;
      o.user_unset_fields |= bit;
    } else {
      o.fields |= bit;
      o.user_set_fields |= bit;
      o.user_unset_fields &= ~bit;
    }
    o.user_set = true;
    o.wildcard_set = true;
  }
  return ok();
}

// perf's evsel__check_attr for the first event of a type.
Status ScriptFields::check_attr(const EventAttr& attr, const std::string& name,
                                const RecordingTraits& traits) {
  if (is_dummy(attr) || traits.has_stat) return ok();
  OutputConfig& o = out_[output_type(attr.type)];
  const std::uint64_t st = attr.sample_type;
  // Removes a default field the samples lack; a user-set one is an error
  // unless `allow` (AUXTRACE recordings synthesize them).
  auto need = [&](std::uint64_t sample_bits, std::string_view what, FieldMask field,
                  bool allow) -> Status {
    if (st & sample_bits) return ok();
    if (o.user_set_fields & field) {
      if (allow) return ok();
      return make_error(
          "Samples for '{}' event do not have {} attribute set. Cannot print '{}' field.", name,
          what, field_name(static_cast<F>(__builtin_ctzll(field))));
    }
    o.fields &= ~field;
    return ok();
  };
  const bool aux = traits.has_auxtrace;
  if (o.has(F::kIp)) PK_TRY(need(kSampleIp, "IP", field_bit(F::kIp), false));
  if (o.has(F::kAddr)) PK_TRY(need(kSampleAddr, "ADDR", field_bit(F::kAddr), aux));
  if (o.has(F::kDataSrc)) PK_TRY(need(kSampleDataSrc, "DATA_SRC", field_bit(F::kDataSrc), aux));
  if (o.has(F::kWeight)) PK_TRY(need(kSampleWeightType, "WEIGHT", field_bit(F::kWeight), aux));
  if (o.has(F::kSym) && !(st & (kSampleIp | kSampleAddr)))
    return make_error(
        "Display of symbols requested but neither sample IP nor sample address\navailable. "
        "Hence, no addresses to convert to symbols.");
  if (o.has(F::kSymoff) && !o.has(F::kSym))
    return make_error("Display of offsets requested but symbol is notselected.");
  if (o.has(F::kDso) && !(st & (kSampleIp | kSampleAddr)))
    return make_error("Display of DSO requested but no address to convert.");
  if ((o.has(F::kSrcline) || o.has(F::kSrccode)) && !o.has(F::kIp))
    return make_error(
        "Display of source line number requested but sample IP is not\nselected. Hence, no "
        "address to lookup the source line number.");
  if ((o.has(F::kBrstackinsn) || o.has(F::kBrstackinsnlen)) && !aux &&
      !(traits.branch_types & kBranchAny))
    return make_error(
        "Display of branch stack assembler requested, but non all-branch filter set\nHint: run "
        "'perf record -b ...'");
  if ((o.has(F::kPid) || o.has(F::kTid)) && !(st & kSampleTid)) {
    if (o.user_set_fields & (field_bit(F::kTid) | field_bit(F::kPid)))
      return make_error(
          "Samples for '{}' event do not have TID attribute set. Cannot print 'tid' field.", name);
    o.fields &= ~(field_bit(F::kTid) | field_bit(F::kPid));
  }
  if (o.has(F::kTime)) PK_TRY(need(kSampleTime, "TIME", field_bit(F::kTime), false));
  if (o.has(F::kCpu)) PK_TRY(need(kSampleCpu, "CPU", field_bit(F::kCpu), aux));
  if (o.has(F::kIregs)) PK_TRY(need(kSampleRegsIntr, "IREGS", field_bit(F::kIregs), aux));
  if (o.has(F::kUregs)) PK_TRY(need(kSampleRegsUser, "UREGS", field_bit(F::kUregs), false));
  if (o.has(F::kPhysAddr)) PK_TRY(need(kSamplePhysAddr, "PHYS_ADDR", field_bit(F::kPhysAddr), aux));
  if (o.has(F::kDataPageSize))
    PK_TRY(need(kSampleDataPageSize, "DATA_PAGE_SIZE", field_bit(F::kDataPageSize), false));
  if (o.has(F::kCodePageSize))
    PK_TRY(need(kSampleCodePageSize, "CODE_PAGE_SIZE", field_bit(F::kCodePageSize), false));
  if (o.has(F::kInsLat))
    PK_TRY(need(kSampleWeightStruct, "WEIGHT_STRUCT", field_bit(F::kInsLat), false));
  return ok();
}

Status ScriptFields::check(const perfdata::EventSet& events, const std::vector<std::string>& names,
                           const RecordingTraits& traits, bool& use_callchain) {
  // A pipe's attrs come later: perf checks an empty list here.
  const std::size_t n = traits.pipe ? 0 : events.size();
  bool tod = false;
  for (int j = 0; j < kOutTypes; ++j) {
    int first = -1;
    for (std::size_t i = 0; i < n && first < 0; ++i)
      if (!is_dummy(events[i].attr) && output_type(events[i].attr.type) == j)
        first = static_cast<int>(i);
    OutputConfig& o = out_[j];
    if (first < 0 && o.user_set && !o.wildcard_set && j != kOutSynth)
      return make_error("{} events do not exist. Remove corresponding -F option to proceed.",
                        type_name(j));
    if (first < 0) continue;
    const auto& ev = events[static_cast<std::size_t>(first)];
    if (o.fields) PK_TRY(check_attr(ev.attr, names[static_cast<std::size_t>(first)], traits));
    tod |= o.has(F::kTod);
  }
  if (use_callchain && n > 0) {
    bool any = false;
    for (std::size_t i = 0; i < n; ++i) any |= (events[i].attr.sample_type & kSampleCallchain) != 0;
    use_callchain = any;
  }
  if (use_callchain && !out_[kOutTracepoint].user_set) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto& a = events[i].attr;
      if (a.type != 2 || !(a.sample_type & kSampleCallchain)) continue;
      out_[kOutTracepoint].fields |= bits({F::kIp, F::kSym, F::kSymoff, F::kDso});
      return ok();
    }
  }
  if (tod && !traits.has_clock)
    return make_error(
        "Can't provide 'tod' time, missing clock data. Please record with -k/--clockid option.");
  return ok();
}

Status ScriptFields::check_pipe_attr(const perfdata::EventSet& events, std::size_t index,
                                     const std::string& name, const RecordingTraits& traits,
                                     bool use_callchain) {
  const EventAttr& attr = events[index].attr;
  if (attr.type >= 6 && attr.type != kAttrTypeSynth) return ok();
  for (std::size_t i = 0; i < events.size(); ++i)
    if (i != index && events[i].attr.type == attr.type) return ok();
  if (attr.sample_type) PK_TRY(check_attr(attr, name, traits));
  std::uint64_t combined = 0;
  for (std::size_t i = 0; i < events.size(); ++i) combined |= events[i].attr.sample_type;
  const bool user_stack = (combined & kSampleRegsUser) && (combined & kSampleStackUser);
  if (use_callchain &&
      ((combined & kSampleCallchain) || (combined & kSampleBranchStack) || user_stack)) {
    OutputConfig& o = out_[output_type(attr.type)];
    if (!(o.user_unset_fields & field_bit(F::kIp))) o.fields |= field_bit(F::kIp);
    if (!(o.user_unset_fields & field_bit(F::kSym))) o.fields |= field_bit(F::kSym);
  }
  return ok();
}

}  // namespace perfkit::script
