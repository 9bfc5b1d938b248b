// ItraceStream: decode_itrace a stretch at a time. With one job, a recording
// of one queue (perf record --per-thread, or one cpu) decodes on the caller's
// thread, pausing at each TSC asked for: samples go from the synthesizer
// straight to the visitor, with no copy and no thread in between. Otherwise
// the queues decode on worker threads (one queue on one worker), merged on
// another, and come over in batches.
#include <algorithm>
#include <thread>
#include <utility>

#include "itrace/itrace.h"
#include "itrace/itrace_queue.h"

namespace perfkit::itrace {

using namespace detail;

struct ItraceStream::Impl {
  virtual ~Impl() = default;
  virtual Status visit_before(std::uint64_t tsc, const ItraceVisitor& visit) = 0;
  virtual Expected<ItraceStats> finish() = 0;
};

namespace {

// The recording could not be read: nothing to visit, and the error at the end.
class FailedStream : public ItraceStream::Impl {
 public:
  explicit FailedStream(Error e) : error_(std::move(e)) {}
  Status visit_before(std::uint64_t, const ItraceVisitor&) override { return ok(); }
  Expected<ItraceStats> finish() override { return error_; }

 private:
  Error error_;
};

// One queue, decoded on the calling thread as far as each visit_before asks.
class DirectStream : public ItraceStream::Impl {
 public:
  DirectStream(std::unique_ptr<perfdata::Reader> reader, std::unique_ptr<PtRecording> rec,
               ItraceDecodeOptions opts)
      : reader_(std::move(reader)),
        rec_(std::move(rec)),
        opts_(std::move(opts)),
        budget_(*rec_),
        progress_(opts_, *rec_),
        stats_(stats_of(*rec_)) {
    if (!opts_.itrace.dont_decode && !rec_->queues.empty())
      queue_ = std::make_unique<QueueDecode>(*rec_, 0, opts_, nullptr, nullptr, cancel_, progress_);
    if (queue_ && budget_.needed()) queue_->sink().set_budget(&budget_);
    if (queue_) queue_->sink().set_insn_runs(opts_.insn_runs);
  }

  Status visit_before(std::uint64_t tsc, const ItraceVisitor& visit) override {
    if (!queue_) return ok();
    while (true) {
      // Samples held at the last pause first.
      for (; pos_ < held_.samples.size(); ++pos_) {
        if (held_.samples[pos_].tsc >= tsc) return ok();
        PK_TRY(visit(held_.at(pos_, tmp_)));
      }
      held_.clear();
      pos_ = 0;
      queue_->sink().take_held(held_);
      if (!held_.samples.empty()) continue;
      if (ended_) return ok();
      queue_->sink().pause_at(tsc, &visit);
      ended_ = !queue_->resume();
      PK_TRY(queue_->sink().status());
    }
  }

  Expected<ItraceStats> finish() override {
    if (queue_) {
      QueueResult r = queue_->result();
      PK_TRY(std::move(r.status));
      stats_.instructions = r.instructions;
      stats_.errors = r.errors;
      stats_.samples = r.samples;
    }
    progress_.report();
    return stats_;
  }

 private:
  std::unique_ptr<perfdata::Reader> reader_;  // the trace's bytes are views into its file
  std::unique_ptr<PtRecording> rec_;
  ItraceDecodeOptions opts_;
  ErrorBudget budget_;
  Progress progress_;
  ItraceStats stats_;
  std::atomic<bool> cancel_{false};
  std::unique_ptr<QueueDecode> queue_;
  Batch held_;
  std::size_t pos_ = 0;
  bool ended_ = false;
  intelpt::SynthSample tmp_;
};

// Several queues, or one with jobs to spare: decode_recording on a worker
// thread (which merges several queues' own threads), its samples handed over
// in bounded batches.
class ThreadedStream : public ItraceStream::Impl {
 public:
  ThreadedStream(std::unique_ptr<perfdata::Reader> reader, std::unique_ptr<PtRecording> rec,
                 ItraceDecodeOptions opts)
      : reader_(std::move(reader)),
        rec_(std::move(rec)),
        progress_(std::move(opts.progress)),
        warn_(std::move(opts.warn)),
        tokens_(1),
        chan_(kMaxBatchesInFlight, &tokens_) {
    // The caller's progress and warning callbacks run on its thread: the
    // worker leaves what it has for them here.
    if (progress_)
      opts.progress = [this](std::uint64_t d, std::uint64_t t) {
        total_.store(t, std::memory_order_relaxed);
        done_.store(d, std::memory_order_relaxed);
      };
    if (warn_)
      opts.warn = [this](const std::string& m) {
        std::lock_guard lk(warn_mutex_);
        warnings_.push_back(m);
      };
    if (rec_->queues.size() == 1 && !opts.itrace.dont_decode) {
      // One queue: its decoder fills the batches itself.
      one_progress_ = std::make_unique<Progress>(opts, *rec_);
      worker_ = std::thread([this, opts = std::move(opts)] { run_one(opts); });
      return;
    }
    worker_ = std::thread([this, opts = std::move(opts)] { run(opts); });
  }
  ~ThreadedStream() override {
    cancel_ = true;
    chan_.cancel();
    if (worker_.joinable()) worker_.join();
  }

