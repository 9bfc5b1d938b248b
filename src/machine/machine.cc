#include "machine/machine.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <unordered_set>

#include "abi/perf_event.h"
#include "base/mapped_file.h"
#include "symbol/kallsyms.h"

namespace perfkit::machine {

using namespace perfkit::abi;

namespace {

constexpr std::uint32_t kProtExec = 4;          // PROT_EXEC
constexpr std::uint32_t kMapHugetlb = 0x40000;  // MAP_HUGETLB

bool is_anon(std::string_view f) {
  return f == "//anon" || f.starts_with("/dev/zero") || f.starts_with("/anon_hugepage");
}
bool is_no_dso(std::string_view f) {
  return f.starts_with("[stack") || f.starts_with("/SYSV") || f == "[heap]";
}

// perf's dso__set_basename: "[JIT] tid PID" for perf-PID.map, else basename().
std::string short_name_of(std::string_view long_name) {
  if (long_name.starts_with("/tmp/perf-") && long_name.ends_with(".map")) {
    std::string_view pid = long_name.substr(10, long_name.size() - 14);
    int v = 0;
    auto r = std::from_chars(pid.data(), pid.data() + pid.size(), v);
    if (r.ec == std::errc() && r.ptr == pid.data() + pid.size())
      return fmt::format("[JIT] tid {}", v);
  }
  while (long_name.size() > 1 && long_name.ends_with('/')) long_name.remove_suffix(1);
  auto slash = long_name.rfind('/');
  return std::string(slash == std::string_view::npos ? long_name : long_name.substr(slash + 1));
}

DsoKind kind_of(std::string_view name) {
  if (name == "[kernel.kallsyms]" || name.starts_with("[kernel.kallsyms]")) return DsoKind::kKernel;
  if (name == "[vdso]" || name == "[vsyscall]" || name == "[vdso32]" || name == "[vdsox32]")
    return DsoKind::kVdso;
  if (name.starts_with("/tmp/perf-") && name.ends_with(".map")) return DsoKind::kJitMap;
  if (is_anon(name) || is_no_dso(name)) return DsoKind::kNoDso;
  if (name.ends_with(".ko") || name.ends_with(".ko.xz") || name.ends_with(".ko.gz") ||
      name.ends_with(".ko.zst"))
    return DsoKind::kModule;
  return DsoKind::kUser;
}

}  // namespace

// ---- MapSet ----

void MapSet::insert(const Map& m) {
  std::vector<Map> keep;
  keep.reserve(maps_.size() + 2);
  for (const Map& old : maps_) {
    if (old.end <= m.start || old.start >= m.end) {
      keep.push_back(old);
      continue;
    }
    if (old.start < m.start) {
      Map before = old;
      before.end = m.start;
      keep.push_back(before);
    }
    if (m.end < old.end) {
      Map after = old;
      after.start = m.end;
      after.pgoff += m.end - old.start;  // (identity maps ignore it)
      keep.push_back(after);
    }
  }
  auto at = std::lower_bound(keep.begin(), keep.end(), m.start,
                             [](const Map& a, std::uint64_t s) { return a.start < s; });
  keep.insert(at, m);
  maps_ = std::move(keep);
}

const Map* MapSet::find(std::uint64_t addr) const {
  auto it = std::upper_bound(maps_.begin(), maps_.end(), addr,
                             [](std::uint64_t a, const Map& m) { return a < m.start; });
  if (it == maps_.begin()) return nullptr;
  --it;
  return addr < it->end ? &*it : nullptr;
}

// ---- Machine ----

Machine::Machine(symbol::Symbolizer& symbolizer, std::int32_t guest_pid)
    : symbolizer_(symbolizer), pid_(guest_pid) {
  if (!is_guest()) {
    kernel_name_ = "[kernel.kallsyms]";
    Thread& idle = findnew_thread(0, 0);
    set_comm(idle, "swapper");
    return;
  }
  // perf's machine__init of a guest: a thread named after it
  kernel_name_ = pid_ ? fmt::format("[guest.kernel.kallsyms.{}]", pid_) : "[guest.kernel.kallsyms]";
  set_comm(findnew_thread(-1, pid_), fmt::format("[guest/{}]", pid_));
}

const std::string* Machine::intern(std::string_view s) {
  auto it = interned_.find(s);
  if (it != interned_.end()) return it->second;
  strings_.emplace_back(s);
  const std::string* p = &strings_.back();
  interned_.emplace(std::string_view(*p), p);
  return p;
}

void Machine::set_comm(Thread& t, std::string_view comm) {
  const std::string* c = intern(comm);
  if (!t.comm_set && t.comm && t.comm != c) {
    // Follow chains: what was renamed to t.comm earlier is renamed too.
    for (auto& [from, to] : renamed_)
      if (to == t.comm) to = c;
    renamed_[t.comm] = c;
  }
  t.comm = c;
  t.comm_set = true;
}

Thread& Machine::findnew_thread_slow(std::int32_t pid, std::int32_t tid) {
  auto it = threads_.find(tid);
  if (it != threads_.end()) {
    Thread& t = *it->second;
    if (pid != -1 && t.pid == -1 && pid != t.pid) {
      ++generation_;
      t.pid = pid;
      if (pid != tid) t.maps = findnew_thread(pid, pid).maps;
    }
    recent_[static_cast<std::uint32_t>(tid) % recent_.size()] = &t;
    return t;
  }
  ++generation_;
  auto t = std::make_unique<Thread>();
  t->pid = pid;
  t->tid = tid;
  t->comm = intern(fmt::format(":{}", tid));
  Thread* raw = t.get();
  threads_.emplace(tid, std::move(t));
  if (pid == tid || pid == -1)
    raw->maps = std::make_shared<MapSet>();
  else
    raw->maps = findnew_thread(pid, pid).maps;
  recent_[static_cast<std::uint32_t>(tid) % recent_.size()] = raw;
  return *raw;
}

std::vector<const Thread*> Machine::threads() const {
  std::vector<const Thread*> v;
  v.reserve(threads_.size());
  for (const auto& [tid, t] : threads_) v.push_back(t.get());
  std::sort(v.begin(), v.end(), [](const Thread* a, const Thread* b) { return a->tid < b->tid; });
  return v;
}

// Threads that leave the table stay alive: samples taken from them keep
// pointing at them (perf keeps a reference the same way).
void Machine::retire_thread(std::int32_t tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) return;
  retired_.push_back(std::move(it->second));
  threads_.erase(it);
  recent_[static_cast<std::uint32_t>(tid) % recent_.size()] = nullptr;
}

