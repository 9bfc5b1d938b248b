#include "profile/line_worker.h"

namespace perfkit::profile {

namespace {
// Asks handed to the worker at a time: few enough that it starts early,
// enough that the lock is rarely taken.
constexpr std::size_t kBatch = 64;
}  // namespace

LineWorker::LineWorker(symbol::Symbolizer& symbolizer)
    : lines_(symbolizer, symbol::SourceLineOptions{true}) {
  // A thread that cannot be started leaves the work to finish(): the
  // library does not throw.
  try {
    worker_ = std::thread([this] { run(); });
  } catch (...) {
  }
}

LineWorker::~LineWorker() {
  if (worker_.joinable()) {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    worker_.join();
  }
}

symbol::SourceLines::Dso* LineWorker::dso(std::size_t index, std::string_view long_name,
                                          std::string_view short_name, const elf::BuildId& id) {
  if (index >= dsos_.size()) dsos_.resize(index + 1, nullptr);
  auto*& h = dsos_[index];
  if (!h) {
    h = lines_.dso(long_name, short_name, id);
    lines_.prepare(h);
  }
  return h;
}

void LineWorker::ask(symbol::SourceLines::Dso* dso, std::uint64_t addr) {
  batch_.push_back(Ask{dso, addr, {}});
  if (batch_.size() >= kBatch) hand_over();
}

void LineWorker::ask_known(std::string_view text) {
  batch_.push_back(Ask{nullptr, 0, std::string(text)});
  if (batch_.size() >= kBatch) hand_over();
}

void LineWorker::hand_over() {
  if (!worker_.joinable() || batch_.empty()) return;
  {
    std::lock_guard lock(mu_);
    shared_.insert(shared_.end(), std::make_move_iterator(batch_.begin()),
                   std::make_move_iterator(batch_.end()));
  }
  batch_.clear();
  cv_.notify_one();
}

void LineWorker::run() {
  std::vector<Ask> taken;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return done_ || !shared_.empty(); });
      if (shared_.empty()) return;  // done, and nothing left
      taken.swap(shared_);
    }
    answer(taken);
    taken.clear();
  }
}

void LineWorker::answer(std::vector<Ask>& batch) {
  for (Ask& a : batch)
    answers_.push_back(a.dso ? std::string(lines_.srcline(a.dso, a.addr)) : std::move(a.known));
}

std::vector<std::string> LineWorker::finish() {
  if (worker_.joinable()) {
    hand_over();
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    worker_.join();
  }
  answer(batch_);  // what no worker took
  batch_.clear();
  return std::move(answers_);
}

}  // namespace perfkit::profile
