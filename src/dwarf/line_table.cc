#include "dwarf/line_table.h"

#include <algorithm>
#include <cstring>

#include "dwarf/dwarf_reader.h"

namespace perfkit::dwarf {

namespace {

constexpr std::uint32_t kNone = UINT32_MAX;

// DWARF constants used here (values from the DWARF 5 standard).
constexpr unsigned kLnsCopy = 1, kLnsAdvancePc = 2, kLnsAdvanceLine = 3, kLnsSetFile = 4,
                   kLnsSetColumn = 5, kLnsNegateStmt = 6, kLnsSetBasicBlock = 7, kLnsConstAddPc = 8,
                   kLnsFixedAdvancePc = 9;
constexpr unsigned kLneEndSequence = 1, kLneSetAddress = 2, kLneDefineFile = 3,
                   kLneSetDiscriminator = 4;
constexpr unsigned kLnctPath = 1, kLnctDirectoryIndex = 2;

bool absolute(std::string_view p) { return !p.empty() && p[0] == '/'; }

}  // namespace

std::string LineTable::file_name(std::uint64_t index) const {
  if (!dwarf5_) {
    if (index == 0) return "<unknown>";
    --index;
  }
  if (index >= files_.size()) return "<unknown>";
  const FileEntry& f = files_[index];
  if (absolute(f.name)) return f.name;
  std::uint64_t dir = f.dir;
  const std::string* subdir = nullptr;
  if (!dwarf5_) dir = dir - 1;  // 0 wraps: no subdirectory
  if (dir < dirs_.size()) subdir = &dirs_[dir];
  const std::string* dir_name = nullptr;
  if (!subdir || !absolute(*subdir)) dir_name = comp_dir_.empty() ? nullptr : &comp_dir_;
  if (!dir_name) {
    dir_name = subdir;
    subdir = nullptr;
  }
  if (!dir_name) return f.name;
  if (subdir) return *dir_name + "/" + *subdir + "/" + f.name;
  return *dir_name + "/" + f.name;
}

std::uint32_t LineTable::intern_file(std::uint64_t index) {
  std::string name = file_name(index);
  if (name.empty()) return kNone;
  auto it = std::find(names_.begin(), names_.end(), name);
  if (it != names_.end()) return static_cast<std::uint32_t>(it - names_.begin());
  names_.push_back(std::move(name));
  return static_cast<std::uint32_t>(names_.size() - 1);
}

// binutils' add_line_info for in-order rows: a row at the same address as
// the previous one of its sequence (and of the same kind) replaces it.
void LineTable::add_row(std::vector<Row>& seq, const Row& r) {
  if (!seq.empty() && seq.back().address == r.address &&
      seq.back().end_sequence == r.end_sequence) {
    seq.back() = r;
    return;
  }
  seq.push_back(r);
}

struct LineTable::Header {
  std::uint64_t offset = 0;  // of the unit, for errors
  unsigned version = 0;
  bool dwarf64 = false;
  unsigned address_size = 8;
  std::uint64_t unit_end = 0, program_start = 0;
  unsigned min_inst = 1, max_ops = 1;
  int line_base = 0;
  unsigned line_range = 0, opcode_base = 0;
  std::vector<unsigned> std_lengths;  // operands of each standard opcode

