// Bounds-checked reading of DWARF encodings (little-endian, as on every
// target perfkit reads DWARF of): fixed-size integers, LEB128, initial
// lengths, NUL-terminated strings and attribute values by form. Reads past
// the limit set a sticky error and return zeros.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/bytes.h"

namespace perfkit::dwarf {

class DwarfCursor {
 public:
  DwarfCursor(Bytes data, std::uint64_t offset = 0) : data_(data), at_(offset), end_(data.size()) {
    if (at_ > end_) ok_ = false;
  }

  bool ok() const { return ok_; }
  std::uint64_t offset() const { return at_; }
  void limit(std::uint64_t end) { end_ = end < data_.size() ? end : data_.size(); }
  void seek(std::uint64_t at) {
    if (at > end_)
      ok_ = false;
    else
      at_ = at;
  }
  void skip(std::uint64_t n) { seek(n > end_ - at_ ? end_ + 1 : at_ + n); }

  std::uint8_t u8() { return static_cast<std::uint8_t>(fixed(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(fixed(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(fixed(4)); }
  std::uint64_t u64() { return fixed(8); }
  // An address (or offset) of `size` bytes (1, 2, 4 or 8).
  std::uint64_t address(std::uint64_t size) { return size > 8 ? (skip(size), 0) : fixed(size); }

  std::uint64_t uleb() {
    std::uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
      if (at_ >= end_) return fail();
      std::uint8_t b = data_[at_++];
      if (shift < 64) v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) return v;
    }
  }
  std::int64_t sleb() {
    std::int64_t v = 0;
    unsigned shift = 0;
    std::uint8_t b;
    do {
      if (at_ >= end_) return static_cast<std::int64_t>(fail());
      b = data_[at_++];
      if (shift < 64) v |= static_cast<std::int64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= -(static_cast<std::int64_t>(1) << shift);
    return v;
  }
  // unit_length: 4 bytes, or 0xffffffff and 8 bytes for 64-bit DWARF.
  std::uint64_t initial_length(bool& dwarf64) {
    std::uint64_t l = u32();
    dwarf64 = l == 0xffffffffu;
    return dwarf64 ? u64() : l;
  }
  std::string_view cstr() {
    if (at_ >= end_) return fail(), std::string_view();
    const void* nul = std::memchr(data_.data() + at_, 0, end_ - at_);
    if (!nul) return fail(), std::string_view();
    std::size_t n = static_cast<const std::uint8_t*>(nul) - (data_.data() + at_);
    std::string_view s(reinterpret_cast<const char*>(data_.data() + at_), n);
    at_ += n + 1;
    return s;
  }

 private:
  std::uint64_t fixed(unsigned n) {
    if (n > end_ - at_ || at_ > end_) return fail();
    std::uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(data_[at_ + i]) << (8 * i);
    at_ += n;
    return v;
  }
  std::uint64_t fail() {
    ok_ = false;
    at_ = end_;
    return 0;
  }

  Bytes data_;
  std::uint64_t at_;
  std::uint64_t end_;
  bool ok_ = true;
};

// A string at `offset` of a string section, or "" when out of range.
inline std::string_view string_at(Bytes section, std::uint64_t offset) {
  if (offset >= section.size()) return {};
  DwarfCursor c(section, offset);
  std::string_view s = c.cstr();
  return c.ok() ? s : std::string_view();
}

struct FormContext {
  Bytes str;
  Bytes line_str;
  bool dwarf64 = false;
  unsigned address_size = 8;
};

struct FormValue {
  std::uint64_t u = 0;
  std::string_view str;
};

// Reads one attribute value of `form` (DW_FORM_*). Strings resolve through
// the string sections; blocks and unknown-but-sized forms are skipped.
inline FormValue read_form(DwarfCursor& c, std::uint64_t form, const FormContext& fc) {
  FormValue v;
  const unsigned off = fc.dwarf64 ? 8 : 4;
  switch (form) {
    case 0x01:
      v.u = c.address(fc.address_size);
      break;  // addr
    case 0x0b:
      v.u = c.u8();
      break;  // data1
    case 0x05:
      v.u = c.u16();
      break;  // data2
    case 0x06:
      v.u = c.u32();
      break;  // data4
    case 0x07:
      v.u = c.u64();
      break;  // data8
    case 0x1e:
      c.skip(16);
      break;  // data16
    case 0x0f:
      v.u = c.uleb();
      break;  // udata
    case 0x0d:
      v.u = static_cast<std::uint64_t>(c.sleb());
      break;  // sdata
    case 0x08:
      v.str = c.cstr();
      break;  // string
    case 0x0e:
      v.str = string_at(fc.str, c.address(off));
      break;  // strp
    case 0x1f:
      v.str = string_at(fc.line_str, c.address(off));
      break;  // line_strp
    case 0x17:
      v.u = c.address(off);
      break;  // sec_offset
    case 0x0a:
      c.skip(c.u8());
      break;  // block1
    case 0x03:
      c.skip(c.u16());
      break;  // block2
    case 0x04:
      c.skip(c.u32());
      break;  // block4
    case 0x09:
      c.skip(c.uleb());
      break;  // block
    case 0x25:
      v.u = c.u8();
      break;  // strx1
    case 0x26:
      v.u = c.u16();
      break;  // strx2
    case 0x27:
      v.u = c.address(3);
      break;  // strx3
    case 0x28:
      v.u = c.u32();
      break;  // strx4
    case 0x1a:
      v.u = c.uleb();
      break;  // strx
    case 0x0c:
      v.u = c.u8();
      break;  // flag
    case 0x19:
      break;  // flag_present
    default:
      c.skip(UINT64_MAX);
      break;  // unknown: stop
  }
  return v;
}

}  // namespace perfkit::dwarf
