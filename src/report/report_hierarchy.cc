#include "report/report_hierarchy.h"

#include <algorithm>
#include <span>
#include <unordered_map>

namespace perfkit::report {

namespace {

// Whether entries `a` and `b` have the same value of sort key `k` (what
// perf's collapse compares at that level).
bool same_value(const Report& r, SortKey k, const Entry& a, const Entry& b) {
  switch (k) {
    case SortKey::kComm:
      return a.comm == b.comm;
    case SortKey::kPid:
      return a.tid == b.tid;
    case SortKey::kDso:
      return a.key.dso == b.key.dso;
    case SortKey::kCpu:
      return a.cpu == b.cpu;
    case SortKey::kSym:
    case SortKey::kIpcLbr:
    case SortKey::kIpcNull:
      return a.key.has_sym == b.key.has_sym && a.key.sym_start == b.key.sym_start &&
             a.key.sym_end == b.key.sym_end && a.key.inlined == b.key.inlined &&
             a.dso_name == b.dso_name && (a.key.has_sym || a.ip == b.ip);
    case SortKey::kSymoff:
      return same_value(r, SortKey::kSym, a, b) &&
             compare_keys(r, std::span<const SortKey>(&k, 1), a, b) == 0;
    default:
      return compare_keys(r, std::span<const SortKey>(&k, 1), a, b) == 0;
  }
}

// A hash of what same_value compares (ext keys by their interned record).
std::uint64_t value_hash(SortKey k, const Entry& e) {
  switch (k) {
    case SortKey::kComm:
      return reinterpret_cast<std::uintptr_t>(e.comm);
    case SortKey::kPid:
      return static_cast<std::uint32_t>(e.tid);
    case SortKey::kDso:
      return reinterpret_cast<std::uintptr_t>(e.key.dso);
    case SortKey::kCpu:
      return e.cpu;
    case SortKey::kSym:
    case SortKey::kSymoff:
    case SortKey::kIpcLbr:
    case SortKey::kIpcNull:
      return mix64(e.key.has_sym ? e.key.sym_start : e.ip) ^
             reinterpret_cast<std::uintptr_t>(e.dso_name);
    default:
      return 0;  // the less common keys: compared in full
  }
}

// perf's filter types that its hierarchy applies level by level.
enum FilterType { kThread, kDsoFilter, kSymbolFilter, kFilterTypes };

// Whether a level of key `k` is the level of filter `type` (perf's
// check_thread_entry, perf_hpp__is_dso_entry, perf_hpp__is_sym_entry).
bool filter_level(int type, SortKey k) {
  switch (type) {
    case kThread:
      return k == SortKey::kComm || k == SortKey::kPid;
    case kDsoFilter:
      return k == SortKey::kDso;
    default:
      return k == SortKey::kSym;
  }
}

// Which of perf's hierarchy filters reject entry `e` (bit per FilterType);
// bit kFilterTypes: filtered for another reason (-x, --symbol-filter...).
unsigned filter_bits(const Report& r, const Entry& e) {
  const ReportOptions& o = r.opts_;
  auto in = [](const auto& list, const auto& v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };
  unsigned bits = 0;
  if ((!o.comms.empty() && !in(o.comms, *e.comm)) ||
      (!o.pids.empty() && !in(o.pids, e.thread->pid)) || (!o.tids.empty() && !in(o.tids, e.tid)))
    bits |= 1u << kThread;
  if (!o.dsos.empty() && !(e.dso_name && in(o.dsos, *e.dso_name))) bits |= 1u << kDsoFilter;
  if (!o.symbols.empty() && !(!e.sym_name.empty() && in(o.symbols, e.sym_name)))
    bits |= 1u << kSymbolFilter;
  if (e.filtered && !bits) bits |= 1u << kFilterTypes;
  return bits;
}

bool filter_active(const Report& r, int type) {
  const ReportOptions& o = r.opts_;
  switch (type) {
    case kThread:
      return !o.comms.empty() || !o.pids.empty() || !o.tids.empty();
    case kDsoFilter:
      return !o.dsos.empty();
    default:
      return !o.symbols.empty();
  }
}

// Marks the nodes perf's hierarchy filters hide, from each node's first
// entry's bits (`bits`): a node at its filter's level shows when its entry
// passes (and the nodes of that level above it show), a node above the
// filter's levels when something under it shows, a node below as the
// node above it; with no level of the filter's key nothing shows.
void apply_filters(const Report& r, Hierarchy& t, const std::vector<unsigned>& bits) {
  std::vector<std::uint32_t> order, stack(t.roots.rbegin(), t.roots.rend());
  std::vector<std::uint32_t> parent(t.nodes.size(), UINT32_MAX);
  while (!stack.empty()) {  // parents before their children
    const std::uint32_t n = stack.back();
    stack.pop_back();
    order.push_back(n);
    const auto& kids = t.nodes[n].children;
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) parent[*it] = n, stack.push_back(*it);
  }
  for (std::uint32_t n : order) t.nodes[n].hidden = (bits[n] >> kFilterTypes) & 1u;
  for (int type = 0; type < kFilterTypes; ++type) {
    if (!filter_active(r, type)) continue;
    std::int64_t deepest = -1;
    for (std::size_t d = 0; d < t.levels.size(); ++d)
      if (filter_level(type, t.levels[d])) deepest = static_cast<std::int64_t>(d);
    std::vector<char> kept(t.nodes.size(), 0);
    for (std::uint32_t n : order) {
      if (deepest < 0) break;  // no level of the filter's key: none kept
      const bool above = parent[n] == UINT32_MAX || kept[parent[n]];
      const bool own = filter_level(type, t.levels[t.nodes[n].depth]);
      kept[n] = above && !(own && ((bits[n] >> type) & 1u));
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (static_cast<std::int64_t>(t.nodes[*it].depth) >= deepest) continue;
      bool below = false;
      for (std::uint32_t c : t.nodes[*it].children) below = below || kept[c];
      kept[*it] = kept[*it] && below;
    }
    for (std::uint32_t n : order) t.nodes[n].hidden = t.nodes[n].hidden || !kept[n];
  }
}

}  // namespace

