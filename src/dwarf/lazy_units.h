// What lets a reader of DWARF inflate a compressed .debug_info only as far
// as its lookups reach (SourceLocator over elf::LazySection):
//
//   .debug_aranges --parse_aranges--> which unit covers an address
//   a unit's DIEs  --self_contained--> whether reading it stays in the unit
//
// The unit an address needs is usually near the start (a program's stacks
// end in libc's csu/ code, its first units), while the whole section is
// megabytes to inflate.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "base/bytes.h"

namespace perfkit::dwarf {

// One address range of .debug_aranges and the unit (its .debug_info
// offset) it belongs to.
struct ArangeUnit {
  std::uint64_t low = 0, high = 0, unit = 0;
};

// The ranges of a .debug_aranges section in file order (`swap`: its byte
// order is not the host's); empty when it is malformed anywhere.
std::vector<ArangeUnit> parse_aranges(Bytes section, bool swap);

// The first unit (lowest offset) whose ranges hold `addr`, if any.
std::optional<std::uint64_t> arange_unit(const std::vector<ArangeUnit>& ranges, std::uint64_t addr);

// Whether the DIEs of the unit of `cudie` refer to no DIE outside it: none
// of their attributes is of a form that names another unit's DIE
// (DW_FORM_ref_addr, DW_FORM_ref_sig8) or whose form is read at run time.
bool self_contained(Dwarf_Die* cudie);

}  // namespace perfkit::dwarf
