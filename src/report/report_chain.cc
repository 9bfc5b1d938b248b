#include "report/report_chain.h"

#include <algorithm>

#include "base/rbtree.h"

namespace perfkit::report {

std::size_t ChainArena::FrameKeyHash::operator()(const FrameKey& k) const {
  std::uint64_t h = mix64(k.ip ^ (k.key * 0x9e3779b97f4a7c15ULL));
  h = mix64(h ^ reinterpret_cast<std::uintptr_t>(k.name) ^
            (static_cast<std::uint64_t>(k.dso_rank) << 32) ^ k.branch ^
            (static_cast<std::uint64_t>(k.flags) << 24) ^ k.name_size);
  return static_cast<std::size_t>(h);
}

std::size_t ChainArena::U64Hash::operator()(std::uint64_t k) const {
  return static_cast<std::size_t>(mix64(k));
}

std::uint32_t ChainArena::make_root() {
  nodes_.emplace_back();
  roots_.push_back(static_cast<std::uint32_t>(nodes_.size() - 1));
  return roots_.back();
}

FrameId ChainArena::intern(const ChainEntry& e) {
  FrameKey k;
  k.ip = e.ip;
  k.key = e.key;
  k.name = e.name.data();
  k.name_size = static_cast<std::uint32_t>(e.name.size());
  k.dso_rank = e.dso_rank;
  k.branch = e.branch;
  k.flags = (e.has_sym ? 1u : 0u) | (e.inlined ? 2u : 0u) | (e.by_line ? 4u : 0u);
  k.line = e.line.data();
  k.line_size = static_cast<std::uint32_t>(e.line.size());
  std::uint32_t id = frame_ids_.find(k);
  if (id != decltype(frame_ids_)::kNone) return id;
  id = next_frame_++;
  if (deferred())
    defer_frame(e);
  else
    add_frame(e);
  frame_ids_.insert(k, id);
  return id;
}

void ChainArena::make_suffixes(FlatMap<std::uint64_t, U64Hash>& ids, std::uint32_t& next,
                               std::span<const FrameId> path, std::vector<std::uint32_t>& out) {
  out.resize(path.size());
  std::uint32_t after = kNoSuffix;
  for (std::size_t i = path.size(); i-- > 0;) {
    const std::uint64_t key = (static_cast<std::uint64_t>(after) << 32) | path[i];
    std::uint32_t id = ids.find(key);
    if (id == FlatMap<std::uint64_t, U64Hash>::kNone) {
      id = next++;
      ids.insert(key, id);
    }
    out[i] = after = id;
  }
}

int ChainArena::cmp(FrameId existing, FrameId incoming) const {
  if (existing == incoming) return 0;
  return chain_cmp(frames_[existing], frames_[incoming]);
}

std::uint32_t ChainArena::add_child(std::span<const FrameId> rest, std::uint64_t period,
                                    std::uint32_t count) {
  ChainNode n;
  n.val_begin = static_cast<std::uint32_t>(pool_.size());
  n.val_size = static_cast<std::uint32_t>(rest.size());
  pool_.insert(pool_.end(), rest.begin(), rest.end());
  if (counting_)
    for (FrameId e : rest) count_new(frames_[e]);
  n.hit = period;
  n.count = count;
  nodes_.push_back(n);
  const auto index = static_cast<std::uint32_t>(nodes_.size() - 1);
  return index;
}

void ChainArena::link_child(std::uint32_t parent, std::uint32_t child, std::uint32_t at,
                            bool left) {
  std::uint32_t root = nodes_[parent].kids;
  base::rb_link(nodes_, root, child, at, left);
  ChainNode& p = nodes_[parent];
  p.kids = root;
  const std::uint8_t kind = chain_kind(frames_[front(child)]);
  if (p.kids_kind == ChainNode::kNoKind)
    p.kids_kind = kind;
  else if (p.kids_kind != kind)
    p.kids_kind = ChainNode::kMixedKinds;
  if (p.kids_kind == ChainNode::kMixedKinds) ++nodes_[root_].mixed_links;
}

void ChainArena::do_append(std::uint32_t root, std::span<const FrameId> path, std::uint64_t period,
                           std::uint32_t count, std::uint32_t suffix) {
  if (path.empty()) return;
  settled_ = false;
  root_ = root;
  const bool cached = suffix != kNoSuffix && !counting_;
  const std::uint64_t key = (static_cast<std::uint64_t>(root) << 32) | suffix;
  // A path's search ends where it did before while no sibling set of mixed
  // kinds (where perf's comparison is no order) has changed since: in the
  // others an equal child is always found.
  const std::uint32_t links = nodes_[root].mixed_links;
  std::uint32_t at = cached ? ends_.find(key) : decltype(ends_)::kNone;
  if (at != decltype(ends_)::kNone && ends_at_[at].mixed_links == links) {
    ChainNode& n = nodes_[ends_at_[at].node];
    n.hit += period;
    n.count += count;
    ++found_by_suffix_;
    return;
  }
  std::uint32_t last = append_children(root, path, 0, period, count);
  // (not where this append changed a mixed set: a search may not find it)
  if (!cached || nodes_[root].mixed_links != links) return;
  if (at == decltype(ends_)::kNone) {
    ends_.insert(key, static_cast<std::uint32_t>(ends_at_.size()));
    ends_at_.push_back({last, links});
  } else {
    ends_at_[at] = {last, links};
  }
}

// perf's merge_chain_branch: a node's own path first (when it has hits),
// then its children in their tree's order.
void ChainArena::merge_branch(std::uint32_t dst, std::uint32_t src, std::vector<FrameId>& path) {
  const std::size_t above = path.size();
  FrameView v = val(src);
  path.insert(path.end(), pool_.begin() + nodes_[src].val_begin,
              pool_.begin() + nodes_[src].val_begin + v.size());
  // perf's merge appends frames as no branch's
  for (std::size_t i = above; i < path.size(); ++i) {
    if (!frames_[path[i]].branch) continue;
    ChainEntry e = frames_[path[i]];
    e.branch = 0;
    path[i] = intern(e);
  }
  if (nodes_[src].hit) append(dst, path, nodes_[src].hit, 1);
  for (std::uint32_t c : ordered_children(src)) merge_branch(dst, c, path);
  path.resize(above);
}

void ChainArena::merge(std::uint32_t dst, std::uint32_t src) {
  std::vector<FrameId> path;
  for (std::uint32_t c : ordered_children(src)) merge_branch(dst, c, path);
}

// The sums of the children's tree below `x` (rb links).
std::uint64_t ChainArena::sum_kids(std::uint32_t x, std::uint32_t& count) const {
  std::uint64_t hit = 0;
  while (x != base::kRbNil) {
    const ChainNode& n = nodes_[x];
    hit += n.cumul();
    count += n.count + n.children_count;
    hit += sum_kids(n.left, count);
    x = n.right;
  }
  return hit;
}

void ChainArena::settle() {
  if (settled_) return;
  // Every tree in an order that has each node before its children (a
  // split's tail comes after the children it takes over), then summed in
  // the reverse order.
  std::vector<std::uint32_t> order, stack, siblings;
  order.reserve(nodes_.size());
  for (std::uint32_t root : roots_) {
    stack.push_back(root);
    while (!stack.empty()) {
      std::uint32_t n = stack.back();
      stack.pop_back();
      order.push_back(n);
      if (nodes_[n].kids != base::kRbNil) siblings.push_back(nodes_[n].kids);
      while (!siblings.empty()) {
        const ChainNode& k = nodes_[siblings.back()];
        stack.push_back(siblings.back());
        siblings.pop_back();
        if (k.left != base::kRbNil) siblings.push_back(k.left);
        if (k.right != base::kRbNil) siblings.push_back(k.right);
      }
    }
  }
  for (std::size_t i = order.size(); i-- > 0;) {
    ChainNode& n = nodes_[order[i]];
    std::uint32_t count = 0;
    n.children_hit = sum_kids(n.kids, count);
    n.children_count = count;
  }
  settled_ = true;
}

// perf's append_chain_children: the children's tree is searched from its
// root; a child whose first frame matches takes the path, else a new child
// is linked where the search ended (going left past a child that sorts
// before the frame).
std::uint32_t ChainArena::append_children(std::uint32_t node, std::span<const FrameId> path,
                                          std::size_t pos, std::uint64_t period,
                                          std::uint32_t count) {
  std::uint32_t x = nodes_[node].kids, at = base::kRbNil;
  bool left = false;
  while (x != base::kRbNil) {
    int c = cmp(front(x), path[pos]);
    if (c == 0) break;
    at = x;
    left = c < 0;
    x = left ? nodes_[x].left : nodes_[x].right;
  }
  if (x != base::kRbNil) return append_chain(node, x, path, pos, period, count);
  std::uint32_t child = add_child(path.subspan(pos), period, count);
  link_child(node, child, at, left);
  return child;
}

std::vector<std::uint32_t> ChainArena::ordered_children(std::uint32_t node) const {
  std::vector<std::uint32_t> kids;
  base::rb_in_order(nodes_, nodes_[node].kids, [&kids](std::uint32_t c) { kids.push_back(c); });
  return kids;
}

std::uint32_t ChainArena::append_chain(std::uint32_t parent, std::uint32_t node,
                                       std::span<const FrameId> path, std::size_t pos,
                                       std::uint64_t period, std::uint32_t count) {
  std::size_t matches = 0;
  const std::size_t nval = nodes_[node].val_size;
  const FrameId* val = pool_.data() + nodes_[node].val_begin;
  while (matches < nval && pos + matches < path.size() &&
         cmp(val[matches], path[pos + matches]) == 0) {
    if (counting_)
      count_again(nodes_[node].val_begin + static_cast<std::uint32_t>(matches),
                  frames_[path[pos + matches]]);
    ++matches;
  }
  if (matches < nval) return split(parent, node, path, pos + matches, matches, period, count);
  if (pos + matches == path.size()) {
    nodes_[node].hit += period;
    nodes_[node].count += count;
    return node;
  }
  return append_children(node, path, pos + matches, period, count);
}

// perf's split_add_child: the node's first `local` frames become a node of
// their own, in its place among its siblings, with the node (its last frames,
// hits and children) as its first child and the rest of the path as the
// second, on the side its first frame's order gives. The node keeps its
// index: the suffix cache names the node where a path ends.
std::uint32_t ChainArena::split(std::uint32_t parent, std::uint32_t node,
                                std::span<const FrameId> path, std::size_t pos, std::size_t local,
                                std::uint64_t period, std::uint32_t count) {
  ChainNode head;
  {
    ChainNode& n = nodes_[node];
    head.val_begin = n.val_begin;
    head.val_size = static_cast<std::uint32_t>(local);
    n.val_begin += static_cast<std::uint32_t>(local);
    n.val_size -= static_cast<std::uint32_t>(local);
    head.left = n.left;
    head.right = n.right;
    head.parent = n.parent;
    head.red = n.red;
  }
  nodes_.push_back(head);
  const auto h = static_cast<std::uint32_t>(nodes_.size() - 1);
  const std::uint32_t up = head.parent;
  if (up == base::kRbNil)
    nodes_[parent].kids = h;
  else if (nodes_[up].left == node)
    nodes_[up].left = h;
  else
    nodes_[up].right = h;
  if (head.left != base::kRbNil) nodes_[head.left].parent = h;
  if (head.right != base::kRbNil) nodes_[head.right].parent = h;
  link_child(h, node, base::kRbNil, false);
  if (pos < path.size()) {
    const bool left = cmp(front(node), path[pos]) < 0;
    std::uint32_t child = add_child(path.subspan(pos), period, count);
    link_child(h, child, node, left);
    return child;
  }
  nodes_[h].hit = period;
  nodes_[h].count = count;
  return h;
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
