// PERF_SAMPLE_DATA_SRC (union perf_mem_data_src) decoded into the words
// perf 6.1's perf_mem__*_scnprintf use: the memory operation, level, snoop,
// TLB, lock and block parts that perf script's data_src field and perf
// report's --mem-mode columns print.
#pragma once

#include <cstdint>
#include <string>

namespace perfkit::record {

// perf's PERF_MEM_DATA_SRC_NONE: what a sample without DATA_SRC counts as
// (operation, level, snoop, lock and TLB "not available").
inline constexpr std::uint64_t kDataSrcNone = 0x5080021;

// The bit fields of union perf_mem_data_src.
struct DataSrc {
  std::uint64_t v = 0;
  std::uint64_t bits(unsigned at, unsigned n) const { return (v >> at) & ((1ULL << n) - 1); }
  std::uint64_t op() const { return bits(0, 5); }
  std::uint64_t lvl() const { return bits(5, 14); }
  std::uint64_t snoop() const { return bits(19, 5); }
  std::uint64_t lock() const { return bits(24, 2); }
  std::uint64_t dtlb() const { return bits(26, 7); }
  std::uint64_t lvl_num() const { return bits(33, 4); }
  std::uint64_t remote() const { return bits(37, 1); }
  std::uint64_t snoopx() const { return bits(38, 2); }
  std::uint64_t blk() const { return bits(40, 3); }
  std::uint64_t hops() const { return bits(43, 3); }
};

// Each appends perf's words for one part to `out`:
void append_mem_op(std::string& out, DataSrc d);     // "LOAD", "STORE", ... "N/A"
void append_mem_lvl(std::string& out, DataSrc d);    // "L1 hit", "N/A or N/A", ...
void append_mem_snoop(std::string& out, DataSrc d);  // "None", "HitM", ...
void append_mem_tlb(std::string& out, DataSrc d);    // "L1 or L2 hit", ...
void append_mem_lock(std::string& out, DataSrc d);   // "N/A", "Yes", "No"
void append_mem_blk(std::string& out, DataSrc d);    // " N/A", " Data", " Addr"

}  // namespace perfkit::record
