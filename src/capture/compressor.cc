#include "capture/compressor.h"

#include <zstd.h>

#include "abi/perf_event.h"

namespace perfkit::capture {

struct RecordCompressor::Stream {
  ZSTD_CCtx* cctx = nullptr;
  ~Stream() { ZSTD_freeCCtx(cctx); }
};

RecordCompressor::~RecordCompressor() = default;

Expected<std::unique_ptr<RecordCompressor>> RecordCompressor::create(int level) {
  if (level < 1 || level > ZSTD_maxCLevel())
    return make_error("compression level {} out of range (1..{})", level, ZSTD_maxCLevel());
  std::unique_ptr<RecordCompressor> c(new RecordCompressor());
  c->stream_ = std::make_unique<Stream>();
  c->stream_->cctx = ZSTD_createCCtx();
  if (!c->stream_->cctx) return make_error("zstd: cannot create a compression context");
  size_t r = ZSTD_CCtx_setParameter(c->stream_->cctx, ZSTD_c_compressionLevel, level);
  if (ZSTD_isError(r)) return make_error("zstd: level {}: {}", level, ZSTD_getErrorName(r));
  c->level_ = level;
  return c;
}

Status RecordCompressor::compress(SplitBytes data, std::vector<std::uint8_t>& out) {
  out.clear();
  // perf keeps each record under 64 KiB: header plus at most 65527 bytes.
  constexpr std::size_t kMaxPayload = (1u << 16) - abi::kHeaderSize - 1;
  std::size_t record_at = 0;
  auto open_record = [&] {
    record_at = out.size();
    out.resize(out.size() + abi::kHeaderSize + kMaxPayload);
  };
  auto close_record = [&](std::size_t used) {
    out.resize(record_at + abi::kHeaderSize + used);
    store<std::uint32_t>(out.data() + record_at, abi::kRecordCompressed, false);
    store<std::uint16_t>(out.data() + record_at + 4, 0, false);
    store<std::uint16_t>(out.data() + record_at + 6,
                         static_cast<std::uint16_t>(abi::kHeaderSize + used), false);
  };
  open_record();
  ZSTD_outBuffer ob{out.data() + record_at + abi::kHeaderSize, kMaxPayload, 0};
  auto feed = [&](Bytes in, ZSTD_EndDirective mode) -> Status {
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    for (;;) {
      size_t left = ZSTD_compressStream2(stream_->cctx, &ob, &ib, mode);
      if (ZSTD_isError(left)) return make_error("zstd: {}", ZSTD_getErrorName(left));
      const bool done = mode == ZSTD_e_continue ? ib.pos == ib.size : left == 0;
      if (done) return ok();
      if (ob.pos == ob.size) {
        close_record(ob.pos);
        open_record();
        ob = ZSTD_outBuffer{out.data() + record_at + abi::kHeaderSize, kMaxPayload, 0};
      }
    }
  };
  PK_TRY(feed(data.first, ZSTD_e_continue));
  if (!data.second.empty()) PK_TRY(feed(data.second, ZSTD_e_continue));
  PK_TRY(feed({}, ZSTD_e_flush));
  if (ob.pos > 0)
    close_record(ob.pos);
  else
    out.resize(record_at);
  in_ += data.size();
  out_ += out.size();
  return ok();
}

}  // namespace perfkit::capture