  Status visit_before(std::uint64_t tsc, const ItraceVisitor& visit) override {
    while (true) {
      if (pos_ >= head_.samples.size()) {
        if (!live_) return ok();
        pos_ = 0;
        live_ = chan_.pop(head_);
        report();
        if (!live_) {
          head_.clear();
          return ok();
        }
        continue;
      }
      if (head_.samples[pos_].tsc >= tsc) return ok();
      Status st = visit(head_.at(pos_, tmp_));
      ++pos_;
      if (!st) {
        cancel_ = true;
        chan_.cancel();
        return st;
      }
    }
  }

  Expected<ItraceStats> finish() override {
    if (worker_.joinable()) worker_.join();
    report();
    return std::move(result_);
  }

 private:
  void run(const ItraceDecodeOptions& opts) {
    tokens_.acquire();
    Batch batch = chan_.fresh();
    result_ = decode_recording(*rec_, opts, [&](const ItraceSample& is) -> Status {
      if (cancel_.load(std::memory_order_relaxed)) return make_error("cancelled");
      if (is.run_n)
        batch.add_run(*is.sample, is.run_lengths, is.run_n, is.pid, is.tid, is.cpu);
      else
        batch.add(*is.sample, is.pid, is.tid, is.cpu);
      if (batch.samples.size() >= kBatchSamples) {
        chan_.push(std::move(batch));
        batch = chan_.fresh();
      }
      return ok();
    });
    if (!batch.samples.empty()) chan_.push(std::move(batch));
    chan_.close();
    tokens_.release();
  }
  // The queue of a recording of one straight into the channel, its runs of
  // instruction samples as runs, the errors perf would not report left out.
  void run_one(const ItraceDecodeOptions& opts) {
    tokens_.acquire();
    ErrorBudget budget(*rec_);
    {
      QueueDecode d(*rec_, 0, opts, &chan_, nullptr, cancel_, *one_progress_);
      if (budget.needed()) d.sink().set_budget(&budget);
      d.sink().set_insn_runs(opts.insn_runs);
      while (d.resume()) {
      }
      QueueResult r = d.result();
      ItraceStats stats = stats_of(*rec_);
      stats.instructions = r.instructions;
      stats.errors = r.errors;
      stats.samples = r.samples;
      if (r.status)
        result_ = stats;
      else
        result_ = std::move(r.status).error();
    }
    tokens_.release();
  }
  // Passes on the worker's warnings and progress.
  void report() {
    if (one_progress_) one_progress_->report();
    if (warn_) {
      std::vector<std::string> w;
      {
        std::lock_guard lk(warn_mutex_);
        w.swap(warnings_);
      }
      for (const auto& m : w) warn_(m);
    }
    if (progress_ && total_.load(std::memory_order_relaxed))
      progress_(done_.load(std::memory_order_relaxed), total_.load(std::memory_order_relaxed));
  }

  std::unique_ptr<perfdata::Reader> reader_;
  std::unique_ptr<PtRecording> rec_;
  std::function<void(std::uint64_t, std::uint64_t)> progress_;
  std::function<void(const std::string&)> warn_;
  std::atomic<std::uint64_t> done_{0}, total_{0};
  std::mutex warn_mutex_;
  std::vector<std::string> warnings_;
  Tokens tokens_;
  Channel chan_;
  std::atomic<bool> cancel_{false};
  Expected<ItraceStats> result_ = ItraceStats{};
  std::unique_ptr<Progress> one_progress_;  // a recording of one queue's
  Batch head_;
  std::size_t pos_ = 0;
  bool live_ = true;  // head_ may still be refilled
  intelpt::SynthSample tmp_;
  std::thread worker_;  // started by the constructor, joined before the members go
};

}  // namespace

std::unique_ptr<ItraceStream> ItraceStream::start(std::string path, ItraceDecodeOptions opts) {
  auto wrap = [](std::unique_ptr<Impl> impl) {
    return std::unique_ptr<ItraceStream>(new ItraceStream(std::move(impl)));
  };
  auto reader = perfdata::Reader::open(path);
  if (!reader) return wrap(std::make_unique<FailedStream>(reader.error()));
  auto rec = read_pt_recording(**reader, opts);
  if (!rec) return wrap(std::make_unique<FailedStream>(rec.error()));
  // One queue decodes on a thread of its own too when there are cores to
  // spare: the visitor (a printer, say) goes on meanwhile.
  const unsigned jobs = opts.jobs ? opts.jobs : std::max(1u, std::thread::hardware_concurrency());
  if ((*rec)->queues.size() > 1 || (jobs > 1 && !opts.itrace.dont_decode))
    return wrap(
        std::make_unique<ThreadedStream>(std::move(*reader), std::move(*rec), std::move(opts)));
  return wrap(std::make_unique<DirectStream>(std::move(*reader), std::move(*rec), std::move(opts)));
}

ItraceStream::ItraceStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ItraceStream::~ItraceStream() = default;

Status ItraceStream::visit_before(std::uint64_t tsc, const ItraceVisitor& visit) {
  return impl_->visit_before(tsc, visit);
}

Expected<ItraceStats> ItraceStream::finish() { return impl_->finish(); }

}  // namespace perfkit::itrace
