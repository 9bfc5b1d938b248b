// Decompressor: the zstd stream inside COMPRESSED and COMPRESSED2 records.
// perf compresses a stream, not independent records: a record may span two
// COMPRESSED records, so undelivered bytes carry over to the next feed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"

namespace perfkit::perfdata {

class Decompressor {
 public:
  Decompressor();
  ~Decompressor();
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  // Decompresses `data` and appends the output after any bytes not yet taken.
  // Errors: corrupt zstd data (names `offset`, the COMPRESSED record's).
  Status feed(Bytes data, std::uint64_t offset);

  // The decompressed bytes not yet taken.
  Bytes pending() const { return Bytes(buf_.data() + start_, buf_.size() - start_); }
  void take(std::size_t n) { start_ += n; }
  bool empty() const { return start_ == buf_.size(); }

 private:
  struct Stream;
  std::unique_ptr<Stream> stream_;
  std::vector<std::uint8_t> buf_;
  std::size_t start_ = 0;
};

// Compresses `data` as one zstd frame at `level` (for the writer and -z).
Expected<std::vector<std::uint8_t>> zstd_compress(Bytes data, int level);

}  // namespace perfkit::perfdata
