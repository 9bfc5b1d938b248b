#include "session/unwind_callchain.h"

#include <sys/stat.h>

#include <cstring>
#include <deque>
#include <unordered_map>

#include "abi/perf_event.h"
#include "base/flat_map.h"
#include "dwarf/cfi_unwinder.h"
#include "symbol/demangle.h"

namespace perfkit::session {

namespace {

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// perf's x86-64 sample register order (PERF_REG_X86_*) for each DWARF register.
constexpr int kPerfRegOfDwarf[dwarf::kRegCount] = {0,  3,  2,  1,  4,  5,  6,  7, 16,
                                                   17, 18, 19, 20, 21, 22, 23, 8};

class DwarfUnwinder final : public UserStackUnwinder {
 public:
  DwarfUnwinder(symbol::Symbolizer& symbolizer, UnwindOptions opts)
      : symbolizer_(symbolizer), opts_(std::move(opts)) {
    if (!opts_.lines)
      opts_.lines = std::make_shared<symbol::SourceLines>(
          symbolizer_, symbol::SourceLineOptions{opts_.full_source_path});
  }

  void unwind(machine::Machine& m, machine::Thread& t, const record::Sample& s, bool caller_order,
              int max_stack, std::vector<Frame>& out) override;

  dwarf::UnwindTables* tables_for(const machine::Dso* d);

 private:
  bool openable(const machine::Dso& d);
  bool unwind_ready(const std::shared_ptr<machine::MapSet>& maps);
  void append(machine::Machine& m, machine::Thread& t, std::uint64_t ip, bool caller_order,
              std::vector<Frame>& out);
  const char* intern(std::string_view s);
  struct InlineSpan {
    std::uint32_t begin = 0, size = 0;  // in inline_frames_
  };
  struct InlineFrame {
    const char* inlined;  // null: the symbol itself
    const char* srcline;
  };
  struct InlineKey {
    std::uint32_t dso = 0;
    std::uint64_t addr = 0;
    bool operator==(const InlineKey&) const = default;
  };
  struct InlineKeyHash {
    std::size_t operator()(const InlineKey& k) const {
      return static_cast<std::size_t>(mix64(k.addr ^ (static_cast<std::uint64_t>(k.dso) << 40)));
    }
  };
  const InlineSpan& inline_span(machine::Machine& m, const machine::Location& loc);

  symbol::Symbolizer& symbolizer_;
  UnwindOptions opts_;
  std::unordered_map<std::uint32_t, std::unique_ptr<dwarf::UnwindTables>> tables_;
  std::unordered_map<std::uint32_t, symbol::SourceLines::Dso*> lines_dso_;
  std::unordered_map<std::string, std::unique_ptr<std::string>> names_;
  FlatMap<InlineKey, InlineKeyHash> inline_index_;  // -> inline_spans_
  std::vector<InlineSpan> inline_spans_;
  std::vector<InlineFrame> inline_frames_;
  std::vector<std::uint64_t> ips_;
  std::unordered_map<std::uint32_t, bool> openable_;  // by dso index
  // Per address space (held, so that its address is not reused): the map
  // count last scanned, and whether it is ready.
  struct Readiness {
    std::shared_ptr<const machine::MapSet> hold;
    std::size_t seen = ~std::size_t{0};
    bool ready = false;
  };
  std::unordered_map<const machine::MapSet*, Readiness> ready_;
};

// The process as the unwinder sees it for one sample: its user maps and
// the sample's stack copy (perf reads outside the copy from mapped files).
class SampleTarget final : public dwarf::UnwindTarget {
 public:
  SampleTarget(DwarfUnwinder& u, machine::Thread& t, std::uint64_t sp, Bytes stack)
      : u_(u), t_(t), sp_(sp), stack_(stack) {}

  // perf's libunwind finds .eh_frame_hdr at the lowest start of the
  // process's maps of the DSO, less the file's first load address
  // (read_unwind_spec_eh_frame): a process that exec'd keeps its old maps
  // (perf flushes none), so where the DSO was mapped lower before, the
  // tables are searched at the wrong place, as here.
  dwarf::UnwindTables* tables_at(std::uint64_t pc, std::uint64_t& bias) override {
    const machine::Map* map = map_at(pc);
    if (!map || !map->dso || map->identity) return nullptr;
    dwarf::UnwindTables* tables = tables_of(*map);
    std::uint64_t vaddr;
    if (!tables || !tables->offset_to_vaddr(map->map_ip(pc), vaddr)) return nullptr;
    if (!last_bias_known_) {
      std::uint64_t lowest = map->start;
      for (const machine::Map& m : t_.maps->maps()) {
        if (m.start >= lowest) break;  // sorted by start
        if (m.dso == map->dso) {
          lowest = m.start;
          break;
        }
      }
      last_bias_ = lowest - tables->elf_base();
      last_bias_known_ = true;
    }
    bias = last_bias_;
    return tables;
  }