Dso& Machine::findnew_dso(std::string_view long_name, DsoKind kind) {
  auto it = dso_by_name_.find(std::string(long_name));
  if (it != dso_by_name_.end()) return *it->second;
  Dso& d = dsos_.emplace_back();
  d.index = static_cast<std::uint32_t>(dsos_.size() - 1);
  d.long_name = std::string(long_name);
  d.short_name = kind == DsoKind::kKernel ? d.long_name : short_name_of(long_name);
  d.kind = kind;
  dso_by_name_.emplace(d.long_name, &d);
  return d;
}

void Machine::add_build_id(std::string_view filename, const elf::BuildId& id, bool kernel) {
  ++generation_;
  DsoKind kind = kind_of(filename);
  // A kernel-space entry that is not a module (perf inject --vmlinux
  // writes the vmlinux's path) is the kernel when it comes first, as perf's
  // kernel MMAP takes the first such DSO; a "vmlinux" shows as
  // [kernel.vmlinux].
  if (kernel && kind == DsoKind::kUser) kind = kernel_dso_ ? DsoKind::kModule : DsoKind::kKernel;
  Dso& d = findnew_dso(filename, kind);
  if (kind == DsoKind::kKernel && !kernel_dso_) {
    kernel_dso_ = &d;
    if (filename.find("vmlinux") != std::string_view::npos) d.short_name = "[kernel.vmlinux]";
  }
  d.build_id = id;
  d.header_build_id = true;
}

void Machine::prefetch_kernel_symbols() {
  if (kernel_dso_ && kernel_dso_->header_build_id)
    symbolizer_.prefetch_kernel(kernel_dso_->build_id);
}

