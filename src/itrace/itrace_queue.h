// The parts of an Intel PT decode that itrace.cc and itrace_stream.cc
// share: one queue's decoder and the sink its samples go to, the batches that
// carry samples between threads, and the decode of a recording read already.
// Internal to the analysis library.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "itrace/itrace.h"
#include "itrace/itrace_recording.h"

namespace perfkit::itrace::detail {

constexpr std::size_t kBatchSamples = 16384;
constexpr std::size_t kMaxBatchesInFlight = 8;

// Samples decoded together, with their threads. Instruction and branch
// samples (nearly all of them) are kept compact, and so are runs of
// instruction samples (ItraceSample::run_n); other kinds whole, beside, with
// the call chains and branch stacks.
struct Batch {
  struct Entry {
    std::uint64_t ip, addr, tsc, time, period, offset;
    std::uint32_t flags;
    std::int32_t pid, tid, cpu;
    std::uint32_t full;   // index in `full`, or kCompact; a run's first length in `lengths`
    std::uint32_t run_n;  // a run of so many instruction samples, or 0
    intelpt::SampleKind kind;
    std::uint8_t insn_len;
  };
  static constexpr std::uint32_t kCompact = ~0u;
  std::vector<Entry> samples;
  std::vector<intelpt::SynthSample> full;
  std::vector<std::uint64_t> chains;
  std::vector<intelpt::BranchRecord> branches;
  std::vector<std::uint32_t> chain_at, branch_at;  // by index in `full`
  std::vector<std::uint8_t> lengths;               // the runs' instruction lengths

