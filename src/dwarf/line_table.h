// LineTable: one compilation unit's DWARF line program (.debug_line,
// versions 2 to 5) decoded into address-sorted sequences, with the lookup
// rules GNU addr2line (binutils 2.40) applies, because perf 6.1 asks
// addr2line and perfkit must answer as it does:
//
//   - rows at the same address one after the other: the last one counts;
//   - sequences sorted by start (the longest first on ties); a sequence
//     nested in an earlier one is dropped, an overlapping one starts where
//     the earlier one ends;
//   - an address finds the row with the largest address <= it inside its
//     sequence, never the end_sequence row;
//   - file names are joined as "comp_dir/dir/file" (absolute parts win), an
//     empty name counts as none; a sequence starts with file 1 (file 0 for
//     DWARF 5, as binutils does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/cursor.h"
#include "base/error.h"

namespace perfkit::dwarf {

// The sections a line program refers to.
struct LineSections {
  Bytes line;      // .debug_line
  Bytes line_str;  // .debug_line_str (DWARF 5)
  Bytes str;       // .debug_str
};

struct LineHit {
  const std::string* file = nullptr;  // nullptr: no name ("??")
  unsigned line = 0;
  unsigned discriminator = 0;
};

class LineTable {
 public:
  // Decodes the program at `offset` of .debug_line. `comp_dir` is the unit's
  // DW_AT_comp_dir ("" if none), `address_size` its address size (used by
  // DWARF < 5). Errors: a header or program running past the section's end,
  // a version outside 2..5, naming the offset.
  static Expected<LineTable> decode(const LineSections& s, std::uint64_t offset,
                                    std::string_view comp_dir, unsigned address_size);

  std::optional<LineHit> lookup(std::uint64_t addr) const;
  // binutils' concat_filename for a DW_AT_call_file / decl_file index.
  std::string file_name(std::uint64_t index) const;
  bool empty() const { return sequences_.empty(); }

 private:
  struct Row {
    std::uint64_t address;
    std::uint32_t file;  // index into names_, or UINT32_MAX for none
    std::uint32_t line;
    std::uint32_t discriminator;
    bool end_sequence;
  };
  struct Sequence {
    std::uint64_t low;           // may be raised when trimmed
    std::uint64_t high;          // address of its end_sequence row
    std::uint32_t first, count;  // rows_[first, first + count), the last is the end row
  };
  struct FileEntry {
    std::string name;
    std::uint64_t dir = 0;
  };

  struct Header;  // a unit's header fields the program needs
  class Program;  // the line-number state machine

  // The directory and file tables after the header's fixed fields, in the
  // unit's version's form. Errors: a table running past the unit.
  Status read_entry_tables(Cursor& c, const Header& h, const LineSections& s);
  // Keeps the sequences that ended, rows sorted, as binutils keeps them.
  void keep_sequences(std::vector<std::vector<Row>>& seqs);
  std::uint32_t intern_file(std::uint64_t index);
  void add_row(std::vector<Row>& seq, const Row& r);
  void finish();

  std::vector<std::string> dirs_;
  std::vector<FileEntry> files_;
  std::string comp_dir_;
  bool dwarf5_ = false;
  std::vector<std::string> names_;           // joined names of the files rows use
  std::vector<std::uint32_t> name_of_file_;  // files_ index -> names_ index (or UINT32_MAX)
  std::vector<Row> rows_;
  std::vector<Sequence> sequences_;
};

}  // namespace perfkit::dwarf