void Machine::kernel_mmap(std::uint64_t start, std::uint64_t len, std::uint64_t pgoff,
                          std::string_view filename, const elf::BuildId* bid) {
  Map m;
  m.start = start;
  m.end = start + len;
  if (m.end < start || len == 0) m.end = ~0ULL;
  // (perf compares the name without the closing bracket)
  if (filename.starts_with(std::string_view(kernel_name_).substr(0, kernel_name_.size() - 1))) {
    if (!kernel_dso_) kernel_dso_ = &findnew_dso(kernel_name_, DsoKind::kKernel);
    kernel_dso_->kernel_ref_reloc = pgoff;
    m.dso = kernel_dso_;
    m.identity = true;
  } else {
    DsoKind kind = filename.starts_with("/") ? DsoKind::kModule : kind_of(filename);
    if (kind == DsoKind::kUser) kind = DsoKind::kModule;
    Dso& d = findnew_dso(filename, kind);
    if (kind == DsoKind::kModule && filename.starts_with("/")) {
      std::string base = short_name_of(filename);
      base = base.substr(0, base.find('.'));
      std::replace(base.begin(), base.end(), '-', '_');
      d.short_name = "[" + base + "]";
    }
    m.dso = &d;
    m.pgoff = pgoff;
  }
  if (bid && m.dso) m.dso->build_id = *bid;
  kernel_maps_.insert(m);
  if (keep_history_) kernel_maps_.remember({m, time_, intern(filename)});
  // perf preloads the default guest's kernel at its MMAP (its map then
  // fits the symbols before any sample resolves)
  if (is_guest() && pid_ == 0 && m.dso == kernel_dso_ && !kernel_dso_->loaded) load(*kernel_dso_);
}

Status Machine::apply_mmap(const record::RecordView& r, std::uint64_t start, std::uint64_t len,
                           std::uint64_t pgoff, std::uint32_t pid, std::uint32_t tid,
                           std::string_view filename, std::uint32_t prot, std::uint32_t flags,
                           std::uint64_t ino, const elf::BuildId* bid, const Map* id) {
  std::uint16_t mode = r.cpumode();
  if (mode == kMiscKernel || mode == kMiscGuestKernel) {
    kernel_mmap(start, len, pgoff, filename, bid);
    return ok();
  }
  Thread& t = findnew_thread(static_cast<std::int32_t>(pid), static_cast<std::int32_t>(tid));
  bool anon = is_anon(filename), no_dso = is_no_dso(filename);
  std::string name(filename);
  if ((anon || no_dso) && (prot & kProtExec)) name = fmt::format("/tmp/perf-{}.map", t.pid);
  Map m;
  m.start = start;
  m.end = start + len;
  m.pgoff = pgoff;
  m.prot = prot;
  m.flags = flags;
  m.ino = ino;
  if (id) m.maj = id->maj, m.min = id->min, m.ino_generation = id->ino_generation;
  DsoKind kind = kind_of(name);
  if (kind == DsoKind::kVdso) m.pgoff = m.ino = 0;  // perf's vdso dso has no id
  m.dso = &findnew_dso(name, kind);
  m.identity = anon || no_dso;
  if (bid && !bid->empty()) m.dso->build_id = *bid;
  if (!m.dso->ino) m.dso->ino = m.ino;
  t.maps->insert(m);
  if (keep_history_) t.maps->remember({m, time_, intern(filename)});
  return ok();
}

// perf's thread__set_namespaces and perf_env__findnew_cgroup: what the
// cgroup and cgroup_id sort keys show.
Status Machine::apply_cgroup_info(const record::RecordView& r) {
  if (r.type == kRecordCgroup) {
    PK_ASSIGN(auto c, record::parse_cgroup(r));
    if (!cgroups_.count(c.id)) cgroups_.emplace(c.id, intern(c.path));
    return ok();
  }
  PK_ASSIGN(auto n, record::parse_namespaces(r));
  constexpr std::uint64_t kCgroupNsIndex = 6;  // perf's CGROUP_NS_INDEX
  Thread& t = findnew_thread(static_cast<std::int32_t>(n.pid), static_cast<std::int32_t>(n.tid));
  bool has = n.nr > kCgroupNsIndex;
  t.cgroup_ns_dev = has ? n.dev(kCgroupNsIndex) : 0;
  t.cgroup_ns_ino = has ? n.ino(kCgroupNsIndex) : 0;
  return ok();
}

