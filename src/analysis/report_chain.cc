#include "analysis/report_chain.h"

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
  const ChainEntry& cur = path[pos];
  // Children are in descending order of their first entry.
  auto& kids = nodes_[node].children;
  std::size_t insert_at = kids.size();
  for (std::size_t i = 0; i < kids.size(); ++i) {
    int c = chain_cmp(nodes_[kids[i]].val.front(), cur);
    if (c == 0) {
      append_chain(kids[i], path, pos, period);
      nodes_[node].children_hit += period;
      nodes_[node].children_count++;
      return;
    }
    if (c < 0) {  // this child sorts below the new path: the new one goes first
      insert_at = i;
      break;
    }
  }
  std::uint32_t child = add_child(path.subspan(pos), period);
  auto& kids2 = nodes_[node].children;
  kids2.insert(kids2.begin() + static_cast<std::ptrdiff_t>(insert_at), child);
  nodes_[node].children_hit += period;
  nodes_[node].children_count++;
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
  nodes_[node].children.push_back(tail_index);
  if (pos < path.size()) {
    ChainNode& p = nodes_[node];
    p.hit = 0;
    p.children_hit += period;
    p.count = 0;
    p.children_count += 1;
    std::uint32_t child = add_child(path.subspan(pos), period);
    bool before = chain_cmp(nodes_[tail_index].val.front(), path[pos]) < 0;
    auto& kids = nodes_[node].children;
    if (before)
      kids.insert(kids.begin(), child);
    else
      kids.push_back(child);
  } else {
    nodes_[node].hit = period;
    nodes_[node].count = 1;
  }
}

}  // namespace perfkit::analysis