  Error fail(std::string_view what) const {
    return make_error(".debug_line at offset {:#x}: {}", offset, what);
  }
  // The fixed fields, up to the directory table; the cursor is limited to
  // the unit. Errors: a unit or header past the section, a version not 2-5.
  Status read(Cursor& c, std::uint64_t section_size) {
    std::uint64_t unit_length = initial_length(c, dwarf64);
    if (!c.ok() || unit_length > section_size - c.position()) return fail("unit runs past the end");
    unit_end = c.position() + unit_length;
    c.limit(unit_end);
    version = c.u16();
    if (version < 2 || version > 5) return fail(fmt::format("unsupported version {}", version));
    if (version >= 5) {
      address_size = c.u8();
      c.u8();  // segment selector size
    }
    const std::uint64_t header_length = dwarf64 ? c.u64() : c.u32();
    program_start = c.position() + header_length;
    min_inst = c.u8();
    max_ops = version >= 4 ? c.u8() : 1;
    c.u8();  // default_is_stmt
    line_base = static_cast<std::int8_t>(c.u8());
    line_range = c.u8();
    opcode_base = c.u8();
    std_lengths.resize(opcode_base ? opcode_base - 1 : 0);
    for (auto& l : std_lengths) l = c.u8();
    return c.ok() ? ok() : fail("header runs past the end");
  }
};

Status LineTable::read_entry_tables(Cursor& c, const Header& h, const LineSections& s) {
  if (h.version < 5) {
    for (;;) {
      std::string_view d = c.cstr();
      if (!c.ok()) return h.fail("directory table runs past the end");
      if (d.empty()) break;
      dirs_.emplace_back(d);
    }
    for (;;) {
      std::string_view f = c.cstr();
      if (!c.ok()) return h.fail("file table runs past the end");
      if (f.empty()) break;
      FileEntry e{std::string(f), c.uleb128()};
      c.uleb128();  // mtime
      c.uleb128();  // length
      files_.push_back(std::move(e));
    }
    return ok();
  }
  // DWARF 5: directory and file tables described by (content type, form) pairs.
  FormContext fc{s.str, s.line_str, h.dwarf64, h.address_size};
  for (int table = 0; table < 2; ++table) {
    unsigned nformats = c.u8();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> formats(nformats);
    for (auto& f : formats) {
      f.first = c.uleb128();
      f.second = c.uleb128();
    }
    std::uint64_t count = c.uleb128();
    if (!c.ok() || count > s.line.size()) return h.fail("entry table runs past the end");
    for (std::uint64_t i = 0; i < count && c.ok(); ++i) {
      FileEntry e;
      for (auto [type, form] : formats) {
        FormValue v = read_form(c, form, fc);
        if (type == kLnctPath)
          e.name = std::string(v.str);
        else if (type == kLnctDirectoryIndex)
          e.dir = v.u;
      }
      if (table == 0)
        dirs_.push_back(std::move(e.name));
      else
        files_.push_back(std::move(e));
    }
  }
  return ok();
}

// The line-number program's state machine over one sequence: its
// registers, and each opcode's effect on them.
class LineTable::Program {
 public:
  Program(LineTable& t, const Header& h) : t_(t), h_(h) {
    file_ = t.files_.empty() ? kNone : t.intern_file(t.dwarf5_ ? 0 : 1);
  }

  // Runs opcodes until the sequence ends or the unit does; its rows in
  // `seq`. Errors: a special opcode or const_add_pc with line_range 0.
  Status run(Cursor& c, std::vector<Row>& seq) {
    seq_ = &seq;
    while (!end_ && c.ok() && c.position() < h_.unit_end) {
      const unsigned op = c.u8();
      if (op >= h_.opcode_base) {
        if (h_.line_range == 0) return h_.fail("line_range is 0");
        const unsigned adj = op - h_.opcode_base;
        advance(adj / h_.line_range);
        line_ += h_.line_base + static_cast<int>(adj % h_.line_range);
        emit(false);
      } else if (op == 0) {
        extended(c);
      } else {
        PK_TRY(standard(c, op));
      }
    }
    return ok();
  }

 private:
  void emit(bool end_sequence) {
    t_.add_row(*seq_, Row{address_, file_, static_cast<std::uint32_t>(line_), discriminator_,
                          end_sequence});
    discriminator_ = 0;
  }
  void advance(std::uint64_t adjust) {
    if (h_.max_ops <= 1) {
      address_ += adjust * h_.min_inst;
    } else {
      address_ += (op_index_ + adjust) / h_.max_ops * h_.min_inst;
      op_index_ = static_cast<unsigned>((op_index_ + adjust) % h_.max_ops);
    }
  }
  void extended(Cursor& c) {
    const std::uint64_t len = c.uleb128();
    const std::uint64_t next = c.position() + len;
    const unsigned ext = len ? c.u8() : 0;
    if (ext == kLneEndSequence) {
      end_ = true;
      emit(true);
    } else if (ext == kLneSetAddress) {
      address_ = c.uint_n(len - 1);
      op_index_ = 0;
    } else if (ext == kLneDefineFile) {
      FileEntry e{std::string(c.cstr()), c.uleb128()};
      t_.files_.push_back(std::move(e));
    } else if (ext == kLneSetDiscriminator) {
      discriminator_ = static_cast<unsigned>(c.uleb128());
    }
    c.seek(next);
  }
  Status standard(Cursor& c, unsigned op) {
    switch (op) {
      case kLnsCopy:
        emit(false);
        break;
      case kLnsAdvancePc:
        advance(c.uleb128());
        break;
      case kLnsAdvanceLine:
        line_ += c.sleb128();
        break;
      case kLnsSetFile:
        file_ = t_.intern_file(c.uleb128());
        break;
      case kLnsSetColumn:
        c.uleb128();
        break;
      case kLnsNegateStmt:
      case kLnsSetBasicBlock:
        break;
      case kLnsConstAddPc:
        if (h_.line_range == 0) return h_.fail("line_range is 0");
        advance((255 - h_.opcode_base) / h_.line_range);
        break;
      case kLnsFixedAdvancePc:
        address_ += c.u16();
        op_index_ = 0;
        break;
      default:
        for (unsigned i = 0; i < h_.std_lengths[op - 1]; ++i) c.uleb128();
        break;
    }
    return ok();
  }

