// perf report's branch-stack mode: with samples that carry branch stacks
// (perf record -b), each branch of a sample is an entry of its own with a
// period of 1, and the sort keys dso_from, dso_to, symbol_from, symbol_to
// and cycles describe its source and target (perf's default branch sort is
// comm,dso_from,symbol_from,symbol_to,cycles).
//
// A branch address is resolved as perf's ip__resolve_ams does: in the user
// maps, else the kernel's; an address neither holds is level 'H' with no
// map. Branches are interned: an entry keeps the index of its first
// branch's full description (for printing) and its key the index of the
// description reduced to the active branch keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/flat_map.h"
#include "machine/machine.h"
#include "report/branch_types.h"
#include "report/report.h"

namespace perfkit::report {

// One end (source or target) of a branch.
struct BranchEnd {
  const std::string* dso = nullptr;  // interned short name; nullptr: no map
  std::uint64_t addr = 0;            // as recorded
  std::uint64_t al_addr = 0;         // map-relative when mapped
  std::uint64_t sym_start = 0, sym_end = 0;
  std::uint64_t sym_start_abs = 0;  // unmapped symbol start (STT_OBJECT offsets)
  std::string_view sym_name;        // empty: no symbol
  std::uint8_t sym_type = 0;
  bool has_sym = false;
  char level = 'H';
  bool operator==(const BranchEnd& o) const {
    return dso == o.dso && addr == o.addr && al_addr == o.al_addr && sym_start == o.sym_start &&
           sym_end == o.sym_end && has_sym == o.has_sym && level == o.level;
  }
};

struct BranchInfo {
  BranchEnd from, to;
  std::uint16_t cycles = 0;
  std::uint8_t type = 0, new_type = 0;  // perf_branch_entry's type and new_type
  std::uint8_t flags = 0;               // perf_branch_entry's mispred, predicted, in_tx, abort bits
  // The ends' source lines (srcline_from, srcline_to keys; else null).
  const std::string* srcline_from = nullptr;
  const std::string* srcline_to = nullptr;
  bool operator==(const BranchInfo&) const = default;
};

struct BranchInfoHash {
  std::uint64_t operator()(const BranchInfo& b) const {
    auto end = [](std::uint64_t h, const BranchEnd& e) {
      h = mix64(h ^ reinterpret_cast<std::uintptr_t>(e.dso) ^ e.addr);
      return mix64(h ^ e.sym_start ^ (e.sym_end << 1) ^ static_cast<std::uint64_t>(e.level));
    };
    return end(end(b.cycles, b.from), b.to);
  }
};

// perf's thread__find_cpumode_addr_location (ip__resolve_ams): `addr` in
// the user maps, else the kernel's; neither: level 'H', no map. `loc` gets
// where it resolved (the last mode tried when none maps it).
BranchEnd resolve_branch_end(machine::Machine& m, machine::Thread& thread, std::uint64_t addr,
                             machine::Location& loc);
// Sets `e`'s map-relative address, DSO and symbol from where it resolved.
void fill_branch_end(machine::Machine& m, const machine::Location& loc, BranchEnd& e);
// perf's _sort__dso_cmp(left, right) of two ends' DSOs: a missing one first.
std::int64_t end_dso_cmp(const std::string* l, const std::string* r);

// Values interned by index: equal values share one.
template <class T, class Hash>
class Interned {
 public:
  std::uint32_t intern(const T& v) {
    std::uint32_t at = index_.find(v);
    if (at != FlatMap<T, Hash>::kNone) return at;
    items_.push_back(v);
    at = static_cast<std::uint32_t>(items_.size() - 1);
    index_.insert(v, at);
    return at;
  }
  const T& at(std::uint32_t i) const { return items_[i]; }

 private:
  std::vector<T> items_;
  FlatMap<T, Hash> index_;
};

bool is_branch_key(SortKey k);
const char* branch_key_name(SortKey k);

class BranchTable {
 public:
  // The branch keys among `sort` decide what an entry's key keeps.
  void setup(const std::vector<SortKey>& sort);
  // Resolves branch `from` -> `to` in `thread` as perf does; `to_loc`
  // gets where the target resolved (the last mode tried when none maps it).
  BranchInfo resolve(machine::Machine& m, machine::Thread& thread, std::uint64_t from,
                     std::uint64_t to, std::uint64_t flags, machine::Location& to_loc,
                     machine::Location* from_loc = nullptr);
  // The interned index of `b`, and of `b` reduced to the active keys.
  std::uint32_t full(const BranchInfo& b) { return infos_.intern(b); }
  std::uint32_t key(const BranchInfo& b);
  const BranchInfo& at(std::uint32_t i) const { return infos_.at(i); }
  // Whether the srcline_from (srcline_to) key wants the ends' source lines.
  bool srcline_from() const { return srcline_from_; }
  bool srcline_to() const { return srcline_to_; }

 private:
  bool dso_from_ = false, dso_to_ = false, sym_from_ = false, sym_to_ = false, cycles_ = false;
  bool addr_from_ = false, addr_to_ = false, srcline_from_ = false, srcline_to_ = false;
  std::uint8_t flag_mask_ = 0;  // the flag bits mispredict, in_tx and abort compare
  Interned<BranchInfo, BranchInfoHash> infos_;
};

// perf's se_cmp of branch key `k` (left, right), with perf's signs.
std::int64_t branch_se_cmp(SortKey k, const BranchInfo& l, const BranchInfo& r);

}  // namespace perfkit::report
