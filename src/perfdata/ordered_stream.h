// OrderedStream: delivers records in time order the way perf does, with
// memory bounded by FINISHED_ROUND rounds.
//
// perf record writes one FINISHED_ROUND after each pass over its per-CPU
// buffers. A record read in round N can be older than records of round N-1
// (another CPU's buffer was read later), but never older than anything from
// round N-2. So at each FINISHED_ROUND we deliver everything queued up to the
// newest timestamp seen when the previous round ended:
//
//   round:      |---- N-1 ----|---- N ----|
//   queued:      a   c   e     b   d   f
//   at end of N: deliver a b c d e (<= max of N-1 = e), keep f
//
// Records with no timestamp (0 or absent) are delivered at once; so are
// perf's user records, which the caller does not push. At the end, the rest
// is delivered in order. Equal timestamps keep their arrival order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/error.h"
#include "perfdata/reader.h"

namespace perfkit::perfdata {

class OrderedStream {
 public:
  using Sink = std::function<Status(const ReadRecord&, std::uint64_t timestamp)>;

  explicit OrderedStream(Sink sink);
  ~OrderedStream();

  // Queues `rec` (copying transient bytes) or, without a timestamp, delivers it now.
  // Only the kernel's records are pushed: none has trailing bytes.
  Status push(const ReadRecord& rec, std::uint64_t timestamp);
  // A FINISHED_ROUND: delivers what can no longer be preceded.
  Status round();
  // End of data: delivers everything left.
  Status finish();

  std::size_t queued() const { return keys_.size() - head_; }
  // Records queued with a timestamp below what was already delivered.
  std::uint64_t out_of_order() const { return out_of_order_; }

 private:
  struct Entry {
    PackedRecord rec;
    std::uint32_t chunk;  // arena chunk holding a copy, or UINT32_MAX
  };
  // What sorting moves: 16 bytes rather than an Entry. `index` is the
  // entry's place in queue_, which is also its arrival order.
  struct Key {
    std::uint64_t timestamp;
    std::uint64_t index;
  };
  Status flush_until(std::uint64_t limit);
  // Drops delivered entries from queue_, renumbering the keys.
  void compact();
  const std::uint8_t* copy_transient(const ReadRecord& rec, std::uint32_t& chunk);
  void release(std::uint32_t chunk);

  Sink sink_;
  ReadRecord out_;
  std::vector<Entry> queue_, spare_;
  std::vector<Key> keys_;  // [head_, sorted_) sorted; [sorted_, end) in arrival order
  std::size_t head_ = 0;
  std::size_t sorted_ = 0;
  std::uint64_t next_flush_ = 0;
  std::uint64_t max_timestamp_ = 0;
  std::uint64_t last_flush_ = 0;
  std::uint64_t out_of_order_ = 0;

  struct Chunk;
  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::vector<std::uint32_t> free_chunks_;
  std::uint32_t current_chunk_ = UINT32_MAX;
};

}  // namespace perfkit::perfdata
