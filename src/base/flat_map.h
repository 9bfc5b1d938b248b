// FlatMap: an open-addressing hash map from a small key to a uint32 value
// (linear probing, power-of-two capacity, backward-shift erase). The
// report's hot lookups (entries by key, call-graph children by frame) go
// through it: one probe sequence in one array, no node allocations.
#pragma once

#include <cstdint>
#include <vector>

namespace perfkit {

template <class Key, class Hash>
class FlatMap {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  // The value for `k`, or kNone.
  std::uint32_t find(const Key& k) const {
    if (slots_.empty()) return kNone;
    for (std::size_t i = Hash{}(k)&mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value == kNone) return kNone;
      if (s.key == k) return s.value;
    }
  }
  // Inserts k -> v; `k` must not be present.
  void insert(const Key& k, std::uint32_t v) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    place(k, v);
    ++size_;
  }
  void erase(const Key& k) {
    if (slots_.empty()) return;
    std::size_t i = Hash{}(k)&mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].value == kNone) return;
      if (slots_[i].key == k) break;
    }
    // Backward shift: move later members of the run into the hole.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; slots_[j].value != kNone; j = (j + 1) & mask_) {
      std::size_t home = Hash{}(slots_[j].key) & mask_;
      bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].value = kNone;
    --size_;
  }
  void clear() {
    slots_.clear();
    size_ = 0;
    mask_ = 0;
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    Key key{};
    std::uint32_t value = kNone;
  };
  void place(const Key& k, std::uint32_t v) {
    std::size_t i = Hash{}(k)&mask_;
    while (slots_[i].value != kNone) i = (i + 1) & mask_;
    slots_[i].key = k;
    slots_[i].value = v;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.value != kNone) place(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

// A 64-bit finalizer (splitmix64) for building hashes of small keys.
inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace perfkit
