#include "inject/inject.h"

#include "abi/perf_event.h"
#include "inject/inject_buildid.h"
#include "inject/inject_jit.h"
#include "inject/inject_sched_stat.h"
#include "perfdata/byte_order.h"
#include "perfdata/features.h"
#include "perfdata/record_stream.h"
#include "record/records.h"
#include "record/swap.h"

namespace perfkit::inject {

using namespace perfkit::abi;
using perfdata::FeatureData;

namespace {

// Feature sections of the input to carry into the output.
std::vector<FeatureData> input_features(const perfdata::Reader& in) {
  std::vector<FeatureData> out;
  for (const auto& f : in.features()) {
    if (f.id == kFeatCompressed) continue;                   // the output is not compressed
    if (f.id == kFeatDirFormat) continue;                    // nor a directory: one file
    if (f.id >= kFeatLastKnown && f.data.empty()) continue;  // a stream's end-of-features marker
    bool dup = false;
    for (auto& o : out)
      if (o.id == f.id) {
        o.bytes.assign(f.data.begin(), f.data.end());  // a later HEADER_FEATURE wins
        dup = true;
      }
    if (!dup) out.push_back(FeatureData{f.id, {f.data.begin(), f.data.end()}});
  }
  if (in.is_pipe() && !in.tracing_data().empty()) {
    bool have = false;
    for (auto& o : out) have |= o.id == kFeatTracingData;
    if (!have)
      out.push_back(
          FeatureData{kFeatTracingData, {in.tracing_data().begin(), in.tracing_data().end()}});
  }
  return out;
}

// Records that a file-mode output carries in its header instead.
bool header_only_record(std::uint32_t type) {
  return type == kRecordHeaderAttr || type == kRecordHeaderFeature ||
         type == kRecordHeaderTracingData;
}

// Turns records into the output's byte order (into a buffer reused across
// records); records already in that order pass through untouched.
class RecordConverter {
 public:
  RecordConverter(const perfdata::Reader& in, bool swap_output) : in_(in), out_swap_(swap_output) {}

  Expected<Bytes> convert(const record::RecordView& v) {
    if (v.swap == out_swap_) return v.bytes;
    if (v.type == kRecordHeaderFeature) {
      PK_TRY(perfdata::convert_feature_record(v, buf_));
      return Bytes(buf_);
    }
    const int idx = in_.events().attr_index(v);
    const RecordLayout* layout =
        idx >= 0 ? &in_.events()[static_cast<std::size_t>(idx)].layout : nullptr;
    buf_.resize(v.bytes.size());
    PK_TRY(record::swap_record(v, layout, buf_.data()));
    return Bytes(buf_);
  }

