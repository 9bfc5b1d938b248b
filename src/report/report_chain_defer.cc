// ChainArena::defer: the call graphs grown on threads of their own (lanes),
// each tree on one. The aggregating thread records each call (a root made,
// a frame interned, a sample's path, an append) in batches, one stream per
// lane: every lane takes every frame, its own roots, and the paths its
// appends name. Each lane carries its calls out in order, so that a tree's
// nodes, suffix ids and sums come out as the calls would have made them on
// one thread; the lanes' trees are then moved into the one arena.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "base/rbtree.h"
#include "report/report_chain.h"

namespace perfkit::report {

struct ChainArena::Deferred {
  struct Op {
    enum Kind : std::uint8_t { kRoot, kFrame, kPath, kAppend } kind = kRoot;
    bool suffix = false;     // kPath: its suffix ids are in ids; kAppend: use them
    std::uint32_t a = 0;     // kFrame: index in frames; kPath: in paths; kAppend: path offset
    std::uint32_t n = 0;     // kPath: its size; kAppend: count
    std::uint32_t root = 0;  // kAppend: the root's handle; kPath with suffix: index in ids
    std::uint64_t period = 0;
  };
  struct Batch {
    std::vector<Op> ops;
    std::vector<ChainEntry> frames;
    std::vector<FrameId> paths;
    std::vector<std::uint32_t> ids;  // the suffix ids of paths recorded with them
    void clear() {
      ops.clear();
      frames.clear();
      paths.clear();
      ids.clear();
    }
  };
  static constexpr std::size_t kBatchOps = 16384, kAhead = 4;

  explicit Deferred(ChainArena& arena) : arena(arena) {
    worker = std::thread([this] { work(); });
  }

  // The recording side: the batch being filled, handed over when full.
  Batch& batch() {
    if (!cur) {
      std::lock_guard lock(m);
      if (free.empty()) {
        cur = std::make_unique<Batch>();
        cur->ops.reserve(kBatchOps);
      } else {
        cur = std::move(free.back());
        free.pop_back();
      }
    }
    return *cur;
  }
  void push(const Op& op) {
    Batch& b = batch();
    b.ops.push_back(op);
    if (b.ops.size() >= kBatchOps) hand_over();
  }
  // Records `path` as the current one, with its suffix ids `ids` (none:
  // without).
  void record_path(std::span<const FrameId> path, std::span<const std::uint32_t> ids) {
    Batch& b = batch();
    Op op{Op::kPath, !ids.empty()};
    op.a = static_cast<std::uint32_t>(b.paths.size());
    op.n = static_cast<std::uint32_t>(path.size());
    op.root = static_cast<std::uint32_t>(b.ids.size());
    b.paths.insert(b.paths.end(), path.begin(), path.end());
    b.ids.insert(b.ids.end(), ids.begin(), ids.end());
    push(op);
    last_path = path.data();
    last_size = path.size();
  }
  void hand_over() {
    if (!cur) return;
    std::unique_lock lock(m);
    cv.wait(lock, [this] { return full.size() < kAhead; });
    full.push_back(std::move(cur));
    cv.notify_all();
  }
  void finish() {
    hand_over();
    {
      std::lock_guard lock(m);
      done = true;
      cv.notify_all();
    }
    worker.join();
  }

  // The arena's side; its trees summed at the end, there too.
  void work() {
    for (;;) {
      std::unique_ptr<Batch> b;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [this] { return !full.empty() || done; });
        if (full.empty()) break;
        b = std::move(full.front());
        full.pop_front();
        cv.notify_all();
      }
      run(*b);
      b->clear();
      std::lock_guard lock(m);
      free.push_back(std::move(b));
    }
    arena.settle();
  }
  void run(const Batch& b) {
    for (const Op& op : b.ops) {
      switch (op.kind) {
        case Op::kRoot:
          arena.root_nodes_.push_back(arena.make_root());
          break;
        case Op::kFrame:
          arena.add_frame(b.frames[op.a]);
          break;
        case Op::kPath:
          path.assign(b.paths.begin() + op.a, b.paths.begin() + op.a + op.n);
          if (op.suffix)
            suffixes.assign(b.ids.begin() + op.root, b.ids.begin() + op.root + op.n);
          else
            suffixes.assign(path.size(), kNoSuffix);
          break;
        case Op::kAppend:
          arena.do_append(arena.root_nodes_[op.root], std::span<const FrameId>(path).subspan(op.a),
                          op.period, op.n, op.suffix ? suffixes[op.a] : kNoSuffix);
          break;
      }
    }
  }

  ChainArena& arena;
  std::unique_ptr<Batch> cur;
  // The last path recorded, as the recording side gave it (appends name
  // their paths as its suffixes).
  const FrameId* last_path = nullptr;
  std::size_t last_size = 0;
  std::uint64_t path_gen = 0;  // the arena's path_gen_ last recorded here (0: none)
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::unique_ptr<Batch>> full, free;
  bool done = false;
  std::thread worker;
  std::vector<FrameId> path;  // the arena's side: the current path, its suffix ids
  std::vector<std::uint32_t> suffixes;
};

ChainArena::ChainArena() = default;

ChainArena::~ChainArena() {
  for (auto& d : deferred_) d->finish();
}

void ChainArena::defer(unsigned lanes) {
  if (!deferred_.empty() || counting_) return;
  deferred_.push_back(std::make_unique<Deferred>(*this));
  lanes = std::min(lanes, 255u);
  lane_roots_.assign(std::max(lanes, 1u), 0);
  for (unsigned k = 1; k < lanes; ++k) {
    lanes_.push_back(std::make_unique<ChainArena>());
    deferred_.push_back(std::make_unique<Deferred>(*lanes_.back()));
  }
}

