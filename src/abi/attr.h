// EventAttr: perf_event_attr decoded field by field from any of its sizes
// (VER0 .. VER8 and larger ones from newer kernels), and encoded back.
#pragma once

#include <cstdint>
#include <vector>

#include "abi/perf_event.h"
#include "base/bytes.h"
#include "base/error.h"

namespace perfkit::abi {

struct EventAttr {
  std::uint32_t type = 0;
  std::uint32_t size = 0;  // the size field as stored (0 in some old files)
  std::uint64_t config = 0;
  std::uint64_t sample_period = 0;  // or sample_freq when the freq flag is set
  std::uint64_t sample_type = 0;
  std::uint64_t read_format = 0;
  std::uint64_t flags = 0;          // AttrFlag bits
  std::uint32_t wakeup_events = 0;  // or wakeup_watermark
  std::uint32_t bp_type = 0;
  std::uint64_t config1 = 0;  // or bp_addr, kprobe_func, uprobe_path
  std::uint64_t config2 = 0;  // or bp_len, kprobe_addr, probe_offset
  std::uint64_t branch_sample_type = 0;
  std::uint64_t sample_regs_user = 0;
  std::uint32_t sample_stack_user = 0;
  std::int32_t clockid = 0;
  std::uint64_t sample_regs_intr = 0;
  std::uint32_t aux_watermark = 0;
  std::uint16_t sample_max_stack = 0;
  std::uint16_t reserved_2 = 0;
  std::uint32_t aux_sample_size = 0;
  std::uint32_t reserved_3 = 0;
  std::uint64_t sig_data = 0;
  std::uint64_t config3 = 0;

  bool has(AttrFlag f) const { return (flags & f) != 0; }
  void set(AttrFlag f, bool on = true) {
    flags = on ? (flags | f) : (flags & ~static_cast<std::uint64_t>(f));
  }
  unsigned precise_ip() const {
    return static_cast<unsigned>((flags & kAttrPreciseIpMask) >> kAttrPreciseIpShift);
  }
  void set_precise_ip(unsigned p) {
    flags = (flags & ~static_cast<std::uint64_t>(kAttrPreciseIpMask)) |
            ((static_cast<std::uint64_t>(p) & 3) << kAttrPreciseIpShift);
  }
  bool freq() const { return has(kAttrFreq); }
  bool sample_id_all() const { return has(kAttrSampleIdAll); }

  bool operator==(const EventAttr&) const = default;
};

// Decodes an attr from `bytes` (at least VER0 = 64 bytes). Fields past the
// smaller of bytes.size() and the stored size field are left zero, as the kernel
// does for older attrs; a stored size of 0 means VER0. `swap` is set for files
// written on the other byte order (the flags bitfield is bit-reversed then too).
// Errors: fewer than 64 bytes.
Expected<EventAttr> parse_attr(Bytes bytes, bool swap);

// The number of bytes the attr's fields span when stored with `size`.
std::uint32_t effective_attr_size(const EventAttr& attr, std::size_t available);

// Appends the attr as `size` bytes (fields beyond `size` are dropped, bytes
// beyond the known fields are zero). The stored size field is `size`.
void encode_attr(const EventAttr& attr, std::uint32_t size, bool swap,
                 std::vector<std::uint8_t>& out);

// Reverses the bit order of a 64-bit word (big-endian bitfield layout).
constexpr std::uint64_t reverse_bits64(std::uint64_t v) {
  std::uint64_t r = 0;
  for (int i = 0; i < 64; ++i) {
    r = (r << 1) | (v & 1);
    v >>= 1;
  }
  return r;
}

}  // namespace perfkit::abi
