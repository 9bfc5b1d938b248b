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

// Samples decoded together, with their threads. Instruction and branch
// samples (nearly all of them) are kept compact; other kinds whole, beside,
// with the call chains and branch stacks.
struct Batch {
  struct Entry {
    std::uint64_t ip, addr, tsc, time, period, offset;
    std::uint32_t flags;
    std::int32_t pid, tid, cpu;
    std::uint32_t full;  // index in `full`, or kCompact
    intelpt::SampleKind kind;
    std::uint8_t insn_len;
  };
  static constexpr std::uint32_t kCompact = ~0u;
  std::vector<Entry> samples;
  std::vector<intelpt::SynthSample> full;
  std::vector<std::uint64_t> chains;
  std::vector<intelpt::BranchRecord> branches;
  std::vector<std::uint32_t> chain_at, branch_at;  // by index in `full`

  void clear() {
    samples.clear();
    full.clear();
    chains.clear();
    branches.clear();
    chain_at.clear();
    branch_at.clear();
  }
  void add(const intelpt::SynthSample& s, std::int32_t pid, std::int32_t tid, std::int32_t cpu) {
    Entry e{s.ip, s.addr, s.tsc, s.time,   s.period, s.offset,  s.flags,
            pid,  tid,    cpu,   kCompact, s.kind,   s.insn_len};
    const bool compact = (s.kind == intelpt::SampleKind::kInstructions ||
                          s.kind == intelpt::SampleKind::kBranches) &&
                         !s.callchain_nr && !s.branch_nr && !s.insn_cnt && !s.cyc_cnt;
    if (!compact) {
      e.full = static_cast<std::uint32_t>(full.size());
      full.push_back(s);
      chain_at.push_back(static_cast<std::uint32_t>(chains.size()));
      chains.insert(chains.end(), s.callchain, s.callchain + s.callchain_nr);
      branch_at.push_back(static_cast<std::uint32_t>(branches.size()));
      branches.insert(branches.end(), s.branch_stack, s.branch_stack + s.branch_nr);
    }
    samples.push_back(e);
  }
  // The visitor's view of sample i, built in `tmp`.
  ItraceSample at(std::size_t i, intelpt::SynthSample& tmp) const {
    const Entry& e = samples[i];
    if (e.full == kCompact) {
      // What a compact entry leaves out is zero (tmp may hold a whole
      // sample from before).
      tmp.insn_cnt = tmp.cyc_cnt = 0;
      tmp.callchain_nr = tmp.branch_nr = 0;
      tmp.payload = tmp.aux = 0;
      tmp.kind = e.kind;
      tmp.ip = e.ip;
      tmp.addr = e.addr;
      tmp.tsc = e.tsc;
      tmp.time = e.time;
      tmp.period = e.period;
      tmp.offset = e.offset;
      tmp.flags = e.flags;
      tmp.insn_len = e.insn_len;
    } else {
      tmp = full[e.full];
      tmp.callchain = tmp.callchain_nr ? chains.data() + chain_at[e.full] : nullptr;
      tmp.branch_stack = tmp.branch_nr ? branches.data() + branch_at[e.full] : nullptr;
    }
    return ItraceSample{&tmp, e.pid, e.tid, e.cpu};
  }
};

