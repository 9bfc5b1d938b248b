#include "dwarf/lazy_units.h"

#include <dwarf.h>

namespace perfkit::dwarf {

std::vector<ArangeUnit> parse_aranges(Bytes b, bool swap) {
  std::vector<ArangeUnit> out;
  std::uint64_t at = 0;
  while (at + 4 <= b.size()) {
    std::uint64_t length = load<std::uint32_t>(b.data() + at, swap);
    std::uint64_t header = 4;
    bool wide = false;
    if (length == 0xffffffffULL) {
      if (at + 12 > b.size()) return {};
      length = load<std::uint64_t>(b.data() + at + 4, swap);
      header = 12;
      wide = true;
    } else if (length >= 0xfffffff0ULL) {
      return {};
    }
    if (length > b.size() - at - header) return {};
    const std::uint64_t end = at + header + length;
    std::uint64_t p = at + header;
    const std::uint64_t fixed = 2 + (wide ? 8 : 4) + 2;  // version, unit offset, sizes
    if (p + fixed > end) return {};
    const std::uint64_t unit = wide ? load<std::uint64_t>(b.data() + p + 2, swap)
                                    : load<std::uint32_t>(b.data() + p + 2, swap);
    p += fixed;
    const std::uint8_t addr_size = b[p - 2], segment_size = b[p - 1];
    if ((addr_size != 4 && addr_size != 8) || segment_size != 0) return {};
    // The tuples start at a multiple of their size from the set's start.
    const std::uint64_t tuple = 2 * addr_size;
    p = at + (p - at + tuple - 1) / tuple * tuple;
    for (; p + tuple <= end; p += tuple) {
      const std::uint64_t addr = addr_size == 8 ? load<std::uint64_t>(b.data() + p, swap)
                                                : load<std::uint32_t>(b.data() + p, swap);
      const std::uint64_t len = addr_size == 8 ? load<std::uint64_t>(b.data() + p + 8, swap)
                                               : load<std::uint32_t>(b.data() + p + 4, swap);
      if (addr == 0 && len == 0) break;
      if (len) out.push_back({addr, addr + len, unit});
    }
    at = end;
  }
  return out;
}

std::optional<std::uint64_t> arange_unit(const std::vector<ArangeUnit>& ranges,
                                         std::uint64_t addr) {
  std::optional<std::uint64_t> best;
  for (const ArangeUnit& r : ranges)
    if (addr >= r.low && addr < r.high && (!best || r.unit < *best)) best = r.unit;
  return best;
}

namespace {

int check_form(Dwarf_Attribute* a, void* arg) {
  switch (dwarf_whatform(a)) {
    case DW_FORM_ref_addr:
    case DW_FORM_ref_sig8:
    case DW_FORM_indirect:
      *static_cast<bool*>(arg) = false;
      return DWARF_CB_ABORT;
    default:
      return DWARF_CB_OK;
  }
}

}  // namespace

bool self_contained(Dwarf_Die* cudie) {
  bool contained = true;
  // Every DIE of the unit: each one taken is checked, then its next
  // sibling and its first child are to come (the unit's DIE has no
  // siblings: what follows it is the next unit).
  std::vector<Dwarf_Die> todo{*cudie};
  bool top = true;
  while (!todo.empty()) {
    Dwarf_Die die = todo.back();
    todo.pop_back();
    if (dwarf_getattrs(&die, check_form, &contained, 0) < 0 || !contained) return false;
    Dwarf_Die next;
    if (!top) {
      const int r = dwarf_siblingof(&die, &next);
      if (r < 0) return false;
      if (r == 0) todo.push_back(next);
    }
    top = false;
    const int r = dwarf_child(&die, &next);
    if (r < 0) return false;
    if (r == 0) todo.push_back(next);
  }
  return true;
}

}  // namespace perfkit::dwarf
