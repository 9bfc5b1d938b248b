#include "report/report_mem.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <utility>

#include "abi/perf_event.h"
#include "record/data_src.h"
#include "record/sample.h"
#include "report/report_cells.h"

namespace perfkit::report {

namespace {

// perf's hists__new_col_len: widths never shrink.
void widen(std::size_t& width, std::size_t w) { width = std::max(width, w); }

// unresolved_col_width + 4 + 2: "[x] " and an address of 16 digits with "0x".
constexpr std::size_t kUnresolvedSymWidth = 16 + 4 + 2;

// The parts of data_src perf's comparisons read.
std::int64_t part(SortKey k, std::uint64_t data_src) {
  const record::DataSrc d{data_src};
  switch (k) {
    case SortKey::kLocked:
      return static_cast<std::int64_t>(d.lock());
    case SortKey::kTlb:
      return static_cast<std::int64_t>(d.dtlb());
    case SortKey::kMem:
      return static_cast<std::int64_t>(d.lvl());
    case SortKey::kSnoop:
      return static_cast<std::int64_t>(d.snoop());
    case SortKey::kBlocked:
      return static_cast<std::int64_t>(d.blk());
    default:
      return 0;
  }
}

// The bits of data_src that key `k` compares.
std::uint64_t part_mask(SortKey k) {
  switch (k) {
    case SortKey::kLocked:
      return 0x3ULL << 24;
    case SortKey::kTlb:
      return 0x7fULL << 26;
    case SortKey::kMem:
      return 0x3fffULL << 5;
    case SortKey::kSnoop:
      return 0x1fULL << 19;
    case SortKey::kBlocked:
      return 0x7ULL << 40;
    default:
      return 0;
  }
}

// The data address's end as perf's ip__resolve_data makes it: looked up in
// the maps of the sample's cpumode only.
BranchEnd data_end(machine::Machine& m, machine::Thread& thread, std::uint8_t cpumode,
                   std::uint64_t addr, machine::Location& loc) {
  BranchEnd e;
  e.addr = e.al_addr = addr;
  loc = m.resolve(thread, cpumode, addr);
  e.level = loc.level;
  fill_branch_end(m, loc, e);
  return e;
}

// perf's dcacheline test for user-space anonymous memory (no dso id, not
// shared): its cache lines are told apart by process too.
bool anon_user_data(const MemInfo& m) {
  constexpr std::uint32_t kMapShared = 0x01;
  return m.daddr_map && m.cpumode != abi::kMiscKernel && !(m.map_flags & kMapShared) && !m.maj &&
         !m.min && !m.ino && !m.ino_generation;
}

// perf's sort__dcacheline_cmp: cpumode, then the maps' dso ids, the
// process for anonymous memory, then the cache line (each larger first).
std::int64_t dcacheline_cmp(const MemInfo& l, const MemInfo& r) {
  auto desc = [](std::uint64_t a, std::uint64_t b) -> std::int64_t {
    return a > b ? -1 : a < b ? 1 : 0;
  };
  if (std::int64_t c = desc(l.cpumode, r.cpumode)) return c;
  if (l.daddr_map || r.daddr_map) {
    if (!l.daddr_map) return -1;
    if (!r.daddr_map) return 1;
    for (auto [a, b] : {std::pair<std::uint64_t, std::uint64_t>{l.maj, r.maj},
                        {l.min, r.min},
                        {l.ino, r.ino},
                        {l.ino_generation, r.ino_generation}})
      if (std::int64_t c = desc(a, b)) return c;
    if (anon_user_data(l))
      if (std::int64_t c =
              desc(static_cast<std::uint64_t>(l.pid), static_cast<std::uint64_t>(r.pid)))
        return c;
  }
  return desc(l.cacheline, r.cacheline);
}

}  // namespace

std::string page_size_name(std::uint64_t size) {
  if (!size) return "N/A";
  static const char kUnits[] = "BKMGTPE";
  std::size_t i = 0;
  while (size / 1024 > 1 && i < 6) size /= 1024, ++i;
  return std::to_string(size) + kUnits[i];
}

bool is_mem_key(SortKey k) { return k >= SortKey::kSymDaddr && k <= SortKey::kDataPageSize; }

bool is_weight_key(SortKey k) { return k >= SortKey::kLocalWeight && k <= SortKey::kInsLat; }

const char* mem_key_name(SortKey k) {
  switch (k) {
    case SortKey::kSymDaddr:
      return "symbol_daddr";
    case SortKey::kSymIaddr:
      return "symbol_iaddr";
    case SortKey::kDsoDaddr:
      return "dso_daddr";
    case SortKey::kLocked:
      return "locked";
    case SortKey::kTlb:
      return "tlb";
    case SortKey::kMem:
      return "mem";
    case SortKey::kSnoop:
      return "snoop";
    case SortKey::kBlocked:
      return "blocked";
    case SortKey::kPhysDaddr:
      return "phys_daddr";
    case SortKey::kDataPageSize:
      return "data_page_size";
    case SortKey::kDcacheline:
      return "dcacheline";
    default:
      return "?";
  }
}

std::vector<SortKey> default_mem_sort() {
  return {SortKey::kLocalWeight, SortKey::kMem,      SortKey::kSym,        SortKey::kDso,
          SortKey::kSymDaddr,    SortKey::kDsoDaddr, SortKey::kSnoop,      SortKey::kTlb,
          SortKey::kLocked,      SortKey::kBlocked,  SortKey::kLocalInsLat};
}

void MemTable::setup(const std::vector<SortKey>& sort) {
  keys_.clear();
  if (const long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE); line > 0)
    cacheline_size_ = static_cast<std::uint64_t>(line);
  for (SortKey k : sort)
    if (is_mem_key(k)) keys_.push_back(k);
}

