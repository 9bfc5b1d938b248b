#include "itrace/itrace.h"

#include <algorithm>
#include <cstring>

#include "abi/perf_event.h"
#include "itrace/itrace_queue.h"

namespace perfkit::itrace {

namespace detail {

namespace {

// Decodes queue `qi` whole into `ch` (or, without a channel, to `visit`).
void decode_queue(const PtRecording& rec, std::size_t qi, const ItraceDecodeOptions& opts,
                  Channel* ch, const ItraceVisitor* visit, std::atomic<bool>& cancel,
                  Progress& progress, QueueResult& result) {
  QueueDecode d(rec, qi, opts, ch, visit, cancel, progress);
  d.sink().set_insn_runs(opts.insn_runs);
  while (d.resume()) {
  }
  result = d.result();
}

// perf's auxtrace heap of queues by ordinal (their decoders' timestamps),
// ties and all: an item added stays below an equal parent; a pop moves the
// smaller child up (the right one of equals) and fills the hole with the last.
class QueueHeap {
 public:
  bool empty() const { return items_.empty(); }
  std::size_t top() const { return items_[0].queue; }
  std::uint64_t top_ordinal() const { return items_[0].ordinal; }
  void add(std::size_t queue, std::uint64_t ordinal) {
    items_.push_back({});
    place(items_.size() - 1, {queue, ordinal});
  }
  void pop() {
    const std::size_t n = items_.size();
    std::size_t pos = 0;
    while (true) {
      const std::size_t left = 2 * pos + 1, right = left + 1;
      if (left >= n) break;
      if (right >= n) {
        items_[pos] = items_[left];
        items_.pop_back();
        return;
      }
      const std::size_t child = items_[left].ordinal < items_[right].ordinal ? left : right;
      items_[pos] = items_[child];
      pos = child;
    }
    const Item last = items_[n - 1];
    place(pos, last);
    items_.pop_back();
  }

