// perf's branch type statistics (util/branch.c): what report's branch mode
// sums up at its end and --branch-history prints after each branch target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace perfkit::report {

// perf's branch_type_stat: branches by type (PERF_BR_*; new_type for
// PERF_BR_EXTEND_ABI), conditional ones by direction, and those that
// cross a 4K page or a 2M area.
struct BranchTypeStat {
  static constexpr int kTypes = 16, kNewTypes = 8;
  std::uint32_t counts[kTypes] = {}, new_counts[kNewTypes] = {};
  std::uint32_t cond_fwd = 0, cond_bwd = 0, cross_4k = 0, cross_2m = 0;
  // perf's branch_type_count: nothing for an unknown type or source 0.
  void count(std::uint8_t type, std::uint8_t new_type, std::uint64_t from, std::uint64_t to);
};
// perf's branch_type_str: " (COND_BWD CALL CROSS_4K" (no closing
// parenthesis), empty when nothing was counted. Returns its length.
int branch_type_text(const BranchTypeStat& st, char* buf, std::size_t cap);
// perf's branch_type_stat_display: "\n#\n# Branch Statistics:\n#" and a
// line per kind, each after a newline (none at the end); "" when none.
std::string branch_type_statistics(const BranchTypeStat& st);

}  // namespace perfkit::report
