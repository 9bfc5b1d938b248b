// The call graph of one histogram entry: perf's callchain_node prefix tree.
// Paths are merged while their frames are the same function (same DSO and
// symbol start, or the same address when unresolved); a node splits where
// paths part. Siblings are kept in perf's rb-tree order (descending by DSO,
// then address) so that ties print in perf's order.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace perfkit::report {

struct ChainEntry {
  std::uint64_t ip = 0;        // the raw address, printed when unresolved
  std::uint32_t dso_rank = 0;  // 0: no map; else DSO registration order + 1
  std::uint64_t key = 0;       // symbol start, or ip when unresolved
  std::string_view name;       // symbol name; empty when unresolved
  bool has_sym = false;
  // A function inlined at ip (DWARF unwinding): `name` is its interned name
  // and it matches other frames by name, as perf's inline symbols do.
  bool inlined = false;
};

struct ChainNode {
  // The node's frames: a range of the arena's frame pool (ChainArena::val).
  // A split shortens the range; frames are never copied.
  std::uint32_t val_begin = 0, val_size = 0;
  // Children in perf's rb_root_in: a Linux rbtree searched with perf's
  // match_chain (chain_cmp), whose order is not consistent where resolved
  // and unresolved frames meet (symbol start against address), so it is
  // simulated: a search can miss an equal child and add a second, as
  // perf's does. `left`, `right`, `parent` and `red` link a node among its
  // siblings; `kids` is its children's root.
  std::uint32_t left = UINT32_MAX, right = UINT32_MAX, parent = UINT32_MAX, kids = UINT32_MAX;
  bool red = false;
  std::uint64_t hit = 0, children_hit = 0;
  std::uint32_t count = 0, children_count = 0;
  std::uint64_t cumul() const { return hit + children_hit; }
};

class ChainArena {
 public:
  std::uint32_t new_root();
  // perf's callchain_append: adds `path` (already in print order) with
  // `period`, as `count` samples (a prefix tree's shape and sums do not
  // depend on the order paths come in, so repeats may be added at once).
  void append(std::uint32_t root, std::span<const ChainEntry> path, std::uint64_t period,
              std::uint32_t count = 1);
  // perf's callchain_merge: every path of the tree at `src` that ends in a
  // node with hits is appended to the tree at `dst`, as one sample.
  void merge(std::uint32_t dst, std::uint32_t src);
  const ChainNode& at(std::uint32_t i) const { return nodes_[i]; }
  std::span<const ChainEntry> val(std::uint32_t i) const {
    return std::span<const ChainEntry>(pool_).subspan(nodes_[i].val_begin, nodes_[i].val_size);
  }
  std::size_t size() const { return nodes_.size(); }
  // A node's children in perf's rb_root_in order.
  std::vector<std::uint32_t> ordered_children(std::uint32_t node) const;

 private:
  void append_children(std::uint32_t node, std::span<const ChainEntry> path, std::size_t pos,
                       std::uint64_t period, std::uint32_t count);
  void append_chain(std::uint32_t node, std::span<const ChainEntry> path, std::size_t pos,
                    std::uint64_t period, std::uint32_t count);
  void split(std::uint32_t node, std::span<const ChainEntry> path, std::size_t pos,
             std::size_t local, std::uint64_t period, std::uint32_t count);
  std::uint32_t add_child(std::span<const ChainEntry> rest, std::uint64_t period,
                          std::uint32_t count);
  // Links `child` into parent's tree below `at` (kRbNil: as the root), on
  // its left when `left`.
  void link_child(std::uint32_t parent, std::uint32_t child, std::uint32_t at, bool left);
  void merge_branch(std::uint32_t dst, std::uint32_t src, std::vector<ChainEntry>& path);
  const ChainEntry& front(std::uint32_t i) const { return pool_[nodes_[i].val_begin]; }

  std::vector<ChainNode> nodes_;
  std::vector<ChainEntry> pool_;
};

// perf's match_chain: <0 when `existing` sorts before `incoming`.
inline int chain_cmp(const ChainEntry& existing, const ChainEntry& incoming) {
  if (existing.has_sym && incoming.has_sym && (existing.inlined || incoming.inlined)) {
    int c = existing.name.compare(incoming.name);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (existing.dso_rank != incoming.dso_rank) return existing.dso_rank < incoming.dso_rank ? -1 : 1;
  std::uint64_t a = existing.has_sym && incoming.has_sym ? existing.key : existing.ip;
  std::uint64_t b = existing.has_sym && incoming.has_sym ? incoming.key : incoming.ip;
  if (a != b) return a < b ? -1 : 1;
  return 0;
}

}  // namespace perfkit::report
