// base/rbtree.h: the kernel's insert and erase keep a valid red-black tree
// (in order, no red node under a red one, equal black heights), equal keys
// stay in insertion order, and small cases take the kernel's shapes.
#include "base/rbtree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace perfkit::base {
namespace {

struct N {
  std::uint32_t left = 0, right = 0, parent = 0;
  bool red = false;
  int key = 0;
  bool linked = false;
};

auto by_key = [](const N& at, const N& n) { return n.key < at.key; };

// Returns the black height, failing the test on a broken property.
int check(const std::vector<N>& t, std::uint32_t n, std::uint32_t parent) {
  if (n == kRbNil) return 1;
  EXPECT_EQ(t[n].parent, parent);
  if (t[n].red) {
    EXPECT_FALSE(t[n].left != kRbNil && t[t[n].left].red);
    EXPECT_FALSE(t[n].right != kRbNil && t[t[n].right].red);
  }
  int l = check(t, t[n].left, n), r = check(t, t[n].right, n);
  EXPECT_EQ(l, r);
  return l + (t[n].red ? 0 : 1);
}

TEST(RbTree, RandomInsertsAndErasesStayValid) {
  std::mt19937 rng(12345);
  std::vector<N> t;
  std::uint32_t root = kRbNil;
  std::vector<std::uint32_t> live;
  for (int step = 0; step < 4000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      auto z = static_cast<std::uint32_t>(t.size());
      t.push_back(N{.key = static_cast<int>(rng() % 200)});
      rb_insert(t, root, z, by_key);
      live.push_back(z);
    } else {
      std::size_t i = rng() % live.size();
      rb_erase(t, root, live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (step % 97 != 0) continue;
    ASSERT_TRUE(root == kRbNil || !t[root].red);
    check(t, root, kRbNil);
    // In order: by key, equal keys in insertion (index) order.
    std::vector<std::uint32_t> seen;
    rb_in_order(t, root, [&](std::uint32_t i) { seen.push_back(i); });
    std::vector<std::uint32_t> want = live;
    std::stable_sort(want.begin(), want.end(), [&](std::uint32_t a, std::uint32_t b) {
      return t[a].key != t[b].key ? t[a].key < t[b].key : a < b;
    });
    ASSERT_EQ(seen, want) << "step " << step;
  }
}

TEST(RbTree, KernelShapes) {
  std::vector<N> t(7);
  std::uint32_t root = kRbNil;
  for (std::uint32_t i = 0; i < 3; ++i) {
    t[i].key = static_cast<int>(i);
    rb_insert(t, root, i, by_key);
  }
  // 0, 1, 2 ascending: rotated so that 1 is the black root of two reds.
  EXPECT_EQ(root, 1u);
  EXPECT_EQ(t[1].left, 0u);
  EXPECT_EQ(t[1].right, 2u);
  EXPECT_TRUE(t[0].red && t[2].red && !t[1].red);
  // Erasing the root: its successor (2) takes its place and colour.
  rb_erase(t, root, 1);
  EXPECT_EQ(root, 2u);
  EXPECT_EQ(t[2].left, 0u);
  EXPECT_EQ(t[2].right, kRbNil);
  EXPECT_FALSE(t[2].red);
  EXPECT_TRUE(t[0].red);
  // Erasing a black leaf whose sibling has a red child: a double rotation.
  std::vector<N> u(4);
  std::uint32_t r2 = kRbNil;
  int keys[] = {10, 5, 20, 15};
  for (std::uint32_t i = 0; i < 4; ++i) {
    u[i].key = keys[i];
    rb_insert(u, r2, i, by_key);
  }
  rb_erase(u, r2, 1);  // 5
  EXPECT_EQ(r2, 3u);   // 15 rises to the root
  EXPECT_EQ(u[3].left, 0u);
  EXPECT_EQ(u[3].right, 2u);
  EXPECT_TRUE(!u[0].red && !u[2].red && !u[3].red);
}

// perf's findnew search: the first node on the path that compares equal is
// found; an inconsistent comparison can pass an equal node by and link a
// second one, which is what the search of a consistent one never does.
TEST(RbTree, FindOrLinkFindsOnTheSearchPathOnly) {
  std::vector<N> t;
  std::uint32_t root = kRbNil;
  auto add = [&](int key, auto cmp) {
    auto z = static_cast<std::uint32_t>(t.size());
    t.push_back(N{.key = key});
    std::uint32_t f = rb_find_or_link(t, root, z, [&](const N& at) { return cmp(at, t[z]); });
    if (f != z) t.pop_back();
    return f;
  };
  auto by = [](const N& at, const N& n) { return n.key - at.key; };
  for (int k : {50, 20, 80, 10, 30}) add(k, by);
  EXPECT_EQ(add(30, by), 4u);  // found, nothing linked
  EXPECT_EQ(t.size(), 5u);
  EXPECT_EQ(add(60, by), 5u);  // linked
  check(t, root, kRbNil);
  // A comparison that sends 30 right at the root never meets node 4 (30):
  // a second 30 is linked.
  auto skewed = [](const N& at, const N& n) { return at.key == 50 ? 1 : n.key - at.key; };
  EXPECT_EQ(add(30, skewed), 6u);
  check(t, root, kRbNil);
}

}  // namespace
}  // namespace perfkit::base
