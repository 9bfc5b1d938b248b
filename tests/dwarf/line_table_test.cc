// LineTable on hand-assembled line programs: binutils' lookup rules (last
// row at an address wins, nested sequences dropped, end rows never match,
// file names joined with the compilation directory) and the errors.
#include "dwarf/line_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace perfkit::dwarf {
namespace {

// Builds a DWARF 4 (or 5) line program.
class Program {
 public:
  explicit Program(int version) : version_(version) {}

  void dir(const std::string& d) { dirs_.push_back(d); }
  void file(const std::string& f, unsigned dir) { files_.push_back({f, dir}); }

  void set_address(std::uint64_t a) {
    ops_.push_back(0);
    ops_.push_back(9);
    ops_.push_back(2);
    for (int i = 0; i < 8; ++i) ops_.push_back(static_cast<std::uint8_t>(a >> (8 * i)));
  }
  void advance_pc(unsigned n) {
    ops_.push_back(2);
    uleb(ops_, n);
  }
  void advance_line(int n) {
    ops_.push_back(3);
    sleb(ops_, n);
  }
  void set_file(unsigned f) {
    ops_.push_back(4);
    uleb(ops_, f);
  }
  void copy() { ops_.push_back(1); }
  void end_sequence() {
    ops_.push_back(0);
    ops_.push_back(1);
    ops_.push_back(1);
  }
  void discriminator(unsigned d) {
    ops_.push_back(0);
    ops_.push_back(2);
    ops_.push_back(4);
    ops_.push_back(static_cast<std::uint8_t>(d));
  }

  std::vector<std::uint8_t> bytes() const {
    std::vector<std::uint8_t> h;                 // after header_length
    h.push_back(1);                              // minimum_instruction_length
    if (version_ >= 4) h.push_back(1);           // maximum_operations_per_instruction
    h.push_back(1);                              // default_is_stmt
    h.push_back(static_cast<std::uint8_t>(-5));  // line_base
    h.push_back(14);                             // line_range
    h.push_back(13);                             // opcode_base
    for (std::uint8_t l : {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1}) h.push_back(l);
    if (version_ >= 5) {
      h.push_back(1);  // directory entry format: DW_LNCT_path, DW_FORM_string
      h.push_back(1);
      h.push_back(0x08);
      uleb(h, dirs_.size());
      for (const auto& d : dirs_) str(h, d);
      h.push_back(2);  // file formats: path string, directory_index udata
      h.push_back(1);
      h.push_back(0x08);
      h.push_back(2);
      h.push_back(0x0f);
      uleb(h, files_.size());
      for (const auto& f : files_) {
        str(h, f.first);
        uleb(h, f.second);
      }
    } else {
      for (const auto& d : dirs_) str(h, d);
      h.push_back(0);
      for (const auto& f : files_) {
        str(h, f.first);
        uleb(h, f.second);
        uleb(h, 0);
        uleb(h, 0);
      }
      h.push_back(0);
    }
    std::vector<std::uint8_t> unit;
    put16(unit, static_cast<std::uint16_t>(version_));
    if (version_ >= 5) {
      unit.push_back(8);  // address_size
      unit.push_back(0);  // segment selector size
    }
    put32(unit, static_cast<std::uint32_t>(h.size()));
    unit.insert(unit.end(), h.begin(), h.end());
    unit.insert(unit.end(), ops_.begin(), ops_.end());
    std::vector<std::uint8_t> out;
    put32(out, static_cast<std::uint32_t>(unit.size()));
    out.insert(out.end(), unit.begin(), unit.end());
    return out;
  }

 private:
  static void uleb(std::vector<std::uint8_t>& v, std::uint64_t x) {
    do {
      std::uint8_t b = x & 0x7f;
      x >>= 7;
      v.push_back(x ? (b | 0x80) : b);
    } while (x);
  }
  static void sleb(std::vector<std::uint8_t>& v, std::int64_t x) {
    bool more = true;
    while (more) {
      std::uint8_t b = x & 0x7f;
      x >>= 7;
      more = !((x == 0 && !(b & 0x40)) || (x == -1 && (b & 0x40)));
      v.push_back(more ? (b | 0x80) : b);
    }
  }
  static void str(std::vector<std::uint8_t>& v, const std::string& s) {
    v.insert(v.end(), s.begin(), s.end());
    v.push_back(0);
  }
  static void put16(std::vector<std::uint8_t>& v, std::uint16_t x) {
    v.push_back(x & 0xff);
    v.push_back(x >> 8);
  }
  static void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
    for (int i = 0; i < 4; ++i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
  }