MemInfo MemTable::resolve(machine::Machine& m, machine::Thread& thread, std::uint8_t cpumode,
                          const record::Sample& smp) {
  MemInfo mi;
  machine::Location loc;
  mi.iaddr = resolve_branch_end(m, thread, smp.ip, loc);
  machine::Location data;
  mi.daddr =
      data_end(m, thread, cpumode, (smp.sample_type & abi::kSampleAddr) ? smp.addr : 0, data);
  mi.cpumode = cpumode;
  mi.pid = thread.pid;
  mi.cacheline = mi.daddr.al_addr & ~(cacheline_size_ - 1);
  if (const machine::Map* map = data.map) {
    mi.daddr_map = true;
    mi.map_flags = map->flags, mi.map_prot = map->prot;
    mi.maj = map->maj, mi.min = map->min, mi.ino = map->ino,
    mi.ino_generation = map->ino_generation;
  }
  // perf's PERF_MEM_DATA_SRC_NONE for samples without DATA_SRC
  mi.data_src = (smp.sample_type & abi::kSampleDataSrc) ? smp.data_src : record::kDataSrcNone;
  mi.phys_addr = smp.phys_addr;
  mi.data_page_size = smp.data_page_size;
  return mi;
}

std::uint32_t MemTable::key(const MemInfo& mi) {
  // What perf's comparisons of the active keys read, the rest left out.
  MemInfo k;
  k.iaddr.level = k.daddr.level = 0;
  for (SortKey s : keys_) {
    switch (s) {
      case SortKey::kSymDaddr:
        k.daddr.addr = mi.daddr.addr;
        break;
      case SortKey::kSymIaddr:
        k.iaddr.addr = mi.iaddr.addr;
        break;
      case SortKey::kDsoDaddr:
        k.daddr.dso = mi.daddr.dso;
        break;
      case SortKey::kPhysDaddr:
        k.phys_addr = mi.phys_addr;
        break;
      case SortKey::kDataPageSize:
        k.data_page_size = mi.data_page_size;
        break;
      case SortKey::kDcacheline:
        k.cpumode = mi.cpumode, k.daddr_map = mi.daddr_map, k.cacheline = mi.cacheline;
        k.maj = mi.maj, k.min = mi.min, k.ino = mi.ino, k.ino_generation = mi.ino_generation;
        if (anon_user_data(mi)) k.pid = mi.pid, k.map_flags = mi.map_flags;
        break;
      default:
        k.data_src |= mi.data_src & part_mask(s);
        break;
    }
  }
  return infos_.intern(k);
}

std::int64_t mem_se_cmp(SortKey k, const MemInfo& l, const MemInfo& r) {
  if (k == SortKey::kDcacheline) return dcacheline_cmp(l, r);
  switch (k) {
    case SortKey::kSymDaddr:
      return static_cast<std::int64_t>(r.daddr.addr - l.daddr.addr);
    case SortKey::kSymIaddr:
      return static_cast<std::int64_t>(r.iaddr.addr - l.iaddr.addr);
    case SortKey::kDsoDaddr:
      return end_dso_cmp(l.daddr.dso, r.daddr.dso);
    case SortKey::kPhysDaddr:
      return static_cast<std::int64_t>(r.phys_addr - l.phys_addr);
    case SortKey::kDataPageSize:
      return static_cast<std::int64_t>(r.data_page_size - l.data_page_size);
    default:
      return part(k, r.data_src) - part(k, l.data_src);
  }
}

