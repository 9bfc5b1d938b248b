#include "dwarf/source_locator.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "dwarf/debug_file.h"
#include "dwarf/lazy_units.h"
#include "dwarf/line_table.h"
#include "elf/elf_file.h"

namespace perfkit::dwarf {

namespace {

constexpr std::uint32_t kNoFunc = UINT32_MAX;

// An ELF symbol as binutils' canonical symbol table holds it.
struct ElfSym {
  std::uint64_t value = 0, size = 0;
  std::uint32_t shndx = 0;
  std::uint8_t type = 0, bind = 0, vis = 0;
  std::string_view name;
};

std::vector<ElfSym> read_elf_symbols(const elf::ElfFile& f, std::uint32_t sh_type) {
  std::vector<ElfSym> out;
  for (const auto& s : f.sections()) {
    if (s.type != sh_type) continue;
    Elf_Scn* scn = elf_getscn(f.handle(), s.index);
    Elf_Data* d = scn ? elf_getdata(scn, nullptr) : nullptr;
    if (!d) break;
    std::size_t n = s.entsize ? s.size / s.entsize : 0;
    for (std::size_t i = 1; i < n; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(d, static_cast<int>(i), &sym)) break;
      ElfSym e;
      e.value = sym.st_value;
      e.size = sym.st_size;
      e.shndx = sym.st_shndx;
      e.type = GELF_ST_TYPE(sym.st_info);
      e.bind = GELF_ST_BIND(sym.st_info);
      e.vis = GELF_ST_VISIBILITY(sym.st_other);
      const char* nm = elf_strptr(f.handle(), s.link, sym.st_name);
      e.name = nm ? nm : "";
      out.push_back(e);
    }
    break;
  }
  return out;
}

struct FoundFunction {
  const ElfSym* sym = nullptr;
  const ElfSym* file = nullptr;  // the STT_FILE naming its source, if one applies
};

// binutils' _bfd_elf_find_function (without its one-entry cache): the
// function-like symbol of `shndx` with the largest start <= addr (the
// larger size on ties), and the file symbol that names its source.
FoundFunction find_function(const std::vector<ElfSym>& syms, std::uint32_t shndx,
                            std::uint64_t addr) {
  enum { kNothing, kSymbolSeen, kFileAfterSymbol } state = kNothing;
  const ElfSym* file = nullptr;
  FoundFunction best;
  std::uint64_t low = 0, best_size = 0;
  for (const ElfSym& s : syms) {
    if (s.type == STT_FILE) {
      file = &s;
      if (state == kSymbolSeen) state = kFileAfterSymbol;
      continue;
    }
    bool function_like = s.type != STT_SECTION && s.type != STT_OBJECT && s.type != STT_TLS &&
                         s.shndx == shndx && shndx != SHN_UNDEF;
    std::uint64_t size = s.size;
    if (function_like && size == 0 && s.bind == STB_LOCAL && s.type == STT_NOTYPE &&
        s.vis == STV_HIDDEN)
      function_like = false;
    if (size == 0) size = 1;
    if (function_like && s.value <= addr &&
        (s.value > low || (s.value == low && size > best_size))) {
      best.sym = &s;
      best_size = size;
      best.file = nullptr;
      low = s.value;
      if (file && (s.bind == STB_LOCAL || state != kFileAfterSymbol)) best.file = file;
    }
    if (state == kNothing) state = kSymbolSeen;
  }
  return best;
}

bool c_like(int lang) {
  switch (lang) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_Cobol74:
    case DW_LANG_Cobol85:
    case DW_LANG_Fortran77:
    case DW_LANG_Pascal83:
    case DW_LANG_PLI:
    case DW_LANG_C99:
    case DW_LANG_UPC:
    case DW_LANG_C11:
    case DW_LANG_Mips_Assembler:
      return true;
    default:
      return false;
  }
}

