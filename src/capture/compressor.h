// RecordCompressor: -z. Ring-buffer data becomes PERF_RECORD_COMPRESSED
// records holding one continuous zstd stream, flushed after every chunk, each
// record at most 64 KiB, as perf writes them (its reader inflates the stream
// across records, so a record may end mid-way through an inner record).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"

namespace perfkit::capture {

class RecordCompressor {
 public:
  // Errors: zstd cannot make a stream at `level` (1..22).
  static Expected<std::unique_ptr<RecordCompressor>> create(int level);
  ~RecordCompressor();

  // Compresses `data` and appends the COMPRESSED records to `out` (cleared
  // first). Errors: zstd failures.
  Status compress(SplitBytes data, std::vector<std::uint8_t>& out);

  int level() const { return level_; }
  std::uint64_t bytes_in() const { return in_; }    // bytes given to compress()
  std::uint64_t bytes_out() const { return out_; }  // bytes of records made

 private:
  RecordCompressor() = default;
  struct Stream;
  std::unique_ptr<Stream> stream_;
  int level_ = 1;
  std::uint64_t in_ = 0, out_ = 0;
};

}  // namespace perfkit::capture
