// perf report --total-cycles: with branch stacks that carry cycles (LBR),
// the cycles of each basic block (from the previous branch's target to a
// branch's source, within one function) summed over the samples, as perf's
// hist__account_cycles and block-info.c do, then listed hottest first:
// "Sampled Cycles%" (of every branch's cycles), "Sampled Cycles", "Avg
// Cycles%" (of the sum of the blocks' averages), "Avg Cycles", the block's
// source lines (or offsets) and its DSO.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/flat_map.h"
#include "base/output.h"
#include "machine/machine.h"
#include "report/report_branch.h"

namespace perfkit::report {

class ExtKeys;

class CycleBlocks {
 public:
  // One branch of a sample's stack, newest first (perf's order).
  struct Branch {
    BranchInfo info;
    machine::Location from;  // where the source resolved
  };
  // perf's hist__account_cycles for one sample's stack (nothing unless its
  // newest branch has cycles); `any_branch`: branch_sample_type has ANY
  // (else blocks have no start).
  void account(const std::vector<Branch>& stack, bool any_branch);
  // perf's block_info__process_sym for each entry's symbol (`ends`: the
  // targets of the entries, in the report's order), then the table.
  void print(const std::vector<const BranchEnd*>& ends, ExtKeys& lines, FdWriter& out) const;

 private:
  // perf's cyc_hist, per offset in a symbol.
  struct CycHist {
    std::uint64_t start = 0, cycles = 0, cycles_aggr = 0;
    std::uint32_t num = 0, num_aggr = 0, have_start = 0, reset = 0;
    std::uint64_t cycles_max = 0, cycles_min = 0;
  };
  struct SymbolHist {
    machine::Location loc;  // the symbol, for its source lines
    std::string_view name;
    const std::string* dso = nullptr;
    std::uint64_t start = 0;    // the symbol's start (map-relative)
    std::vector<CycHist> hist;  // by offset
  };
  SymbolHist* symbol_hist(const BranchEnd& e, const machine::Location& loc);
  void account_one(const BranchEnd& ams, const machine::Location& loc, const BranchEnd* start,
                   std::uint16_t cycles);
  // A symbol: its DSO's name and start.
  struct SymKey {
    const std::string* dso = nullptr;
    std::uint64_t start = 0;
    bool operator==(const SymKey&) const = default;
  };
  struct SymKeyHash {
    std::uint64_t operator()(const SymKey& k) const {
      return mix64(reinterpret_cast<std::uintptr_t>(k.dso) ^ mix64(k.start));
    }
  };
  FlatMap<SymKey, SymKeyHash> index_;  // -> syms_
  std::vector<SymbolHist> syms_;
  std::uint64_t total_cycles_ = 0;
};

}  // namespace perfkit::report