std::vector<std::pair<std::int32_t, const MapSet*>> Machine::address_spaces() const {
  std::vector<std::pair<std::int32_t, const MapSet*>> out;
  std::unordered_set<const MapSet*> seen;
  auto add = [&](const Thread& t) {
    if (t.pid >= 0 && t.maps && seen.insert(t.maps.get()).second)
      out.emplace_back(t.pid, t.maps.get());
  };
  for (const auto& t : retired_) add(*t);
  for (const Thread* t : threads()) add(*t);
  return out;
}

Status Machine::apply(const record::RecordView& r, std::uint64_t time) {
  time_ = time;
  switch (r.type) {
    case kRecordMmap:
    case kRecordMmap2:
    case kRecordComm:
    case kRecordFork:
    case kRecordExit:
    case kRecordKsymbol:
      ++generation_;  // these change maps and threads; the other records do not
      break;
    case kRecordNamespaces:
    case kRecordCgroup:
      return apply_cgroup_info(r);
    default:
      return ok();
  }
  switch (r.type) {
    case kRecordMmap: {
      PK_ASSIGN(auto m, record::parse_mmap(r));
      std::uint32_t prot = (r.misc & kMiscMmapData) ? 0 : kProtExec;
      return apply_mmap(r, m.start, m.len, m.pgoff, m.pid, m.tid, m.filename, prot, 0, 0, nullptr);
    }
    case kRecordMmap2: {
      PK_ASSIGN(auto m, record::parse_mmap2(r));
      elf::BuildId bid;
      if (m.has_build_id)
        bid = elf::BuildId::from_bytes(
            m.build_id.subspan(0, std::min<std::size_t>(m.build_id_size, m.build_id.size())));
      std::uint32_t prot = m.prot;
      if (m.flags & kMapHugetlb) {
        // MAP_HUGETLB memory is anonymous for perf.
      }
      // perf reads the inode where the record has it, over a build-id too
      std::uint64_t ino = m.ino;
      if (m.has_build_id && m.build_id.size() >= 12) std::memcpy(&ino, m.build_id.data() + 4, 8);
      Map id;
      id.maj = m.maj, id.min = m.min, id.ino_generation = m.ino_generation;
      if (m.has_build_id && m.build_id.size() >= 20) {
        id.maj = m.build_id_size;  // (its size byte, then two reserved ones)
        std::memcpy(&id.min, m.build_id.data(), 4);
        std::memcpy(&id.ino_generation, m.build_id.data() + 12, 8);
      }
      return apply_mmap(r, m.start, m.len, m.pgoff, m.pid, m.tid, m.filename, prot, m.flags, ino,
                        m.has_build_id ? &bid : nullptr, &id);
    }
    case kRecordComm: {
      PK_ASSIGN(auto c, record::parse_comm(r));
      Thread& t =
          findnew_thread(static_cast<std::int32_t>(c.pid), static_cast<std::int32_t>(c.tid));
      set_comm(t, c.comm);
      return ok();
    }
    case kRecordFork: {
      PK_ASSIGN(auto f, record::parse_task(r));
      auto pid = static_cast<std::int32_t>(f.pid), tid = static_cast<std::int32_t>(f.tid);
      auto ppid = static_cast<std::int32_t>(f.ppid), ptid = static_cast<std::int32_t>(f.ptid);
      Thread* parent = &findnew_thread(ppid, ptid);
      if (parent->pid != ppid) {
        retire_thread(ptid);
        parent = &findnew_thread(ppid, ptid);
      }
      if (tid != ptid && threads_.count(tid)) retire_thread(tid);
      // findnew may have created the parent anew; keep a stable copy of what we need.
      bool parent_comm_set = parent->comm_set;
      const std::string* parent_comm = parent->comm;
      std::shared_ptr<MapSet> parent_maps = parent->maps;
      std::int32_t parent_pid = parent->pid;
      Thread& t = findnew_thread(pid, tid);
      if (parent_comm_set) {
        t.comm = parent_comm;
        t.comm_set = true;
      }
      t.ppid = ptid;
      if (t.pid != parent_pid && t.maps != parent_maps && !(r.misc & kMiscForkExec))
        *t.maps = *parent_maps;
      return ok();
    }
    case kRecordExit: {
      PK_ASSIGN(auto e, record::parse_task(r));
      auto it = threads_.find(static_cast<std::int32_t>(e.tid));
      if (it != threads_.end()) it->second->exited = true;
      return ok();
    }
    case kRecordKsymbol: {
      PK_ASSIGN(auto k, record::parse_ksymbol(r));
      constexpr std::uint16_t kUnregister = 1;
      if (k.flags & kUnregister) return ok();
      if (kernel_maps_.find(k.addr) && kernel_maps_.find(k.addr)->dso != kernel_dso_) return ok();
      Dso& d = findnew_dso(k.name, DsoKind::kKsym);
      auto table = std::make_shared<symbol::SymbolTable>();
      table->add(0, k.len, symbol::kBindGlobal, symbol::kTypeFunc, k.name);
      table->fixup(false);
      d.owned = table;
      d.symbols = table.get();
      d.loaded = true;
      Map m;
      m.start = k.addr;
      m.end = k.addr + k.len;
      m.dso = &d;
      kernel_maps_.insert(m);
      return ok();
    }
    default:
      return ok();
  }
}