struct Func {
  std::string_view name;
  bool linkage = false;
  bool inlined = false;
  std::uint32_t caller = kNoFunc;
  std::string caller_file;  // "" when the DIE has none
  std::uint32_t caller_line = 0;
  std::uint64_t low = 0;  // start of its first range
};

// A run of addresses where the best-fit function is the same.
struct Interval {
  std::uint64_t low, high;
  std::uint32_t func;
};

struct Unit {
  Dwarf_Die die;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  bool loaded = false;
  std::optional<LineTable> lines;
  std::vector<Func> funcs;
  std::vector<Interval> best;
};

}  // namespace

struct SourceLocator::Impl {
  LocatorOptions opts;
  std::optional<elf::ElfFile> exe;
  std::optional<elf::ElfFile> separate;  // the debug file, when not exe itself
  const elf::ElfFile* dbg = nullptr;     // where the DWARF is, or nullptr
  std::string dwarf_path;
  Dwarf* dw = nullptr;
  LineSections sections;
  std::vector<ElfSym> exe_syms;  // addr2line's: .symtab, else .dynsym
  std::vector<ElfSym> dbg_syms;  // the debug file's .symtab
  std::deque<Unit> units;        // in .debug_info's order (stays put as it grows)
  std::vector<std::size_t> without_ranges;
  std::vector<std::pair<std::uint64_t, std::size_t>> unit_starts;  // (low, unit) sorted
  std::int64_t text_offset = 0;
  // A compressed .debug_info inflated as far as lookups reach (with
  // .debug_aranges to say which unit an address needs): units are indexed
  // in order up to there; everything at the first lookup that needs more.
  elf::LazySection* lazy_info = nullptr;
  elf::LazySection* lazy_line = nullptr;  // .debug_line, inflated a unit's program at a time
  std::vector<ArangeUnit> aranges;
  Dwarf_CU* last_cu = nullptr;  // the last unit indexed
  std::uint64_t next_unit = 0;  // the offset of the next one
  bool indexed_all = false;

  ~Impl() {
    if (dw) dwarf_end(dw);
  }

  void open_dwarf();
  void index_units();
  void index_until(std::uint64_t stop);
  void index_all();
  void add_unit(Dwarf_Die cudie);
  void inflate_line_program(std::uint64_t offset);
  bool search(std::uint64_t addr, Unit*& unit, Func*& function, std::string_view& file,
              bool& has_file, unsigned& line);
  void load(Unit& u);
  void walk(Unit& u, Dwarf_Die* die, std::vector<std::uint32_t>& stack);
  std::pair<std::string_view, bool> name_of(Dwarf_Die* die, int depth);
  void build_intervals(Unit& u);
  const Interval* best_fit(const Unit& u, std::uint64_t addr) const;
};

SourceLocator::SourceLocator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SourceLocator::~SourceLocator() = default;

const std::string& SourceLocator::dwarf_path() const { return impl_->dwarf_path; }
std::uint16_t SourceLocator::elf_type() const { return impl_->exe->type(); }
std::int64_t SourceLocator::text_offset() const { return impl_->text_offset; }

Expected<std::unique_ptr<SourceLocator>> SourceLocator::open(const std::string& path,
                                                             LocatorOptions opts) {
  auto impl = std::make_unique<Impl>();
  impl->opts = std::move(opts);
  PK_ASSIGN(elf::ElfFile exe, elf::ElfFile::open(path));
  impl->exe.emplace(std::move(exe));
  if (const elf::Section* text = impl->exe->section(".text"))
    impl->text_offset = static_cast<std::int64_t>(text->addr - text->offset);
  impl->exe_syms = read_elf_symbols(*impl->exe, SHT_SYMTAB);
  if (impl->exe_syms.empty()) impl->exe_syms = read_elf_symbols(*impl->exe, SHT_DYNSYM);
  impl->open_dwarf();
  return std::unique_ptr<SourceLocator>(new SourceLocator(std::move(impl)));
}

