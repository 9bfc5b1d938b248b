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

Expected<LineTable> LineTable::decode(const LineSections& s, std::uint64_t offset,
                                      std::string_view comp_dir, unsigned address_size) {
  LineTable t;
  t.comp_dir_ = std::string(comp_dir);
  DwarfCursor c(s.line, offset);
  auto fail = [&](std::string_view what) {
    return make_error(".debug_line at offset {:#x}: {}", offset, what);
  };
  bool dwarf64 = false;
  std::uint64_t unit_length = c.initial_length(dwarf64);
  if (!c.ok() || unit_length > s.line.size() - c.offset()) return fail("unit runs past the end");
  const std::uint64_t unit_end = c.offset() + unit_length;
  c.limit(unit_end);
  const unsigned version = c.u16();
  if (version < 2 || version > 5) return fail(fmt::format("unsupported version {}", version));
  t.dwarf5_ = version >= 5;
  if (version >= 5) {
    address_size = c.u8();
    c.u8();  // segment selector size
  }
  const std::uint64_t header_length = dwarf64 ? c.u64() : c.u32();
  const std::uint64_t program_start = c.offset() + header_length;
  const unsigned min_inst = c.u8();
  const unsigned max_ops = version >= 4 ? c.u8() : 1;
  const bool default_is_stmt = c.u8() != 0;
  (void)default_is_stmt;
  const int line_base = static_cast<std::int8_t>(c.u8());
  const unsigned line_range = c.u8();
  const unsigned opcode_base = c.u8();
  std::vector<unsigned> std_lengths(opcode_base ? opcode_base - 1 : 0);
  for (auto& l : std_lengths) l = c.u8();
  if (!c.ok()) return fail("header runs past the end");

  FormContext fc{s.str, s.line_str, dwarf64, address_size};
  if (version >= 5) {
    // Directory and file tables described by (content type, form) pairs.
    for (int table = 0; table < 2; ++table) {
      unsigned nformats = c.u8();
      std::vector<std::pair<std::uint64_t, std::uint64_t>> formats(nformats);
      for (auto& f : formats) {
        f.first = c.uleb();
        f.second = c.uleb();
      }
      std::uint64_t count = c.uleb();
      if (!c.ok() || count > s.line.size()) return fail("entry table runs past the end");
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
          t.dirs_.push_back(std::move(e.name));
        else
          t.files_.push_back(std::move(e));
      }
    }
  } else {
    for (;;) {
      std::string_view d = c.cstr();
      if (!c.ok()) return fail("directory table runs past the end");
      if (d.empty()) break;
      t.dirs_.emplace_back(d);
    }
    for (;;) {
      std::string_view f = c.cstr();
      if (!c.ok()) return fail("file table runs past the end");
      if (f.empty()) break;
      FileEntry e{std::string(f), c.uleb()};
      c.uleb();
      c.uleb();
      t.files_.push_back(std::move(e));
    }
  }
  if (!c.ok()) return fail("header runs past the end");
  c.seek(program_start);

  std::vector<std::vector<Row>> seqs;
  while (c.ok() && c.offset() < unit_end) {
    std::uint64_t address = 0;
    unsigned op_index = 0;
    std::uint32_t file = t.files_.empty() ? kNone : t.intern_file(t.dwarf5_ ? 0 : 1);
    std::int64_t line = 1;
    unsigned discriminator = 0;
    bool end = false;
    std::vector<Row> seq;
    auto emit = [&](bool end_sequence) {
      t.add_row(seq,
                Row{address, file, static_cast<std::uint32_t>(line), discriminator, end_sequence});
      discriminator = 0;
    };
    auto advance = [&](std::uint64_t adjust) {
      if (max_ops <= 1) {
        address += adjust * min_inst;
      } else {
        address += (op_index + adjust) / max_ops * min_inst;
        op_index = static_cast<unsigned>((op_index + adjust) % max_ops);
      }
    };
    while (!end && c.ok() && c.offset() < unit_end) {
      unsigned op = c.u8();
      if (op >= opcode_base) {
        if (line_range == 0) return fail("line_range is 0");
        unsigned adj = op - opcode_base;
        advance(adj / line_range);
        line += line_base + static_cast<int>(adj % line_range);
        emit(false);
        continue;
      }
      switch (op) {
        case 0: {
          std::uint64_t len = c.uleb();
          std::uint64_t next = c.offset() + len;
          unsigned ext = len ? c.u8() : 0;
          if (ext == kLneEndSequence) {
            end = true;
            emit(true);
          } else if (ext == kLneSetAddress) {
            address = c.address(len - 1);
            op_index = 0;
          } else if (ext == kLneDefineFile) {
            FileEntry e{std::string(c.cstr()), c.uleb()};
            t.files_.push_back(std::move(e));
          } else if (ext == kLneSetDiscriminator) {
            discriminator = static_cast<unsigned>(c.uleb());
          }
          c.seek(next);
          break;
        }
        case kLnsCopy:
          emit(false);
          break;
        case kLnsAdvancePc:
          advance(c.uleb());
          break;
        case kLnsAdvanceLine:
          line += c.sleb();
          break;
        case kLnsSetFile:
          file = t.intern_file(c.uleb());
          break;
        case kLnsSetColumn:
          c.uleb();
          break;
        case kLnsNegateStmt:
        case kLnsSetBasicBlock:
          break;
        case kLnsConstAddPc:
          if (line_range == 0) return fail("line_range is 0");
          advance((255 - opcode_base) / line_range);
          break;
        case kLnsFixedAdvancePc:
          address += c.u16();
          op_index = 0;
          break;
        default:
          for (unsigned i = 0; i < std_lengths[op - 1]; ++i) c.uleb();
          break;
      }
    }
    if (!seq.empty()) seqs.push_back(std::move(seq));
  }
  if (!c.ok()) return fail("program runs past the end");

  // Sequences keep only the ones that ended (binutils starts a new sequence
  // after each end row); the newest come first on full ties, as in binutils.
  for (std::size_t i = seqs.size(); i-- > 0;) {
    auto& rows = seqs[i];
    if (!rows.back().end_sequence) continue;
    Sequence sq{rows.front().address, rows.back().address,
                static_cast<std::uint32_t>(t.rows_.size()),
                static_cast<std::uint32_t>(rows.size())};
    std::stable_sort(rows.begin(), rows.end() - 1,
                     [](const Row& a, const Row& b) { return a.address < b.address; });
    t.rows_.insert(t.rows_.end(), rows.begin(), rows.end());
    t.sequences_.push_back(sq);
  }
  t.finish();
  return t;
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
