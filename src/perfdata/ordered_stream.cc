#include "perfdata/ordered_stream.h"

#include <algorithm>
#include <cstring>

namespace perfkit::perfdata {

namespace {
constexpr std::size_t kChunkSize = 4 << 20;
constexpr std::uint64_t kNoTime = ~0ULL;
}  // namespace

// A block of copied record bytes; freed when every record in it is delivered.
struct OrderedStream::Chunk {
  std::vector<std::uint8_t> bytes;
  std::size_t used = 0;
  std::size_t live = 0;
};

OrderedStream::OrderedStream(Sink sink) : sink_(std::move(sink)) {}
OrderedStream::~OrderedStream() = default;

const std::uint8_t* OrderedStream::copy_transient(const ReadRecord& rec,
                                                  std::uint32_t& chunk_index) {
  const std::size_t n = rec.view.bytes.size();
  if (current_chunk_ == UINT32_MAX ||
      chunks_[current_chunk_]->used + n > chunks_[current_chunk_]->bytes.size()) {
    if (!free_chunks_.empty() && n <= kChunkSize) {
      current_chunk_ = free_chunks_.back();
      free_chunks_.pop_back();
    } else {
      current_chunk_ = static_cast<std::uint32_t>(chunks_.size());
      chunks_.push_back(std::make_unique<Chunk>());
      chunks_.back()->bytes.resize(std::max(kChunkSize, n));
    }
    chunks_[current_chunk_]->used = 0;
  }
  Chunk& c = *chunks_[current_chunk_];
  std::uint8_t* dst = c.bytes.data() + c.used;
  std::memcpy(dst, rec.view.bytes.data(), n);
  c.used += n;
  ++c.live;
  chunk_index = current_chunk_;
  return dst;
}

void OrderedStream::release(std::uint32_t chunk) {
  if (chunk == UINT32_MAX) return;
  Chunk& c = *chunks_[chunk];
  if (--c.live == 0 && chunk != current_chunk_) {
    c.used = 0;
    if (c.bytes.size() == kChunkSize)
      free_chunks_.push_back(chunk);
    else
      c.bytes = {};  // an oversized one-off
  }
}

Status OrderedStream::push(const ReadRecord& rec, std::uint64_t timestamp) {
  if (timestamp == 0 || timestamp == kNoTime) return sink_(rec, timestamp);
  if (timestamp < last_flush_) ++out_of_order_;
  if (!rec.view.trailing.empty())
    return make_error("offset {:#x}: record type {} with trailing data in the ordered queue",
                      rec.view.offset, rec.view.type);
  if (queued() == 0) {
    max_timestamp_ = timestamp;
  } else if (timestamp >= max_timestamp_) {
    max_timestamp_ = timestamp;
  }
  keys_.push_back(Key{timestamp, queue_.size()});
  Entry& e = queue_.emplace_back();
  e.chunk = UINT32_MAX;
  pack(rec, rec.transient ? copy_transient(rec, e.chunk) : rec.view.bytes.data(), e.rec);
  return ok();
}

Status OrderedStream::flush_until(std::uint64_t limit) {
  if (queued() == 0) return ok();
  auto by_time = [](const Key& a, const Key& b) {
    return a.timestamp != b.timestamp ? a.timestamp < b.timestamp : a.index < b.index;
  };
  auto begin = keys_.begin() + static_cast<std::ptrdiff_t>(head_);
  auto mid = keys_.begin() + static_cast<std::ptrdiff_t>(sorted_);
  // A round holds one sorted run per CPU buffer read: merged run by run
  // while they are few, sorted otherwise.
  auto run_end = std::is_sorted_until(mid, keys_.end(), by_time);
  for (int runs = 1; run_end != keys_.end(); ++runs) {
    if (runs == 8) {
      std::sort(run_end, keys_.end(), by_time);
      std::inplace_merge(mid, run_end, keys_.end(), by_time);
      break;
    }
    auto next = std::is_sorted_until(run_end, keys_.end(), by_time);
    std::inplace_merge(mid, run_end, next, by_time);
    run_end = next;
  }
  std::inplace_merge(begin, mid, keys_.end(), by_time);
  sorted_ = keys_.size();
  if (limit == 0) return ok();
  while (head_ < keys_.size() && keys_[head_].timestamp <= limit) {
    const Key k = keys_[head_];
    Entry& e = queue_[k.index];
    unpack(e.rec, out_);
    Status st = sink_(out_, k.timestamp);
    last_flush_ = k.timestamp;
    ++head_;
    release(e.chunk);
    if (!st) return st;
  }
  if (head_ == keys_.size()) {
    keys_.clear();
    queue_.clear();
    head_ = sorted_ = 0;
  } else if (head_ > 4096 && head_ * 2 > keys_.size()) {
    compact();
  }
  return ok();
}

// The keys left are sorted, then in arrival order after sorted_: every one
// of those arrived after the sorted ones. Renumbering them in key order thus
// keeps the arrival order of equal timestamps.
void OrderedStream::compact() {
  // Into the spare queue, which keeps its capacity from the last time.
  spare_.clear();
  for (std::size_t i = head_; i < keys_.size(); ++i) {
    spare_.push_back(queue_[keys_[i].index]);
    keys_[i].index = spare_.size() - 1;
  }
  keys_.erase(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(head_));
  sorted_ -= head_;
  head_ = 0;
  queue_.swap(spare_);
}

Status OrderedStream::round() {
  if (queued() == 0) return ok();
  PK_TRY(flush_until(next_flush_));
  next_flush_ = max_timestamp_;
  return ok();
}

Status OrderedStream::finish() {
  PK_TRY(flush_until(kNoTime));
  return ok();
}

}  // namespace perfkit::perfdata
