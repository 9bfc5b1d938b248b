#include "analysis/itrace.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "abi/perf_event.h"
#include "analysis/itrace_recording.h"

namespace perfkit::analysis {

namespace {

constexpr std::size_t kBatchSamples = 4096;
constexpr std::size_t kMaxBatchesInFlight = 8;

// Samples decoded together; call chains and branch stacks live beside them.
struct Batch {
  std::vector<ItraceSample> samples;
  std::vector<std::uint32_t> chain_at, branch_at;
  std::vector<std::uint64_t> chains;
  std::vector<intelpt::BranchRecord> branches;

  const ItraceSample& at(std::size_t i, ItraceSample& tmp) const {
    const ItraceSample& s = samples[i];
    if (!s.sample.callchain_nr && !s.sample.branch_nr) return s;
    tmp = s;
    if (tmp.sample.callchain_nr) tmp.sample.callchain = chains.data() + chain_at[i];
    if (tmp.sample.branch_nr) tmp.sample.branch_stack = branches.data() + branch_at[i];
    return tmp;
  }
};

// A bounded single-producer single-consumer queue of batches.
class Channel {
 public:
  explicit Channel(std::size_t capacity) : capacity_(capacity) {}
  void push(Batch&& b) {
    std::unique_lock lk(m_);
    cv_.wait(lk, [&] { return q_.size() < capacity_ || cancelled_; });
    if (cancelled_) return;
    q_.push_back(std::move(b));
    cv_.notify_all();
  }
  bool pop(Batch& b) {
    std::unique_lock lk(m_);
    cv_.wait(lk, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    b = std::move(q_.front());
    q_.pop_front();
    cv_.notify_all();
    return true;
  }
  void close() {
    std::lock_guard lk(m_);
    closed_ = true;
    cv_.notify_all();
  }
  void cancel() {
    std::lock_guard lk(m_);
    cancelled_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Batch> q_;
  std::size_t capacity_;
  bool closed_ = false, cancelled_ = false;
};

// The thread and address space of a per-cpu queue as time goes on.
class CpuSpaces : public intelpt::SpaceProvider {
 public:
  CpuSpaces(const PtRecording& rec, std::int32_t cpu) : rec_(rec), cpu_(cpu) {}
  const intelpt::AddressSpace* space_at(std::uint64_t tsc, std::uint64_t& next) override {
    ThreadSpan t = rec_.thread_on(cpu_, tsc, &next);
    return t.pid >= 0 ? rec_.space_of(t.pid) : nullptr;
  }

 private:
  const PtRecording& rec_;
  std::int32_t cpu_;
};

// Collects one queue's samples into batches for the merger.
class QueueSink : public intelpt::SampleSink {
 public:
  QueueSink(const PtRecording& rec, const PtQueue& q, Channel& ch) : rec_(rec), q_(q), ch_(ch) {
    per_cpu_ = rec.cfg.per_cpu_mmaps && q.cpu >= 0;
    if (!per_cpu_) {
      tid_ = q.tid;
      pid_ = rec.pid_of(q.tid);
    }
  }
  void on_sample(const intelpt::SynthSample& s) override {
    ItraceSample out;
    out.sample = s;
    out.cpu = q_.cpu;
    if (per_cpu_) {
      ThreadSpan t = rec_.thread_on(q_.cpu, s.tsc, nullptr);
      out.pid = t.pid;
      out.tid = t.tid;
    } else {
      out.pid = pid_;
      out.tid = tid_;
    }
    batch_.chain_at.push_back(static_cast<std::uint32_t>(batch_.chains.size()));
    batch_.chains.insert(batch_.chains.end(), s.callchain, s.callchain + s.callchain_nr);
    batch_.branch_at.push_back(static_cast<std::uint32_t>(batch_.branches.size()));
    batch_.branches.insert(batch_.branches.end(), s.branch_stack, s.branch_stack + s.branch_nr);
    out.sample.callchain = nullptr;
    out.sample.branch_stack = nullptr;
    if (s.kind == intelpt::SampleKind::kError) ++errors_;
    batch_.samples.push_back(out);
    if (batch_.samples.size() >= kBatchSamples) flush();
  }
  void flush() {
    if (batch_.samples.empty()) return;
    ch_.push(std::move(batch_));
    batch_ = Batch();
  }
  std::uint64_t errors() const { return errors_; }

 private:
  const PtRecording& rec_;
  const PtQueue& q_;
  Channel& ch_;
  bool per_cpu_ = false;
  std::int32_t pid_ = -1, tid_ = -1;
  Batch batch_;
  std::uint64_t errors_ = 0;
};

// Forwards steps to the synthesizer and stops when the merger gives up.
class StoppableSink : public intelpt::FlowSink {
 public:
  StoppableSink(intelpt::FlowSink& inner, const std::atomic<bool>& cancel)
      : inner_(inner), cancel_(cancel) {}
  void on_step(const intelpt::Step& s) override { inner_.on_step(s); }
  bool stop() const override { return cancel_.load(std::memory_order_relaxed); }

 private:
  intelpt::FlowSink& inner_;
  const std::atomic<bool>& cancel_;
};

struct QueueResult {
  std::uint64_t instructions = 0, errors = 0;
};

void decode_queue(const PtRecording& rec, const PtQueue& q, const intelpt::ItraceOptions& itrace,
                  Channel& ch, const std::atomic<bool>& cancel, QueueResult& result) {
  std::vector<std::uint8_t> joined;
  Bytes data;
  if (q.buffers.size() == 1) {
    data = q.buffers[0].data;
  } else {
    joined.reserve(q.bytes);
    for (const auto& b : q.buffers) joined.insert(joined.end(), b.data.begin(), b.data.end());
    data = joined;
  }
  intelpt::FlowOptions fo;
  fo.return_compression = rec.cfg.return_compression();
  std::uint64_t ref = q.buffers.empty() ? 0 : q.buffers.front().reference;
  const bool per_cpu = rec.cfg.per_cpu_mmaps && q.cpu >= 0;
  const intelpt::AddressSpace* space = per_cpu ? nullptr : rec.space_of(rec.pid_of(q.tid));
  intelpt::FlowDecoder decoder(data, rec.cfg, space, fo, 0, rec.cfg.tsc() ? ref : 0);
  CpuSpaces spaces(rec, q.cpu);
  if (per_cpu) decoder.set_space_provider(&spaces);
  QueueSink sink(rec, q, ch);
  intelpt::Synthesizer synth(itrace, rec.cfg, sink);
  StoppableSink stoppable(synth, cancel);
  decoder.run(stoppable);
  sink.flush();
  ch.close();
  result.instructions = synth.instructions();
  result.errors = sink.errors();
}

// Merges the queues' samples by time (queue order breaks ties).
Status merge(std::vector<std::unique_ptr<Channel>>& chans, bool timeless,
             const ItraceVisitor& visit, std::uint64_t& samples) {
  struct Head {
    Batch batch;
    std::size_t pos = 0;
    bool live = false;
  };
  std::vector<Head> heads(chans.size());
  ItraceSample tmp;
  auto refill = [&](std::size_t i) {
    heads[i].pos = 0;
    heads[i].live = chans[i]->pop(heads[i].batch);
  };
  if (timeless) {
    for (std::size_t i = 0; i < chans.size(); ++i)
      for (refill(i); heads[i].live; refill(i))
        for (std::size_t k = 0; k < heads[i].batch.samples.size(); ++k, ++samples)
          PK_TRY(visit(heads[i].batch.at(k, tmp)));
    return ok();
  }
  for (std::size_t i = 0; i < chans.size(); ++i) refill(i);
  while (true) {
    std::size_t best = chans.size();
    std::uint64_t best_time = ~0ULL;
    for (std::size_t i = 0; i < heads.size(); ++i) {
      if (!heads[i].live) continue;
      std::uint64_t t = heads[i].batch.samples[heads[i].pos].sample.tsc;
      if (best == chans.size() || t < best_time) {
        best = i;
        best_time = t;
      }
    }
    if (best == chans.size()) return ok();
    Head& h = heads[best];
    PK_TRY(visit(h.batch.at(h.pos, tmp)));
    ++samples;
    if (++h.pos == h.batch.samples.size()) refill(best);
  }
}

}  // namespace

bool has_auxtrace(const perfdata::Reader& reader) {
  return reader.feature(abi::kFeatAuxtrace).has_value();
}

Expected<ItraceStats> decode_itrace(perfdata::Reader& reader, const ItraceDecodeOptions& opts,
                                    const ItraceVisitor& visit) {
  PK_ASSIGN(auto rec, read_pt_recording(reader, opts));
  ItraceStats stats;
  stats.queues = rec->queues.size();
  for (const auto& q : rec->queues) stats.trace_bytes += q.bytes;
  if (opts.itrace.dont_decode) return stats;
  const std::size_t n = rec->queues.size();
  std::vector<std::unique_ptr<Channel>> chans;
  std::vector<QueueResult> results(n);
  std::atomic<bool> cancel{false};
  for (std::size_t i = 0; i < n; ++i)
    chans.push_back(std::make_unique<Channel>(opts.parallel ? kMaxBatchesInFlight : ~0ULL));
  std::vector<std::thread> workers;
  if (opts.parallel) {
    for (std::size_t i = 0; i < n; ++i)
      workers.emplace_back([&, i] {
        decode_queue(*rec, rec->queues[i], opts.itrace, *chans[i], cancel, results[i]);
      });
  } else {
    for (std::size_t i = 0; i < n; ++i)
      decode_queue(*rec, rec->queues[i], opts.itrace, *chans[i], cancel, results[i]);
  }
  bool timeless = opts.itrace.timeless || !rec->cfg.tsc() || !rec->cfg.time_mult;
  Status st = merge(chans, timeless, visit, stats.samples);
  if (!st) {
    cancel = true;
    for (auto& c : chans) c->cancel();
  }
  for (auto& w : workers) w.join();
  PK_TRY(std::move(st));
  for (const auto& r : results) {
    stats.instructions += r.instructions;
    stats.errors += r.errors;
  }
  return stats;
}

}  // namespace perfkit::analysis
