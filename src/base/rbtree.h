// Red-black trees with the shape the Linux kernel's lib/rbtree.c gives
// them, over nodes kept in a vector and linked by index. perf keeps its
// symbols and histogram entries in such trees, and where its comparisons
// are not a consistent order (overlapping symbols, ties that depend on
// the pair compared) what it finds or prints depends on the tree's shape.
// Simulating the tree gives the same answers.
//
// A node type has members `left`, `right`, `parent` (std::uint32_t) and
// `red` (bool); kRbNil marks a missing link.
#pragma once

#include <cstdint>
#include <vector>

namespace perfkit::base {

inline constexpr std::uint32_t kRbNil = UINT32_MAX;

namespace rb_detail {

template <class Node>
void rotate(std::vector<Node>& t, std::uint32_t& root, std::uint32_t x, bool to_left) {
  // to_left: x's right child y takes x's place and x becomes y's left.
  std::uint32_t y = to_left ? t[x].right : t[x].left;
  std::uint32_t inner = to_left ? t[y].left : t[y].right;
  (to_left ? t[x].right : t[x].left) = inner;
  if (inner != kRbNil) t[inner].parent = x;
  std::uint32_t p = t[x].parent;
  t[y].parent = p;
  if (p == kRbNil)
    root = y;
  else if (t[p].left == x)
    t[p].left = y;
  else
    t[p].right = y;
  (to_left ? t[y].left : t[y].right) = x;
  t[x].parent = y;
}

template <class Node>
bool is_red(const std::vector<Node>& t, std::uint32_t n) {
  return n != kRbNil && t[n].red;
}

// Puts `with` (or nothing) where `node` hangs from its parent.
template <class Node>
void change_child(std::vector<Node>& t, std::uint32_t& root, std::uint32_t node,
                  std::uint32_t with) {
  std::uint32_t p = t[node].parent;
  if (p == kRbNil)
    root = with;
  else if (t[p].left == node)
    t[p].left = with;
  else
    t[p].right = with;
  if (with != kRbNil) t[with].parent = p;
}

// lib/rbtree.c's ____rb_erase_color: `parent` lost a black node on the
// side where `node` (maybe nil) now hangs.
template <class Node>
void erase_color(std::vector<Node>& t, std::uint32_t& root, std::uint32_t node,
                 std::uint32_t parent) {
  while (parent != kRbNil) {
    const bool on_left = node != t[parent].right;  // the kernel's test
    std::uint32_t sib = on_left ? t[parent].right : t[parent].left;
    if (is_red(t, sib)) {
      t[sib].red = false;
      t[parent].red = true;
      rotate(t, root, parent, on_left);
      sib = on_left ? t[parent].right : t[parent].left;
    }
    std::uint32_t outer = on_left ? t[sib].right : t[sib].left;
    std::uint32_t inner = on_left ? t[sib].left : t[sib].right;
    if (!is_red(t, outer) && !is_red(t, inner)) {
      t[sib].red = true;
      if (t[parent].red) {
        t[parent].red = false;
        return;
      }
      node = parent;
      parent = t[node].parent;
      continue;
    }
    if (!is_red(t, outer)) {
      t[inner].red = false;
      t[sib].red = true;
      rotate(t, root, sib, !on_left);
      sib = on_left ? t[parent].right : t[parent].left;
      outer = on_left ? t[sib].right : t[sib].left;
    }
    t[sib].red = t[parent].red;
    t[parent].red = false;
    t[outer].red = false;
    rotate(t, root, parent, on_left);
    return;
  }
}

}  // namespace rb_detail

// Hangs node `z` under `parent` (kRbNil: as the root), on its left when
// `left`, then rebalances as the kernel's rb_insert_color does. True when
// that rotated nodes (which can change other keys' search paths; a new
// leaf alone changes none).
template <class Node>
bool rb_link(std::vector<Node>& t, std::uint32_t& root, std::uint32_t z, std::uint32_t parent,
             bool left) {
  t[z].left = t[z].right = kRbNil;
  t[z].parent = parent;
  t[z].red = true;
  if (parent == kRbNil)
    root = z;
  else
    (left ? t[parent].left : t[parent].right) = z;
  std::uint32_t k = z;
  while (t[k].parent != kRbNil && t[t[k].parent].red) {
    std::uint32_t p = t[k].parent, g = t[p].parent;
    const bool p_left = p == t[g].left;
    std::uint32_t uncle = p_left ? t[g].right : t[g].left;
    if (rb_detail::is_red(t, uncle)) {
      t[p].red = t[uncle].red = false;
      t[g].red = true;
      k = g;
      continue;
    }
    if (k == (p_left ? t[p].right : t[p].left)) {
      k = p;
      rb_detail::rotate(t, root, k, p_left);
      p = t[k].parent;
    }
    t[p].red = false;
    t[g].red = true;
    rb_detail::rotate(t, root, g, !p_left);
    t[root].red = false;
    return true;
  }
  t[root].red = false;
  return false;
}

// Searches as perf's findnew functions do: from the root, cmp(existing
// node) < 0 goes left, > 0 right, 0 finds it. Returns the first node found,
// else links `z` where the search ended and returns z (`rotated`, when
// given, says whether linking it rotated nodes).
template <class Node, class Cmp>
std::uint32_t rb_find_or_link(std::vector<Node>& t, std::uint32_t& root, std::uint32_t z, Cmp cmp,
                              bool* rotated = nullptr) {
  std::uint32_t y = kRbNil, x = root;
  bool left = false;
  while (x != kRbNil) {
    auto c = cmp(t[x]);
    if (c == 0) return x;
    y = x;
    left = c < 0;
    x = left ? t[x].left : t[x].right;
  }
  bool r = rb_link(t, root, z, y, left);
  if (rotated) *rotated = r;
  return z;
}

// Links node `z` into the tree: from the root, left while
// go_left(existing node, t[z]), else right (equal keys go right); then the
// kernel's insert rebalancing.
template <class Node, class GoLeft>
void rb_insert(std::vector<Node>& t, std::uint32_t& root, std::uint32_t z, GoLeft go_left) {
  std::uint32_t y = kRbNil, x = root;
  bool left = false;
  while (x != kRbNil) {
    y = x;
    left = go_left(t[x], t[z]);
    x = left ? t[x].left : t[x].right;
  }
  rb_link(t, root, z, y, left);
}

// Unlinks node `z` as lib/rbtree.c's rb_erase does: a node with two
// children is replaced by its successor, then the colours are repaired.
template <class Node>
void rb_erase(std::vector<Node>& t, std::uint32_t& root, std::uint32_t z) {
  std::uint32_t rebalance = kRbNil, left = t[z].left, right = t[z].right;
  if (left == kRbNil || right == kRbNil) {
    std::uint32_t child = left == kRbNil ? right : left;
    std::uint32_t parent = t[z].parent;
    rb_detail::change_child(t, root, z, child);
    if (child != kRbNil)
      t[child].red = false;  // a lone child is red under a black node
    else if (!t[z].red)
      rebalance = parent;
    if (rebalance != kRbNil) rb_detail::erase_color(t, root, kRbNil, rebalance);
    return;
  }
  std::uint32_t succ = right, parent = right, child2;
  if (t[right].left == kRbNil) {
    child2 = t[succ].right;
  } else {
    while (t[succ].left != kRbNil) {
      parent = succ;
      succ = t[succ].left;
    }
    child2 = t[succ].right;
    t[parent].left = child2;
    if (child2 != kRbNil) t[child2].parent = parent;
    t[succ].right = right;
    t[right].parent = succ;
  }
  t[succ].left = left;
  t[left].parent = succ;
  const bool succ_red = t[succ].red;
  rb_detail::change_child(t, root, z, succ);
  t[succ].red = t[z].red;
  if (child2 != kRbNil)
    t[child2].red = false;
  else if (!succ_red)
    rebalance = parent;
  if (rebalance != kRbNil) rb_detail::erase_color(t, root, kRbNil, rebalance);
}

// Calls f(index) for every node from the leftmost to the rightmost.
template <class Node, class F>
void rb_in_order(const std::vector<Node>& t, std::uint32_t root, F f) {
  std::vector<std::uint32_t> stack;
  std::uint32_t cur = root;
  while (cur != kRbNil || !stack.empty()) {
    while (cur != kRbNil) {
      stack.push_back(cur);
      cur = t[cur].left;
    }
    cur = stack.back();
    stack.pop_back();
    f(cur);
    cur = t[cur].right;
  }
}

}  // namespace perfkit::base
