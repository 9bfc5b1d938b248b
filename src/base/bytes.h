// Byte views and endian-aware loads. Every read of file or kernel bytes goes
// through these: no struct is ever cast onto a buffer.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace perfkit {

using Bytes = std::span<const std::uint8_t>;
using MutableBytes = std::span<std::uint8_t>;

inline Bytes as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}
inline std::string_view as_chars(Bytes b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// A view that is one slice or two: a ring buffer's record that wraps around
// the end of the buffer comes as two pieces.
struct SplitBytes {
  Bytes first;
  Bytes second;

  std::size_t size() const { return first.size() + second.size(); }
  bool contiguous() const { return second.empty(); }
  // Copies `n` bytes starting at `offset` into `out`; the range must be inside.
  void copy_to(std::size_t offset, std::size_t n, std::uint8_t* out) const {
    if (offset < first.size()) {
      std::size_t a = std::min(n, first.size() - offset);
      std::memcpy(out, first.data() + offset, a);
      out += a;
      n -= a;
      offset = 0;
    } else {
      offset -= first.size();
    }
    if (n) std::memcpy(out, second.data() + offset, n);
  }
  SplitBytes subview(std::size_t offset, std::size_t n) const {
    if (offset >= first.size()) return {second.subspan(offset - first.size(), n), {}};
    std::size_t a = std::min(n, first.size() - offset);
    return {first.subspan(offset, a), second.subspan(0, n - a)};
  }
};

enum class ByteOrder : std::uint8_t { kLittle, kBig };

constexpr ByteOrder kHostOrder =
    std::endian::native == std::endian::little ? ByteOrder::kLittle : ByteOrder::kBig;

template <class T>
constexpr T byteswap(T v) {
  if constexpr (sizeof(T) == 1) {
    return v;
  } else if constexpr (sizeof(T) == 2) {
    return static_cast<T>(__builtin_bswap16(static_cast<std::uint16_t>(v)));
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<T>(__builtin_bswap32(static_cast<std::uint32_t>(v)));
  } else {
    static_assert(sizeof(T) == 8);
    return static_cast<T>(__builtin_bswap64(static_cast<std::uint64_t>(v)));
  }
}

// Loads a T from unaligned bytes; Swap says the data is in the other byte order.
template <class T, bool Swap>
inline T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (Swap) v = byteswap(v);
  return v;
}

template <class T>
inline T load(const std::uint8_t* p, bool swap) {
  return swap ? load<T, true>(p) : load<T, false>(p);
}

template <class T, bool Swap>
inline void store(std::uint8_t* p, T v) {
  if constexpr (Swap) v = byteswap(v);
  std::memcpy(p, &v, sizeof(T));
}

template <class T>
inline void store(std::uint8_t* p, T v, bool swap) {
  swap ? store<T, true>(p, v) : store<T, false>(p, v);
}

// Appends a T to a growing byte vector in the given byte order.
template <class T>
inline void append(std::vector<std::uint8_t>& out, T v, bool swap = false) {
  std::size_t at = out.size();
  out.resize(at + sizeof(T));
  store<T>(out.data() + at, v, swap);
}

inline void append_bytes(std::vector<std::uint8_t>& out, Bytes b) {
  out.insert(out.end(), b.begin(), b.end());
}

// Appends `s` NUL-terminated and zero-padded to a multiple of `align`.
inline void append_padded_string(std::vector<std::uint8_t>& out, std::string_view s,
                                 std::size_t align) {
  append_bytes(out, as_bytes(s));
  std::size_t n = s.size() + 1;
  std::size_t padded = (n + align - 1) / align * align;
  out.insert(out.end(), padded - s.size(), 0);
}

constexpr std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// The string stored in a fixed-size or trailing char field: up to the first NUL.
inline std::string_view c_string(Bytes field) {
  auto s = as_chars(field);
  auto nul = s.find('\0');
  return nul == std::string_view::npos ? s : s.substr(0, nul);
}

}  // namespace perfkit
