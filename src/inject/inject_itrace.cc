// perf inject --itrace (inject_itrace.h): the side-band records copied, the
// trace decoded (decode_itrace) and each synthesized sample encoded as a
// SAMPLE of its event (perf's perf_synth_intel_* payloads for the synth
// events, perf's call chains with a PERF_CONTEXT_USER marker) or as an
// AUXTRACE_ERROR record.
#include "inject/inject_itrace.h"

#include <algorithm>
#include <array>

#include "abi/layout.h"
#include "abi/perf_event.h"
#include "intelpt/config.h"
#include "itrace/itrace.h"
#include "itrace/synth_events.h"
#include "itrace/synth_record.h"
#include "perfdata/features.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "record/encode.h"
#include "record/records.h"

namespace perfkit::inject {

using namespace perfkit::abi;
using intelpt::SampleKind;

namespace {

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
  bool have_pt = false;
  intelpt::PtConfig pt;
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
    if (v.type == kRecordAuxtraceInfo && !out.have_pt) {
      PK_ASSIGN(auto info, record::parse_auxtrace_info(v));
      PK_ASSIGN(out.pt, intelpt::parse_auxtrace_info(info));
      out.have_pt = true;
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
  itrace::SynthEventOf event_of{};  // the event of each sample kind, -1: none
  std::vector<RecordLayout> layouts;
};

OutputEvents output_events(const perfdata::EventSet& in, const intelpt::PtConfig& pt,
                           const InjectItraceOptions& opts) {
  OutputEvents out{in, {}, {}};
  const std::size_t recorded = out.events.size();
  out.event_of = itrace::add_synth_events(out.events, pt, opts.itrace);
  // perf gives every recorded event call chains (its synth_sample_type).
  if (opts.add_callchains)
    for (std::size_t i = 0; i < recorded; ++i) out.events[i].attr.sample_type |= kSampleCallchain;
  for (const auto& ev : out.events.events()) out.layouts.push_back(make_layout(ev.attr));
  return out;
}

// Writes each synthesized sample as decoding gives it (in time order): an
// AUXTRACE_ERROR for a decode error, the chain a held sample is to get
// kept aside, every other kind a SAMPLE of its event.
class SynthWriter {
 public:
  SynthWriter(const OutputEvents& out, const intelpt::PtConfig& pt, HeldSamples& held,
              perfdata::Writer& writer)
      : out_(out), records_(pt.max_non_turbo_ratio), held_(held), writer_(writer) {}

  Status write(const itrace::ItraceSample& is) {
    const intelpt::SynthSample& s = *is.sample;
    if (s.kind == SampleKind::kChain) {
      held_.keep_chain(static_cast<std::uint32_t>(s.payload), s.callchain, s.callchain_nr);
      return ok();
    }
    if (s.kind == SampleKind::kError) {
      ++errors_;
      return writer_.write(records_.error(is));
    }
    const int ev = out_.event_of[static_cast<std::size_t>(s.kind)];
    if (ev < 0) return ok();
    const auto e = static_cast<std::size_t>(ev);
    return writer_.write(records_.sample(is, out_.layouts[e], out_.events[e].ids.front()));
  }
  std::uint64_t errors() const { return errors_; }

 private:
  const OutputEvents& out_;
  itrace::SynthRecords records_;
  HeldSamples& held_;
  perfdata::Writer& writer_;
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
  if (!side.have_pt) return make_error("{}: no Intel PT AUXTRACE_INFO record to decode", in_path);
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

}  // namespace perfkit::inject