  LineTable& t_;
  const Header& h_;
  std::vector<Row>* seq_ = nullptr;
  std::uint64_t address_ = 0;
  unsigned op_index_ = 0;
  std::uint32_t file_ = kNone;
  std::int64_t line_ = 1;
  unsigned discriminator_ = 0;
  bool end_ = false;
};

Expected<LineTable> LineTable::decode(const LineSections& s, std::uint64_t offset,
                                      std::string_view comp_dir, unsigned address_size) {
  LineTable t;
  t.comp_dir_ = std::string(comp_dir);
  Cursor c(s.line, false);
  c.seek(offset);
  Header h;
  h.offset = offset;
  h.address_size = address_size;
  PK_TRY(h.read(c, s.line.size()));
  t.dwarf5_ = h.version >= 5;
  PK_TRY(t.read_entry_tables(c, h, s));
  if (!c.ok()) return h.fail("header runs past the end");
  c.seek(h.program_start);
  std::vector<std::vector<Row>> seqs;
  while (c.ok() && c.position() < h.unit_end) {
    std::vector<Row> seq;
    PK_TRY(Program(t, h).run(c, seq));
    if (!seq.empty()) seqs.push_back(std::move(seq));
  }
  if (!c.ok()) return h.fail("program runs past the end");
  t.keep_sequences(seqs);
  t.finish();
  return t;
}

// Sequences keep only the ones that ended (binutils starts a new sequence
// after each end row); the newest come first on full ties, as in binutils.
void LineTable::keep_sequences(std::vector<std::vector<Row>>& seqs) {
  for (std::size_t i = seqs.size(); i-- > 0;) {
    auto& rows = seqs[i];
    if (!rows.back().end_sequence) continue;
    Sequence sq{rows.front().address, rows.back().address, static_cast<std::uint32_t>(rows_.size()),
                static_cast<std::uint32_t>(rows.size())};
    std::stable_sort(rows.begin(), rows.end() - 1,
                     [](const Row& a, const Row& b) { return a.address < b.address; });
    rows_.insert(rows_.end(), rows.begin(), rows.end());
    sequences_.push_back(sq);
  }
}

void LineTable::finish() {
  std::stable_sort(sequences_.begin(), sequences_.end(), [](const Sequence& a, const Sequence& b) {
    if (a.low != b.low) return a.low < b.low;
    return a.high > b.high;
  });
  if (sequences_.empty()) return;
  std::vector<Sequence> kept;
  kept.push_back(sequences_[0]);
  std::uint64_t last_high = sequences_[0].high;
  for (std::size_t i = 1; i < sequences_.size(); ++i) {
    Sequence s = sequences_[i];
    if (s.low < last_high) {
      if (s.high <= last_high) continue;  // nested
      s.low = last_high;                  // overlapping: trim
    }
    last_high = s.high;
    kept.push_back(s);
  }
  sequences_ = std::move(kept);
}

std::optional<LineHit> LineTable::lookup(std::uint64_t addr) const {
  std::size_t lo = 0, hi = sequences_.size();
  const Sequence* seq = nullptr;
  while (lo < hi) {
    std::size_t mid = (lo + hi) / 2;
    const Sequence& s = sequences_[mid];
    if (addr < s.low) {
      hi = mid;
    } else if (addr >= s.high) {
      lo = mid + 1;
    } else {
      seq = &s;
      break;
    }
  }
  if (!seq) return std::nullopt;
  const Row* rows = rows_.data() + seq->first;
  // The last row with address <= addr, not counting the end row.
  std::size_t n = seq->count;
  const Row* it = std::upper_bound(rows, rows + n, addr,
                                   [](std::uint64_t a, const Row& r) { return a < r.address; });
  if (it == rows) return std::nullopt;
  const Row* row = it - 1;
  if (row->end_sequence || row == rows + n - 1) return std::nullopt;
  LineHit h;
  h.file = row->file == kNone ? nullptr : &names_[row->file];
  h.line = row->line;
  h.discriminator = row->discriminator;
  return h;
}

}  // namespace perfkit::dwarf