  bool read(std::uint64_t addr, std::uint64_t& out) override {
    if (addr + 8 < addr) return false;
    if (addr < sp_ || addr + 8 >= sp_ + stack_.size()) {
      // perf's access_dso_mem: no map is an error; a mapped DSO it cannot
      // read from (anon memory, [stack], past the file) reads as 0.
      const machine::Map* map = map_at(addr);
      if (!map || !map->dso) return false;
      dwarf::UnwindTables* tables = map->identity ? nullptr : tables_of(*map);
      if (!tables || !tables->read_file(map->map_ip(addr), out)) out = 0;
      return true;
    }
    std::memcpy(&out, stack_.data() + (addr - sp_), 8);
    return true;
  }

 private:
  // The map at `addr`; the last one found is asked first (a frame's code
  // reads and its tables are at one map).
  const machine::Map* map_at(std::uint64_t addr) {
    if (last_map_ && addr >= last_map_->start && addr < last_map_->end) return last_map_;
    const machine::Map* map = t_.maps->find(addr);
    if (map != last_map_) {
      last_map_ = map;
      last_tables_ = nullptr;
      last_tables_known_ = last_bias_known_ = false;
    }
    return map;
  }
  dwarf::UnwindTables* tables_of(const machine::Map& map) {
    if (&map != last_map_) return u_.tables_for(map.dso);
    if (!last_tables_known_) {
      last_tables_ = u_.tables_for(map.dso);
      last_tables_known_ = true;
    }
    return last_tables_;
  }