 private:
  const perfdata::Reader& in_;
  bool out_swap_;
  std::vector<std::uint8_t> buf_;
};

}  // namespace

Status run_inject(perfdata::Reader& in, const std::string& out_path, const InjectOptions& opts) {
  perfdata::WriterOptions wo;
  wo.pipe = opts.pipe_output || out_path == "-";
  wo.swap = opts.swap_output;
  const bool convert = in.swapped() != opts.swap_output;
  auto features = [&]() -> Expected<std::vector<FeatureData>> {
    auto f = input_features(in);
    if (!convert) return f;
    return perfdata::convert_features(f, in.swapped());
  };
  std::unique_ptr<GuestInjector> guest;
  if (opts.guest && !opts.build_ids && !opts.build_id_all && !opts.sched_stat) {
    if (in.is_pipe() || opts.input_path == "-")
      return make_error("--guest-data: the host's recording must be a file, not a pipe");
    if (wo.pipe) return make_error("--guest-data: the output must be a file, not a pipe");
    if (opts.jit) return make_error("--guest-data and --jit cannot be used together");
    if (convert) return make_error("--guest-data: the output must be in this machine's byte order");
    PK_ASSIGN(guest, GuestInjector::create(in, opts.input_path, *opts.guest, opts.guestmount));
  }
  // (with a guest's, the attrs are the host's then the guest's)
  const perfdata::EventSet& events = guest ? guest->events() : in.events();
  PK_ASSIGN(auto writer, perfdata::Writer::create(out_path, wo));
  const bool file_out = !writer->pipe();
  bool started = false;
  auto start = [&]() -> Status {
    started = true;
    if (in.is_pipe()) return writer->begin(file_out ? in.events() : perfdata::EventSet{});
    std::vector<FeatureData> feats;
    if (!file_out) {
      PK_ASSIGN(feats, features());
    }
    return writer->begin(events, feats);
  };
  if (!in.is_pipe()) PK_TRY(start());
  RecordConverter converter(in, opts.swap_output);
  std::unique_ptr<BuildIdInjector> build_ids;
  if (opts.build_ids || opts.build_id_all)
    // perf 6.1 takes --known-build-ids with -b only.
    build_ids = std::make_unique<BuildIdInjector>(
        in, opts.build_id_all, opts.build_id_all ? KnownBuildIds{} : opts.known_build_ids);
  std::unique_ptr<SchedStatMerger> sched_stat;
  if (opts.sched_stat) {
    PK_ASSIGN(sched_stat, SchedStatMerger::create(in));
  }
  std::unique_ptr<JitInjector> jit;
  if (opts.jit) jit = std::make_unique<JitInjector>(in);

  std::vector<std::uint8_t> merged;
  auto handle = [&](const perfdata::ReadRecord& rec, std::uint64_t time) -> Status {
    const auto& v = rec.view;
    if (v.type == kRecordCompressed || v.type == kRecordCompressed2) return ok();
    if (guest) PK_TRY(guest->before(rec, time, *writer));
    if (in.is_pipe()) {
      if (file_out && header_only_record(v.type)) return ok();
      if (!started && file_out && v.type != kRecordEventUpdate && v.type != kRecordHeaderEventType)
        PK_TRY(start());
      if (!started && !file_out) PK_TRY(start());
    }
    if (build_ids) {
      PK_ASSIGN(auto extra, build_ids->observe(v, wo.swap));
      if (!extra.empty()) PK_TRY(writer->write(Bytes(extra)));
    }
    if (jit && v.type == kRecordTimeConv) jit->time_conv(v);
    if (jit && (v.type == kRecordMmap || v.type == kRecordMmap2)) {
      PK_ASSIGN(auto action, jit->map(v, wo.swap, merged));
      if (action == JitInjector::Action::kDrop) return ok();
      if (action == JitInjector::Action::kReplace) return writer->write(Bytes(merged));
    }
    if (sched_stat && v.type == kRecordSample) {
      const int event = rec.attr >= 0 ? rec.attr : in.events().attr_index(v);
      PK_ASSIGN(auto action, sched_stat->sample(v, event, wo.swap, merged));
      if (action == SchedStatMerger::Action::kDrop) return ok();
      if (action == SchedStatMerger::Action::kReplace) return writer->write(Bytes(merged));
    }
    PK_ASSIGN(Bytes bytes, converter.convert(v));
    return writer->write(bytes, v.trailing);
  };
  if (sched_stat || jit || guest) {
    // perf merges in time order (its ordered events), and writes that order.
    perfdata::RecordStreamOptions so;
    so.ordered = true;
    PK_TRY(perfdata::process_records(in, so, handle));
  } else {
    perfdata::ReadRecord rec;
    for (;;) {
      PK_ASSIGN(bool got, in.next(rec));
      if (!got) break;
      PK_TRY(handle(rec, perfdata::kNoTimestamp));
    }
  }
  if (guest) PK_TRY(guest->finish(*writer));
  if (!started) PK_TRY(start());
  std::vector<FeatureData> feats;
  if (file_out) {
    PK_ASSIGN(feats, features());
  }
  if (build_ids && file_out) {
    std::erase_if(feats, [](const FeatureData& f) { return f.id == kFeatBuildId; });
    feats.push_back(FeatureData{kFeatBuildId, build_ids->feature_table(wo.swap)});
  }
  if (jit && file_out && !jit->images().empty()) {
    // The images made join the build-id table, after the recording's.
    auto it = std::find_if(feats.begin(), feats.end(),
                           [](const FeatureData& f) { return f.id == kFeatBuildId; });
    if (it == feats.end()) it = feats.insert(feats.end(), FeatureData{kFeatBuildId, {}});
    for (const auto& [path, id] : jit->images())
      encode_build_id_entry(it->bytes, 0, kMiscUser, -1, id, path, wo.swap);
  }
  if (guest && file_out) {
    // EVENT_DESC names the guest's events too; its build-ids join the table
    std::erase_if(feats, [](const FeatureData& f) { return f.id == kFeatEventDesc; });
    perfdata::Features desc;
    desc.event_desc.emplace();
    for (const auto& ev : events.events())
      desc.event_desc->events.push_back({ev.attr, ev.name, ev.ids});
    PK_ASSIGN(auto desc_bytes, perfdata::encode_feature(desc, kFeatEventDesc, false));
    feats.push_back(FeatureData{kFeatEventDesc, std::move(desc_bytes)});
    std::vector<std::uint8_t> extra;
    guest->add_build_ids(extra);
    if (!extra.empty()) {
      auto it = std::find_if(feats.begin(), feats.end(),
                             [](const FeatureData& f) { return f.id == kFeatBuildId; });
      if (it == feats.end()) it = feats.insert(feats.end(), FeatureData{kFeatBuildId, {}});
      it->bytes.insert(it->bytes.end(), extra.begin(), extra.end());
    }
    std::sort(feats.begin(), feats.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  }
  return writer->finish(events, feats);
}

}  // namespace perfkit::inject