 private:
  struct Item {
    std::size_t queue = 0;
    std::uint64_t ordinal = 0;
  };
  void place(std::size_t pos, Item it) {
    while (pos) {
      const std::size_t parent = (pos - 1) / 2;
      if (items_[parent].ordinal <= it.ordinal) break;
      items_[pos] = items_[parent];
      pos = parent;
    }
    items_[pos] = it;
  }
  std::vector<Item> items_;
};

// Merges the queues' samples in perf's order (intel_pt_process_queues): at
// each side-band event's time (`limits`, ascending, then the end) the queue
// with the lowest timestamp decodes on until it reaches one past the next
// queue's, or the event's, and goes back on the heap at the timestamp it
// stopped at, whose samples come first when it next runs. Errors and late
// chains never stop a queue. `order`: the queues by their AUXTRACE idx, in
// which perf sets them up. Reports the progress with each batch.
Status merge(std::vector<std::unique_ptr<Channel>>& chans, const std::vector<std::size_t>& order,
             const std::vector<std::uint64_t>& limits, bool timeless, const ItraceVisitor& visit,
             const Progress& progress, std::uint64_t& samples) {
  struct Head {
    Batch batch;
    std::size_t pos = 0;
    bool live = false;
  };
  std::vector<Head> heads(chans.size());
  intelpt::SynthSample tmp;
  auto refill = [&](std::size_t i) {
    heads[i].pos = 0;
    heads[i].live = chans[i]->pop(heads[i].batch);
    progress.report();
  };
  // Visits head i's current sample or run of samples (a tick only moves the
  // time) and moves on.
  auto take = [&](std::size_t i) -> Status {
    Head& h = heads[i];
    const Batch::Entry& e = h.batch.samples[h.pos];
    const intelpt::SampleKind kind = e.kind;
    if (kind != intelpt::SampleKind::kTick) PK_TRY(visit(h.batch.at(h.pos, tmp)));
    samples += e.run_n ? e.run_n
                       : kind != intelpt::SampleKind::kChain && kind != intelpt::SampleKind::kTick;
    if (++h.pos == h.batch.samples.size()) refill(i);
    return ok();
  };
  if (timeless) {
    for (std::size_t i : order)
      for (refill(i); heads[i].live;) PK_TRY(take(i));
    return ok();
  }
  QueueHeap heap;
  for (std::size_t i : order) {
    refill(i);
    if (heads[i].live) heap.add(i, heads[i].batch.samples[0].tsc);
  }
  auto stops = [](const Batch::Entry& e) {
    return e.kind != intelpt::SampleKind::kError && e.kind != intelpt::SampleKind::kChain;
  };
  for (std::size_t k = 0; k <= limits.size(); ++k) {
    const std::uint64_t limit = k < limits.size() ? limits[k] : ~0ULL;
    while (!heap.empty() && heap.top_ordinal() < limit) {
      const std::size_t q = heap.top();
      heap.pop();
      std::uint64_t until = limit;
      if (!heap.empty() && heap.top_ordinal() < until - 1) until = heap.top_ordinal() + 1;
      // The sample it stopped at, then on while below `until`.
      PK_TRY(take(q));
      while (heads[q].live) {
        const Batch::Entry& e = heads[q].batch.samples[heads[q].pos];
        if (stops(e) && e.tsc >= until) break;
        PK_TRY(take(q));
      }
      if (heads[q].live) heap.add(q, heads[q].batch.samples[heads[q].pos].tsc);
    }
  }
  return ok();
}

}  // namespace

ItraceStats stats_of(const PtRecording& rec) {
  ItraceStats stats;
  stats.queues = rec.queues.size();
  for (const auto& q : rec.queues) stats.trace_bytes += q.bytes;
  return stats;
}

// decode_itrace of a recording read already.
Expected<ItraceStats> decode_recording(const PtRecording& rec, const ItraceDecodeOptions& opts,
                                       const ItraceVisitor& visit_all) {
  ErrorBudget budget(rec);
  ItraceVisitor budgeted = [&](const ItraceSample& is) -> Status {
    return budget.spent(*is.sample) ? ok() : visit_all(is);
  };
  const ItraceVisitor& visit = budget.needed() ? budgeted : visit_all;
  ItraceStats stats = stats_of(rec);
  if (opts.itrace.dont_decode) return stats;
  const std::size_t n = rec.queues.size();
  std::vector<QueueResult> results(n);
  std::atomic<bool> cancel{false};
  Progress progress(opts, rec);
  if (n == 1) {
    // Nothing to merge: decode here and visit as samples come.
    decode_queue(rec, 0, opts, nullptr, &visit, cancel, progress, results[0]);
    PK_TRY(results[0].status);
    stats.samples = results[0].samples;
  } else {
    unsigned jobs = opts.jobs ? opts.jobs : std::max(1u, std::thread::hardware_concurrency());
    Tokens tokens(jobs);
    std::vector<std::unique_ptr<Channel>> chans;
    for (std::size_t i = 0; i < n; ++i)
      chans.push_back(std::make_unique<Channel>(kMaxBatchesInFlight, &tokens));
    std::vector<std::thread> workers;
    for (std::size_t i = 0; i < n; ++i)
      workers.emplace_back([&, i] {
        tokens.acquire();
        decode_queue(rec, i, opts, chans[i].get(), nullptr, cancel, progress, results[i]);
        tokens.release();
      });
    bool timeless = opts.itrace.timeless || !rec.cfg.tsc() || !rec.cfg.time_mult;
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return rec.queues[a].idx < rec.queues[b].idx;
    });
    Status st = merge(chans, order, rec.event_tsc, timeless, visit, progress, stats.samples);
    if (!st) {
      cancel = true;
      for (auto& c : chans) c->cancel();
    }
    for (auto& w : workers) w.join();
    PK_TRY(std::move(st));
  }
  for (const auto& r : results) {
    stats.instructions += r.instructions;
    stats.errors += r.errors;
  }
  progress.report();
  return stats;
}

}  // namespace detail

bool has_auxtrace(const perfdata::Reader& reader) {
  return reader.feature(abi::kFeatAuxtrace).has_value();
}

