// perf report --branch-history: each sample's branch stack (perf record -b,
// or Intel PT's --itrace=l) goes into its call chain before the recorded
// chain, as perf's thread__resolve_callchain_sample does with
// branch_callstack: newest branch first (oldest first in caller order),
// loops of the stack folded into iteration counts (perf's remove_loops), a
// target then a source per branch; the recorded chain follows, less the
// frames the branches overlap and, as perf's count goes, as many frames at
// its end as there were branches. The call graph then tells frames apart by
// address and names them with their source lines; with branch stacks
// each frame counts its branches (report_chain.h's BranchCounts).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "machine/machine.h"
#include "report/report_chain.h"
#include "session/session.h"

namespace perfkit::report {

// perf's counts_str_build: " (calltrace)" for a frame of no branch; a
// target's " (predicted:P% abort:A%)", a source's " (cycles:C iter:I
// avg_cycles:A)", each part only where it says something.
std::string_view branch_counts_text(const BranchCounts& c, char* buf, std::size_t cap);

class BranchHistory {
 public:
  // The frames of `s` (resolved in `m`) in the call chain's order;
  // `hide_unresolved` leaves out frames in no symbol. Valid until the next
  // call.
  std::span<const session::Frame> frames(machine::Machine& m, const session::ResolvedSample& s,
                                         bool caller_order, int max_stack, bool hide_unresolved);
  // The branch frames' descriptions, for ChainArena::set_branch_frames.
  std::span<const BranchFrame> branch_frames() const { return infos_; }
  // 1 + the index of frame `i`'s BranchFrame; 0 for a recorded frame.
  std::uint32_t branch_of(std::size_t i) const {
    return i < infos_.size() ? static_cast<std::uint32_t>(i + 1) : 0;
  }

 private:
  struct Iteration {
    std::uint32_t nr_loop_iter = 0;
    std::uint64_t cycles = 0;
  };
  void add_branches(machine::Machine& m, machine::Thread& t, bool hide_unresolved);
  void add_recorded(const session::ResolvedSample& s, std::size_t lo, std::size_t hi, bool reverse,
                    int max_stack, bool hide_unresolved);

  std::vector<record::BranchEntry> be_;
  std::vector<Iteration> iter_;
  std::vector<session::Frame> frames_;
  std::vector<BranchFrame> infos_;
  std::vector<std::size_t> raw_index_;  // the recorded frames' chain indexes, callee first
};

}  // namespace perfkit::report
