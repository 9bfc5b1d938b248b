// RecordView: one perf record as a view of its bytes (header included), with
// the byte order of the file it came from. Typed decoders (records.h,
// sample.h) read fields from it on demand.
#pragma once

#include <cstdint>

#include "abi/perf_event.h"
#include "base/bytes.h"

namespace perfkit::record {

struct RecordView {
  std::uint32_t type = 0;
  std::uint16_t misc = 0;
  std::uint16_t size = 0;    // header.size: the record's bytes, header included
  bool swap = false;         // the bytes are in the other byte order
  Bytes bytes;               // exactly `size` bytes (header first)
  std::uint64_t offset = 0;  // file offset (of the COMPRESSED record for inner ones)
  // Trailing payload that follows some user records outside header.size:
  // the trace data of HEADER_TRACING_DATA and the AUX data of AUXTRACE.
  Bytes trailing;

  Bytes payload() const { return bytes.subspan(abi::kHeaderSize); }
  std::uint16_t cpumode() const { return misc & abi::kMiscCpumodeMask; }
};

// Reads the 8-byte header at `p` (which must have 8 readable bytes).
inline RecordView view_header(const std::uint8_t* p, bool swap) {
  RecordView v;
  v.type = load<std::uint32_t>(p, swap);
  v.misc = load<std::uint16_t>(p + 4, swap);
  v.size = load<std::uint16_t>(p + 6, swap);
  v.swap = swap;
  return v;
}

// An array of u64 values inside a record, read in the record's byte order.
class U64Array {
 public:
  U64Array() = default;
  U64Array(const std::uint8_t* p, std::uint64_t n, bool swap) : p_(p), n_(n), swap_(swap) {}
  std::uint64_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  std::uint64_t operator[](std::uint64_t i) const { return load<std::uint64_t>(p_ + 8 * i, swap_); }
  Bytes bytes() const { return {p_, static_cast<std::size_t>(n_ * 8)}; }

 private:
  const std::uint8_t* p_ = nullptr;
  std::uint64_t n_ = 0;
  bool swap_ = false;
};

}  // namespace perfkit::record
