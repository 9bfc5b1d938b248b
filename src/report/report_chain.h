// The call graph of one histogram entry: perf's callchain_node prefix tree.
// Paths are merged while their frames are the same function (same DSO and
// symbol start, or the same address when unresolved); a node splits where
// paths part. Siblings are kept in perf's rb-tree order (descending by DSO,
// then address) so that ties print in perf's order.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/flat_map.h"
#include "report/branch_types.h"

namespace perfkit::report {

// A branch frame of --branch-history (perf's callchain_cursor_node with
// `branch` set): the target or source of a branch stack entry.
struct BranchFrame {
  bool to = false;  // the target (perf's branch_from set): predicted and abort count
  bool predicted = false, abort = false;
  std::uint8_t type = 0, new_type = 0;  // the branch's type (a target's statistics)
  std::uint64_t from = 0;               // the branch's source
  std::uint16_t cycles = 0;             // the source's cycles
  std::uint32_t nr_loop_iter = 0;       // the source's loop iterations (perf's remove_loops)
  std::uint64_t iter_cycles = 0;
};

// perf's callchain_list branch counts of one frame of the graph.
struct BranchCounts {
  std::uint64_t branch_count = 0, predicted_count = 0, abort_count = 0, cycles_count = 0;
  std::uint64_t iter_count = 0, iter_cycles = 0, from_count = 0;
  bool branch_to = false;
  BranchTypeStat types;  // a target's branches by type
};

struct ChainEntry {
  std::uint64_t ip = 0;        // the raw address, printed when unresolved
  std::uint32_t dso_rank = 0;  // 0: no map; else DSO registration order + 1
  // --branch-history: 1 + the index of the frame's BranchFrame in the
  // span given to ChainArena::set_branch_frames; 0: no branch frame.
  std::uint32_t branch = 0;
  std::uint64_t key = 0;  // symbol start, or ip when unresolved
  std::string_view name;  // symbol name; empty when unresolved
  bool has_sym = false;
  // A function inlined at ip (DWARF unwinding): `name` is its interned name
  // and it matches other frames by name, as perf's inline symbols do.
  bool inlined = false;
  // -g srcline (perf's CCKEY_SRCLINE): frames are told apart by their
  // source line `line` (stable text; null data: unknown) where both have
  // one, else as functions; `name` then reads "name line".
  bool by_line = false;
  std::string_view line;
};

// A frame of the arena's table (ChainArena::intern): equal ids are equal
// frames in every field.
using FrameId = std::uint32_t;

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
  // The kind (chain_kind) of its children's first frames; kMixedKinds when
  // they differ (perf's comparison may then not be an order among them).
  std::uint8_t kids_kind = kNoKind;
  // A root: how many times a sibling set of mixed kinds in its tree took a
  // new child (its searches may then end elsewhere: the suffix cache's
  // entries from before no longer hold).
  std::uint32_t mixed_links = 0;
  // Sums below the node: kept by ChainArena::settle, read after it.
  std::uint64_t hit = 0, children_hit = 0;
  std::uint32_t count = 0, children_count = 0;
  std::uint64_t cumul() const { return hit + children_hit; }

  static constexpr std::uint8_t kNoKind = 0xff, kMixedKinds = 0xfe;
};

// The frames of a node, read through the arena's frame table.
class FrameView {
 public:
  FrameView(std::span<const FrameId> ids, const ChainEntry* table) : ids_(ids), table_(table) {}
  std::size_t size() const { return ids_.size(); }
  const ChainEntry& operator[](std::size_t i) const { return table_[ids_[i]]; }
  struct Iterator {
    const FrameId* p;
    const ChainEntry* table;
    const ChainEntry& operator*() const { return table[*p]; }
    Iterator& operator++() {
      ++p;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return p != o.p; }
  };
  Iterator begin() const { return {ids_.data(), table_}; }
  Iterator end() const { return {ids_.data() + ids_.size(), table_}; }

 private:
  std::span<const FrameId> ids_;
  const ChainEntry* table_;
};

// The call graphs of a report's entries, in one arena. Frames are interned
// (a pool of ids); repeated paths of a tree whose sibling sets are all of
// one kind of frame find their last node through a cache (perf's search
// would end there too), and the sums above the nodes are made once, by
// settle().
class ChainArena {
 public:
  ChainArena();
  ~ChainArena();
  ChainArena(const ChainArena&) = delete;
  ChainArena& operator=(const ChainArena&) = delete;

  std::uint32_t new_root();
  // The id of frame `e` (made on first sight).
  FrameId intern(const ChainEntry& e);

