// Several sessions of one recording side by side (--jobs), each building a
// contiguous run of its samples into a Profile of its own; the runs merged
// in order make the profile one session makes.
#include <cmath>
#include <thread>
#include <unordered_set>

#include "perfdata/features.h"
#include "profile/builder.h"
#include "profile/builder_impl.h"

namespace perfkit::profile {

namespace {

using detail::attach_markers;
using detail::Builder;
using detail::LineAsk;
using detail::LineMode;
using detail::MarkerMap;
using detail::set_frame_lines;

// Where a recording's samples are split between sessions: the run of
// session k (k > 0) starts at the first sample at or past cuts[k - 1], by
// the sample's time, or by how far the reader has read when it comes (for
// recordings whose header has no sample times: perf record -z).
struct Split {
  bool by_position = false;
  std::vector<std::uint64_t> cuts;
};

// One contiguous run of a recording's samples, for one of several sessions
// side by side: from the first sample at or past `from` (from the start
// when `from` is 0) up to the first at or past `to`, in delivery order,
// with the records in between. Every session is delivered the same order at
// the same reader positions, so runs that end where the next begins share
// the samples out without a gap or an overlap (a sample without a time
// stays in the run it comes in).
class ChunkVisitor : public session::SampleVisitor {
 public:
  // `reader`: split by its position; nullptr: by sample time.
  ChunkVisitor(Builder& b, const perfdata::Reader* reader, std::uint64_t from, std::uint64_t to)
      : b_(b), reader_(reader), from_(from), to_(to), in_(from == 0) {}
  bool take_raw(const session::RawSample& r) override {
    const record::Sample& smp = *r.sample;
    const std::uint64_t at = reader_                                ? reader_->position()
                             : (smp.sample_type & abi::kSampleTime) ? smp.time
                                                                    : 0;
    if (!in_ && !done_ && at >= from_) in_ = true;
    if (in_ && at >= to_) in_ = false, done_ = true;
    // (past the run, on_sample stops the session)
    return in_ ? b_.take_raw(r) : !done_;
  }
  Status on_sample(const session::ResolvedSample& s) override {
    if (done_) return make_error("the run of samples ends here");
    return b_.on_sample(s);
  }
  Status after_record(const perfdata::ReadRecord& r) override {
    return in_ ? b_.after_record(r) : ok();
  }
  bool defers_kernel_symbols() const override { return b_.defers_kernel_symbols(); }
  bool done() const { return done_; }

 private:
  Builder& b_;
  const perfdata::Reader* reader_;
  std::uint64_t from_, to_;
  bool in_ = false, done_ = false;
};

// Where `n` sessions split the samples: times between the first and the
// last sample's (HEADER_SAMPLE_TIME), else reader positions between the
// data's start and end; none when neither spans anything. Every session
// reads the records up to the end of its run, so the later runs are made
// shorter: with reading a share `kReadShare` of building, the runs' costs
// (reading to the end of the run, building the run) are equal.
Split split_samples(perfdata::Reader& r, std::size_t n) {
  perfdata::Features feats;
  if (auto blob = r.feature(abi::kFeatSampleTime))
    (void)perfdata::parse_feature(abi::kFeatSampleTime, blob->data, r.swapped(), blob->offset,
                                  feats);
  Split split;
  std::uint64_t first = 0, last = 0;
  if (feats.sample_time && feats.sample_time->last_ns > feats.sample_time->first_ns + n) {
    first = feats.sample_time->first_ns, last = feats.sample_time->last_ns;
  } else if (r.data_end() != UINT64_MAX && r.data_end() > r.position() + n) {
    split.by_position = true;
    first = r.position(), last = r.data_end();
  } else {
    return split;
  }
  constexpr double kReadShare = 0.25;
  // Run k ends at e_k of the span: e_k = S_k / S_n, S_k = q + ... + q^k.
  const double q = 1.0 / (1.0 + kReadShare);
  std::vector<double> sums(n + 1, 0.0);
  for (std::size_t k = 1; k <= n; ++k) sums[k] = sums[k - 1] + std::pow(q, static_cast<double>(k));
  const auto span = static_cast<double>(last - first);
  for (std::size_t k = 1; k < n; ++k)
    split.cuts.push_back(first + 1 + static_cast<std::uint64_t>(span * sums[k] / sums[n]));
  return split;
}

// The source lines of the merged runs: the first run's asks were made as
// it went; each later run's follow, but for the locations an earlier run
// met (one session would not have asked again), its frames as merged (none
// where the frame was made by an earlier run).
class MergedLines {
 public:
  explicit MergedLines(Builder& first) : first_(first) {
    for (LineAsk& a : first.asks()) asked_.insert(std::move(a.key));
  }
  // Run `b`'s asks, after its profile was merged; its frame i became
  // `frames[i]`, and frames below `before` were there already.
  void add(Builder& b, const std::vector<Index>& frames, std::size_t before) {
    for (LineAsk& a : b.asks()) {
      if (!asked_.insert(std::move(a.key)).second) continue;
      Index f = a.frame == kNone ? kNone : frames[a.frame];
      if (f != kNone && f < before) f = kNone;
      std::unique_ptr<LineWorker>& lines = first_.line_worker();
      if (!lines) lines = std::make_unique<LineWorker>(first_.session().symbolizer());
      first_.line_frames().push_back(f);
      if (a.known) {
        lines->ask_known(a.text);
        continue;
      }
      // (the later runs' DSOs by LineWorker indexes of their own, past the
      // first session's machine::Dso::index)
      const std::size_t first = first_.session().machine().dsos().size();
      auto [it, fresh] = dsos_.try_emplace(a.dso, first + dsos_.size());
      if (fresh) lines->dso(it->second, a.dso->long_name, a.dso->short_name, a.dso->build_id);
      lines->ask(it->second, a.addr);
    }
  }
  void finish(Profile& p) {
    if (first_.line_worker())
      set_frame_lines(p, first_.line_worker()->finish(), first_.line_frames());
  }

