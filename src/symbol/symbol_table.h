// SymbolTable: the symbols of one DSO as flat, sorted arrays, built once and
// then only read. Building follows perf's rules so that lookups give the
// same answers as perf report: symbols sorted by start (equal starts keep
// their insertion order), zero-size symbols extended to the next symbol
// (symbols__fixup_end), and symbols at the same address reduced to the best
// one (symbols__fixup_duplicate: sized over zero-size, non-weak over weak,
// global over local, fewer leading underscores, longer name).
//
// Symbols can still overlap: a zero-size _init extended over .plt before
// the PLT stubs are added, for one. perf then returns the first symbol
// containing the address on its rbtree's path from the root, so a table
// that tracks the tree (track_perf_tree) looks such addresses up in a
// simulation of perf's tree.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/populate.h"

namespace perfkit::symbol {

inline constexpr std::uint8_t kBindLocal = 0, kBindGlobal = 1, kBindWeak = 2;
inline constexpr std::uint8_t kTypeNoType = 0, kTypeObject = 1, kTypeFunc = 2;
// Symbol::flags: the name has a '[' (kallsyms' module symbols, "name
// [module]"), told by whoever adds it: the kallsyms fixup asks for each.
inline constexpr std::uint8_t kSymbolBracket = 1;
// The name lies in the table's outside text (add_outside()), not its own.
inline constexpr std::uint8_t kSymbolOutsideName = 2;

struct Symbol {
  std::uint64_t start = 0;
  std::uint64_t end = 0;  // exclusive; == start for a zero-size symbol that stayed so
  std::uint32_t name_offset = 0;
  std::uint32_t name_size = 0;
  std::uint32_t node = 0;  // its node in the perf tree (when tracked)
  std::uint8_t binding = 0;
  std::uint8_t type = 0;
  std::uint8_t flags = 0;  // kSymbolBracket, kSymbolOutsideName
};

class SymbolTable {
 public:
  // ---- building ----
  // Simulate perf's symbol rbtree from here on (call before add()).
  void track_perf_tree() { track_ = true; }
  // Room for `symbols` symbols and `name_bytes` of names, so that adding
  // them copies nothing. Capacity never touched is never resident, so a
  // generous guess costs address space only.
  void reserve(std::size_t symbols, std::size_t name_bytes) {
    symbols_.reserve(symbols);
    names_.reserve(name_bytes);
  }
  // Makes the room for the next `symbols` symbols and `name_bytes` of names
  // (within what reserve() gave) resident in one call each
  // (base/populate.h), for a table filled as fast as text is parsed.
  void prefault(std::size_t symbols, std::size_t name_bytes) {
    const std::size_t s = std::min(symbols, symbols_.capacity() - symbols_.size());
    base::populate_for_write(symbols_.data() + symbols_.size(), s * sizeof(Symbol));
    const std::size_t n = std::min(name_bytes, names_.capacity() - names_.size());
    base::populate_for_write(names_.data() + names_.size(), n);
  }
  void add(std::uint64_t start, std::uint64_t size, std::uint8_t binding, std::uint8_t type,
           std::string_view name, std::uint8_t flags = 0);
  // Names may also stay where they are, in `text` (up to 4 GiB), which the
  // table keeps alive through `owner` (a mapped kallsyms file): no copy.
  void name_outside(const char* text, std::shared_ptr<const void> owner) {
    outside_ = text;
    outside_owner_ = std::move(owner);
  }
  // add() for a name inside the text given to name_outside().
  void add_outside(std::uint64_t start, std::uint64_t size, std::uint8_t binding, std::uint8_t type,
                   std::string_view name, std::uint8_t flags = 0);
  // Sorts what was added and applies perf's fixups. `kallsyms` selects the
  // kernel rule for the last symbol before a module ('[' in the name, as
  // kSymbolBracket says).
  // Called once per batch of symbols perf fixes up together (.symtab, then
  // .dynsym); symbols added after the last fixup (PLT stubs) go through
  // sort_only().
  void fixup(bool kallsyms);
  void sort_only();

  // ---- lookup ----
  // The index of the symbol containing `addr` (start <= addr < end, or
  // addr == start for a zero-size one), or -1.
  int find(std::uint64_t addr) const;
  std::size_t size() const { return symbols_.size(); }
  bool empty() const { return symbols_.empty(); }
  const Symbol& at(std::size_t i) const { return symbols_[i]; }
  std::string_view name(std::size_t i) const { return name_of(symbols_[i]); }
  // Index of the first symbol with exactly this name, or -1 (linear).
  int find_by_name(std::string_view name) const;
  // Moves every symbol by `delta` (kallsyms relocation).
  void relocate(std::int64_t delta);
  std::uint64_t first_start() const { return symbols_.empty() ? 0 : symbols_.front().start; }
  std::uint64_t last_end() const { return symbols_.empty() ? 0 : symbols_.back().end; }

 private:
  std::string_view name_of(const Symbol& s) const {
    const char* base = (s.flags & kSymbolOutsideName) ? outside_ : names_.data();
    return {base + s.name_offset, s.name_size};
  }
  Symbol& add_symbol(std::uint64_t start, std::uint64_t size, std::uint8_t binding,
                     std::uint8_t type, std::uint8_t flags);
  void fixup_end(bool kallsyms);
  void fixup_duplicate();
  void index_tree();
  void build_tree();
  int find_in_tree(std::uint64_t addr) const;

  // A node of the simulated perf tree: insertion key and links.
  struct TreeNode {
    std::uint32_t left = 0, right = 0, parent = 0;
    std::uint32_t index = 0;  // into symbols_, once indexed
    std::uint64_t start = 0;
    bool red = false;
  };

  std::vector<Symbol> symbols_;
  std::string names_;
  const char* outside_ = nullptr;  // name_outside()
  std::shared_ptr<const void> outside_owner_;
  std::vector<TreeNode> tree_;
  std::uint32_t root_ = UINT32_MAX;
  // perf's inserts (a node) and erases (kEraseOp | node) in their order,
  // applied by build_tree() up to tree_applied_: the tree is only built
  // when some symbols overlap (otherwise a binary search finds what perf's
  // walk would).
  static constexpr std::uint32_t kEraseOp = 1u << 31;
  std::vector<std::uint32_t> tree_log_;
  std::size_t tree_applied_ = 0;
  bool track_ = false;
  bool overlaps_ = false;  // some address is in two symbols: look up in the tree
};

}  // namespace perfkit::symbol