void SourceLocator::Impl::open_dwarf() {
  if (has_debug_info(*exe)) {
    dbg = &*exe;
  } else if (auto found = find_separate_debug_file(*exe, opts.debug_dir)) {
    separate.emplace(std::move(*found));
    dbg = &*separate;
    dbg_syms = read_elf_symbols(*separate, SHT_SYMTAB);
  }
  if (!dbg) return;
  dwarf_path = dbg->path();
  // Variable locations, macros, CFI and name indexes say nothing of lines
  // or inlined calls: left compressed and out of memory.
  (separate ? *separate : *exe)
      .hide_sections({".debug_loclists", ".debug_loc", ".debug_macro", ".debug_macinfo",
                      ".debug_frame", ".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames",
                      ".debug_gnu_pubtypes"});
  auto data = [&](std::string_view name) -> Bytes {
    const elf::Section* s = dbg->section(name);
    return s ? dbg->section_data(*s) : Bytes();
  };
  // .debug_info left compressed until lookups need its units, when
  // .debug_aranges says which unit holds an address.
  const elf::Section* info = dbg->section(".debug_info");
  if (opts.lazy_debug_info && info && (info->flags & SHF_COMPRESSED)) {
    aranges = parse_aranges(data(".debug_aranges"), dbg->swapped());
    if (!aranges.empty()) lazy_info = dbg->inflate_lazily(*info);
  }
  // .debug_line too, read a unit's program at a time (LineTable reads
  // nothing else of it).
  const elf::Section* line = dbg->section(".debug_line");
  if (opts.lazy_debug_info && line && (line->flags & SHF_COMPRESSED))
    lazy_line = dbg->inflate_lazily(*line);
  dbg->decompress_debug_sections();
  sections.line = data(".debug_line");
  sections.line_str = data(".debug_line_str");
  sections.str = data(".debug_str");
  dw = dwarf_begin_elf(dbg->handle(), DWARF_C_READ, nullptr);
  if (!dw) {
    dbg = nullptr;
    return;
  }
  if (!lazy_info) index_units();
}

void SourceLocator::Impl::add_unit(Dwarf_Die cudie) {
  Unit u;
  u.die = cudie;
  Dwarf_Addr base, start, end;
  ptrdiff_t off = 0;
  while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0)
    if (end > start) u.ranges.emplace_back(start, end);
  std::size_t idx = units.size();
  if (u.ranges.empty()) without_ranges.push_back(idx);
  for (auto& r : u.ranges) unit_starts.emplace_back(r.first, idx);
  units.push_back(std::move(u));
}

void SourceLocator::Impl::index_units() {
  Dwarf_CU* cu = nullptr;
  Dwarf_Half version;
  std::uint8_t unit_type;
  Dwarf_Die cudie, subdie;
  while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0)
    if (unit_type == DW_UT_compile || unit_type == DW_UT_partial) add_unit(cudie);
  std::stable_sort(unit_starts.begin(), unit_starts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  indexed_all = true;
}

