#include "abi/attr.h"

#include <algorithm>

namespace perfkit::abi {

namespace {

// Field offsets of perf_event_attr; each field exists when the attr's size
// reaches offset + width.
struct Fields {
  template <class T>
  static void get(const std::uint8_t* p, std::size_t limit, std::size_t off, bool swap, T& out) {
    if (off + sizeof(T) <= limit)
      out = static_cast<T>(load<std::make_unsigned_t<T>>(p + off, swap));
  }
  template <class T>
  static void put(std::uint8_t* p, std::size_t limit, std::size_t off, bool swap, T v) {
    if (off + sizeof(T) <= limit)
      store<std::make_unsigned_t<T>>(p + off, static_cast<std::make_unsigned_t<T>>(v), swap);
  }
};

template <class Op, class A>
void visit_fields(A& a, Op op) {
  op(0, a.type);
  op(4, a.size);
  op(8, a.config);
  op(16, a.sample_period);
  op(24, a.sample_type);
  op(32, a.read_format);
  // 40: flags, handled separately because of the bitfield order
  op(48, a.wakeup_events);
  op(52, a.bp_type);
  op(56, a.config1);
  op(64, a.config2);
  op(72, a.branch_sample_type);
  op(80, a.sample_regs_user);
  op(88, a.sample_stack_user);
  op(92, a.clockid);
  op(96, a.sample_regs_intr);
  op(104, a.aux_watermark);
  op(108, a.sample_max_stack);
  op(110, a.reserved_2);
  op(112, a.aux_sample_size);
  op(116, a.reserved_3);
  op(120, a.sig_data);
  op(128, a.config3);
}

}  // namespace

std::uint32_t effective_attr_size(const EventAttr& attr, std::size_t available) {
  std::size_t sz = attr.size == 0 ? kAttrSizeVer0 : attr.size;
  return static_cast<std::uint32_t>(std::min(sz, available));
}

Expected<EventAttr> parse_attr(Bytes bytes, bool swap) {
  if (bytes.size() < kAttrSizeVer0)
    return make_error("perf_event_attr needs at least {} bytes, has {}", kAttrSizeVer0,
                      bytes.size());
  EventAttr a;
  const std::uint8_t* p = bytes.data();
  a.size = load<std::uint32_t>(p + 4, swap);
  std::size_t limit = effective_attr_size(a, bytes.size());
  limit = std::max<std::size_t>(limit, kAttrSizeVer0);
  visit_fields(a, [&](std::size_t off, auto& field) { Fields::get(p, limit, off, swap, field); });
  std::uint64_t raw = load<std::uint64_t>(p + 40, swap);
  a.flags = swap ? reverse_bits64(raw) : raw;
  return a;
}

void encode_attr(const EventAttr& attr, std::uint32_t size, bool swap,
                 std::vector<std::uint8_t>& out) {
  std::size_t at = out.size();
  out.resize(at + size, 0);
  std::uint8_t* p = out.data() + at;
  EventAttr a = attr;
  a.size = size;
  visit_fields(a, [&](std::size_t off, auto& field) { Fields::put(p, size, off, swap, field); });
  if (size >= 48) store<std::uint64_t>(p + 40, swap ? reverse_bits64(a.flags) : a.flags, swap);
}

}  // namespace perfkit::abi