  int version_;
  std::vector<std::string> dirs_;
  std::vector<std::pair<std::string, unsigned>> files_;
  std::vector<std::uint8_t> ops_;
};

LineTable decode(const std::vector<std::uint8_t>& b, const std::string& comp_dir = "/build") {
  LineSections s{Bytes(b.data(), b.size()), {}, {}};
  auto t = LineTable::decode(s, 0, comp_dir, 8);
  EXPECT_TRUE(t) << t.error().message();
  return std::move(*t);
}

std::string at(const LineTable& t, std::uint64_t addr) {
  auto h = t.lookup(addr);
  if (!h) return "none";
  return (h->file ? *h->file : std::string("??")) + ":" + std::to_string(h->line);
}

TEST(LineTable, FindsTheRowAtOrBeforeAnAddress) {
  Program p(4);
  p.dir("src");
  p.file("a.c", 1);
  p.file("/abs/b.h", 0);
  p.set_address(0x1000);
  p.advance_line(9);  // line 10
  p.copy();
  p.advance_pc(4);
  p.advance_line(2);  // 12 at 0x1004
  p.copy();
  p.set_file(2);
  p.advance_pc(8);
  p.advance_line(-7);  // b.h:5 at 0x100c
  p.copy();
  p.advance_pc(4);  // end at 0x1010
  p.end_sequence();
  LineTable t = decode(p.bytes());
  EXPECT_EQ(at(t, 0xfff), "none");
  EXPECT_EQ(at(t, 0x1000), "/build/src/a.c:10");
  EXPECT_EQ(at(t, 0x1003), "/build/src/a.c:10");
  EXPECT_EQ(at(t, 0x1004), "/build/src/a.c:12");
  EXPECT_EQ(at(t, 0x100f), "/abs/b.h:5");
  EXPECT_EQ(at(t, 0x1010), "none");  // the end row itself never matches
  EXPECT_EQ(t.file_name(1), "/build/src/a.c");
  EXPECT_EQ(t.file_name(0), "<unknown>");  // DWARF 4 files count from 1
  EXPECT_EQ(t.file_name(9), "<unknown>");
}

TEST(LineTable, LastRowAtTheSameAddressWins) {
  Program p(4);
  p.file("a.c", 0);
  p.set_address(0x2000);
  p.advance_line(4);  // 5
  p.copy();
  p.advance_line(1);  // 6, same address
  p.copy();
  p.discriminator(3);
  p.advance_line(1);  // 7, same address
  p.copy();
  p.advance_pc(2);
  p.end_sequence();
  LineTable t = decode(p.bytes(), "");
  auto h = t.lookup(0x2001);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->line, 7u);
  EXPECT_EQ(h->discriminator, 3u);
  EXPECT_EQ(*h->file, "a.c");  // no comp_dir, no directory: the name alone
}

TEST(LineTable, NestedSequencesAreDroppedOverlappingOnesTrimmed) {
  Program p(4);
  p.file("outer.c", 0);
  p.file("inner.c", 0);
  p.file("over.c", 0);
  p.set_address(0x3000);
  p.copy();  // outer.c:1 [0x3000, 0x3100)
  p.advance_pc(0x100);
  p.end_sequence();
  p.set_file(2);
  p.set_address(0x3010);
  p.copy();  // inner.c:1 nested in [0x3010, 0x3020)
  p.advance_pc(0x10);
  p.end_sequence();
  p.set_file(3);
  p.set_address(0x30f0);
  p.copy();  // over.c:1 [0x30f0, 0x3200): starts at 0x3100 after trimming
  p.advance_pc(0x110);
  p.end_sequence();
  LineTable t = decode(p.bytes(), "/c");
  EXPECT_EQ(at(t, 0x3015), "/c/outer.c:1");
  EXPECT_EQ(at(t, 0x30f5), "/c/outer.c:1");
  EXPECT_EQ(at(t, 0x3150), "/c/over.c:1");
}

TEST(LineTable, Dwarf5StartsWithFileZeroAndUsesItsDirectories) {
  Program p(5);
  p.dir("/work");  // directory 0: the compilation directory
  p.dir("lib");
  p.file("main.c", 0);
  p.file("util.h", 1);
  p.set_address(0x4000);
  p.copy();  // file 0, as binutils starts a DWARF 5 sequence
  p.set_file(1);
  p.advance_pc(4);
  p.advance_line(20);
  p.copy();
  p.advance_pc(4);
  p.end_sequence();
  LineTable t = decode(p.bytes(), "/ignored");
  EXPECT_EQ(at(t, 0x4000), "/work/main.c:1");
  EXPECT_EQ(at(t, 0x4004), "/ignored/lib/util.h:21");
}

TEST(LineTable, RejectsTruncatedAndUnknownVersions) {
  Program p(4);
  p.file("a.c", 0);
  p.set_address(0x10);
  p.copy();
  p.end_sequence();
  std::vector<std::uint8_t> b = p.bytes();
  std::vector<std::uint8_t> cut(b.begin(), b.begin() + 12);
  LineSections s{Bytes(cut.data(), cut.size()), {}, {}};
  EXPECT_FALSE(LineTable::decode(s, 0, "", 8));
  std::vector<std::uint8_t> v9 = b;
  v9[4] = 9;  // version
  LineSections s9{Bytes(v9.data(), v9.size()), {}, {}};
  auto t = LineTable::decode(s9, 0, "", 8);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message().find("version 9"), std::string::npos);
  LineSections past{Bytes(b.data(), b.size()), {}, {}};
  EXPECT_FALSE(LineTable::decode(past, b.size() + 4, "", 8));
}

}  // namespace
}  // namespace perfkit::dwarf
