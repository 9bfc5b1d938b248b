// perf inject --itrace (inject_itrace.h): the side-band records copied, the
// trace decoded (decode_itrace) and each synthesized sample encoded as a
// SAMPLE of its event (perf's perf_synth_intel_* payloads for the synth
// events, perf's call chains with a PERF_CONTEXT_USER marker) or as an
// AUXTRACE_ERROR record.
#include "inject/inject_itrace.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "abi/layout.h"
#include "abi/perf_event.h"
#include "intelpt/config.h"
#include "itrace/itrace.h"
#include "itrace/synth_events.h"
#include "perfdata/features.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "record/encode.h"
#include "record/records.h"

namespace perfkit::inject {

using namespace perfkit::abi;
using intelpt::SampleKind;

namespace {

constexpr std::size_t kKinds = static_cast<std::size_t>(SampleKind::kError) + 1;

// Records the trace is made of: they do not survive decoding.
// Records that do not go to the output: the trace, perf's rounds (the
// samples come after the side-band, so the reader sorts them all), the
// stream-only header records and the id index of the old ids.
bool dropped_record(std::uint32_t type) {
  return type == kRecordAuxtraceInfo || type == kRecordAuxtrace || type == kRecordAuxtraceError ||
         type == kRecordAux || type == kRecordItraceStart || type == kRecordFinishedRound ||
         type == kRecordCompressed || type == kRecordCompressed2 ||
         (type >= kRecordUserTypeStart && type <= kRecordUserTypeStart + 3) || type == 69 ||
         type == 80;
}

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

struct PtInfo {
  bool have = false, per_cpu = false;
  std::uint32_t pmu_type = 0, max_non_turbo = 0;
  std::uint64_t tsc_bit = 0x400;
  std::uint32_t time_mult = 0;
  std::uint16_t time_shift = 0;
  // intel_pt_ns_to_ticks: a period in ns as TSC ticks (the attr's period).
  std::uint64_t ns_to_ticks(std::uint64_t ns) const {
    if (!time_mult) return ns;
    return ((ns / time_mult) << time_shift) + ((ns % time_mult) << time_shift) / time_mult;
  }
};

bool has_callchain(const perfdata::EventSet& events, const record::RecordView& v) {
  const int idx = events.attr_index(v);
  return idx < 0 || (events[static_cast<std::size_t>(idx)].attr.sample_type & kSampleCallchain);
}

// The recorded samples that get call chains (InjectItraceOptions::
// add_callchains), in file order, and the chains decoding gave them.
struct HeldSamples {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint64_t> words;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> chain_of;  // (at, nr) by ordinal