// The units that start before `stop`, indexed as index_units would (in the
// same order: the sort is stable), each inflated whole before libdw reads
// its header.
void SourceLocator::Impl::index_until(std::uint64_t stop) {
  constexpr std::uint64_t kMaxHeader = 64;  // more than any unit header
  while (!indexed_all && next_unit < stop) {
    Dwarf_Off next = 0;
    const bool header = lazy_info->ensure(next_unit + kMaxHeader) &&
                        dwarf_next_unit(dw, next_unit, &next, nullptr, nullptr, nullptr, nullptr,
                                        nullptr, nullptr, nullptr) == 0;
    // (the end, or a unit that does not read: everything, as index_units sees it)
    if (!header || !lazy_info->ensure(next)) {
      (void)lazy_info->ensure(lazy_info->size());
      next = lazy_info->size();
    }
    Dwarf_Half version;
    std::uint8_t unit_type;
    Dwarf_Die cudie, subdie;
    if (dwarf_get_units(dw, last_cu, &last_cu, &version, &unit_type, &cudie, &subdie) != 0) {
      indexed_all = true;
      break;
    }
    if (unit_type == DW_UT_compile || unit_type == DW_UT_partial) add_unit(cudie);
    next_unit = next;
  }
  std::stable_sort(unit_starts.begin(), unit_starts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

void SourceLocator::Impl::index_all() {
  if (indexed_all) return;
  (void)lazy_info->ensure(lazy_info->size());
  index_until(UINT64_MAX);
}

std::pair<std::string_view, bool> SourceLocator::Impl::name_of(Dwarf_Die* die, int depth) {
  Dwarf_Attribute a;
  if (dwarf_attr(die, DW_AT_linkage_name, &a) || dwarf_attr(die, DW_AT_MIPS_linkage_name, &a)) {
    if (const char* s = dwarf_formstring(&a)) return {s, true};
  }
  if (depth < 16 &&
      (dwarf_attr(die, DW_AT_abstract_origin, &a) || dwarf_attr(die, DW_AT_specification, &a))) {
    Dwarf_Die origin;
    if (dwarf_formref_die(&a, &origin)) {
      auto r = name_of(&origin, depth + 1);
      if (!r.first.empty()) return r;
    }
  }
  if (dwarf_attr(die, DW_AT_name, &a)) {
    if (const char* s = dwarf_formstring(&a)) {
      Dwarf_Die cu;
      bool linkage = dwarf_diecu(die, &cu, nullptr, nullptr) && c_like(dwarf_srclang(&cu));
      return {s, linkage};
    }
  }
  return {{}, false};
}

void SourceLocator::Impl::walk(Unit& u, Dwarf_Die* parent, std::vector<std::uint32_t>& stack) {
  Dwarf_Die die;
  if (dwarf_child(parent, &die) != 0) return;
  do {
    int tag = dwarf_tag(&die);
    bool is_func =
        tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point;
    std::uint32_t pushed = kNoFunc;
    if (is_func) {
      Func f;
      auto [name, linkage] = name_of(&die, 0);
      f.name = name;
      f.linkage = linkage;
      f.inlined = tag == DW_TAG_inlined_subroutine;
      if (f.inlined) {
        for (auto it = stack.rbegin(); it != stack.rend(); ++it)
          if (*it != kNoFunc) {
            f.caller = *it;
            break;
          }
      }
      Dwarf_Attribute a;
      Dwarf_Word w;
      if (dwarf_attr(&die, DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0 && u.lines)
        f.caller_file = u.lines->file_name(w);
      if (dwarf_attr(&die, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0)
        f.caller_line = static_cast<std::uint32_t>(w);
      pushed = static_cast<std::uint32_t>(u.funcs.size());
      Dwarf_Addr base, start, end;
      ptrdiff_t off = 0;
      bool first = true;
      while ((off = dwarf_ranges(&die, off, &base, &start, &end)) > 0) {
        if (first) f.low = start, first = false;
        if (end > start) u.best.push_back(Interval{start, end, pushed});
      }
      u.funcs.push_back(std::move(f));
    }
    if (dwarf_haschildren(&die)) {
      stack.push_back(pushed);
      walk(u, &die, stack);
      stack.pop_back();
    }
  } while (dwarf_siblingof(&die, &die) == 0);
}

// Turns the raw (range, function) list in u.best into disjoint intervals of
// the best fit: the smallest containing range, the later function on ties.
void SourceLocator::Impl::build_intervals(Unit& u) {
  std::vector<Interval> raw = std::move(u.best);
  u.best.clear();
  if (raw.empty()) return;
  std::vector<std::uint64_t> points;
  points.reserve(raw.size() * 2);
  for (const auto& r : raw) {
    points.push_back(r.low);
    points.push_back(r.high);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::sort(raw.begin(), raw.end(),
            [](const Interval& a, const Interval& b) { return a.low < b.low; });
  // Active ranges keyed by (length, -function): the first is the best fit.
  using Key = std::tuple<std::uint64_t, std::int64_t, std::uint64_t>;  // len, -func, high
  std::set<Key> active;
  std::multimap<std::uint64_t, Key> ends;
  std::size_t next = 0;
  for (std::size_t p = 0; p + 1 < points.size(); ++p) {
    const std::uint64_t at = points[p];
    while (!ends.empty() && ends.begin()->first <= at) {
      active.erase(ends.begin()->second);
      ends.erase(ends.begin());
    }
    while (next < raw.size() && raw[next].low == at) {
      const Interval& r = raw[next++];
      Key k{r.high - r.low, -static_cast<std::int64_t>(r.func), r.high};
      if (active.insert(k).second) ends.emplace(r.high, k);
    }
    if (active.empty()) continue;
    const std::uint32_t f = static_cast<std::uint32_t>(-std::get<1>(*active.begin()));
    if (!u.best.empty() && u.best.back().high == at && u.best.back().func == f)
      u.best.back().high = points[p + 1];
    else
      u.best.push_back(Interval{at, points[p + 1], f});
  }
}

// The line program at `offset` of a lazily inflated .debug_line, whole:
// its unit_length first.
void SourceLocator::Impl::inflate_line_program(std::uint64_t offset) {
  if (!lazy_line->ensure(offset + 12) || offset + 4 > sections.line.size()) return;
  const bool swap = dbg->swapped();
  const std::uint8_t* p = sections.line.data() + offset;
  std::uint64_t length = perfkit::load<std::uint32_t>(p, swap), header = 4;
  if (length == 0xffffffffULL && offset + 12 <= sections.line.size()) {
    length = perfkit::load<std::uint64_t>(p + 4, swap);
    header = 12;
  }
  const std::uint64_t end = offset + header;
  (void)lazy_line->ensure(length > UINT64_MAX - end ? UINT64_MAX : end + length);
}

void SourceLocator::Impl::load(Unit& u) {
  u.loaded = true;
  // A unit that refers to others' DIEs may lead libdw past what is
  // inflated: everything is, first.
  if (!indexed_all && !self_contained(&u.die)) index_all();
  Dwarf_Attribute a;
  Dwarf_Word stmt;
  if (dwarf_attr(&u.die, DW_AT_stmt_list, &a) && dwarf_formudata(&a, &stmt) == 0) {
    const char* comp_dir = nullptr;
    if (dwarf_attr(&u.die, DW_AT_comp_dir, &a)) comp_dir = dwarf_formstring(&a);
    std::uint8_t addr_size = 8;
    Dwarf_Die cu;
    std::uint8_t offset_size = 0;
    dwarf_diecu(&u.die, &cu, &addr_size, &offset_size);
    if (lazy_line) inflate_line_program(stmt);
    auto t = LineTable::decode(sections, stmt, comp_dir ? comp_dir : "", addr_size);
    if (t) u.lines.emplace(std::move(*t));
  }
  std::vector<std::uint32_t> stack;
  walk(u, &u.die, stack);
  build_intervals(u);
}

const Interval* SourceLocator::Impl::best_fit(const Unit& u, std::uint64_t addr) const {
  auto it = std::upper_bound(u.best.begin(), u.best.end(), addr,
                             [](std::uint64_t a, const Interval& i) { return a < i.low; });
  if (it == u.best.begin()) return nullptr;
  --it;
  return addr < it->high ? &*it : nullptr;
}

// The unit that knows `addr` (by its lines or its functions' ranges): the
// units whose ranges hold addr first, in order, then those without ranges.
// With the units not all indexed, only the first: false then means "not
// among those known".
bool SourceLocator::Impl::search(std::uint64_t addr, Unit*& unit, Func*& function,
                                 std::string_view& file, bool& has_file, unsigned& line) {
  const bool all = indexed_all;
  auto try_unit = [&](Unit& u) {
    if (!u.loaded) load(u);
    std::optional<LineHit> hit = u.lines ? u.lines->lookup(addr) : std::nullopt;
    const Interval* fit = best_fit(u, addr);
    if (!hit && !fit) return false;
    unit = &u;
    if (hit) {
      has_file = hit->file != nullptr;
      if (has_file) file = *hit->file;
      line = hit->line;
    }
    function = fit ? &u.funcs[fit->func] : nullptr;
    return true;
  };
  auto end = std::upper_bound(unit_starts.begin(), unit_starts.end(), addr,
                              [](std::uint64_t a, const auto& p) { return a < p.first; });
  // (a unit loaded below may index the rest: the candidates are taken first)
  std::vector<std::size_t> candidates;
  for (auto it = unit_starts.begin(); it != end; ++it) {
    const Unit& u = units[it->second];
    for (const auto& r : u.ranges)
      if (addr >= r.first && addr < r.second) {
        candidates.push_back(it->second);
        break;
      }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (std::size_t i : candidates)
    if (try_unit(units[i])) return true;
  if (!all) return false;
  for (std::size_t i : without_ranges)
    if (try_unit(units[i])) return true;
  return false;
}

bool SourceLocator::lookup(std::uint64_t addr, std::vector<SourceFrame>& out) {
  Impl& m = *impl_;
  out.clear();
  // The allocated section of FILE holding addr.
  const elf::Section* sec = nullptr;
  for (const auto& s : m.exe->sections())
    if ((s.flags & SHF_ALLOC) && addr >= s.addr && addr - s.addr < s.size) {
      sec = &s;
      break;
    }
  if (!sec) return false;

  bool found = false;
  std::string_view name, file;
  bool has_file = false;
  unsigned line = 0;
  Unit* unit = nullptr;
  Func* function = nullptr;
  if (m.dbg) {
    // With .debug_info inflated as far as the unit .debug_aranges names
    // for addr, the units before it are known, and so the candidates among
    // them; if none fits, everything is inflated and searched again.
    if (!m.indexed_all) {
      if (auto u = arange_unit(m.aranges, addr))
        m.index_until(*u + 1);
      else
        m.index_all();
    }
    const bool all = m.indexed_all;
    found = m.search(addr, unit, function, file, has_file, line);
    if (!found && !all) {
      m.index_all();
      found = m.search(addr, unit, function, file, has_file, line);
    }
    if (function && function->linkage) {
      name = function->name;
    } else {
      // Name from the ELF symbols the DWARF file came with.
      const std::vector<ElfSym>* syms = &m.exe_syms;
      std::uint32_t shndx = static_cast<std::uint32_t>(sec->index);
      if (m.separate) {
        if (const elf::Section* d = m.separate->section(sec->name)) {
          syms = &m.dbg_syms;
          shndx = static_cast<std::uint32_t>(d->index);
        }
      }
      FoundFunction fun = find_function(*syms, shndx, addr);
      if (fun.sym) {
        name = fun.sym->name;
        if (!has_file && fun.file) {
          has_file = true;
          file = fun.file->name;
        }
        found = true;
      }
      if (function) {
        if (!fun.sym)
          name = function->name;
        else if (fun.sym->value == function->low)
          function->name = fun.sym->name;
        function->linkage = true;
      }
    }
  }
  if (!found) {
    FoundFunction fun = find_function(m.exe_syms, static_cast<std::uint32_t>(sec->index), addr);
    if (!fun.sym) return false;
    SourceFrame f{fun.sym->name, {}, false, 0};
    if (fun.file) f.file = fun.file->name, f.has_file = true;
    out.push_back(f);
    return true;
  }
  out.push_back(SourceFrame{name, file, has_file, line});
  if (function && function->inlined && unit) {
    for (const Func* f = function; f->caller != kNoFunc; f = &unit->funcs[f->caller]) {
      const Func& caller = unit->funcs[f->caller];
      out.push_back(
          SourceFrame{caller.name, f->caller_file, !f->caller_file.empty(), f->caller_line});
    }
  }
  return true;
}

}  // namespace perfkit::dwarf