void Machine::load(Dso& d) {
  d.loaded = true;
  const symbol::LoadedSymbols* ls = nullptr;
  switch (d.kind) {
    case DsoKind::kUser:
    case DsoKind::kModule:
    case DsoKind::kVdso:
      ls = &symbolizer_.user_dso(d.long_name, d.build_id);
      break;
    case DsoKind::kKernel:
      ls = &symbolizer_.kernel(d.build_id, d.kernel_ref_reloc);
      if (ls->found && ls->file != symbolizer_.options().vmlinux) fit_kernel_map(d, *ls->table);
      if (ls->found && ls->text_end > ls->text_start) {
        // perf's remap_kernel: the kernel's map is the vmlinux's .text
        ++generation_;
        for (Map& m : kernel_maps_.mutable_maps())
          if (m.dso == &d) m.start = ls->text_start, m.end = ls->text_end;
      }
      break;
    case DsoKind::kJitMap:
      ls = &symbolizer_.jit_map(d.long_name);
      break;
    default:
      return;
  }
  d.owned = ls->table;
  d.symbols = ls->table.get();
  d.origin = ls->found ? ls->origin : '!';
}

// perf's map__fixup_start/end after loading kallsyms: the kernel's map runs
// from its first symbol to the end of its last (module symbols, named
// "sym [module]", are not its own), so init text and data resolve too.
void Machine::fit_kernel_map(const Dso& d, const symbol::SymbolTable& table) {
  ++generation_;
  std::size_t n = table.size();
  while (n > 0 && table.name(n - 1).find('[') != std::string_view::npos) --n;
  if (n == 0) return;
  for (Map& m : kernel_maps_.mutable_maps()) {
    if (m.dso != &d) continue;
    m.start = table.at(0).start;
    m.end = table.at(n - 1).end;
  }
}

bool Machine::kernel_mode(std::uint8_t cpumode) const {
  return cpumode == kMiscKernel || (is_guest() && cpumode == kMiscGuestKernel);
}

bool Machine::user_mode(std::uint8_t cpumode) const {
  return cpumode == kMiscUser || (is_guest() && cpumode == kMiscGuestUser);
}

const Map* Machine::find_map(Thread& thread, std::uint8_t cpumode, std::uint64_t addr) {
  if (kernel_mode(cpumode)) {
    if (kernel_maps_.maps().empty() && !is_guest()) add_host_kernel_map();
    return kernel_maps_.find(addr);
  }
  if (user_mode(cpumode)) return thread.maps->find(addr);
  return nullptr;
}