  void keep_chain(std::uint32_t ordinal, const std::uint64_t* chain, std::uint32_t nr) {
    if (ordinal >= chain_of.size()) chain_of.resize(ordinal + 1, {0, ~0u});
    chain_of[ordinal] = {static_cast<std::uint32_t>(words.size()), nr};
    words.insert(words.end(), chain, chain + nr);
  }
  // Writes each sample with its chain (one the trace gave none gets perf's
  // [context, ip]), laid out as `layouts` say (the events' new attrs).
  Status write(const perfdata::EventSet& old, const std::vector<RecordLayout>& layouts,
               std::size_t max_chain, perfdata::Writer& writer) const {
    record::Sample smp;
    std::uint64_t fallback[2];
    std::uint32_t ordinal = 0;
    for (Bytes rest(bytes); !rest.empty(); ++ordinal) {
      record::RecordView view = record::view_header(rest.data(), false);
      view.bytes = rest.first(view.size);
      rest = rest.subspan(view.size);
      const auto i = static_cast<std::size_t>(old.attr_index(view));
      PK_TRY(record::decode_sample(view, old[i].layout, smp));
      const std::uint64_t* chain = fallback;
      std::uint32_t nr = 0;
      if (ordinal < chain_of.size() && chain_of[ordinal].second != ~0u) {
        chain = words.data() + chain_of[ordinal].first;
        nr = chain_of[ordinal].second;
      } else if (max_chain >= 2) {
        fallback[0] = smp.ip >= (1ULL << 63) ? kContextKernel : kContextUser;
        fallback[1] = smp.ip;
        nr = 2;
      }
      smp.sample_type = layouts[i].sample_type;
      smp.callchain = record::U64Array(reinterpret_cast<const std::uint8_t*>(chain), nr, false);
      PK_TRY(writer.write(record::encode_sample(smp, layouts[i], view.misc, false)));
    }
    return ok();
  }
};

// What a first pass over the input keeps: the side-band, in file order; the
// trace's parameters; the recorded samples that get call chains, held back
// until decoding gives them.
struct SideBand {
  std::vector<std::uint8_t> records;
  HeldSamples held;
  PtInfo pt;
};

Status read_side_band(perfdata::Reader& in, const InjectItraceOptions& opts, SideBand& out) {
  perfdata::ReadRecord rec;
  for (;;) {
    PK_ASSIGN(bool got, in.next(rec));
    if (!got) break;
    const auto& v = rec.view;
    if (opts.add_callchains && v.type == kRecordSample && !has_callchain(in.events(), v)) {
      out.held.bytes.insert(out.held.bytes.end(), v.bytes.begin(), v.bytes.end());
      continue;
    }
    if (v.type == kRecordAuxtraceInfo && !out.pt.have) {
      PK_ASSIGN(auto info, record::parse_auxtrace_info(v));
      PK_ASSIGN(auto cfg, intelpt::parse_auxtrace_info(info));
      out.pt = {true,        cfg.per_cpu_mmaps, cfg.pmu_type,  cfg.max_non_turbo_ratio,
                cfg.tsc_bit, cfg.time_mult,     cfg.time_shift};
    }
    if (dropped_record(v.type)) continue;
    if (opts.strip &&
        (v.type == kRecordSample || v.type == kRecordSwitch || v.type == kRecordSwitchCpuWide))
      continue;
    out.records.insert(out.records.end(), v.bytes.begin(), v.bytes.end());
  }
  return ok();
}

// The output's events: the recorded ones (with call chains when they get
// them) and perf's synthesized ones after them, with perf's ids.
struct OutputEvents {
  perfdata::EventSet events;
  std::array<int, kKinds> event_of{};  // the event of each sample kind, -1: none
  std::vector<RecordLayout> layouts;
};

OutputEvents output_events(const perfdata::EventSet& in, const PtInfo& pt_info,
                           const InjectItraceOptions& opts) {
  OutputEvents out{in, {}, {}};
  perfdata::EventSet& events = out.events;
  const std::size_t recorded = events.size();
  EventAttr pt = events.empty() ? EventAttr{} : events[0].attr;
  std::uint64_t next_id = 1;
  for (const auto& ev : events.events()) {
    if (ev.attr.type == pt_info.pmu_type) pt = ev.attr;
    for (auto id : ev.ids) next_id = std::max(next_id, id + 1);
  }
  next_id += 1000000000;  // perf's offset for the ids of synthesized events
  const bool timeless = !(pt.config & pt_info.tsc_bit) || !(pt.sample_type & kSampleTime);
  out.event_of.fill(-1);
  for (auto& e : itrace::itrace_synth_events(pt, opts.itrace, pt_info.per_cpu, timeless)) {
    if (e.kind == SampleKind::kInstructions &&
        opts.itrace.period_type == intelpt::PeriodType::kNanosecs)
      e.attr.sample_period = pt_info.ns_to_ticks(opts.itrace.period);
    events.add(e.attr, {next_id++});
    events[events.size() - 1].name = e.name;
    out.event_of[static_cast<std::size_t>(e.kind)] = static_cast<int>(events.size() - 1);
  }
  // perf gives every recorded event call chains (its synth_sample_type).
  if (opts.add_callchains)
    for (std::size_t i = 0; i < recorded; ++i) events[i].attr.sample_type |= kSampleCallchain;
  for (const auto& ev : events.events()) out.layouts.push_back(make_layout(ev.attr));
  return out;
}

// Writes each synthesized sample as decoding gives it (in time order): an
// AUXTRACE_ERROR for a decode error, the chain a held sample is to get
// kept aside, every other kind a SAMPLE of its event.
class SynthWriter {
 public:
  SynthWriter(const OutputEvents& out, const PtInfo& pt, HeldSamples& held,
              perfdata::Writer& writer)
      : out_(out), pt_(pt), held_(held), writer_(writer) {}

