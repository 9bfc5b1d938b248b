// The call-graph prefix tree of perfkit report: adding a path as `count`
// samples at once, and adding paths in another order, give the same tree.
#include "report/report_chain.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace perfkit::report {
namespace {

ChainEntry frame(std::uint64_t ip, std::uint64_t sym) {
  ChainEntry c;
  c.ip = ip;
  c.dso_rank = 1;
  c.has_sym = sym != 0;
  c.key = sym ? sym : ip;
  return c;
}

ChainEntry inlined(std::uint64_t ip, const char* name) {
  ChainEntry c;
  c.ip = ip;
  c.dso_rank = 1;
  c.has_sym = true;
  c.inlined = true;
  c.key = ip & ~0xfULL;
  c.name = name;
  return c;
}

// Every node below `node`, in perf's order: its frames' keys, hits and counts.
void dump(const ChainArena& a, std::uint32_t node, int depth, std::string& out) {
  for (std::uint32_t c : a.ordered_children(node)) {
    const ChainNode& n = a.at(c);
    out += std::string(static_cast<std::size_t>(depth), ' ');
    for (const ChainEntry& e : a.val(c)) out += std::to_string(e.key) + ",";
    out += " hit=" + std::to_string(n.hit) + "/" + std::to_string(n.count) +
           " children=" + std::to_string(n.children_hit) + "/" + std::to_string(n.children_count) +
           "\n";
    dump(a, c, depth + 1, out);
  }
}

std::string tree(ChainArena& a, std::uint32_t root) {
  a.settle();
  std::string out = "root children=" + std::to_string(a.at(root).children_hit) + "/" +
                    std::to_string(a.at(root).children_count) + "\n";
  dump(a, root, 1, out);
  return out;
}

using Path = std::vector<ChainEntry>;

// The arena's ids of `p`'s frames.
std::vector<FrameId> ids(ChainArena& a, const Path& p) {
  std::vector<FrameId> out;
  for (const ChainEntry& e : p) out.push_back(a.intern(e));
  return out;
}

TEST(ChainArena, CountedAppendEqualsRepeatedAppends) {
  const Path p = {frame(0x10, 0x10), frame(0x24, 0x20), frame(0x31, 0x30)};
  const Path q = {frame(0x10, 0x10), frame(0x25, 0x20), frame(0x40, 0)};
  ChainArena one, many;
  std::uint32_t r1 = one.new_root(), r2 = many.new_root();
  for (int i = 0; i < 3; ++i) one.append(r1, ids(one, p), 10);
  one.append(r1, ids(one, q), 7);
  one.append(r1, ids(one, q), 7);
  many.append(r2, ids(many, p), 30, 3);
  many.append(r2, ids(many, q), 14, 2);
  EXPECT_EQ(tree(one, r1), tree(many, r2));
  many.settle();
  EXPECT_EQ(many.at(r2).children_count, 5u);
  EXPECT_EQ(many.at(r2).children_hit, 44u);
}

TEST(ChainArena, OrderOfPathsDoesNotChangeTheTree) {
  // Paths that split one another's nodes: a prefix, a longer path, a fork.
  const std::vector<Path> paths = {
      {frame(0x10, 0x10), frame(0x20, 0x20)},
      {frame(0x10, 0x10), frame(0x20, 0x20), frame(0x30, 0x30)},
      {frame(0x10, 0x10), frame(0x50, 0x50), frame(0x30, 0x30)},
      {frame(0x10, 0x10)},
      {frame(0x60, 0)},
  };
  std::vector<std::size_t> order = {0, 1, 2, 3, 4};
  std::string first;
  do {
    ChainArena a;
    std::uint32_t root = a.new_root();
    for (std::size_t i : order)
      a.append(root, ids(a, paths[i]), 1 + i, static_cast<std::uint32_t>(i + 1));
    std::string t = tree(a, root);
    if (first.empty()) first = t;
    ASSERT_EQ(t, first) << "order " << order[0] << order[1] << order[2] << order[3] << order[4];
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_NE(first.find("hit=1/1"), std::string::npos) << first;
}

// perf's callchain_merge (collapsing two entries): each path that ends in a
// node with hits joins the other tree with those hits, as one sample.
TEST(ChainArena, MergeAddsEveryPathWithItsHits) {
  const Path p = {frame(0x10, 0x10), frame(0x24, 0x20), frame(0x31, 0x30)};
  const Path q = {frame(0x10, 0x10), frame(0x25, 0x20)};
  const Path s = {frame(0x50, 0x50)};
  ChainArena a;
  std::uint32_t dst = a.new_root(), src = a.new_root(), want = a.new_root();
  a.append(dst, ids(a, s), 5);
  a.append(src, ids(a, p), 30, 3);
  a.append(src, ids(a, q), 14, 2);  // ends inside p's path: a node with its own hits
  a.merge(dst, src);
  a.append(want, ids(a, s), 5);
  a.append(want, ids(a, p), 30, 1);
  a.append(want, ids(a, q), 14, 1);
  EXPECT_EQ(tree(a, dst), tree(a, want));
  a.settle();
  EXPECT_EQ(a.at(dst).children_hit, 49u);
  EXPECT_EQ(a.at(dst).children_count, 3u);
}

// perf's children tree compares two resolved frames by symbol start but a
// resolved and an unresolved one by address: not a consistent order, so a
// frame's search can pass its function's node by and add a second one.
TEST(ChainArena, MixedFramesCanSplitAFunctionAsPerfsTreeDoes) {
  ChainArena a;
  std::uint32_t root = a.new_root();
  a.append(root, ids(a, Path{frame(0x200, 0)}), 1);      // unresolved: the tree's root
  a.append(root, ids(a, Path{frame(0x150, 0x100)}), 1);  // below it by address: right
  a.append(root, ids(a, Path{frame(0x250, 0x100)}), 1);  // same function, but left of 0x200
  std::vector<std::uint32_t> kids = a.ordered_children(root);
  ASSERT_EQ(kids.size(), 3u);
  EXPECT_EQ(a.val(kids[0])[0].ip, 0x250u);
  EXPECT_EQ(a.val(kids[1])[0].ip, 0x200u);
  EXPECT_EQ(a.val(kids[2])[0].ip, 0x150u);
  // Without the unresolved frame both land on one node.
  ChainArena b;
  std::uint32_t r2 = b.new_root();
  b.append(r2, ids(b, Path{frame(0x150, 0x100)}), 1);
  b.append(r2, ids(b, Path{frame(0x250, 0x100)}), 1);
  EXPECT_EQ(b.ordered_children(r2).size(), 1u);
}

// Repeated paths found through their suffix ids give the tree that searching
// for them gives, frame kinds mixed or not (where they mix, perf's search is
// not an order: the cache holds only while no mixed sibling set changes).
TEST(ChainArena, SuffixCacheGivesTheSearchedTree) {
  static const char* const kNames[] = {"next", "step", "spin"};
  // Frame kinds: 0 resolved, 1 unresolved, 2 inlined; each round takes a set.
  static const std::vector<std::vector<int>> kSets = {{0}, {1}, {2}, {0, 1}, {0, 2}, {0, 1, 2}};
  std::mt19937 rng(7);
  std::uint64_t found_homogeneous = 0, found_mixed = 0;
  for (int round = 0; round < 1200; ++round) {
    const std::vector<int>& set = kSets[static_cast<std::size_t>(round) % kSets.size()];
    auto random_frame = [&]() {
      const std::uint64_t f = rng() % 6, ip = 0x100 * (f + 1) + rng() % 3;
      switch (set[rng() % set.size()]) {
        case 1:
          return frame(ip, 0);
        case 2:
          return inlined(ip, kNames[f % 3]);
        default:
          return frame(ip, 0x100 * (f + 1));
      }
    };
    std::vector<Path> paths;
    for (int i = 0; i < 12; ++i) {
      Path p;
      for (std::uint32_t n = 1 + rng() % 5; n-- > 0;) p.push_back(random_frame());
      paths.push_back(p);
    }
    ChainArena searched, cached;
    std::uint32_t r1 = searched.new_root(), r2 = cached.new_root();
    std::vector<std::uint32_t> suffixes;
    for (int i = 0; i < 60; ++i) {
      const Path& p = paths[rng() % paths.size()];
      std::vector<FrameId> one = ids(searched, p), two = ids(cached, p);
      cached.suffixes(two, suffixes);
      for (std::size_t from = 0; from < p.size(); ++from) {
        searched.append(r1, std::span<const FrameId>(one).subspan(from), 1 + from);
        cached.append(r2, std::span<const FrameId>(two).subspan(from), 1 + from, 1, suffixes[from]);
      }
    }
    ASSERT_EQ(tree(searched, r1), tree(cached, r2)) << "round " << round;
    (set.size() == 1 ? found_homogeneous : found_mixed) += cached.found_by_suffix();
  }
  EXPECT_GT(found_homogeneous, 1000u);  // the cache was used
  EXPECT_GT(found_mixed, 1000u);        // where kinds mix too
}

// Deferred (--jobs): the calls recorded and carried out on the arena's own
// threads give the arena the calls make here: the same trees (on one lane
// the same nodes, roots at the same indices), the suffix cache used alike;
// across many batches, several roots, mixed frame kinds and a path of its
// own. With several lanes each tree grows on its root's (all on the first
// until spread_roots, then in turn), and the trees moved into one arena
// merge as the ones grown here.
TEST(ChainArena, DeferredGrowsTheSameArena) {
  static const char* const kNames[] = {"next", "step", "spin"};
  for (unsigned lanes : {1u, 2u, 3u}) {
    SCOPED_TRACE(lanes);
    std::mt19937 rng(11);
    auto random_frame = [&](bool mixed) {
      const std::uint64_t f = rng() % 8, ip = 0x100 * (f + 1) + rng() % 3;
      switch (mixed ? rng() % 3 : 2) {
        case 0:
          return frame(ip, 0);
        case 1:
          return inlined(ip, kNames[f % 3]);
        default:
          return frame(ip, 0x100 * (f + 1));
      }
    };
    ChainArena here, there;
    there.defer(lanes);
    ASSERT_TRUE(there.deferred());
    std::vector<std::uint32_t> roots_here, handles;
    std::vector<std::uint32_t> suffixes_here, suffixes_there;
    // Paths that repeat (the suffix cache finds them), some of mixed kinds
    // (the roots they reach search every time).
    std::vector<Path> paths;
    for (int i = 0; i < 60; ++i) {
      Path p;
      for (std::uint32_t n = 1 + rng() % 12; n-- > 0;) p.push_back(random_frame(i < 3));
      paths.push_back(p);
    }
    for (int i = 0; i < 6000; ++i) {
      if (i == 2000) there.spread_roots();  // the roots before on the first lane
      if (i % 500 == 0) {
        roots_here.push_back(here.new_root());
        handles.push_back(there.new_root());
      }
      const Path& p = paths[rng() % paths.size()];
      std::vector<FrameId> one = ids(here, p), two = ids(there, p);
      ASSERT_EQ(one, two);
      here.suffixes(one, suffixes_here);
      there.suffixes(two, suffixes_there);
      // A sample's path appended to several roots (as --children does),
      // which may be on different lanes.
      for (std::size_t r = rng() % roots_here.size(), k = 1 + rng() % 3; k-- > 0;
           r = (r + 1) % roots_here.size()) {
        for (std::size_t from = rng() % 2; from < p.size(); ++from) {
          const std::uint64_t period = 1 + rng() % 5;
          here.append(roots_here[r], std::span<const FrameId>(one).subspan(from), period, 1,
                      suffixes_here[from]);
          there.append(handles[r], std::span<const FrameId>(two).subspan(from), period, 1,
                       suffixes_there[from]);
        }
        if (i % 97 == 0) {  // a path that is not the last one's suffix
          std::vector<FrameId> other(one.begin(), one.end() - 1);
          here.append(roots_here[r], other, 3);
          there.append(handles[r], other, 3);
        }
        if (i % 89 == 0 && p.size() > 1) {  // the same, in the path's own buffer
          here.append(roots_here[r], std::span<const FrameId>(one).first(p.size() - 1), 2);
          there.append(handles[r], std::span<const FrameId>(two).first(p.size() - 1), 2);
        }
      }
    }
    there.finish_deferred();
    EXPECT_FALSE(there.deferred());
    ASSERT_EQ(here.size(), there.size());
    EXPECT_EQ(here.found_by_suffix(), there.found_by_suffix());
    EXPECT_GT(there.found_by_suffix(), 100u);  // the cache was used
    for (std::size_t r = 0; r < roots_here.size(); ++r) {
      if (lanes == 1) {
        EXPECT_EQ(there.root_node(handles[r]), roots_here[r]);
      }
      EXPECT_EQ(tree(here, roots_here[r]), tree(there, there.root_node(handles[r]))) << r;
    }
    // Trees of different lanes merged (perf's collapse), then grown on.
    here.merge(roots_here[0], roots_here[1]);
    there.merge(there.root_node(handles[0]), there.root_node(handles[1]));
    const std::vector<FrameId> last = ids(here, paths[0]);
    here.append(roots_here[1], last, 9);
    there.append(there.root_node(handles[1]), last, 9);
    for (std::size_t r : {0, 1})
      EXPECT_EQ(tree(here, roots_here[r]), tree(there, there.root_node(handles[r]))) << r;
    // Paths appended once the lanes are done, through the suffix cache
    // (whose ids were made for the lanes): found where they were.
    for (int i = 0; i < 300; ++i) {
      const std::size_t r = rng() % roots_here.size();
      const Path& p = paths[rng() % paths.size()];
      const std::vector<FrameId> one = ids(here, p), two = ids(there, p);
      here.suffixes(one, suffixes_here);
      there.suffixes(two, suffixes_there);
      here.append(roots_here[r], one, 1, 1, suffixes_here[0]);
      there.append(there.root_node(handles[r]), two, 1, 1, suffixes_there[0]);
    }
    for (std::size_t r = 0; r < roots_here.size(); ++r)
      EXPECT_EQ(tree(here, roots_here[r]), tree(there, there.root_node(handles[r]))) << r;
  }
}

}  // namespace
}  // namespace perfkit::report