// At most `jobs` decoders run at once: a decoder holds a token while it
// decodes and gives it back while it waits for the merger.
class Tokens {
 public:
  explicit Tokens(unsigned n) : free_(n) {}
  void acquire() {
    std::unique_lock lk(m_);
    cv_.wait(lk, [&] { return free_ > 0; });
    --free_;
  }
  void release() {
    std::lock_guard lk(m_);
    ++free_;
    cv_.notify_one();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned free_;
};

// A bounded single-producer single-consumer queue of batches.
class Channel {
 public:
  Channel(std::size_t capacity, Tokens* tokens) : capacity_(capacity), tokens_(tokens) {}
  void push(Batch&& b) {
    std::unique_lock lk(m_);
    if (q_.size() >= capacity_ && !cancelled_) {
      // Full: let another queue decode while the merger catches up.
      lk.unlock();
      tokens_->release();
      lk.lock();
      cv_.wait(lk, [&] { return q_.size() < capacity_ || cancelled_; });
      lk.unlock();
      tokens_->acquire();
      lk.lock();
    }
    if (cancelled_) return;
    q_.push_back(std::move(b));
    cv_.notify_all();
  }
  bool pop(Batch& b) {
    std::unique_lock lk(m_);
    cv_.wait(lk, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    if (b.samples.capacity() && spare_.size() < 2) {
      // Hand the consumed batch's memory back to the producer.
      b.clear();
      spare_.push_back(std::move(b));
    }
    b = std::move(q_.front());
    q_.pop_front();
    cv_.notify_all();
    return true;
  }
  // An empty batch with memory already allocated, if the consumer gave one back.
  Batch fresh() {
    std::lock_guard lk(m_);
    if (spare_.empty()) {
      Batch b;
      b.samples.reserve(kBatchSamples);
      return b;
    }
    Batch b = std::move(spare_.back());
    spare_.pop_back();
    return b;
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
  std::vector<Batch> spare_;
  std::size_t capacity_;
  Tokens* tokens_;
  bool closed_ = false, cancelled_ = false;
};

// The thread and address space of a per-cpu queue as time goes on.
class CpuSpaces : public intelpt::SpaceProvider {
 public:
  CpuSpaces(const PtRecording& rec, std::int32_t cpu) : rec_(rec), cpu_(cpu) {}
  const intelpt::AddressSpace* space_at(std::uint64_t tsc, std::uint64_t& next) override {
    ThreadSpan t = rec_.thread_on(cpu_, tsc, &next);
    return rec_.space_of(t.pid);
  }

 private:
  const PtRecording& rec_;
  std::int32_t cpu_;
};

// Which thread runs on a per-cpu queue's cpu when, for the per-thread call
// stacks.
class CpuThreads : public intelpt::ThreadClock {
 public:
  CpuThreads(const PtRecording& rec, std::int32_t cpu) : rec_(rec), cpu_(cpu) {}
  Span thread_at(std::uint64_t tsc) override {
    Span s;
    ThreadSpan t = rec_.thread_on(cpu_, tsc, &s.next);
    s.tid = t.tid;
    s.migrated = t.migrated;
    s.start = t.tsc;
    return s;
  }

 private:
  const PtRecording& rec_;
  std::int32_t cpu_;
};

// Collects one queue's samples into batches for the merger, or hands them
// straight to the visitor when there is nothing to merge (no channel).
class QueueSink : public intelpt::SampleSink {
 public:
  QueueSink(const PtRecording& rec, const PtQueue& q, Channel* ch, const ItraceVisitor* visit,
            std::atomic<bool>* cancel)
      : rec_(rec), q_(q), ch_(ch), visit_(visit), cancel_(cancel) {
    if (ch_) batch_ = ch_->fresh();
    per_cpu_ = rec.cfg.per_cpu_mmaps && q.cpu >= 0;
    if (!per_cpu_) {
      tid_ = q.tid;
      pid_ = rec.pid_of(q.tid);
    }
  }
  void on_sample(const intelpt::SynthSample& s) override {
    if (s.kind == intelpt::SampleKind::kError) ++errors_;
    if (s.kind != intelpt::SampleKind::kChain) ++samples_;
    if (!ch_) {
      direct(s);
      return;
    }
    std::int32_t pid, tid;
    thread_of(s.tsc, pid, tid);
    batch_.add(s, pid, tid, q_.cpu);
    if (batch_.samples.size() >= kBatchSamples) flush();
  }
  void flush() {
    if (!ch_ || batch_.samples.empty()) return;
    ch_->push(std::move(batch_));
    batch_ = ch_->fresh();
  }
  std::uint64_t errors() const { return errors_; }
  std::uint64_t samples() const { return samples_; }
  Status status() const { return status_; }

 private:
  void thread_of(std::uint64_t tsc, std::int32_t& pid, std::int32_t& tid) const {
    if (per_cpu_) {
      ThreadSpan t = rec_.thread_on(q_.cpu, tsc, nullptr);
      pid = t.pid;
      tid = t.tid;
    } else {
      pid = pid_;
      tid = tid_;
    }
  }
  void direct(const intelpt::SynthSample& s) {
    if (failed_) return;
    direct_.sample = &s;
    direct_.cpu = q_.cpu;
    thread_of(s.tsc, direct_.pid, direct_.tid);
    Status st = (*visit_)(direct_);
    if (!st) [[unlikely]] {
      status_ = std::move(st);
      failed_ = true;
      *cancel_ = true;
    }
  }

  const PtRecording& rec_;
  const PtQueue& q_;
  Channel* ch_;
  const ItraceVisitor* visit_;
  std::atomic<bool>* cancel_;
  ItraceSample direct_;
  Status status_;
  bool failed_ = false;
  std::uint64_t samples_ = 0;
  bool per_cpu_ = false;
  std::int32_t pid_ = -1, tid_ = -1;
  Batch batch_;
  std::uint64_t errors_ = 0;
};

// How far each queue's decoder has got, for ItraceDecodeOptions::progress:
// decoder threads store their trace offsets, the calling thread sums them.
class Progress {
 public:
  Progress(const ItraceDecodeOptions& o, const PtRecording& rec)
      : fn_(o.progress), done_(rec.queues.size()) {
    for (const auto& q : rec.queues) total_ += q.bytes;
  }
  bool on() const { return static_cast<bool>(fn_); }
  void at(std::size_t queue, std::uint64_t offset) {
    done_[queue].store(offset, std::memory_order_relaxed);
  }
  void report() const {
    if (!fn_) return;
    std::uint64_t sum = 0;
    for (const auto& d : done_) sum += d.load(std::memory_order_relaxed);
    fn_(std::min(sum, total_), total_);
  }

 private:
  std::function<void(std::uint64_t, std::uint64_t)> fn_;
  std::vector<std::atomic<std::uint64_t>> done_;
  std::uint64_t total_ = 0;
};

// Forwards steps to the synthesizer, stops when the merger gives up, and
// notes how far the trace is decoded now and then (reporting it too when
// the decoder runs on the calling thread).
class StoppableSink : public intelpt::FlowSink {
 public:
  static constexpr std::uint32_t kProgressSteps = 1 << 12;
  StoppableSink(intelpt::FlowSink& inner, const std::atomic<bool>& cancel, Progress* progress,
                std::size_t queue, bool report)
      : inner_(inner), cancel_(cancel), progress_(progress), queue_(queue), report_(report) {}
  void on_step(const intelpt::Step& s) override {
    inner_.on_step(s);
    if (progress_ && ++steps_ == kProgressSteps) {
      steps_ = 0;
      progress_->at(queue_, s.offset);
      if (report_) progress_->report();
    }
  }
  bool stop() const override { return cancel_.load(std::memory_order_relaxed); }

 private:
  intelpt::FlowSink& inner_;
  const std::atomic<bool>& cancel_;
  Progress* progress_;
  std::size_t queue_;
  bool report_;
  std::uint32_t steps_ = 0;
};

struct QueueResult {
  std::uint64_t instructions = 0, errors = 0, samples = 0;
  Status status;
};

// Decodes queue `qi` into `ch` (or, without a channel, straight to `visit`).
void decode_queue(const PtRecording& rec, std::size_t qi, const ItraceDecodeOptions& opts,
                  Channel* ch, const ItraceVisitor* visit, std::atomic<bool>& cancel,
                  Progress& progress, QueueResult& result) {
  const PtQueue& q = rec.queues[qi];
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
  if (q.buffers.size() > 1) {
    std::vector<std::size_t> ends;
    std::size_t at = 0;
    for (const auto& b : q.buffers) ends.push_back(at += b.data.size());
    decoder.set_buffer_ends(std::move(ends));
  }
  QueueSink sink(rec, q, ch, visit, &cancel);
  intelpt::Synthesizer synth(opts.itrace, rec.cfg, sink, opts.every_branch);
  CpuThreads threads(rec, q.cpu);
  if (per_cpu) synth.set_thread_clock(&threads);
  if (qi < rec.late.size()) synth.set_late_chains(rec.late[qi]);
  StoppableSink stoppable(synth, cancel, progress.on() ? &progress : nullptr, qi, !ch);
  decoder.run(stoppable);
  if (!cancel.load(std::memory_order_relaxed)) synth.finish();
  progress.at(qi, q.bytes);
  sink.flush();
  if (ch) ch->close();
  result.instructions = synth.instructions();
  result.errors = sink.errors();
  result.samples = sink.samples();
  result.status = sink.status();
}

// Merges the queues' samples by time (queue order breaks ties), reporting
// the progress with each batch.
Status merge(std::vector<std::unique_ptr<Channel>>& chans, bool timeless,
             const ItraceVisitor& visit, const Progress& progress, std::uint64_t& samples) {
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
  if (timeless) {
    for (std::size_t i = 0; i < chans.size(); ++i)
      for (refill(i); heads[i].live; refill(i))
        for (std::size_t k = 0; k < heads[i].batch.samples.size(); ++k) {
          PK_TRY(visit(heads[i].batch.at(k, tmp)));
          samples += heads[i].batch.samples[k].kind != intelpt::SampleKind::kChain;
        }
    return ok();
  }
  for (std::size_t i = 0; i < chans.size(); ++i) refill(i);
  while (true) {
    std::size_t best = chans.size();
    std::uint64_t best_time = ~0ULL;
    for (std::size_t i = 0; i < heads.size(); ++i) {
      if (!heads[i].live) continue;
      std::uint64_t t = heads[i].batch.samples[heads[i].pos].tsc;
      if (best == chans.size() || t < best_time) {
        best = i;
        best_time = t;
      }
    }
    if (best == chans.size()) return ok();
    Head& h = heads[best];
    PK_TRY(visit(h.batch.at(h.pos, tmp)));
    samples += h.batch.samples[h.pos].kind != intelpt::SampleKind::kChain;
    if (++h.pos == h.batch.samples.size()) refill(best);
  }
}

}  // namespace

bool has_auxtrace(const perfdata::Reader& reader) {
  return reader.feature(abi::kFeatAuxtrace).has_value();
}

Expected<ItraceStats> decode_itrace(perfdata::Reader& reader, const ItraceDecodeOptions& opts,
                                    const ItraceVisitor& visit_all) {
  PK_ASSIGN(auto rec, read_pt_recording(reader, opts));
  // Failures to read an image's code are reported as perf reports them:
  // the first ones in time order, then none (PtRecording::unreadable).
  std::unordered_map<std::uint32_t, unsigned> failures;
  ItraceVisitor budgeted = [&](const ItraceSample& is) -> Status {
    const intelpt::SynthSample& s = *is.sample;
    if (s.kind == intelpt::SampleKind::kError && s.image) {
      auto it = rec->unreadable.find(s.image - 1);
      if (it != rec->unreadable.end() && failures[s.image]++ >= it->second) return ok();
    }
    return visit_all(is);
  };
  const ItraceVisitor& visit = rec->unreadable.empty() ? visit_all : budgeted;
  ItraceStats stats;
  stats.queues = rec->queues.size();
  for (const auto& q : rec->queues) stats.trace_bytes += q.bytes;
  if (opts.itrace.dont_decode) return stats;
  const std::size_t n = rec->queues.size();
  std::vector<QueueResult> results(n);
  std::atomic<bool> cancel{false};
  Progress progress(opts, *rec);
  if (n == 1) {
    // Nothing to merge: decode here and visit as samples come.
    decode_queue(*rec, 0, opts, nullptr, &visit, cancel, progress, results[0]);
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
        decode_queue(*rec, i, opts, chans[i].get(), nullptr, cancel, progress, results[i]);
        tokens.release();
      });
    bool timeless = opts.itrace.timeless || !rec->cfg.tsc() || !rec->cfg.time_mult;
    Status st = merge(chans, timeless, visit, progress, stats.samples);
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

struct ItraceStream::Impl {
  Impl() : tokens(1), chan(kMaxBatchesInFlight, &tokens) {}
  Tokens tokens;
  Channel chan;
  std::thread worker;
  std::atomic<bool> cancel{false};
  Expected<ItraceStats> result = ItraceStats{};
  Batch head;
  std::size_t pos = 0;
  bool live = true;  // head may still be refilled
  intelpt::SynthSample tmp;
  // The caller's progress and warning callbacks run on its thread: the
  // worker leaves what it has for them here.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  std::function<void(const std::string&)> warn;
  std::atomic<std::uint64_t> done{0}, total{0};
  std::mutex warn_mutex;
  std::vector<std::string> warnings;

