// Sample shards: one recording read by N sessions side by side (--jobs N).
//
// Every session reads every record and applies every side-band record, so
// that its machine (threads, maps, comms) is at each point the one a single
// session would have; but it resolves and hands on only its share of the
// samples: slices of `slice` consecutive samples, dealt in turn (slice i to
// session i % N). What each slice makes is put back in slice order
// (OrderedWrites), and the result is the single session's.
//
//   recording --> session 0: side-band, samples of slices 0, N, 2N ... --+
//            \--> session 1: side-band, samples of slices 1, N+1 ... ----+--> in slice order
//
// Reading is done N times; resolving and printing, the bulk of perf
// script's work, once per sample.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "session/session.h"

namespace perfkit::session {

// Deals samples to one shard: call take() for each sample, in order. A
// slice ends after `slice` samples, or once its samples' bytes (what each
// costs: take's argument, a DWARF sample's stack copy) reach `slice_bytes`
// (0: no such bound), so that slices of costly samples stay small enough
// to share the work out evenly.
class SliceDeal {
 public:
  SliceDeal(unsigned shard, unsigned shards, std::uint64_t slice, std::uint64_t slice_bytes = 0)
      : shard_(shard), shards_(shards), slice_(slice ? slice : 1), slice_bytes_(slice_bytes) {}
  struct Step {
    bool mine = false;   // the sample is this shard's
    bool ended = false;  // a slice of this shard's ended before it
    std::uint64_t ended_slice = 0;
  };
  Step take(std::uint64_t bytes = 0) {
    Step st;
    if (in_slice_ == slice_ || (slice_bytes_ && bytes_in_slice_ >= slice_bytes_)) {
      ++last_;
      in_slice_ = 0;
      bytes_in_slice_ = 0;
    }
    ++in_slice_;
    bytes_in_slice_ += bytes;
    const std::uint64_t s = last_;
    st.mine = s % shards_ == shard_;
    if (open_ && s != current_) {
      st.ended = true;
      st.ended_slice = current_;
      open_ = false;
    }
    if (st.mine && !open_) open_ = true, current_ = s;
    return st;
  }
  // The slice of the last sample dealt (0 before any).
  std::uint64_t last_slice() const { return last_; }
  // The slice this shard is in (its samples not all taken), if any.
  std::optional<std::uint64_t> open_slice() const {
    return open_ ? std::optional<std::uint64_t>(current_) : std::nullopt;
  }

 private:
  unsigned shard_, shards_;
  std::uint64_t slice_, slice_bytes_;
  std::uint64_t last_ = 0;      // the slice of the last sample dealt
  std::uint64_t in_slice_ = 0;  // samples dealt of it (0: none dealt yet)
  std::uint64_t bytes_in_slice_ = 0;
  bool open_ = false;
  std::uint64_t current_ = 0;
};

// What the shards made, written slice by slice in slice order. A slice
// comes in parts (a shard's output in buffers of a bounded size), the last
// one marked. No thread waits to write: a part of the slice being written
// is written by the shard that made it, then whatever the others made of
// the slices after it, as far as they are complete; the rest waits in
// their queues. Shards stay at most `ahead` rounds of slices ahead of the
// writing (a shard's slice i + ahead * shards waits until slice i is out).
template <class T>
class OrderedWrites {
 public:
  // Writes a part; errors stop everything.
  using Write = std::function<Status(T&)>;
  OrderedWrites(unsigned shards, std::size_t ahead, Write write)
      : write_(std::move(write)), shards_(shards), ahead_(ahead ? ahead : 1) {}

