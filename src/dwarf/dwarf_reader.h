// Reading DWARF encodings through base's Cursor (little-endian, as on every
// target perfkit reads DWARF of: the cursor's byte order is the host's):
// initial lengths, strings of the string sections and attribute values by
// form. Reads past the end set the cursor's sticky error and return zeros.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/bytes.h"
#include "base/cursor.h"

namespace perfkit::dwarf {

// unit_length: 4 bytes, or 0xffffffff and 8 bytes for 64-bit DWARF.
inline std::uint64_t initial_length(Cursor& c, bool& dwarf64) {
  std::uint64_t l = c.u32();
  dwarf64 = l == 0xffffffffu;
  return dwarf64 ? c.u64() : l;
}

// A string at `offset` of a string section, or "" when out of range.
inline std::string_view string_at(Bytes section, std::uint64_t offset) {
  if (offset >= section.size()) return {};
  Cursor c(section, false);
  c.seek(offset);
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
inline FormValue read_form(Cursor& c, std::uint64_t form, const FormContext& fc) {
  FormValue v;
  const unsigned off = fc.dwarf64 ? 8 : 4;
  switch (form) {
    case 0x01:
      v.u = c.uint_n(fc.address_size);
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
      v.u = c.uleb128();
      break;  // udata
    case 0x0d:
      v.u = static_cast<std::uint64_t>(c.sleb128());
      break;  // sdata
    case 0x08:
      v.str = c.cstr();
      break;  // string
    case 0x0e:
      v.str = string_at(fc.str, c.uint_n(off));
      break;  // strp
    case 0x1f:
      v.str = string_at(fc.line_str, c.uint_n(off));
      break;  // line_strp
    case 0x17:
      v.u = c.uint_n(off);
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
      c.skip(c.uleb128());
      break;  // block
    case 0x25:
      v.u = c.u8();
      break;  // strx1
    case 0x26:
      v.u = c.u16();
      break;  // strx2
    case 0x27:
      v.u = c.uint_n(3);
      break;  // strx3
    case 0x28:
      v.u = c.u32();
      break;  // strx4
    case 0x1a:
      v.u = c.uleb128();
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