void ChainArena::finish_deferred() {
  if (deferred_.empty()) return;
  for (auto& d : deferred_) d->finish();
  deferred_.clear();  // (their batches freed before the nodes are moved)
  take_lanes();
  // (the path ends kept here name the ids made for the lanes)
  suffix_ids_ = std::move(sent_suffix_ids_);
  next_suffix_ = next_sent_suffix_;
  sent_suffix_ids_ = {};
  pending_ids_ = {};
  lanes_.clear();
  handle_lane_ = {};
  handle_local_ = {};
}

// A lane's nodes and frame ranges follow this arena's; the frame table is
// every lane's alike. Its caches (suffix ids, path ends) stay behind: this
// arena's name only its own nodes.
void ChainArena::take_lanes() {
  const std::size_t n = lanes_.size() + 1;
  std::vector<std::uint32_t> node_at(n, 0);
  std::size_t all = nodes_.size();
  for (const auto& lane : lanes_) all += lane->nodes_.size();
  nodes_.reserve(all);  // (grown once)
  for (std::size_t k = 1; k < n; ++k) {
    ChainArena& lane = *lanes_[k - 1];
    lane.release_caches();
    node_at[k] = static_cast<std::uint32_t>(nodes_.size());
    const auto pool_at = static_cast<std::uint32_t>(pool_.size());
    const auto moved = [at = node_at[k]](std::uint32_t i) {
      return i == base::kRbNil ? i : i + at;
    };
    for (ChainNode c : lane.nodes_) {
      c.left = moved(c.left);
      c.right = moved(c.right);
      c.parent = moved(c.parent);
      c.kids = moved(c.kids);
      c.val_begin += pool_at;
      nodes_.push_back(c);
    }
    pool_.insert(pool_.end(), lane.pool_.begin(), lane.pool_.end());
    for (std::uint32_t r : lane.roots_) roots_.push_back(r + node_at[k]);
    found_by_suffix_ += lane.found_by_suffix_;
    settled_ = settled_ && lane.settled_;
    lane.nodes_ = {};
    lane.pool_ = {};
  }
  std::vector<std::uint32_t> nodes(next_handle_);
  for (std::uint32_t h = 0; h < next_handle_; ++h) {
    const std::uint8_t k = handle_lane_[h];
    nodes[h] = (k ? lanes_[k - 1]->root_nodes_ : root_nodes_)[handle_local_[h]] + node_at[k];
  }
  root_nodes_ = std::move(nodes);
}

void ChainArena::release_caches() {
  frames_ = {};
  frame_ids_ = {};
  suffix_ids_ = {};
  ends_ = {};
  ends_at_ = {};
}

std::uint32_t ChainArena::new_root() {
  if (deferred_.empty()) return make_root();
  const std::uint32_t k = spread_ ? next_lane_++ % deferred_.size() : 0;
  handle_lane_.push_back(static_cast<std::uint8_t>(k));
  handle_local_.push_back(lane_roots_[k]++);
  deferred_[k]->push({Deferred::Op::kRoot});
  return next_handle_++;
}

void ChainArena::defer_frame(const ChainEntry& e) {
  for (auto& d : deferred_) {
    Deferred::Batch& b = d->batch();
    Deferred::Op op{Deferred::Op::kFrame};
    op.a = static_cast<std::uint32_t>(b.frames.size());
    b.frames.push_back(e);
    d->push(op);
  }
}

void ChainArena::suffixes(std::span<const FrameId> path, std::vector<std::uint32_t>& out) {
  if (deferred_.empty()) return make_suffixes(path, out);
  // Recorded in a lane when an append there first names it, with the ids
  // made here once for all the lanes.
  pending_path_ = path;
  make_suffixes(sent_suffix_ids_, next_sent_suffix_, path, pending_ids_);
  ++path_gen_;
  // Positions stand for the ids: append() hands them back.
  out.resize(path.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint32_t>(i);
}

void ChainArena::append(std::uint32_t root, std::span<const FrameId> path, std::uint64_t period,
                        std::uint32_t count, std::uint32_t suffix) {
  if (deferred_.empty()) return do_append(root, path, period, count, suffix);
  Deferred& d = lane_of(root);
  const auto ends_path = [&path](const FrameId* data, std::size_t size) {
    return data && path.size() <= size && path.data() + path.size() == data + size;
  };
  if (d.path_gen != path_gen_ && ends_path(pending_path_.data(), pending_path_.size())) {
    d.record_path(pending_path_, pending_ids_);
    d.path_gen = path_gen_;
  }
  Deferred::Op op{Deferred::Op::kAppend, suffix != kNoSuffix};
  // A suffix of the path recorded for this generation (as the report
  // appends), else a path of its own (without suffix ids). (A lane's path
  // of an earlier generation may lie where the caller's buffer now holds
  // another.)
  const bool within = d.path_gen == path_gen_ && ends_path(d.last_path, d.last_size);
  if (!within) {
    d.record_path(path, {});
    d.last_path = nullptr;
    d.path_gen = 0;
    op.suffix = false;
  }
  op.a = within ? static_cast<std::uint32_t>(d.last_size - path.size()) : 0;
  op.n = count;
  op.root = handle_local_[root];
  op.period = period;
  d.push(op);
}

}  // namespace perfkit::report