  // A part of shard `k`'s slice `index` (its slices come in increasing
  // order), `last` or not. Waits while `index` is too far ahead. False:
  // stop (a write failed, or the output ended before `index`).
  bool push(unsigned k, std::uint64_t index, T value, bool last) {
    std::unique_lock lock(mu_);
    const std::uint64_t reach = ahead_ * shards_.size();
    room_.wait(lock, [&] { return stopped(index) || index < next_ + reach; });
    if (stopped(index)) return false;
    shards_[k].push_back(Part{index, last, std::move(value)});
    if (index == next_) drain();
    return !stopped(index);
  }
  // A shard failed with `status` in slice `at` (the last it dealt a sample
  // of): nothing after that slice is written. Call before the shard's last
  // part of `at`.
  void fail(Status status, std::uint64_t at) {
    std::lock_guard lock(mu_);
    if (status || (end_status_ && at >= end_)) return;
    end_ = at;
    end_status_ = std::move(status);
    room_.notify_all();
  }
  // After every shard has finished: the first error in the output's order
  // (a write's, or a shard's), else ok.
  Status status() {
    std::lock_guard lock(mu_);
    if (write_status_) return *write_status_;
    if (end_status_) return *end_status_;
    return ok();
  }

 private:
  struct Part {
    std::uint64_t index = 0;
    bool last = false;
    T value;
  };
  bool stopped(std::uint64_t index) const {
    return write_status_.has_value() || (end_status_ && index > end_);
  }
  // Writes the parts of slice next_ on, in order, while they are there.
  void drain() {
    for (;;) {
      auto& q = shards_[next_ % shards_.size()];
      if (q.empty() || q.front().index != next_ || stopped(next_)) return;
      Part p = std::move(q.front());
      q.pop_front();
      if (Status st = write_(p.value); !st) {
        write_status_ = st;
        room_.notify_all();
        return;
      }
      if (p.last) {
        ++next_;
        room_.notify_all();
      }
    }
  }

  Write write_;
  std::mutex mu_;
  std::condition_variable room_;
  std::vector<std::deque<Part>> shards_;
  std::size_t ahead_;
  std::uint64_t next_ = 0;  // the slice being written
  std::optional<Status> write_status_;
  std::optional<Status> end_status_;  // the first failure's, at slice end_
  std::uint64_t end_ = 0;
};

// Warnings of N sessions that read one recording: what every shard says
// alike (side-band records, the header) is said once, what one shard says
// of its own samples once too. Shard k's n-th copy of a message is passed
// on when no shard has passed on n copies of it yet.
class ShardWarnings {
 public:
  ShardWarnings(unsigned shards, std::function<void(const std::string&)> warn)
      : seen_(shards), warn_(std::move(warn)) {}
  std::function<void(const std::string&)> for_shard(unsigned k) {
    return [this, k](const std::string& m) { say(k, m); };
  }

 private:
  void say(unsigned k, const std::string& m) {
    std::lock_guard lock(mu_);
    const std::size_t n = ++seen_[k][m];
    std::size_t& said = said_[m];
    if (n <= said || !warn_) return;
    said = n;
    warn_(m);
  }
  std::mutex mu_;
  std::vector<std::map<std::string, std::size_t>> seen_;
  std::map<std::string, std::size_t> said_;
  std::function<void(const std::string&)> warn_;
};

// Warnings of N sessions that read contiguous runs of one recording, each
// reading the records before its run too: kept per session while they run
// and said at the end in session order, so that they come in the order one
// session says them, whatever the threads' timing. Shard k's n-th copy of a
// message is said when the shards before it said fewer copies of it.
class RunWarnings {
 public:
  explicit RunWarnings(unsigned shards) : kept_(shards) {}
  std::function<void(const std::string&)> for_shard(unsigned k) {
    return [this, k](const std::string& m) {
      std::lock_guard lock(mu_);
      kept_[k].push_back(m);
    };
  }
  // Says what was kept, through `warn`.
  void say(const std::function<void(const std::string&)>& warn) {
    std::lock_guard lock(mu_);
    std::map<std::string, std::size_t> said;
    for (const std::vector<std::string>& shard : kept_) {
      std::map<std::string, std::size_t> seen;
      for (const std::string& m : shard) {
        std::size_t& n = said[m];
        if (++seen[m] > n) {
          n = seen[m];
          if (warn) warn(m);
        }
      }
    }
    kept_.assign(kept_.size(), {});
  }

 private:
  std::mutex mu_;
  std::vector<std::vector<std::string>> kept_;
};

}  // namespace perfkit::session