 private:
  Builder& first_;
  std::unordered_set<std::string> asked_;
  std::unordered_map<const machine::Dso*, std::size_t> dsos_;
};

// The runs' profiles merged in order, their markers attached at the end (a
// thread may have markers in one run and samples in another), then their
// source lines; the lost counts are the last session's, which read every
// record.
Expected<Profile> merge_runs(std::vector<Profile>& parts,
                             std::vector<std::unique_ptr<Builder>>& bs) {
  Profile whole = std::move(parts[0]);
  MarkerMap markers = std::move(bs[0]->markers());
  MergedLines lines(*bs[0]);
  std::vector<Index> frames;
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const std::size_t before = whole.frames.size();
    PK_TRY(merge(whole, parts[k], &frames));
    for (auto& [key, list] : bs[k]->markers()) {
      std::vector<Marker>& to = markers[key];
      for (Marker m : list) {
        m.text = whole.strings.intern(parts[k].strings.at(m.text));  // (interned by merge)
        to.push_back(m);
      }
    }
    lines.add(*bs[k], frames, before);
  }
  attach_markers(whole, markers);
  lines.finish(whole);
  whole.summary.lost_samples = parts.back().summary.lost_samples;
  whole.summary.lost_events = parts.back().summary.lost_events;
  return whole;
}

}  // namespace

Expected<Profile> build_profile_shards(std::span<session::Session* const> sessions,
                                       const ProfileOptions& opts) {
  const std::size_t n = sessions.size();
  const Split split = n > 1 ? split_samples(sessions[0]->reader(), n) : Split{};
  const std::vector<std::uint64_t>& cuts = split.cuts;
  if (cuts.empty()) {
    for (std::size_t k = 1; k < n; ++k) sessions[k]->reader().leave_shared();
    return build_profile(*sessions[0], opts);
  }
  std::vector<std::unique_ptr<Builder>> bs;
  for (session::Session* s : sessions) {
    bs.push_back(std::make_unique<Builder>(*s, opts));
    bs.back()->set_line_mode(bs.size() == 1 ? LineMode::kLiveKeys : LineMode::kRecord);
    if (Status st = bs.back()->prepare(); !st) {
      for (session::Session* o : sessions) o->reader().leave_shared();
      return st.error();
    }
    detail::prepare_session(*s, opts);
  }
  std::vector<Profile> parts(n);
  std::vector<Status> status(n, ok());

  auto run = [&](std::size_t k) {
    ChunkVisitor v(*bs[k], split.by_position ? &sessions[k]->reader() : nullptr,
                   k ? cuts[k - 1] : 0, k + 1 < n ? cuts[k] : UINT64_MAX);
    Status st = sessions[k]->run(v);
    sessions[k]->reader().leave_shared();
    if (!st && v.done()) st = ok();
    if (st) parts[k] = bs[k]->take_chunk();
    status[k] = std::move(st);
  };
  std::vector<std::thread> threads;
  std::vector<std::size_t> here{0};  // runs made on this thread
  for (std::size_t k = 1; k < n; ++k) {
    try {  // (the library does not throw: a thread that cannot start runs here)
      threads.emplace_back(run, k);
    } catch (...) {
      here.push_back(k);
    }
  }
  for (std::size_t k : here) run(k);
  for (std::thread& t : threads) t.join();
  // (the first run's error is the one a single session meets first)
  for (Status& st : status) PK_TRY(std::move(st));
  return merge_runs(parts, bs);
}

}  // namespace perfkit::profile
