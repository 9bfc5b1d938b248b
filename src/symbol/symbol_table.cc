#include "symbol/symbol_table.h"

#include <algorithm>

#include "base/rbtree.h"

namespace perfkit::symbol {

Symbol& SymbolTable::add_symbol(std::uint64_t start, std::uint64_t size, std::uint8_t binding,
                                std::uint8_t type, std::uint8_t flags) {
  // Filled in place: a Symbol built aside and copied whole would be read
  // back before its narrow stores land (a stall on every symbol).
  Symbol& s = symbols_.emplace_back();
  s.start = start;
  s.end = start + size;
  s.binding = binding;
  s.type = type;
  s.flags = flags;
  if (track_) {
    // (inserted into perf's tree only if a look-up will walk it)
    s.node = static_cast<std::uint32_t>(tree_.size());
    tree_.push_back(TreeNode{.start = start});
    tree_log_.push_back(s.node);
  }
  return s;
}

// Applies the tree operations logged since the last call, in their order:
// the tree is the one perf's inserts and erases made.
void SymbolTable::build_tree() {
  for (; tree_applied_ < tree_log_.size(); ++tree_applied_) {
    const std::uint32_t op = tree_log_[tree_applied_];
    if (op & kEraseOp) {
      base::rb_erase(tree_, root_, op & ~kEraseOp);
    } else {
      // perf's symbols__insert: by start, equal starts to the right.
      base::rb_insert(tree_, root_, op,
                      [](const TreeNode& at, const TreeNode& n) { return n.start < at.start; });
    }
  }
}

void SymbolTable::add(std::uint64_t start, std::uint64_t size, std::uint8_t binding,
                      std::uint8_t type, std::string_view name, std::uint8_t flags) {
  Symbol& s = add_symbol(start, size, binding, type,
                         static_cast<std::uint8_t>(flags & ~kSymbolOutsideName));
  s.name_offset = static_cast<std::uint32_t>(names_.size());
  s.name_size = static_cast<std::uint32_t>(name.size());
  names_.append(name);
}

void SymbolTable::add_outside(std::uint64_t start, std::uint64_t size, std::uint8_t binding,
                              std::uint8_t type, std::string_view name, std::uint8_t flags) {
  Symbol& s = add_symbol(start, size, binding, type, flags | kSymbolOutsideName);
  s.name_offset = static_cast<std::uint32_t>(name.data() - outside_);
  s.name_size = static_cast<std::uint32_t>(name.size());
}

void SymbolTable::sort_only() {
  auto by_start = [](const Symbol& a, const Symbol& b) { return a.start < b.start; };
  // kallsyms is sorted already
  if (!std::is_sorted(symbols_.begin(), symbols_.end(), by_start))
    std::stable_sort(symbols_.begin(), symbols_.end(), by_start);
  index_tree();
}

void SymbolTable::fixup(bool kallsyms) {
  sort_only();
  fixup_end(kallsyms);
  fixup_duplicate();
  index_tree();
}

// Points the tree's nodes at their symbols and notes whether any symbols
// overlap (only then can perf's walk differ from a binary search).
void SymbolTable::index_tree() {
  if (!track_) return;
  overlaps_ = false;
  for (std::size_t i = 1; i < symbols_.size() && !overlaps_; ++i)
    overlaps_ = symbols_[i].start < symbols_[i - 1].end;
  if (!overlaps_) return;
  build_tree();
  for (std::size_t i = 0; i < symbols_.size(); ++i)
    tree_[symbols_[i].node].index = static_cast<std::uint32_t>(i);
}

void SymbolTable::fixup_end(bool kallsyms) {
  if (symbols_.empty()) return;
  auto has_bracket = [](const Symbol& s) { return (s.flags & kSymbolBracket) != 0; };
  // (Whether the previous symbol's name has a bracket, carried along.)
  bool prev_bracket = kallsyms && has_bracket(symbols_[0]);
  for (std::size_t i = 1; i < symbols_.size(); ++i) {
    Symbol& prev = symbols_[i - 1];
    const Symbol& curr = symbols_[i];
    const bool curr_bracket = kallsyms && has_bracket(curr);
    const bool differ = prev_bracket != curr_bracket;
    prev_bracket = curr_bracket;
    if (prev.end != prev.start) continue;
    // The last kernel symbol before the modules (or the reverse) ends at the
    // next page instead of spanning the gap.
    if (differ)
      prev.end = (prev.end + 4096 + 4095) / 4096 * 4096;
    else
      prev.end = curr.start;
  }
  Symbol& last = symbols_.back();
  if (last.end == last.start) last.end = (last.start + 4095) / 4096 * 4096 + 4096;
}

namespace {

int leading_underscores(std::string_view s) {
  int n = 0;
  while (n < static_cast<int>(s.size()) && s[n] == '_') ++n;
  return n;
}

}  // namespace

void SymbolTable::fixup_duplicate() {
  // Returns true to keep `a` (the earlier) over `b`.
  auto keep_first = [&](const Symbol& a, const Symbol& b) {
    std::string_view na = name_of(a), nb = name_of(b);
    std::uint64_t la = a.end - a.start, lb = b.end - b.start;
    if (lb == 0 && la > 0) return true;
    if (la == 0 && lb > 0) return false;
    bool wa = a.binding == kBindWeak, wb = b.binding == kBindWeak;
    if (wb && !wa) return true;
    if (wa && !wb) return false;
    bool ga = a.binding == kBindGlobal, gb = b.binding == kBindGlobal;
    if (ga && !gb) return true;
    if (gb && !ga) return false;
    int ua = leading_underscores(na), ub = leading_underscores(nb);
    if (ub > ua) return true;
    if (ua > ub) return false;
    if (na.size() != nb.size()) return na.size() > nb.size();
    // x86's tie-break: avoid the SyS syscall aliases.
    if (na.starts_with("SyS") || na.starts_with("compat_SyS")) return false;
    return true;
  };
  // In place: a copy of kallsyms' table would double its peak memory.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < symbols_.size(); ++i) {
    const Symbol& s = symbols_[i];
    if (kept && symbols_[kept - 1].start == s.start) {
      // perf erases the loser from its tree.
      if (keep_first(symbols_[kept - 1], s)) {
        if (track_) tree_log_.push_back(s.node | kEraseOp);
      } else {
        if (track_) tree_log_.push_back(symbols_[kept - 1].node | kEraseOp);
        symbols_[kept - 1] = s;
      }
      continue;
    }
    if (kept != i) symbols_[kept] = s;  // (most stay where they are)
    ++kept;
  }
  symbols_.resize(kept);
}