Location Machine::resolve(Thread& thread, std::uint8_t cpumode, std::uint64_t addr,
                          bool defer_kernel) {
  Location loc;
  loc.addr = addr;
  const MapSet* maps;
  if (cpumode == kMiscKernel) {
    loc.level = kLevelKernel;
    loc.kernel_maps = true;
    maps = &kernel_maps_;
    if (kernel_maps_.maps().empty() && !is_guest()) add_host_kernel_map();
    if (defer_kernel && kernel_dso_ && !kernel_dso_->loaded) {
      // Loading refits the kernel's map: what is outside it may be inside.
      const Map* m = kernel_maps_.find(addr);
      if (!m || m->dso == kernel_dso_) {
        loc.dso = kernel_dso_;
        loc.symbol = kSymbolPending;
        return loc;
      }
    }
  } else if (cpumode == kMiscUser) {
    loc.level = kLevelUser;
    maps = thread.maps.get();
  } else if (kernel_mode(cpumode) || user_mode(cpumode)) {
    // A guest's own modes: the same maps at levels 'g' and 'u', not cached
    // (the cache would answer them with the other level).
    loc.kernel_maps = kernel_mode(cpumode);
    loc.level = loc.kernel_maps ? kLevelGuestKernel : kLevelGuestUser;
    return resolve_uncached(loc.kernel_maps ? kernel_maps_ : *thread.maps, loc, addr);
  } else {
    loc.level = kLevelHyper;
    return loc;
  }
  constexpr std::size_t kSlots = 8192;
  if (resolved_.empty()) resolved_.resize(kSlots);
  std::uint64_t h = (addr ^ (reinterpret_cast<std::uintptr_t>(maps) >> 4)) * 0x9e3779b97f4a7c15ULL;
  Resolved& slot = resolved_[(h >> 40) & (kSlots - 1)];
  if (slot.generation == generation_ && slot.maps == maps && slot.addr == addr) return slot.loc;
  const std::uint64_t generation = generation_;
  loc = resolve_uncached(*maps, loc, addr);
  if (generation == generation_) slot = Resolved{maps, addr, generation, loc};
  return loc;
}

Location Machine::resolve_uncached(const MapSet& maps, Location loc, std::uint64_t addr) {
  const Map* m = maps.find(addr);
  if (!m) return loc;
  loc.map = m;
  loc.dso = m->dso;
  if (!loc.dso->loaded) load(*loc.dso);
  loc.addr = m->map_ip(addr);
  if (loc.dso->symbols) loc.symbol = loc.dso->symbols->find(loc.addr);
  return loc;
}

std::pair<std::uint64_t, std::uint64_t> Machine::same_symbol_span(const Location& loc) const {
  if (!loc.map || loc.symbol < 0 || !loc.dso || !loc.dso->symbols) return {0, 0};
  const symbol::SymbolTable& syms = *loc.dso->symbols;
  const auto i = static_cast<std::size_t>(loc.symbol);
  const symbol::Symbol& s = syms.at(i);
  std::uint64_t end = s.end;
  if (i + 1 < syms.size()) end = std::min(end, syms.at(i + 1).start);
  // find() took this symbol as the closest start at or below addr only when
  // addr lies before the next one's start.
  if (loc.addr < s.start || loc.addr >= end) return {0, 0};
  const Map& m = *loc.map;
  std::uint64_t lo = std::max(m.unmap_ip(s.start), m.start);
  std::uint64_t hi = std::min(m.unmap_ip(end), m.end);
  if (lo >= hi) return {0, 0};
  return {lo, hi};
}

// Without a kernel MMAP in the recording perf maps the running kernel's
// text, _text to _etext, as [kernel.kallsyms].
void Machine::add_host_kernel_map() {
  ++generation_;
  if (!kernel_dso_) kernel_dso_ = &findnew_dso("[kernel.kallsyms]", DsoKind::kKernel);
  Map m;
  m.start = 0;
  m.end = ~0ULL;
  m.dso = kernel_dso_;
  m.identity = true;
  const std::string& path = symbolizer_.options().kallsyms.empty() ? std::string("/proc/kallsyms")
                                                                   : symbolizer_.options().kallsyms;
  if (auto text = read_text_file(path)) {
    const symbol::KernelText k = symbol::kernel_text(*text);
    if (k.text) m.start = k.text;
    if (k.etext > m.start) m.end = k.etext;
  }
  kernel_maps_.insert(m);
}

std::string_view Machine::symbol_name(const Location& loc) const {
  if (loc.symbol < 0 || !loc.dso || !loc.dso->symbols) return {};
  std::string_view n = loc.dso->symbols->name(static_cast<std::size_t>(loc.symbol));
  if (loc.dso->kind == DsoKind::kKernel) n = n.substr(0, n.find(' '));
  return n;
}

}  // namespace perfkit::machine
