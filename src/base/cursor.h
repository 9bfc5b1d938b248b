// Cursor: a bounds-checked reader over a byte view with a sticky error. Reads
// past the end return zero and mark the cursor failed; callers check ok() once
// after a group of reads instead of after every field. perfkit's one cursor:
// perf.data records and features, tracing data, and DWARF (LEB128, sized
// addresses, NUL-terminated strings).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/bytes.h"
#include "base/error.h"

namespace perfkit {

class Cursor {
 public:
  Cursor() = default;
  // `base_offset` is the file offset of data[0], used in error messages.
  Cursor(Bytes data, bool swap, std::uint64_t base_offset = 0)
      : data_(data), swap_(swap), base_offset_(base_offset) {}

  std::uint8_t u8() { return read<std::uint8_t>(); }
  std::uint16_t u16() { return read<std::uint16_t>(); }
  std::uint32_t u32() { return read<std::uint32_t>(); }
  std::uint64_t u64() { return read<std::uint64_t>(); }
  std::int32_t i32() { return static_cast<std::int32_t>(read<std::uint32_t>()); }
  std::int64_t i64() { return static_cast<std::int64_t>(read<std::uint64_t>()); }
  double f64() {
    std::uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

  // An unsigned number of `n` bytes in the view's byte order (n <= 8; DWARF's
  // sized addresses and offsets, strx3). Wider ones are skipped and read 0.
  std::uint64_t uint_n(std::uint64_t n) {
    Bytes b = bytes(n);
    if (b.size() != n || n > 8) return 0;
    const bool little = (std::endian::native == std::endian::little) != swap_;
    std::uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= std::uint64_t{b[little ? i : n - 1 - i]} << (8 * i);
    return v;
  }
  // LEB128 numbers (DWARF). Bits past 64 are dropped.
  std::uint64_t uleb128() {
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const std::uint8_t b = u8();
      if (failed_) return 0;
      if (shift < 64) v |= std::uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
  }
  std::int64_t sleb128() {
    std::uint64_t v = 0;
    unsigned shift = 0;
    std::uint8_t b = 0;
    do {
      b = u8();
      if (failed_) return 0;
      if (shift < 64) v |= std::uint64_t{b & 0x7fu} << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= ~std::uint64_t{0} << shift;
    return static_cast<std::int64_t>(v);
  }
  // A NUL-terminated string, the cursor left past its NUL; empty (and
  // failure) when no NUL follows.
  std::string_view cstr() {
    if (failed_) return {};
    const void* nul = std::memchr(data_.data() + pos_, 0, data_.size() - pos_);
    if (!nul) {
      fail_at(pos_);
      return {};
    }
    const std::size_t n = static_cast<const std::uint8_t*>(nul) - (data_.data() + pos_);
    std::string_view s(reinterpret_cast<const char*>(data_.data() + pos_), n);
    pos_ += n + 1;
    return s;
  }

  // The next n bytes, or an empty view (and failure) if fewer remain.
  Bytes bytes(std::uint64_t n) {
    if (!take(n)) return {};
    return data_.subspan(pos_ - n, n);
  }
  // A fixed-size char field of n bytes, cut at its first NUL.
  std::string_view fixed_string(std::uint64_t n) { return c_string(bytes(n)); }
  // The rest of the view as a NUL-terminated string (a record's trailing name).
  std::string_view rest_string() { return c_string(bytes(remaining())); }
  Bytes rest() { return bytes(remaining()); }

  bool skip(std::uint64_t n) { return take(n); }
  // Moves to an absolute position within the view.
  bool seek(std::uint64_t pos) {
    if (failed_) return false;
    if (pos > data_.size()) return fail_at(pos);
    pos_ = pos;
    return true;
  }
  // Skips to the next multiple of `a` from the start of the view.
  bool align(std::uint64_t a) { return seek(align_up(pos_, a)); }
  // Ends the view at `end` (positions stay as they were): reads past it
  // fail. A position already past it fails the cursor.
  void limit(std::uint64_t end) {
    if (end < data_.size()) data_ = data_.first(end);
    if (pos_ > data_.size()) fail_at(pos_);
  }

  bool ok() const { return !failed_; }
  bool failed() const { return failed_; }
  bool at_end() const { return pos_ >= data_.size(); }
  std::uint64_t position() const { return pos_; }
  std::uint64_t remaining() const { return data_.size() - pos_; }
  std::uint64_t file_offset() const { return base_offset_ + pos_; }
  bool swapped() const { return swap_; }
  Bytes view() const { return data_; }

  // Marks the cursor failed (e.g. a value read is out of range).
  void fail() {
    if (!failed_) {
      failed_ = true;
      fail_pos_ = pos_;
    }
  }
  // The file offset where the first failed read would have started.
  std::uint64_t fail_offset() const { return base_offset_ + fail_pos_; }
  // A message for the first failure: "offset 0x..: <what> runs past the end ...".
  Error error(std::string_view what) const {
    return make_error("offset {:#x}: {} is truncated (needs bytes past {:#x})", fail_offset(), what,
                      base_offset_ + data_.size());
  }

 private:
  bool take(std::uint64_t n) {
    if (failed_) return false;
    if (n > data_.size() - pos_) return fail_at(pos_);
    pos_ += n;
    return true;
  }
  bool fail_at(std::uint64_t pos) {
    failed_ = true;
    fail_pos_ = pos;
    return false;
  }
  template <class T>
  T read() {
    if (!take(sizeof(T))) return T{};
    return load<T>(data_.data() + pos_ - sizeof(T), swap_);
  }

  Bytes data_;
  std::uint64_t pos_ = 0;
  bool swap_ = false;
  bool failed_ = false;
  std::uint64_t fail_pos_ = 0;
  std::uint64_t base_offset_ = 0;
};

}  // namespace perfkit