Hierarchy build_hierarchy(const Report& r, Hists& h) {
  const std::size_t row_size = Hists::kGroupSets * h.members.size();
  const bool grouped = h.members.size() > 1;
  Hierarchy t;
  for (SortKey k : r.columns_)
    if (!is_hpp_key(k)) t.levels.push_back(k);
  if (t.levels.empty()) return t;
  // (parent node + 1, value hash) -> the nodes with that hash
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> index;
  std::vector<unsigned> bits;  // by node: its first entry's filter bits
  // A group's leader builds its tree from its own entries; perf links the
  // members' entries it lacks in after (their nodes come second, and a
  // node both have is the leader's first entry's copy).
  std::vector<std::uint32_t> order;
  order.reserve(h.collapsed.size());
  for (int pass = 0; pass < (grouped ? 2 : 1); ++pass)
    for (std::uint32_t i : h.collapsed) {
      const Entry& e = h.entries[i];
      const bool linked = grouped && e.nr_events == 0 && e.period == 0;
      if (linked == (pass == 1)) order.push_back(i);
    }
  for (std::uint32_t i : order) {
    const Entry& e = h.entries[i];
    const unsigned entry_bits = filter_bits(r, e);
    std::uint32_t parent = UINT32_MAX;
    for (std::uint32_t depth = 0; depth < t.levels.size(); ++depth) {
      const SortKey k = t.levels[depth];
      const std::uint64_t slot = mix64((std::uint64_t{parent} + 1) * 0x9e3779b97f4a7c15ULL ^
                                       mix64(value_hash(k, e) + depth));
      std::vector<std::uint32_t>& candidates = index[slot];
      std::uint32_t node = UINT32_MAX;
      for (std::uint32_t c : candidates)
        if (same_value(r, k, t.nodes[c].sum, e)) {
          node = c;
          break;
        }
      if (node == UINT32_MAX) {
        bits.push_back(entry_bits);
        node = static_cast<std::uint32_t>(t.nodes.size());
        HierarchyNode n;
        n.sum = e;
        n.sum.period = n.sum.nr_events = n.sum.acc_period = n.sum.acc_nr_events = 0;
        std::fill(std::begin(n.sum.mode_period), std::end(n.sum.mode_period), 0);
        n.depth = depth;
        n.entry = i;
        if (grouped) {
          n.sum.group_row = static_cast<std::uint32_t>(h.group_values.size() / row_size);
          h.group_values.resize(h.group_values.size() + row_size, 0);
        }
        t.nodes.push_back(std::move(n));
        candidates.push_back(node);
        (parent == UINT32_MAX ? t.roots : t.nodes[parent].children).push_back(node);
      }
      // (the entries a collapse would merge each count in their group)
      HierarchyNode& into = t.nodes[node];
      into.sum.add_counts(e);
      if (grouped && e.group_row != UINT32_MAX)
        for (std::size_t v = 0; v < row_size; ++v)
          h.group_values[std::size_t{into.sum.group_row} * row_size + v] +=
              h.group_values[std::size_t{e.group_row} * row_size + v];
      parent = node;
    }
  }
  // Siblings in perf's output order: the overhead columns, then the keys.
  auto before = [&](std::uint32_t a, std::uint32_t b) {
    return compare_output(r, h, t.nodes[a].sum, t.nodes[b].sum) < 0;
  };
  std::stable_sort(t.roots.begin(), t.roots.end(), before);
  for (HierarchyNode& n : t.nodes) std::stable_sort(n.children.begin(), n.children.end(), before);
  apply_filters(r, t, bits);
  return t;
}

}  // namespace perfkit::report