  Status write(const itrace::ItraceSample& is) {
    const intelpt::SynthSample& s = *is.sample;
    if (s.kind == SampleKind::kChain) {
      held_.keep_chain(static_cast<std::uint32_t>(s.payload), s.callchain, s.callchain_nr);
      return ok();
    }
    if (s.kind == SampleKind::kError) return write_error(is);
    const int ev = out_.event_of[static_cast<std::size_t>(s.kind)];
    if (ev < 0) return ok();
    const RecordLayout& layout = out_.layouts[static_cast<std::size_t>(ev)];
    record::Sample smp;
    smp.sample_type = layout.sample_type;
    smp.ip = s.ip;
    smp.pid = static_cast<std::uint32_t>(is.pid);
    smp.tid = static_cast<std::uint32_t>(is.tid);
    smp.time = s.time;
    smp.addr = s.addr;
    smp.id = smp.identifier = out_.events[static_cast<std::size_t>(ev)].ids.front();
    smp.cpu = static_cast<std::uint32_t>(is.cpu);
    smp.period = s.period;
    if (layout.sample_type & kSampleRaw) {
      synth_raw(s, pt_.max_non_turbo, raw_);
      smp.raw = Bytes(raw_);
    }
    if (layout.sample_type & kSampleCallchain) smp.callchain = callchain(s);
    if (layout.sample_type & kSampleBranchStack)
      smp.branch_stack = itrace::itrace_branch_stack(s, brs_);
    // perf's intel_pt_cpumode: by the sample's IP, or by its target when
    // it has none; x86_64 kernel addresses are those from 2^63 up.
    const std::uint64_t at = s.ip ? s.ip : s.addr;
    const std::uint16_t misc = at >= (1ULL << 63) ? kMiscKernel : kMiscUser;
    return writer_.write(record::encode_sample(smp, layout, misc, false));
  }
  std::uint64_t errors() const { return errors_; }

 private:
  Status write_error(const itrace::ItraceSample& is) {
    const intelpt::SynthSample& s = *is.sample;
    ++errors_;
    record_.clear();
    record::RecordBuilder b(kRecordAuxtraceError);
    b.u32(1).u32(static_cast<std::uint32_t>(s.error)).u32(static_cast<std::uint32_t>(is.cpu));
    b.u32(static_cast<std::uint32_t>(is.pid)).u32(static_cast<std::uint32_t>(is.tid)).u32(2);
    b.u64(s.ip).u64(s.time).fixed_string(s.error_msg ? s.error_msg : "", 64).u32(0).u32(0);
    b.finish_into(record_);
    return writer_.write(record_);
  }
  // As perf's thread stack writes a chain: a context marker before the
  // first address and wherever the addresses cross into the other mode.
  record::U64Array callchain(const intelpt::SynthSample& s) {
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