  void run(const std::string& path, ItraceDecodeOptions opts) {
    tokens.acquire();
    if (opts.progress)
      opts.progress = [this](std::uint64_t d, std::uint64_t t) {
        total.store(t, std::memory_order_relaxed);
        done.store(d, std::memory_order_relaxed);
      };
    if (opts.warn)
      opts.warn = [this](const std::string& m) {
        std::lock_guard lk(warn_mutex);
        warnings.push_back(m);
      };
    Batch batch = chan.fresh();
    auto reader = perfdata::Reader::open(path);
    if (!reader) {
      result = reader.error();
    } else {
      result = decode_itrace(**reader, opts, [&](const ItraceSample& is) -> Status {
        if (cancel.load(std::memory_order_relaxed)) return make_error("cancelled");
        batch.add(*is.sample, is.pid, is.tid, is.cpu);
        if (batch.samples.size() >= kBatchSamples) {
          chan.push(std::move(batch));
          batch = chan.fresh();
        }
        return ok();
      });
    }
    if (!batch.samples.empty()) chan.push(std::move(batch));
    chan.close();
    tokens.release();
  }
  // Passes on the worker's warnings and progress.
  void report() {
    if (warn) {
      std::vector<std::string> w;
      {
        std::lock_guard lk(warn_mutex);
        w.swap(warnings);
      }
      for (const auto& m : w) warn(m);
    }
    if (progress && total.load(std::memory_order_relaxed))
      progress(done.load(std::memory_order_relaxed), total.load(std::memory_order_relaxed));
  }
};

std::unique_ptr<ItraceStream> ItraceStream::start(std::string path, ItraceDecodeOptions opts) {
  auto impl = std::make_unique<Impl>();
  Impl* p = impl.get();
  p->progress = opts.progress;
  p->warn = opts.warn;
  p->worker =
      std::thread([p, path = std::move(path), opts = std::move(opts)] { p->run(path, opts); });
  return std::unique_ptr<ItraceStream>(new ItraceStream(std::move(impl)));
}

ItraceStream::ItraceStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ItraceStream::~ItraceStream() {
  impl_->cancel = true;
  impl_->chan.cancel();
  if (impl_->worker.joinable()) impl_->worker.join();
}

Status ItraceStream::visit_before(std::uint64_t tsc, const ItraceVisitor& visit) {
  Impl& m = *impl_;
  while (true) {
    if (m.pos >= m.head.samples.size()) {
      if (!m.live) return ok();
      m.pos = 0;
      m.live = m.chan.pop(m.head);
      m.report();
      if (!m.live) {
        m.head.clear();
        return ok();
      }
      continue;
    }
    if (m.head.samples[m.pos].tsc >= tsc) return ok();
    Status st = visit(m.head.at(m.pos, m.tmp));
    ++m.pos;
    if (!st) {
      m.cancel = true;
      m.chan.cancel();
      return st;
    }
  }
}

Expected<ItraceStats> ItraceStream::finish() {
  if (impl_->worker.joinable()) impl_->worker.join();
  impl_->report();
  return std::move(impl_->result);
}

}  // namespace perfkit::analysis