int SymbolTable::find(std::uint64_t addr) const {
  if (overlaps_) return find_in_tree(addr);
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                             [](std::uint64_t a, const Symbol& s) { return a < s.start; });
  // Overlapping symbols are rare; look back a little for one that contains addr.
  for (int back = 0; back < 4 && it != symbols_.begin(); ++back) {
    --it;
    if (addr < it->end || (addr == it->start && it->end == it->start))
      return static_cast<int>(it - symbols_.begin());
  }
  return -1;
}

// perf's symbols__find: the first node on the path from the root that
// contains addr.
int SymbolTable::find_in_tree(std::uint64_t addr) const {
  std::uint32_t n = root_;
  while (n != base::kRbNil) {
    const TreeNode& t = tree_[n];
    const Symbol& s = symbols_[t.index];
    if (addr < s.start)
      n = t.left;
    else if (addr < s.end || (addr == s.start && s.end == s.start))
      return static_cast<int>(t.index);
    else
      n = t.right;
  }
  return -1;
}

int SymbolTable::find_by_name(std::string_view name) const {
  for (std::size_t i = 0; i < symbols_.size(); ++i)
    if (this->name(i) == name) return static_cast<int>(i);
  return -1;
}

void SymbolTable::relocate(std::int64_t delta) {
  for (auto& s : symbols_) {
    s.start += static_cast<std::uint64_t>(delta);
    s.end += static_cast<std::uint64_t>(delta);
  }
}

}  // namespace perfkit::symbol