  const OutputEvents& out_;
  const PtInfo& pt_;
  HeldSamples& held_;
  perfdata::Writer& writer_;
  std::vector<std::uint8_t> record_, raw_;
  std::vector<std::uint64_t> chain_;
  std::vector<std::uint8_t> brs_;  // the branch stack's entries (itrace l)
  std::uint64_t errors_ = 0;
};

// The input's features but AUXTRACE, with EVENT_DESC naming every event.
Expected<std::vector<perfdata::FeatureData>> output_features(const perfdata::Reader& in,
                                                             const perfdata::EventSet& events) {
  std::vector<perfdata::FeatureData> feats;
  for (const auto& f : in.features()) {
    if (f.id == kFeatAuxtrace || f.id == kFeatCompressed || f.id == kFeatEventDesc) continue;
    if (f.id >= kFeatLastKnown && f.data.empty()) continue;
    feats.push_back({f.id, {f.data.begin(), f.data.end()}});
  }
  perfdata::Features desc;
  desc.event_desc.emplace();
  for (const auto& ev : events.events())
    desc.event_desc->events.push_back({ev.attr, ev.name, ev.ids});
  PK_ASSIGN(auto desc_bytes, perfdata::encode_feature(desc, kFeatEventDesc, false));
  feats.push_back({kFeatEventDesc, std::move(desc_bytes)});
  std::sort(feats.begin(), feats.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return feats;
}

}  // namespace

Status run_inject_itrace(const std::string& in_path, const std::string& out_path,
                         const InjectItraceOptions& opts) {
  if (in_path == "-")
    return make_error("decoding Intel PT from a pipe is not supported: give a file with -i");
  PK_ASSIGN(auto in, perfdata::Reader::open(in_path));
  if (in->swapped())
    return make_error("{}: inject --itrace needs a host-endian recording", in_path);
  SideBand side;
  PK_TRY(read_side_band(*in, opts, side));
  if (!side.pt.have) return make_error("{}: no Intel PT AUXTRACE_INFO record to decode", in_path);
  const OutputEvents out = output_events(in->events(), side.pt, opts);

  // The side-band first, then every sample as decoding gives it.
  perfdata::WriterOptions wo;
  PK_ASSIGN(auto writer, perfdata::Writer::create(out_path, wo));
  if (writer->pipe()) return make_error("inject --itrace writes a file, not a pipe");
  PK_TRY(writer->begin(out.events));
  for (Bytes rest(side.records); !rest.empty();) {
    const std::uint16_t size = load<std::uint16_t>(rest.data() + 6, false);
    PK_TRY(writer->write(rest.first(size)));
    rest = rest.subspan(size);
  }
  PK_ASSIGN(auto trace, perfdata::Reader::open(in_path));
  itrace::ItraceDecodeOptions dopts;
  dopts.itrace = opts.itrace;
  dopts.jobs = opts.jobs;
  dopts.progress = opts.progress;
  dopts.late_chains = opts.add_callchains;
  SynthWriter synth(out, side.pt, side.held, *writer);
  PK_TRY(itrace::decode_itrace(
      *trace, dopts, [&synth](const itrace::ItraceSample& is) { return synth.write(is); }));
  if (opts.add_callchains)
    PK_TRY(side.held.write(in->events(), out.layouts, opts.itrace.callchain_sz + 1, *writer));
  PK_ASSIGN(auto feats, output_features(*in, out.events));
  PK_TRY(writer->finish(out.events, feats));
  if (synth.errors() && opts.warn)
    opts.warn(fmt::format("Warning:\n{} instruction trace errors", synth.errors()));
  return ok();
}

intelpt::ItraceOptions report_itrace_defaults() {
  intelpt::ItraceOptions o = intelpt::itrace_defaults(false);
  o.branches = false;
  o.callchain = true;
  o.add_callchain = true;
  return o;
}

Expected<std::string> itrace_report_file(
    const std::string& in_path, const intelpt::ItraceOptions& itrace,
    std::function<void(const std::string&)> warn,
    std::function<void(std::uint64_t, std::uint64_t)> progress) {
  if (!itrace::has_intel_pt(in_path)) return std::string();
  const char* tmpdir = getenv("TMPDIR");
  std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/perfkit-itrace-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return make_error("cannot create a temporary file in {}", path);
  ::close(fd);
  InjectItraceOptions io;
  io.itrace = itrace;
  io.warn = std::move(warn);
  io.progress = std::move(progress);
  io.add_callchains = itrace.add_callchain;
  Status st = run_inject_itrace(in_path, path, io);
  if (!st) {
    ::unlink(path.c_str());
    return st.error();
  }
  return path;
}

}  // namespace perfkit::inject
