#include "itrace/synth_record.h"

#include <algorithm>

#include "abi/perf_event.h"
#include "itrace/synth_events.h"
#include "perfdata/reader.h"
#include "record/encode.h"
#include "record/records.h"

namespace perfkit::itrace {

using namespace perfkit::abi;
using intelpt::SampleKind;

namespace {

void put32(std::vector<std::uint8_t>& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put64(std::vector<std::uint8_t>& b, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// The RAW payload of a synth event: perf's perf_synth_intel_* struct without
// its leading 4 bytes of padding (the raw size field takes their place).
void synth_raw(const intelpt::SynthSample& s, std::uint32_t max_non_turbo,
               std::vector<std::uint8_t>& raw) {
  raw.clear();
  switch (s.kind) {
    case SampleKind::kPtwrite:
      put32(raw, s.aux & 1);
      put64(raw, s.payload);
      break;
    case SampleKind::kExstop:
      put32(raw, s.aux & 1);
      break;
    case SampleKind::kCbr:
      put32(raw, (s.aux & 0xff) | ((max_non_turbo & 0xff) << 16));
      put32(raw, s.cbr_freq_khz);
      put32(raw, 0);
      break;
    case SampleKind::kPsb:
    case SampleKind::kMwait:
    case SampleKind::kPwre:
    case SampleKind::kPwrx:
      put32(raw, 0);
      put64(raw, s.payload);
      break;
    default:
      break;
  }
}

// intel_pt_ns_to_ticks: a period in ns as TSC ticks (the attr's period).
std::uint64_t ns_to_ticks(const intelpt::PtConfig& cfg, std::uint64_t ns) {
  if (!cfg.time_mult) return ns;
  return ((ns / cfg.time_mult) << cfg.time_shift) +
         ((ns % cfg.time_mult) << cfg.time_shift) / cfg.time_mult;
}

}  // namespace

Expected<intelpt::PtConfig> read_pt_config(const std::string& path) {
  PK_ASSIGN(auto in, perfdata::Reader::open(path));
  perfdata::ReadRecord rec;
  while (true) {
    PK_ASSIGN(bool got, in->next(rec));
    if (!got) break;
    if (rec.view.type != kRecordAuxtraceInfo) continue;
    PK_ASSIGN(auto info, record::parse_auxtrace_info(rec.view));
    if (info.type != 1) continue;  // PERF_AUXTRACE_INTEL_PT
    return intelpt::parse_auxtrace_info(info);
  }
  return make_error("no Intel PT AUXTRACE_INFO record to decode with");
}

const EventAttr& pt_event_attr(const perfdata::EventSet& events, std::uint32_t pmu_type) {
  static const EventAttr kNone{};
  for (const auto& ev : events.events())
    if (ev.attr.type == pmu_type) return ev.attr;
  return events.empty() ? kNone : events[0].attr;
}

SynthEventOf add_synth_events(perfdata::EventSet& events, const intelpt::PtConfig& cfg,
                              const intelpt::ItraceOptions& itrace) {
  const EventAttr pt = pt_event_attr(events, cfg.pmu_type);
  std::uint64_t next_id = 1;
  for (const auto& ev : events.events())
    for (auto id : ev.ids) next_id = std::max(next_id, id + 1);
  next_id += 1000000000;  // perf's offset for the ids of synthesized events
  const bool timeless = !(pt.config & cfg.tsc_bit) || !(pt.sample_type & kSampleTime);
  SynthEventOf event_of;
  event_of.fill(-1);
  for (auto& e : itrace_synth_events(pt, itrace, cfg.per_cpu_mmaps, timeless)) {
    if (e.kind == SampleKind::kInstructions && itrace.period_type == intelpt::PeriodType::kNanosecs)
      e.attr.sample_period = ns_to_ticks(cfg, itrace.period);
    events.add(e.attr, {next_id++});
    events[events.size() - 1].name = e.name;
    event_of[static_cast<std::size_t>(e.kind)] = static_cast<int>(events.size() - 1);
  }
  return event_of;
}

Bytes SynthRecords::sample(const ItraceSample& is, const RecordLayout& layout, std::uint64_t id) {
  const intelpt::SynthSample& s = *is.sample;
  record::Sample smp;
  smp.sample_type = layout.sample_type;
  smp.ip = s.ip;
  smp.pid = static_cast<std::uint32_t>(is.pid);
  smp.tid = static_cast<std::uint32_t>(is.tid);
  smp.time = s.time;
  smp.addr = s.addr;
  smp.id = smp.identifier = id;
  smp.cpu = static_cast<std::uint32_t>(is.cpu);
  smp.period = s.period;
  if (layout.sample_type & kSampleRaw) {
    synth_raw(s, max_non_turbo_, raw_);
    smp.raw = Bytes(raw_);
  }
  if (layout.sample_type & kSampleCallchain) smp.callchain = callchain(s);
  if (layout.sample_type & kSampleBranchStack) smp.branch_stack = itrace_branch_stack(s, brs_);
  // perf's intel_pt_cpumode: by the sample's IP, or by its target when it
  // has none; x86_64 kernel addresses are those from 2^63 up.
  const std::uint64_t at = s.ip ? s.ip : s.addr;
  const std::uint16_t misc = at >= (1ULL << 63) ? kMiscKernel : kMiscUser;
  record::encode_sample_into(smp, layout, misc, false, record_);
  return Bytes(record_);
}

Bytes SynthRecords::error(const ItraceSample& is) {
  const intelpt::SynthSample& s = *is.sample;
  record::RecordBuilder b(std::move(record_), kRecordAuxtraceError, 0, false);
  b.u32(1).u32(static_cast<std::uint32_t>(s.error)).u32(static_cast<std::uint32_t>(is.cpu));
  b.u32(static_cast<std::uint32_t>(is.pid)).u32(static_cast<std::uint32_t>(is.tid)).u32(2);
  b.u64(s.ip).u64(s.time).fixed_string(s.error_msg ? s.error_msg : "", 64).u32(0).u32(0);
  record_ = b.finish();
  return Bytes(record_);
}

// As perf's thread stack writes a chain: a context marker before the first
// address and wherever the addresses cross into the other mode.
record::U64Array SynthRecords::callchain(const intelpt::SynthSample& s) {
  chain_.clear();
  std::uint64_t context = 0;
  auto add = [&](std::uint64_t ip) {
    const std::uint64_t ctx = ip >= (1ULL << 63) ? kContextKernel : kContextUser;
    if (chain_.empty() || ctx != context) chain_.push_back(context = ctx);
    chain_.push_back(ip);
  };
  if (s.callchain_nr)
    for (std::uint32_t i = 0; i < s.callchain_nr; ++i) add(s.callchain[i]);
  else
    add(s.ip);
  return record::U64Array(reinterpret_cast<const std::uint8_t*>(chain_.data()), chain_.size(),
                          false);
}

}  // namespace perfkit::itrace
