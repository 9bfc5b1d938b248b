// perf report's memory mode (--mem-mode): with samples of `perf record -d`
// each sample is an entry whose period is its weight (1 when the weight is
// 0), told apart by the data address's symbol and DSO, the sampled ip's
// symbol and the parts of PERF_SAMPLE_DATA_SRC (perf's default mem sort is
// local_weight,mem,sym,dso,symbol_daddr,dso_daddr,snoop,tlb,locked,blocked,
// local_ins_lat). The sample's weights are keys in any mode.
//
// The data address resolves as perf's ip__resolve_data: in the maps of the
// sample's cpumode (data maps included: perf record -d records them); the
// sampled ip as a branch end (user maps, then the kernel's). Memory
// descriptions are interned as branches are (report_branch.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/flat_map.h"
#include "report/report_branch.h"

namespace perfkit::record {
struct Sample;
}

namespace perfkit::report {

struct MemInfo {
  BranchEnd iaddr, daddr;
  std::uint64_t data_src = 0, phys_addr = 0, data_page_size = 0;
  // What perf's dcacheline key reads: the sample's cpumode and process, the
  // data address's map (its flags, protection and dso id) and cache line.
  std::uint8_t cpumode = 0;
  bool daddr_map = false;
  std::int32_t pid = 0;
  std::uint32_t map_flags = 0, map_prot = 0, maj = 0, min = 0;
  std::uint64_t ino = 0, ino_generation = 0, cacheline = 0;
  bool operator==(const MemInfo&) const = default;
};

struct MemInfoHash {
  std::uint64_t operator()(const MemInfo& m) const {
    std::uint64_t h = mix64(m.iaddr.addr ^ reinterpret_cast<std::uintptr_t>(m.iaddr.dso));
    h = mix64(h ^ m.daddr.addr ^ reinterpret_cast<std::uintptr_t>(m.daddr.dso));
    h = mix64(h ^ m.data_src ^ (m.daddr.sym_start << 1));
    h = mix64(h ^ m.cacheline ^ (static_cast<std::uint64_t>(m.pid) << 40) ^ m.ino);
    return mix64(h ^ m.phys_addr ^ (m.data_page_size << 7));
  }
};

// The memory keys, valid in --mem-mode only.
bool is_mem_key(SortKey k);
// The weight keys (local_weight, weight, local_ins_lat, ins_lat).
bool is_weight_key(SortKey k);
// A key's --sort name, for perf's errors.
const char* mem_key_name(SortKey k);
// perf's get_page_size_name: "4K", "2M"; "N/A" for 0.
std::string page_size_name(std::uint64_t size);
// perf's default sort in memory mode (the pipeline-stage keys, which only
// powerpc's perf has, left out).
std::vector<SortKey> default_mem_sort();
// The default's text, as perf's "# Sort order" line gives it.
inline constexpr const char* kDefaultMemSortText =
    "local_weight,mem,sym,dso,symbol_daddr,dso_daddr,snoop,tlb,locked,blocked,local_ins_lat,"
    "local_p_stage_cyc";

class MemTable {
 public:
  // The memory keys among `sort` decide what an entry's key keeps.
  void setup(const std::vector<SortKey>& sort);
  // The memory description of sample `smp` (ip and data address resolved
  // in `thread` as perf does; `cpumode` the sample's).
  MemInfo resolve(machine::Machine& m, machine::Thread& thread, std::uint8_t cpumode,
                  const record::Sample& smp);
  std::uint32_t full(const MemInfo& mi) { return infos_.intern(mi); }
  // The interned index of `mi` reduced to the active keys.
  std::uint32_t key(const MemInfo& mi);
  const MemInfo& at(std::uint32_t i) const { return infos_.at(i); }

 private:
  std::vector<SortKey> keys_;
  std::uint64_t cacheline_size_ = 64;  // perf's cacheline_size(): this machine's
  Interned<MemInfo, MemInfoHash> infos_;
};

// perf's se_cmp of memory key `k` (left, right), with perf's signs.
std::int64_t mem_se_cmp(SortKey k, const MemInfo& l, const MemInfo& r);

// The cell of memory or weight key `k` as perf's se_snprintf writes it
// (`level`: the entry's; `nr_events`: its samples, for the global
// weights). Returns the untruncated length, as snprintf.
int mem_cell(char* buf, std::size_t cap, SortKey k, const MemInfo* mi, std::uint64_t weight,
             std::uint32_t ins_lat, std::uint64_t nr_events, char level, int w);
// perf's hists__calc_col_len for memory and weight key `k`: `width` grows
// to what the entry needs (`dso_list`: -d was given, which keeps an
// unresolved data object's column narrow).
void mem_width(SortKey k, const MemInfo* mi, bool dso_list, std::size_t& width);

}  // namespace perfkit::report
