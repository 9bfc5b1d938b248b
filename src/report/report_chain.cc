#include "report/report_chain.h"

#include <algorithm>

#include "base/rbtree.h"

namespace perfkit::report {

std::uint32_t ChainArena::new_root() {
  nodes_.emplace_back();
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

std::uint32_t ChainArena::add_child(std::span<const ChainEntry> rest, std::uint64_t period,
                                    std::uint32_t count) {
  ChainNode n;
  n.val_begin = static_cast<std::uint32_t>(pool_.size());
  n.val_size = static_cast<std::uint32_t>(rest.size());
  pool_.insert(pool_.end(), rest.begin(), rest.end());
  if (counting_)
    for (const ChainEntry& e : rest) count_new(e);
  n.hit = period;
  n.count = count;
  nodes_.push_back(n);
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

void ChainArena::link_child(std::uint32_t parent, std::uint32_t child, std::uint32_t at,
                            bool left) {
  std::uint32_t root = nodes_[parent].kids;
  base::rb_link(nodes_, root, child, at, left);
  nodes_[parent].kids = root;
}

void ChainArena::append(std::uint32_t root, std::span<const ChainEntry> path, std::uint64_t period,
                        std::uint32_t count) {
  if (path.empty()) return;
  append_children(root, path, 0, period, count);
}

// perf's merge_chain_branch: a node's own path first (when it has hits),
// then its children in their tree's order.
void ChainArena::merge_branch(std::uint32_t dst, std::uint32_t src, std::vector<ChainEntry>& path) {
  const std::size_t above = path.size();
  std::span<const ChainEntry> v = val(src);
  path.insert(path.end(), v.begin(), v.end());  // copied: appending may move the pool
  // perf's merge appends frames as no branch's
  for (std::size_t i = above; i < path.size(); ++i) path[i].branch = 0;
  if (nodes_[src].hit) append(dst, path, nodes_[src].hit, 1);
  for (std::uint32_t c : ordered_children(src)) merge_branch(dst, c, path);
  path.resize(above);
}

void ChainArena::merge(std::uint32_t dst, std::uint32_t src) {
  std::vector<ChainEntry> path;
  for (std::uint32_t c : ordered_children(src)) merge_branch(dst, c, path);
}

// perf's append_chain_children: the children's tree is searched from its
// root; a child whose first frame matches takes the path, else a new child
// is linked where the search ended (going left past a child that sorts
// before the frame).
void ChainArena::append_children(std::uint32_t node, std::span<const ChainEntry> path,
                                 std::size_t pos, std::uint64_t period, std::uint32_t count) {
  std::uint32_t x = nodes_[node].kids, at = base::kRbNil;
  bool left = false;
  while (x != base::kRbNil) {
    int c = chain_cmp(front(x), path[pos]);
    if (c == 0) break;
    at = x;
    left = c < 0;
    x = left ? nodes_[x].left : nodes_[x].right;
  }
  if (x != base::kRbNil) {
    append_chain(x, path, pos, period, count);
  } else {
    std::uint32_t child = add_child(path.subspan(pos), period, count);
    link_child(node, child, at, left);
  }
  nodes_[node].children_hit += period;
  nodes_[node].children_count += count;
}

std::vector<std::uint32_t> ChainArena::ordered_children(std::uint32_t node) const {
  std::vector<std::uint32_t> kids;
  base::rb_in_order(nodes_, nodes_[node].kids, [&kids](std::uint32_t c) { kids.push_back(c); });
  return kids;
}

void ChainArena::append_chain(std::uint32_t node, std::span<const ChainEntry> path, std::size_t pos,
                              std::uint64_t period, std::uint32_t count) {
  std::size_t matches = 0;
  const std::size_t nval = nodes_[node].val_size;
  const ChainEntry* val = pool_.data() + nodes_[node].val_begin;
  while (matches < nval && pos + matches < path.size() &&
         chain_cmp(val[matches], path[pos + matches]) == 0) {
    if (counting_)
      count_again(nodes_[node].val_begin + static_cast<std::uint32_t>(matches),
                  path[pos + matches]);
    ++matches;
  }
  if (matches < nval) {
    split(node, path, pos + matches, matches, period, count);
    return;
  }
  if (pos + matches == path.size()) {
    nodes_[node].hit += period;
    nodes_[node].count += count;
    return;
  }
  append_children(node, path, pos + matches, period, count);
}

void ChainArena::split(std::uint32_t node, std::span<const ChainEntry> path, std::size_t pos,
                       std::size_t local, std::uint64_t period, std::uint32_t count) {
  ChainNode tail;
  {
    ChainNode& p = nodes_[node];
    tail.val_begin = p.val_begin + static_cast<std::uint32_t>(local);
    tail.val_size = p.val_size - static_cast<std::uint32_t>(local);
    p.val_size = static_cast<std::uint32_t>(local);
    tail.hit = p.hit;
    tail.children_hit = p.children_hit;
    tail.count = p.count;
    tail.children_count = p.children_count;
    p.children_hit = tail.cumul();
    p.children_count = tail.count + tail.children_count;
  }
  tail.kids = nodes_[node].kids;  // the children's tree moves whole
  nodes_[node].kids = base::kRbNil;
  nodes_.push_back(tail);
  auto tail_index = static_cast<std::uint32_t>(nodes_.size() - 1);
  // perf's split_add_child: the tail is the parent's first child, the rest
  // of the path its second, on the side its first frame's order gives.
  link_child(node, tail_index, base::kRbNil, false);
  if (pos < path.size()) {
    ChainNode& p = nodes_[node];
    p.hit = 0;
    p.children_hit += period;
    p.count = 0;
    p.children_count += count;
    const bool left = chain_cmp(front(tail_index), path[pos]) < 0;
    std::uint32_t child = add_child(path.subspan(pos), period, count);
    link_child(node, child, tail_index, left);
  } else {
    nodes_[node].hit = period;
    nodes_[node].count = count;
  }
}

void ChainArena::count_new(const ChainEntry& e) {
  BranchCounts c;
  if (e.branch) {
    const BranchFrame& f = branch_frames_[e.branch - 1];
    c.branch_count = 1;
    c.branch_to = f.to;
    if (f.to) {
      c.predicted_count = f.predicted;
      c.abort_count = f.abort;
      c.types.count(f.type, f.new_type, f.from, e.ip);
    } else {
      // (perf counts a source's from_count only when it matches again)
      c.cycles_count = f.cycles;
      c.iter_count = f.nr_loop_iter;
      c.iter_cycles = f.iter_cycles;
    }
  }
  counts_.push_back(c);
}

void ChainArena::count_again(std::uint32_t at, const ChainEntry& e) {
  if (!e.branch) return;
  const BranchFrame& f = branch_frames_[e.branch - 1];
  BranchCounts& c = counts_[at];
  ++c.branch_count;
  c.branch_to = f.to;
  if (f.to) {
    c.predicted_count += f.predicted;
    c.abort_count += f.abort;
    c.types.count(f.type, f.new_type, f.from, e.ip);
  } else {
    c.cycles_count += f.cycles;
    c.iter_count += f.nr_loop_iter;
    c.iter_cycles += f.iter_cycles;
    ++c.from_count;
  }
}

}  // namespace perfkit::report