  // --jobs: the trees grow on `lanes` threads of their own, each tree on
  // one (its root's lane: the first, or after spread_roots() the lanes in
  // turn). From now on new_root, intern, suffixes and append record what
  // to do, and each lane does what concerns its trees, in the same order:
  // every tree ends as the calls would have made it here. new_root then
  // returns a handle (root_node() names its node once finished);
  // suffixes() gives positions in the path (append takes them back). Not
  // with branch counts.
  void defer(unsigned lanes = 1);
  bool deferred() const { return !deferred_.empty(); }
  // From now on new roots are dealt to the lanes in turn. Before, all grow
  // on the first: a lane's thread that takes part while the samples are
  // read competes with the reading (on two cores a second slows a DWARF
  // report); where the trees are made at the end, as the samples folded
  // whole are drained, the lanes share the work.
  void spread_roots() { spread_ = true; }
  // Waits for what was recorded (the lanes' trees summed there, then
  // moved into this arena); the arena is then read (and grown) here.
  void finish_deferred();
  // The node of a root made while deferred, by the handle new_root gave.
  std::uint32_t root_node(std::uint32_t handle) const { return root_nodes_[handle]; }
  const ChainEntry& frame(FrameId id) const { return frames_[id]; }
  // Suffix ids of `path`: out[i] names path[i..] (equal ids, equal frames);
  // they let append() find a repeated path's node at once.
  void suffixes(std::span<const FrameId> path, std::vector<std::uint32_t>& out);
  static constexpr std::uint32_t kNoSuffix = UINT32_MAX;
  // perf's callchain_append: adds `path` (already in print order) with
  // `period`, as `count` samples (a prefix tree's shape and sums do not
  // depend on the order paths come in, so repeats may be added at once).
  // `suffix`: the path's suffix id, or kNoSuffix.
  void append(std::uint32_t root, std::span<const FrameId> path, std::uint64_t period,
              std::uint32_t count = 1, std::uint32_t suffix = kNoSuffix);
  // perf's callchain_merge: every path of the tree at `src` that ends in a
  // node with hits is appended to the tree at `dst`, as one sample.
  void merge(std::uint32_t dst, std::uint32_t src);
  // Makes every node's children sums (before the sums are read).
  void settle();
  const ChainNode& at(std::uint32_t i) const { return nodes_[i]; }
  // --branch-history: every frame keeps perf's branch counts from now on,
  // from the BranchFrames of the paths appended next.
  void count_branches() { counting_ = true; }
  void set_branch_frames(std::span<const BranchFrame> f) { branch_frames_ = f; }
  bool counts_branches() const { return counting_; }
  // The branch counts of frame `v` of node `i` (count_branches only).
  const BranchCounts& counts(std::uint32_t i, std::size_t v) const {
    return counts_[nodes_[i].val_begin + v];
  }
  FrameView val(std::uint32_t i) const {
    return FrameView(
        std::span<const FrameId>(pool_).subspan(nodes_[i].val_begin, nodes_[i].val_size),
        frames_.data());
  }
  std::size_t size() const { return nodes_.size(); }
  // How many appends found their node by their suffix id.
  std::uint64_t found_by_suffix() const { return found_by_suffix_; }
  // A node's children in perf's rb_root_in order.
  std::vector<std::uint32_t> ordered_children(std::uint32_t node) const;

 private:
  // Each returns the node where the path ends.
  std::uint32_t append_children(std::uint32_t node, std::span<const FrameId> path, std::size_t pos,
                                std::uint64_t period, std::uint32_t count);
  std::uint32_t append_chain(std::uint32_t parent, std::uint32_t node,
                             std::span<const FrameId> path, std::size_t pos, std::uint64_t period,
                             std::uint32_t count);
  std::uint32_t split(std::uint32_t parent, std::uint32_t node, std::span<const FrameId> path,
                      std::size_t pos, std::size_t local, std::uint64_t period,
                      std::uint32_t count);
  std::uint32_t add_child(std::span<const FrameId> rest, std::uint64_t period, std::uint32_t count);
  // Links `child` into parent's tree below `at` (kRbNil: as the root), on
  // its left when `left`.
  void link_child(std::uint32_t parent, std::uint32_t child, std::uint32_t at, bool left);
  void merge_branch(std::uint32_t dst, std::uint32_t src, std::vector<FrameId>& path);
  FrameId front(std::uint32_t i) const { return pool_[nodes_[i].val_begin]; }
  int cmp(FrameId existing, FrameId incoming) const;
  std::uint64_t sum_kids(std::uint32_t x, std::uint32_t& count) const;

  // perf's fill_node (a new frame) and match_chain (a frame matched again).
  void count_new(const ChainEntry& e);
  void count_again(std::uint32_t at, const ChainEntry& e);

  struct FrameKey {
    std::uint64_t ip = 0, key = 0;
    const char* name = nullptr;
    const char* line = nullptr;
    std::uint32_t name_size = 0, dso_rank = 0, branch = 0, flags = 0, line_size = 0;
    bool operator==(const FrameKey&) const = default;
  };
  struct FrameKeyHash {
    std::size_t operator()(const FrameKey& k) const;
  };
  struct U64Hash {
    std::size_t operator()(std::uint64_t k) const;
  };

