#include "perfdata/decompressor.h"

#include <zstd.h>

#include <cstring>

namespace perfkit::perfdata {

struct Decompressor::Stream {
  ZSTD_DStream* d = ZSTD_createDStream();
  Stream() { ZSTD_initDStream(d); }
  ~Stream() { ZSTD_freeDStream(d); }
};

Decompressor::Decompressor() : stream_(std::make_unique<Stream>()) {}
Decompressor::~Decompressor() = default;

Status Decompressor::feed(Bytes data, std::uint64_t offset) {
  // Keep the undelivered tail at the front of the buffer.
  if (start_ > 0) {
    std::size_t rest = buf_.size() - start_;
    std::memmove(buf_.data(), buf_.data() + start_, rest);
    buf_.resize(rest);
    start_ = 0;
  }
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  const std::size_t chunk = std::max<std::size_t>(ZSTD_DStreamOutSize(), data.size() * 4);
  // zstd may hold decoded bytes back when the output fills up, even after it
  // took all the input: keep draining until a call leaves room in the output.
  for (;;) {
    std::size_t at = buf_.size();
    buf_.resize(at + chunk);
    ZSTD_outBuffer out{buf_.data() + at, chunk, 0};
    std::size_t rc = ZSTD_decompressStream(stream_->d, &out, &in);
    const bool full = out.pos == chunk;
    buf_.resize(at + out.pos);
    if (ZSTD_isError(rc))
      return make_error("offset {:#x}: compressed record does not decompress: {}", offset,
                        ZSTD_getErrorName(rc));
    if (in.pos == in.size && !full) break;
  }
  return ok();
}

Expected<std::vector<std::uint8_t>> zstd_compress(Bytes data, int level) {
  std::vector<std::uint8_t> out(ZSTD_compressBound(data.size()));
  std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  if (ZSTD_isError(n)) return make_error("zstd compression failed: {}", ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

}  // namespace perfkit::perfdata