  void clear() {
    samples.clear();
    full.clear();
    chains.clear();
    branches.clear();
    chain_at.clear();
    branch_at.clear();
    lengths.clear();
  }
  // A run as SampleSink::on_insn_run gives it (a compact instruction sample).
  void add_run(const intelpt::SynthSample& s, const std::uint8_t* lens, std::uint32_t n,
               std::int32_t pid, std::int32_t tid, std::int32_t cpu) {
    const auto at = static_cast<std::uint32_t>(lengths.size());
    lengths.insert(lengths.end(), lens, lens + n);
    samples.push_back(Entry{s.ip, s.addr, s.tsc, s.time, s.period, s.offset, s.flags, pid, tid, cpu,
                            at, n, s.kind, lens[0]});
  }
  void add(const intelpt::SynthSample& s, std::int32_t pid, std::int32_t tid, std::int32_t cpu) {
    Entry e{s.ip, s.addr, s.tsc, s.time,   s.period, s.offset, s.flags,
            pid,  tid,    cpu,   kCompact, 0,        s.kind,   s.insn_len};
    const bool compact =
        (s.kind == intelpt::SampleKind::kInstructions || s.kind == intelpt::SampleKind::kBranches ||
         s.kind == intelpt::SampleKind::kTick) &&
        !s.callchain_nr && !s.branch_nr && !s.insn_cnt && !s.cyc_cnt && !s.insn_ip;
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
    if (e.full == kCompact || e.run_n) {
      // What a compact entry leaves out is zero (tmp may hold a whole
      // sample from before).
      tmp.insn_cnt = tmp.cyc_cnt = 0;
      tmp.callchain_nr = tmp.branch_nr = 0;
      tmp.payload = tmp.aux = 0;
      tmp.insn_ip = 0;
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
    if (e.run_n) return ItraceSample{&tmp, e.pid, e.tid, e.cpu, lengths.data() + e.full, e.run_n};
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

// Failures to read an image's code are reported as perf reports them: the
// first ones in time order, then none (PtRecording::unreadable).
class ErrorBudget {
 public:
  explicit ErrorBudget(const PtRecording& rec) : rec_(rec) {}
  bool needed() const { return !rec_.unreadable.empty(); }
  // Whether to leave the sample out.
  bool spent(const intelpt::SynthSample& s) {
    if (s.kind != intelpt::SampleKind::kError || !s.image) return false;
    auto it = rec_.unreadable.find(s.image - 1);
    return it != rec_.unreadable.end() && failures_[s.image]++ >= it->second;
  }

 private:
  const PtRecording& rec_;
  std::unordered_map<std::uint32_t, unsigned> failures_;
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
  // Direct samples from here on: those before `tsc` are visited (by
  // `visit`); at the first one at or after it, that one and all after it are
  // held, and paused() turns true until take_held() hands them over.
  void pause_at(std::uint64_t tsc, const ItraceVisitor* visit) {
    pause_tsc_ = tsc;
    visit_ = visit;
  }
  bool paused() const { return pausing_; }
  // The errors perf would not report are left out.
  void set_budget(ErrorBudget* budget) { budget_ = budget; }
  // Runs of instruction samples go to the visitor in one visit each, or
  // into the batches as runs.
  void set_insn_runs(bool on) { runs_ = on; }
  // The held samples (the batch is given back empty), and decoding may go on.
  void take_held(Batch& into) {
    std::swap(into, held_);
    held_.clear();
    pausing_ = false;
  }
  void on_sample(const intelpt::SynthSample& s) override {
    if (s.kind == intelpt::SampleKind::kError) ++errors_;
    if (s.kind != intelpt::SampleKind::kChain && s.kind != intelpt::SampleKind::kTick) ++samples_;
    if (!ch_) {
      direct(s);
      return;
    }
    if (budget_ && budget_->spent(s)) return;
    std::int32_t pid, tid;
    thread_of(s.tsc, pid, tid);
    batch_.add(s, pid, tid, q_.cpu);
    if (batch_.samples.size() >= kBatchSamples) flush();
  }
  void on_insn_run(intelpt::SynthSample& s, const std::uint8_t* lengths, std::uint32_t n) override {
    if (runs_ && ch_) {
      samples_ += n;
      std::int32_t pid, tid;
      thread_of(s.tsc, pid, tid);
      batch_.add_run(s, lengths, n, pid, tid, q_.cpu);
      if (batch_.samples.size() >= kBatchSamples) flush();
      return;
    }
    if (!runs_ || ch_ || failed_ || pausing_ || s.tsc >= pause_tsc_) {
      SampleSink::on_insn_run(s, lengths, n);
      return;
    }
    samples_ += n;
    s.insn_len = lengths[0];
    direct_.sample = &s;
    direct_.cpu = q_.cpu;
    thread_of(s.tsc, direct_.pid, direct_.tid);
    direct_.run_lengths = lengths;
    direct_.run_n = n;
    Status st = (*visit_)(direct_);
    direct_.run_lengths = nullptr;
    direct_.run_n = 0;
    if (!st) [[unlikely]] {
      status_ = std::move(st);
      failed_ = true;
      *cancel_ = true;
    }
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
    if (failed_ || (budget_ && budget_->spent(s))) return;
    if (pausing_ || s.tsc >= pause_tsc_) [[unlikely]] {
      std::int32_t pid, tid;
      thread_of(s.tsc, pid, tid);
      held_.add(s, pid, tid, q_.cpu);
      pausing_ = true;
      return;
    }
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
  std::uint64_t pause_tsc_ = ~0ULL;
  bool pausing_ = false;
  Batch held_;
  ErrorBudget* budget_ = nullptr;
  bool runs_ = false;
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
                std::size_t queue, const QueueSink* pausing)
      : inner_(inner), cancel_(cancel), progress_(progress), queue_(queue), pausing_(pausing) {}
  void on_step(const intelpt::Step& s) override {
    inner_.on_step(s);
    if (progress_ && ++steps_ == kProgressSteps) {
      steps_ = 0;
      progress_->at(queue_, s.offset);
      if (pausing_) progress_->report();
    }
  }
  bool stop() const override {
    return (pausing_ && pausing_->paused()) || cancel_.load(std::memory_order_relaxed);
  }

 private:
  intelpt::FlowSink& inner_;
  const std::atomic<bool>& cancel_;
  Progress* progress_;
  std::size_t queue_;
  const QueueSink* pausing_;  // on the calling thread: reports progress, pauses
  std::uint32_t steps_ = 0;
};

struct QueueResult {
  std::uint64_t instructions = 0, errors = 0, samples = 0;
  Status status;
};

// One queue's decoder, synthesizer and sink, kept together so that a decode
// can stop and go on (QueueSink::pause_at) on the calling thread.
class QueueDecode {
 public:
  // Into `ch`, or without a channel straight to `visit` on this thread.
  QueueDecode(const PtRecording& rec, std::size_t qi, const ItraceDecodeOptions& opts, Channel* ch,
              const ItraceVisitor* visit, std::atomic<bool>& cancel, Progress& progress)
      : rec_(rec),
        q_(rec.queues[qi]),
        qi_(qi),
        ch_(ch),
        cancel_(cancel),
        progress_(progress),
        data_(joined_data()),
        decoder_(data_, rec.cfg, space(), flow_options(), 0,
                 rec.cfg.tsc() && !q_.buffers.empty() ? q_.buffers.front().reference : 0),
        spaces_(rec, q_.cpu),
        sink_(rec, q_, ch, visit, &cancel),
        synth_(opts.itrace, rec.cfg, sink_, opts.every_branch),
        threads_(rec, q_.cpu),
        stoppable_(synth_, cancel, progress.on() ? &progress : nullptr, qi, ch ? nullptr : &sink_) {
    if (per_cpu()) {
      decoder_.set_space_provider(&spaces_);
      synth_.set_thread_clock(&threads_);
    }
    if (q_.buffers.size() > 1) {
      std::vector<std::size_t> ends;
      std::size_t at = 0;
      for (const auto& b : q_.buffers) ends.push_back(at += b.data.size());
      decoder_.set_buffer_ends(std::move(ends));
    }
    if (qi < rec.late.size()) synth_.set_late_chains(rec.late[qi]);
    // Merged with other queues in perf's order, which its decoder's times make.
    synth_.set_ticks(ch != nullptr && rec.queues.size() > 1);
  }
  QueueDecode(const QueueDecode&) = delete;
  QueueDecode& operator=(const QueueDecode&) = delete;

  QueueSink& sink() { return sink_; }
  // Decodes until the sink pauses (true) or the queue is done (false).
  bool resume() {
    if (done_) return false;
    if (decoder_.resume(stoppable_) && !cancel_.load(std::memory_order_relaxed)) return true;
    done_ = true;
    // The samples the synthesizer still holds may pause the sink too.
    if (!cancel_.load(std::memory_order_relaxed)) synth_.finish();
    progress_.at(qi_, q_.bytes);
    sink_.flush();
    if (ch_) ch_->close();
    return false;
  }
  QueueResult result() const {
    return QueueResult{synth_.instructions(), sink_.errors(), sink_.samples(), sink_.status()};
  }

 private:
  bool per_cpu() const { return rec_.cfg.per_cpu_mmaps && q_.cpu >= 0; }
  Bytes joined_data() {
    if (q_.buffers.size() == 1) return q_.buffers[0].data;
    joined_.reserve(q_.bytes);
    for (const auto& b : q_.buffers) joined_.insert(joined_.end(), b.data.begin(), b.data.end());
    return joined_;
  }
  const intelpt::AddressSpace* space() const {
    return per_cpu() ? nullptr : rec_.space_of(rec_.pid_of(q_.tid));
  }
  intelpt::FlowOptions flow_options() const {
    intelpt::FlowOptions fo;
    fo.return_compression = rec_.cfg.return_compression();
    return fo;
  }

  const PtRecording& rec_;
  const PtQueue& q_;
  std::size_t qi_;
  Channel* ch_;
  std::atomic<bool>& cancel_;
  Progress& progress_;
  std::vector<std::uint8_t> joined_;
  Bytes data_;
  intelpt::FlowDecoder decoder_;
  CpuSpaces spaces_;
  QueueSink sink_;
  intelpt::Synthesizer synth_;
  CpuThreads threads_;
  StoppableSink stoppable_;
  bool done_ = false;
};

// A recording's queues and trace bytes, before any decoding.
ItraceStats stats_of(const PtRecording& rec);

// decode_itrace of a recording read already.
Expected<ItraceStats> decode_recording(const PtRecording& rec, const ItraceDecodeOptions& opts,
                                       const ItraceVisitor& visit);

}  // namespace perfkit::itrace::detail
