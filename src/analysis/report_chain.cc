#include "analysis/report_chain.h"

#include <algorithm>

namespace perfkit::analysis {

std::uint32_t ChainArena::new_root() {
  nodes_.emplace_back();
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

std::uint32_t ChainArena::add_child(std::span<const ChainEntry> rest, std::uint64_t period) {
  ChainNode n;
  n.val.assign(rest.begin(), rest.end());
  n.hit = period;
  n.count = 1;
  nodes_.push_back(std::move(n));
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

void ChainArena::append(std::uint32_t root, std::span<const ChainEntry> path,
                        std::uint64_t period) {
  if (path.empty()) return;
  append_children(root, path, 0, period);
}

void ChainArena::append_children(std::uint32_t node, std::span<const ChainEntry> path,
                                 std::size_t pos, std::uint64_t period) {
  ChildKey k = child_key(node, path[pos]);
  std::uint32_t found = index_.find(k);
  if (found != FlatMap<ChildKey, ChildKeyHash>::kNone) {
    append_chain(found, path, pos, period);
  } else {
    std::uint32_t child = add_child(path.subspan(pos), period);
    nodes_[node].children.push_back(child);
    index_.insert(k, child);
  }
  nodes_[node].children_hit += period;
  nodes_[node].children_count++;
}

std::vector<std::uint32_t> ChainArena::ordered_children(std::uint32_t node) const {
  std::vector<std::uint32_t> kids = nodes_[node].children;
  std::sort(kids.begin(), kids.end(), [&](std::uint32_t a, std::uint32_t b) {
    return chain_cmp(nodes_[b].val.front(), nodes_[a].val.front()) < 0;
  });
  return kids;
}

void ChainArena::append_chain(std::uint32_t node, std::span<const ChainEntry> path, std::size_t pos,
                              std::uint64_t period) {
  std::size_t matches = 0;
  const std::size_t nval = nodes_[node].val.size();
  while (matches < nval && pos + matches < path.size() &&
         chain_cmp(nodes_[node].val[matches], path[pos + matches]) == 0)
    ++matches;
  if (matches < nval) {
    split(node, path, pos + matches, matches, period);
    return;
  }
  if (pos + matches == path.size()) {
    nodes_[node].hit += period;
    nodes_[node].count++;
    return;
  }
  append_children(node, path, pos + matches, period);
}

void ChainArena::split(std::uint32_t node, std::span<const ChainEntry> path, std::size_t pos,
                       std::size_t local, std::uint64_t period) {
  ChainNode tail;
  {
    ChainNode& p = nodes_[node];
    tail.val.assign(p.val.begin() + static_cast<std::ptrdiff_t>(local), p.val.end());
    p.val.resize(local);
    tail.children = std::move(p.children);
    p.children.clear();
    tail.hit = p.hit;
    tail.children_hit = p.children_hit;
    tail.count = p.count;
    tail.children_count = p.children_count;
    p.children_hit = tail.cumul();
    p.children_count = tail.count + tail.children_count;
  }
  nodes_.push_back(std::move(tail));
  auto tail_index = static_cast<std::uint32_t>(nodes_.size() - 1);
  // The moved children now hang below the tail.
  for (std::uint32_t c : nodes_[tail_index].children) {
    index_.erase(child_key(node, nodes_[c].val.front()));
    index_.insert(child_key(tail_index, nodes_[c].val.front()), c);
  }
  nodes_[node].children.push_back(tail_index);
  index_.insert(child_key(node, nodes_[tail_index].val.front()), tail_index);
  if (pos < path.size()) {
    ChainNode& p = nodes_[node];
    p.hit = 0;
    p.children_hit += period;
    p.count = 0;
    p.children_count += 1;
    std::uint32_t child = add_child(path.subspan(pos), period);
    nodes_[node].children.push_back(child);
    index_.insert(child_key(node, path[pos]), child);
  } else {
    nodes_[node].hit = period;
    nodes_[node].count = 1;
  }
}

}  // namespace perfkit::analysis
