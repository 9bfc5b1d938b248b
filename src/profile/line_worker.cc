#include "profile/line_worker.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "symbol/source_lines.h"

namespace perfkit::profile {

namespace {
// Asks handed to the worker at a time: few enough that it starts early,
// enough that the lock is rarely taken.
constexpr std::size_t kBatch = 64;
}  // namespace

struct LineWorker::Impl {
  struct Ask {
    symbol::SourceLines::Dso* dso = nullptr;  // nullptr: `known` is the answer
    std::uint64_t addr = 0;
    std::string known;
  };

  explicit Impl(symbol::Symbolizer& symbolizer)
      : lines(symbolizer, symbol::SourceLineOptions{true}) {}

  void push(Ask a) {
    batch.push_back(std::move(a));
    if (batch.size() >= kBatch) hand_over();
  }
  void hand_over() {
    if (!worker.joinable() || batch.empty()) return;
    {
      std::lock_guard lock(mu);
      shared.insert(shared.end(), std::make_move_iterator(batch.begin()),
                    std::make_move_iterator(batch.end()));
    }
    batch.clear();
    cv.notify_one();
  }
  void run() {
    std::vector<Ask> taken;
    for (;;) {
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [this] { return done || !shared.empty(); });
        if (shared.empty()) return;  // done, and nothing left
        taken.swap(shared);
      }
      answer(taken);
      taken.clear();
    }
  }
  void answer(std::vector<Ask>& asks) {
    for (Ask& a : asks)
      answers.push_back(a.dso ? std::string(lines.srcline(a.dso, a.addr)) : std::move(a.known));
  }
  void stop() {
    if (!worker.joinable()) return;
    hand_over();
    {
      std::lock_guard lock(mu);
      done = true;
    }
    cv.notify_one();
    worker.join();
  }

  symbol::SourceLines lines;
  std::vector<symbol::SourceLines::Dso*> dsos;  // by machine::Dso::index
  std::vector<Ask> batch;                       // this thread's, not handed over yet
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Ask> shared;  // handed over, not taken by the worker yet
  bool done = false;
  std::vector<std::string> answers;  // the worker's until it is joined
  std::thread worker;                // not joinable: none could be started
};

LineWorker::LineWorker(symbol::Symbolizer& symbolizer) : impl_(std::make_unique<Impl>(symbolizer)) {
  // A thread that cannot be started leaves the work to finish(): the
  // library does not throw.
  try {
    impl_->worker = std::thread([impl = impl_.get()] { impl->run(); });
  } catch (...) {
  }
}

LineWorker::~LineWorker() { impl_->stop(); }

void LineWorker::dso(std::size_t index, std::string_view long_name, std::string_view short_name,
                     const elf::BuildId& id) {
  if (index >= impl_->dsos.size()) impl_->dsos.resize(index + 1, nullptr);
  auto*& h = impl_->dsos[index];
  if (!h) {
    h = impl_->lines.dso(long_name, short_name, id);
    impl_->lines.prepare(h);
  }
}

void LineWorker::ask(std::size_t index, std::uint64_t addr) {
  impl_->push(Impl::Ask{index < impl_->dsos.size() ? impl_->dsos[index] : nullptr, addr, {}});
}

void LineWorker::ask_known(std::string_view text) {
  impl_->push(Impl::Ask{nullptr, 0, std::string(text)});
}

std::vector<std::string> LineWorker::finish() {
  impl_->stop();
  impl_->answer(impl_->batch);  // what no worker took
  impl_->batch.clear();
  return std::move(impl_->answers);
}

}  // namespace perfkit::profile
