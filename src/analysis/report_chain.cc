#include "analysis/report_chain.h"

#include <algorithm>

namespace perfkit::analysis {

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
  n.hit = period;
  n.count = count;
  nodes_.push_back(n);
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

void ChainArena::link_child(std::uint32_t parent, std::uint32_t child) {
  ChainNode& p = nodes_[parent];
  if (p.last_child == UINT32_MAX)
    p.first_child = child;
  else
    nodes_[p.last_child].next_sibling = child;
  p.last_child = child;
}

void ChainArena::append(std::uint32_t root, std::span<const ChainEntry> path, std::uint64_t period,
                        std::uint32_t count) {
  if (path.empty()) return;
  append_children(root, path, 0, period, count);
}

void ChainArena::merge(std::uint32_t dst, std::uint32_t src) {
  std::vector<ChainEntry> path;
  std::vector<std::pair<std::uint32_t, std::size_t>> todo;  // node, path length above it
  for (std::uint32_t c = nodes_[src].first_child; c != UINT32_MAX; c = nodes_[c].next_sibling)
    todo.emplace_back(c, 0);
  while (!todo.empty()) {
    auto [n, above] = todo.back();
    todo.pop_back();
    path.resize(above);
    std::span<const ChainEntry> v = val(n);
    path.insert(path.end(), v.begin(), v.end());  // copied: appending may move the pool
    if (nodes_[n].hit) append(dst, path, nodes_[n].hit, 1);
    for (std::uint32_t c = nodes_[n].first_child; c != UINT32_MAX; c = nodes_[c].next_sibling)
      todo.emplace_back(c, path.size());
  }
}

void ChainArena::append_children(std::uint32_t node, std::span<const ChainEntry> path,
                                 std::size_t pos, std::uint64_t period, std::uint32_t count) {
  ChildKey k = child_key(node, path[pos]);
  std::uint32_t found = index_.find(k);
  if (found != FlatMap<ChildKey, ChildKeyHash>::kNone) {
    append_chain(found, path, pos, period, count);
  } else {
    std::uint32_t child = add_child(path.subspan(pos), period, count);
    link_child(node, child);
    index_.insert(k, child);
  }
  nodes_[node].children_hit += period;
  nodes_[node].children_count += count;
}

std::vector<std::uint32_t> ChainArena::ordered_children(std::uint32_t node) const {
  std::vector<std::uint32_t> kids;
  for (std::uint32_t c = nodes_[node].first_child; c != UINT32_MAX; c = nodes_[c].next_sibling)
    kids.push_back(c);
  std::sort(kids.begin(), kids.end(),
            [&](std::uint32_t a, std::uint32_t b) { return chain_cmp(front(b), front(a)) < 0; });
  return kids;
}

void ChainArena::append_chain(std::uint32_t node, std::span<const ChainEntry> path, std::size_t pos,
                              std::uint64_t period, std::uint32_t count) {
  std::size_t matches = 0;
  const std::size_t nval = nodes_[node].val_size;
  const ChainEntry* val = pool_.data() + nodes_[node].val_begin;
  while (matches < nval && pos + matches < path.size() &&
         chain_cmp(val[matches], path[pos + matches]) == 0)
    ++matches;
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
    tail.first_child = p.first_child;
    tail.last_child = p.last_child;
    p.first_child = p.last_child = UINT32_MAX;
    tail.hit = p.hit;
    tail.children_hit = p.children_hit;
    tail.count = p.count;
    tail.children_count = p.children_count;
    p.children_hit = tail.cumul();
    p.children_count = tail.count + tail.children_count;
  }
  nodes_.push_back(tail);
  auto tail_index = static_cast<std::uint32_t>(nodes_.size() - 1);
  // The moved children now hang below the tail.
  for (std::uint32_t c = tail.first_child; c != UINT32_MAX; c = nodes_[c].next_sibling) {
    index_.erase(child_key(node, front(c)));
    index_.insert(child_key(tail_index, front(c)), c);
  }
  link_child(node, tail_index);
  index_.insert(child_key(node, front(tail_index)), tail_index);
  if (pos < path.size()) {
    ChainNode& p = nodes_[node];
    p.hit = 0;
    p.children_hit += period;
    p.count = 0;
    p.children_count += count;
    std::uint32_t child = add_child(path.subspan(pos), period, count);
    link_child(node, child);
    index_.insert(child_key(node, path[pos]), child);
  } else {
    nodes_[node].hit = period;
    nodes_[node].count = count;
  }
}

}  // namespace perfkit::analysis
