// perf report --hierarchy: the entries grouped by the first sort key, each
// group split by the next key, and so on down to the entries themselves.
// Each node sums its entries' counts; siblings are in perf's output order
// (the overhead columns, then the sort keys' comparisons).
#pragma once

#include <cstdint>
#include <vector>

#include "report/report_impl.h"

namespace perfkit::report {

struct HierarchyNode {
  Entry sum;                // the group's first entry (for its keys), the group's counts
  std::uint32_t depth = 0;  // its sort key's position
  std::uint32_t entry = 0;  // the group's first entry in Hists::entries (a leaf's chain)
  std::vector<std::uint32_t> children;  // output order
  bool hidden = false;                  // perf's filters hide it (and what is under it)
};

struct Hierarchy {
  std::vector<SortKey> levels;  // the sort keys, one per depth
  std::vector<HierarchyNode> nodes;
  std::vector<std::uint32_t> roots;  // output order
};

// The hierarchy of every entry of `h` (Hists::collapsed). Each node counts
// all of its entries; --comm, --dsos and --symbols hide the nodes of their
// key's level that they reject, the nodes above with nothing kept below,
// and the nodes under a hidden one (everything when no level has their
// key), as perf's hierarchy filters do. With an event group, each node's
// member values are rows appended to h.group_values.
Hierarchy build_hierarchy(const Report& r, Hists& h);

}  // namespace perfkit::report