  DwarfUnwinder& u_;
  machine::Thread& t_;
  std::uint64_t sp_;
  Bytes stack_;
  const machine::Map* last_map_ = nullptr;
  dwarf::UnwindTables* last_tables_ = nullptr;
  std::uint64_t last_bias_ = 0;
  bool last_tables_known_ = false, last_bias_known_ = false;
};

dwarf::UnwindTables* DwarfUnwinder::tables_for(const machine::Dso* d) {
  auto it = tables_.find(d->index);
  if (it != tables_.end()) return it->second.get();
  std::unique_ptr<dwarf::UnwindTables> t;
  if (d->kind == machine::DsoKind::kUser || d->kind == machine::DsoKind::kVdso) {
    // perf reads a DSO's data from the build-id cache first, then its path.
    const auto& so = symbolizer_.options();
    std::string runtime;
    if (!d->build_id.empty() && !so.buildid_dir.empty()) {
      std::string cached = symbol::buildid_cache_file(so.buildid_dir, d->long_name, d->build_id);
      if (is_file(cached)) runtime = cached;
    }
    if (runtime.empty() && is_file(so.symfs + d->long_name)) runtime = so.symfs + d->long_name;
    if (!runtime.empty()) {
      const symbol::LoadedSymbols& ls = symbolizer_.user_dso(d->long_name, d->build_id);
      std::string debug = ls.found && ls.file != runtime ? ls.file : std::string();
      auto opened = dwarf::UnwindTables::open(runtime, debug);
      if (opened) t = std::move(*opened);
    }
  }
  return tables_.emplace(d->index, std::move(t)).first->second.get();
}

// Whether perf could read the DSO's data: from the build-id cache or its
// path. [vdso] is this machine's own vdso unless the recording's build-id
// table names it (perf then looks only in the cache).
bool DwarfUnwinder::openable(const machine::Dso& d) {
  auto [it, fresh] = openable_.try_emplace(d.index, false);
  if (!fresh) return it->second;
  const auto& so = symbolizer_.options();
  const bool cached = !d.build_id.empty() && !so.buildid_dir.empty() &&
                      is_file(symbol::buildid_cache_file(so.buildid_dir, d.long_name, d.build_id));
  if (d.kind == machine::DsoKind::kUser)
    it->second = cached || is_file(so.symfs + d.long_name);
  else if (d.kind == machine::DsoKind::kVdso && d.long_name == "[vdso]")
    it->second = cached || !d.header_build_id;
  return it->second;
}

// perf unwinds a process only once one of its maps had a DSO whose ELF class
// it could read (unwind__prepare_access); before that its user stacks give
// no frames at all, not even the sampled ip.
bool DwarfUnwinder::unwind_ready(const std::shared_ptr<machine::MapSet>& maps) {
  Readiness& r = ready_[maps.get()];
  if (!r.hold) r.hold = maps;
  if (r.ready || r.seen == maps->maps().size()) return r.ready;
  r.seen = maps->maps().size();
  for (const machine::Map& m : maps->maps())
    if (m.dso && openable(*m.dso)) return r.ready = true;
  return false;
}

const char* DwarfUnwinder::intern(std::string_view s) {
  auto& p = names_[std::string(s)];
  if (!p) p = std::make_unique<std::string>(s);
  return p->c_str();
}

// perf's unwind_entry: the frames inlined at `ip` first (append_inlines),
// else the frame itself.
// The functions inlined at a DSO address (innermost first), looked up and
// named once per address.
const DwarfUnwinder::InlineSpan& DwarfUnwinder::inline_span(machine::Machine& m,
                                                            const machine::Location& loc) {
  const InlineKey key{loc.dso->index, loc.addr};
  std::uint32_t at = inline_index_.find(key);
  if (at != decltype(inline_index_)::kNone) return inline_spans_[at];
  auto& h = lines_dso_[loc.dso->index];
  if (!h) h = opts_.lines->dso(loc.dso->long_name, loc.dso->short_name, loc.dso->build_id);
  InlineSpan span;
  span.begin = static_cast<std::uint32_t>(inline_frames_.size());
  auto recs = opts_.lines->inlines(h, loc.addr);
  if (!recs.empty()) {
    std::string_view sym = m.symbol_name(loc);
    for (const symbol::InlineRecord& r : recs) {
      std::string name =
          symbolizer_.options().demangle ? symbol::demangle(r.function) : std::string(r.function);
      inline_frames_.push_back({name == sym ? nullptr : intern(name), r.srcline.data()});
    }
  }
  span.size = static_cast<std::uint32_t>(inline_frames_.size()) - span.begin;
  inline_index_.insert(key, static_cast<std::uint32_t>(inline_spans_.size()));
  inline_spans_.push_back(span);
  return inline_spans_.back();
}

void DwarfUnwinder::append(machine::Machine& m, machine::Thread& t, std::uint64_t ip,
                           bool caller_order, std::vector<Frame>& out) {
  Frame f;
  f.ip = ip;
  f.loc = m.resolve(t, abi::kMiscUser, ip);
  if (opts_.inline_frames && f.loc.map && f.loc.dso && f.loc.symbol >= 0) {
    const InlineSpan& span = inline_span(m, f.loc);
    if (span.size) {
      for (std::uint32_t k = 0; k < span.size; ++k) {
        const InlineFrame& r = inline_frames_[span.begin + (caller_order ? span.size - 1 - k : k)];
        Frame g = f;
        g.inlined = r.inlined;
        g.srcline = r.srcline;
        out.push_back(g);
      }
      return;
    }
  }
  out.push_back(f);
}

void DwarfUnwinder::unwind(machine::Machine& m, machine::Thread& t, const record::Sample& s,
                           bool caller_order, int max_stack, std::vector<Frame>& out) {
  const record::Regs& r = s.user_regs;
  if (!opts_.unwind_arch || r.abi == 0 || s.user_stack_dyn_size == 0 || max_stack <= 0) return;
  // Sample values come one per set mask bit, lowest bit first.
  std::uint64_t perf_regs[64];
  std::uint64_t have = 0;
  std::size_t i = 0;
  for (unsigned b = 0; b < 64 && i < r.values.size(); ++b)
    if (r.mask & (1ULL << b)) {
      perf_regs[b] = r.values[i++];
      have |= 1ULL << b;
    }
  dwarf::UnwindRegs regs;
  for (int d = 0; d < dwarf::kRegCount; ++d)
    if (have & (1ULL << kPerfRegOfDwarf[d])) regs.set(d, perf_regs[kPerfRegOfDwarf[d]]);
  if (!regs.has(dwarf::kRegRip) || !t.maps || !unwind_ready(t.maps)) return;
  const std::uint64_t sp = regs.has(dwarf::kRegRsp) ? regs.value[dwarf::kRegRsp] : 0;
  std::size_t n = std::min<std::uint64_t>(s.user_stack_dyn_size, s.user_stack.size());
  SampleTarget target(*this, t, sp, s.user_stack.subspan(0, n));
  ips_.clear();
  dwarf::unwind_stack(regs, target, max_stack, ips_);
  for (std::size_t k = 0; k < ips_.size(); ++k) {
    std::uint64_t ip = ips_[caller_order ? ips_.size() - 1 - k : k];
    if (ip) append(m, t, ip, caller_order, out);
  }
}

}  // namespace

std::shared_ptr<UserStackUnwinder> make_dwarf_unwinder(symbol::Symbolizer& symbolizer,
                                                       UnwindOptions opts) {
  return std::make_shared<DwarfUnwinder>(symbolizer, std::move(opts));
}

}  // namespace perfkit::session