Expected<ItraceStats> decode_itrace(perfdata::Reader& reader, const ItraceDecodeOptions& opts,
                                    const ItraceVisitor& visit) {
  PK_ASSIGN(auto rec, read_pt_recording(reader, opts));
  return detail::decode_recording(*rec, opts, visit);
}

record::BranchStack itrace_branch_stack(const intelpt::SynthSample& s,
                                        std::vector<std::uint8_t>& buf) {
  constexpr std::uint64_t kInTx = 1u << 2, kAbort = 1u << 3;  // perf's branch_flags bits
  buf.resize(24 * std::size_t{s.branch_nr});
  std::uint8_t* p = buf.data();
  for (std::uint32_t i = 0; i < s.branch_nr; ++i, p += 24) {
    const intelpt::BranchRecord& r = s.branch_stack[i];
    const std::uint64_t flags = ((r.flags & intelpt::kFlagInTx) ? kInTx : 0) |
                                ((r.flags & intelpt::kFlagTxAbort) ? kAbort : 0);
    std::memcpy(p, &r.from, 8);
    std::memcpy(p + 8, &r.to, 8);
    std::memcpy(p + 16, &flags, 8);
  }
  record::BranchStack bs;
  bs.nr = s.branch_nr;
  bs.entries = buf.data();
  return bs;
}

Expected<LateChains> LateChains::decode(const std::string& path, const ItraceDecodeOptions& opts) {
  // The stacks alone: no event is synthesized but the late chains.
  ItraceDecodeOptions o = opts;
  const intelpt::ItraceOptions& asked = opts.itrace;
  o.itrace = {};
  o.itrace.set = true;
  o.itrace.add_callchain = true;
  o.itrace.callchain_sz = asked.callchain_sz;
  o.itrace.timeless = asked.timeless;
  o.late_chains = true;
  o.progress = nullptr;
  std::vector<std::pair<std::size_t, std::size_t>> by_ordinal;
  LateChains out;
  {
    PK_ASSIGN(auto reader, perfdata::Reader::open(path));
    PK_TRY(decode_itrace(*reader, o, [&](const ItraceSample& is) -> Status {
      const intelpt::SynthSample& s = *is.sample;
      if (s.kind != intelpt::SampleKind::kChain) return ok();
      if (s.payload >= by_ordinal.size()) by_ordinal.resize(s.payload + 1, {0, ~std::size_t{0}});
      by_ordinal[s.payload] = {out.words_.size(), s.callchain_nr};
      out.words_.insert(out.words_.end(), s.callchain, s.callchain + s.callchain_nr);
      return ok();
    }));
  }
  // The ordinals count the samples without chains in file order.
  PK_ASSIGN(auto reader, perfdata::Reader::open(path));
  perfdata::ReadRecord rec;
  record::Sample smp;
  std::size_t ordinal = 0;
  for (;;) {
    PK_ASSIGN(bool got, reader->next(rec));
    if (!got) break;
    if (rec.view.type != abi::kRecordSample) continue;
    const int idx = reader->events().attr_index(rec.view);
    if (idx < 0) continue;
    const auto& ev = reader->events()[static_cast<std::size_t>(idx)];
    if (ev.attr.sample_type & abi::kSampleCallchain) continue;
    const std::size_t n = ordinal++;
    if (n >= by_ordinal.size() || by_ordinal[n].second == ~std::size_t{0}) continue;
    if (!record::decode_sample(rec.view, ev.layout, smp)) continue;
    out.at_[{smp.time, smp.ip, smp.tid}] = by_ordinal[n];
  }
  return out;
}

std::span<const std::uint64_t> LateChains::of(const record::Sample& s) {
  auto it = at_.find({s.time, s.ip, s.tid});
  if (it != at_.end()) return {words_.data() + it->second.first, it->second.second};
  fallback_[0] = s.ip >= (1ULL << 63) ? abi::kContextKernel : abi::kContextUser;
  fallback_[1] = s.ip;
  return {fallback_, 2};
}

}  // namespace perfkit::itrace