  std::vector<ChainNode> nodes_;
  std::vector<std::uint32_t> roots_;
  std::vector<FrameId> pool_;
  std::vector<ChainEntry> frames_;
  FlatMap<FrameKey, FrameKeyHash> frame_ids_;
  FlatMap<std::uint64_t, U64Hash> suffix_ids_;  // (suffix after, frame) -> suffix
  // (root, suffix) -> the node the path ends in, as of the root's
  // mixed_links (an index into ends_at_)
  FlatMap<std::uint64_t, U64Hash> ends_;
  struct End {
    std::uint32_t node = 0, mixed_links = 0;
  };
  std::vector<End> ends_at_;
  std::uint32_t next_suffix_ = 0;
  std::uint64_t found_by_suffix_ = 0;
  std::uint32_t root_ = 0;  // the tree being appended to
  bool settled_ = true;
  // Deferred (defer()): what the calls recorded, and the thread doing it
  // (report_chain_defer.cc). The recording side keeps its own frame ids
  // (frame_ids_, next_frame_) and root handles; the lanes' threads own the
  // rest of the arenas meanwhile. Lane 0 grows this arena, lane k > 0
  // lanes_[k - 1]; every lane takes every frame, and the paths its appends
  // name (path_gen_ counts the paths suffixes() is given; a lane records
  // the last one when an append there first names it).
  struct Deferred;
  std::vector<std::unique_ptr<Deferred>> deferred_;
  std::vector<std::unique_ptr<ChainArena>> lanes_;
  std::vector<std::uint32_t> root_nodes_;  // handle -> node
  FrameId next_frame_ = 0;
  std::uint32_t next_handle_ = 0;
  std::span<const FrameId> pending_path_;
  std::uint64_t path_gen_ = 0;
  // The suffix ids of the paths recorded, made here once for every lane
  // (from sent_suffix_ids_, which becomes this arena's table once the
  // lanes are done: their path ends name these ids), pending_path_'s last.
  FlatMap<std::uint64_t, U64Hash> sent_suffix_ids_;
  std::uint32_t next_sent_suffix_ = 0;
  std::vector<std::uint32_t> pending_ids_;
  bool spread_ = false;
  std::uint32_t next_lane_ = 0;
  // Each handle's lane and its index among the lane's roots.
  std::vector<std::uint8_t> handle_lane_;
  std::vector<std::uint32_t> handle_local_, lane_roots_;
  Deferred& lane_of(std::uint32_t handle) { return *deferred_[handle_lane_[handle]]; }
  // Moves the lanes' trees into this arena (after their threads end).
  void take_lanes();
  // A lane's frame table and caches, freed before its nodes are moved.
  void release_caches();
  std::uint32_t make_root();
  void add_frame(const ChainEntry& e) { frames_.push_back(e); }
  void defer_frame(const ChainEntry& e);
  void make_suffixes(std::span<const FrameId> path, std::vector<std::uint32_t>& out) {
    make_suffixes(suffix_ids_, next_suffix_, path, out);
  }
  static void make_suffixes(FlatMap<std::uint64_t, U64Hash>& ids, std::uint32_t& next,
                            std::span<const FrameId> path, std::vector<std::uint32_t>& out);
  void do_append(std::uint32_t root, std::span<const FrameId> path, std::uint64_t period,
                 std::uint32_t count, std::uint32_t suffix);
  bool counting_ = false;
  std::vector<BranchCounts> counts_;  // by pool index, when counting_
  std::span<const BranchFrame> branch_frames_;
};

// The kind of comparison a frame takes part in: by address (no symbol),
// by DSO and symbol start, or by name (inlined).
inline std::uint8_t chain_kind(const ChainEntry& e) {
  if (e.by_line && e.line.data()) return 3;
  return !e.has_sym ? 0 : (e.inlined ? 2 : 1);
}

// perf's match_chain: <0 when `existing` sorts before `incoming`.
inline int chain_cmp(const ChainEntry& existing, const ChainEntry& incoming) {
  if (existing.by_line) {
    // (a frame with a line sorts before one without; neither: functions)
    const bool l = existing.line.data() != nullptr, r = incoming.line.data() != nullptr;
    if (l && r) {
      if (existing.line.data() == incoming.line.data() &&
          existing.line.size() == incoming.line.size())
        return 0;
      int c = existing.line.compare(incoming.line);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (l != r) return l ? -1 : 1;
  }
  if (existing.has_sym && incoming.has_sym && (existing.inlined || incoming.inlined)) {
    // (names are interned: the same one is the same text)
    if (existing.name.data() == incoming.name.data() &&
        existing.name.size() == incoming.name.size())
      return 0;
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