int mem_cell(char* buf, std::size_t cap, SortKey k, const MemInfo* mi, std::uint64_t weight,
             std::uint32_t ins_lat, std::uint64_t nr_events, char level, int w) {
  switch (k) {
    case SortKey::kLocalWeight:
      return std::snprintf(buf, cap, "%-*" PRIu64, w, weight);
    case SortKey::kWeight:
      return std::snprintf(buf, cap, "%-*" PRIu64, w, weight * nr_events);
    case SortKey::kLocalInsLat:
      return std::snprintf(buf, cap, "%-*u", w, ins_lat);
    case SortKey::kInsLat:
      return std::snprintf(buf, cap, "%-*" PRIu64, w, ins_lat * nr_events);
    default:
      break;
  }
  if (!mi) return std::snprintf(buf, cap, "%-*s", w, "N/A");
  const BranchEnd& end = k == SortKey::kSymIaddr ? mi->iaddr : mi->daddr;
  if (k == SortKey::kDcacheline) {
    // [s]: a shared data mapping of a file; [X]: no map
    constexpr std::uint32_t kMapShared = 0x01, kProtExec = 4;
    if (!mi->daddr_map)
      level = 'X';
    else if (mi->cpumode != abi::kMiscKernel && !(mi->map_prot & kProtExec) &&
             (mi->map_flags & kMapShared) && (mi->maj || mi->min || mi->ino || mi->ino_generation))
      level = 's';
    return sym_cell(buf, cap, level, end.has_sym ? end.sym_name : std::string_view(), end.sym_type,
                    false, mi->cacheline, end.sym_start_abs, w);
  }
  switch (k) {
    case SortKey::kSymDaddr:
    case SortKey::kSymIaddr:
      return sym_cell(buf, cap, level, end.has_sym ? end.sym_name : std::string_view(),
                      end.sym_type, false, end.addr, end.sym_start_abs, w);
    case SortKey::kDsoDaddr:
      return put_left(buf, cap, end.dso ? std::string_view(*end.dso) : "[unknown]", w);
    case SortKey::kPhysDaddr: {
      int n = std::snprintf(buf, cap, "[%c] %-#.*" PRIx64, level, 16, mi->phys_addr);
      if (n >= 0 && n < w && static_cast<std::size_t>(w) < cap)
        n += std::snprintf(buf + n, cap - static_cast<std::size_t>(n), "%-*s", w - n, "");
      return n;
    }
    case SortKey::kDataPageSize:
      return std::snprintf(buf, cap, "%-*s", w, page_size_name(mi->data_page_size).c_str());
    default:
      break;
  }
  std::string text;
  const record::DataSrc d{mi->data_src};
  switch (k) {
    case SortKey::kLocked:
      record::append_mem_lock(text, d);
      break;
    case SortKey::kTlb:
      record::append_mem_tlb(text, d);
      break;
    case SortKey::kMem:
      record::append_mem_lvl(text, d);
      break;
    case SortKey::kSnoop:
      record::append_mem_snoop(text, d);
      break;
    case SortKey::kBlocked:
      record::append_mem_blk(text, d);
      break;
    default:
      break;
  }
  return std::snprintf(buf, cap, "%-*s", w, text.c_str());
}

void mem_width(SortKey k, const MemInfo* mi, bool dso_list, std::size_t& width) {
  switch (k) {
    case SortKey::kSymDaddr:
    case SortKey::kSymIaddr: {
      const BranchEnd* end = mi ? (k == SortKey::kSymIaddr ? &mi->iaddr : &mi->daddr) : nullptr;
      widen(width, end && end->has_sym ? end->sym_name.size() + 4 + 16 + 2 : kUnresolvedSymWidth);
      break;
    }
    case SortKey::kDsoDaddr:
      if (mi && mi->daddr.dso)
        widen(width, mi->daddr.dso->size());
      else if (!dso_list)
        widen(width, 16);
      break;
    case SortKey::kPhysDaddr:
    case SortKey::kDataPageSize:
      if (mi) widen(width, kUnresolvedSymWidth);
      break;
    case SortKey::kDcacheline:
      widen(width, mi && mi->daddr.has_sym ? mi->daddr.sym_name.size() + 4 + 16 + 2 + 1
                                           : kUnresolvedSymWidth);
      break;
    case SortKey::kLocked:
      widen(width, 6);
      break;
    case SortKey::kTlb:
      widen(width, 22);
      break;
    case SortKey::kSnoop:
      widen(width, 12);
      break;
    case SortKey::kMem:
      widen(width, 21 + 3);
      break;
    case SortKey::kLocalWeight:
    case SortKey::kWeight:
      widen(width, 12);
      break;
    case SortKey::kBlocked:
      widen(width, 10);
      break;
    case SortKey::kLocalInsLat:
    case SortKey::kInsLat:
      widen(width, 13);
      break;
    default:
      break;
  }
}

}  // namespace perfkit::report
