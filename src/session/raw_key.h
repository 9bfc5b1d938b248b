// Raw sample keys: what makes two samples resolve alike before any address
// is resolved.
//
// Two samples with the same raw content (thread, event, cpumode, ip, the
// words of their call chain and, where it matters, cpu), taken while the
// machine's maps and threads stayed as they were (Machine::generation),
// resolve to the same locations. Visitors that only need what a sample
// resolved to (the report's fold, the profile builder) resolve the first and
// reuse it for the repeats, which most samples of a profile are.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "session/session.h"

namespace perfkit::session {

struct RawKeyOptions {
  bool with_cpu = false;    // the cpu tells samples apart
  bool with_chain = false;  // so does the call chain (it is resolved at all)
};

// The chain digest of `r`'s key: the one read ahead, or one made now (none
// where the chain is not part of the key).
record::ChainDigest raw_chain_digest(const RawSample& r, RawKeyOptions o);
// The hash of `r`'s key in `generation`, its chain digest `chain`.
std::uint64_t raw_sample_hash(const RawSample& r, RawKeyOptions o, std::uint64_t generation,
                              const record::ChainDigest& chain);

// A table from raw sample keys to a value (a stack, an entry): find() a
// sample, and after a miss, insert() what it resolved to.
class RawKeyTable {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  explicit RawKeyTable(RawKeyOptions o) : opts_(o) {}

  // The value kept for a sample like `r` of `generation`, or kNone; a miss
  // is remembered for insert().
  std::uint32_t find(const RawSample& r, std::uint64_t generation);
  // Keeps `value` for the sample find() last missed.
  void insert(std::uint32_t value);
  void clear();
  // Room for `entries` keys at once: growing by copies would hold two
  // arrays at the peak (the pages are only touched as keys come).
  void reserve(std::size_t entries) { entries_.reserve(entries); }
  std::size_t size() const { return entries_.size(); }
  // Memory held by the keys, to bound it.
  std::size_t bytes() const { return entries_.size() * sizeof(Entry) + slots_.size() * 8; }

 private:
  // A chain is told apart by its digest and its length, not its words: two
  // chains of different words share a digest with a chance of 2^-128 (what
  // content-addressed stores rely on), and neither the words' memory nor
  // their comparison, which read the words again (on the reading thread's
  // core, under --jobs), is paid for every sample.
  struct Entry {
    std::uint64_t hash = 0;
    const machine::Thread* thread = nullptr;
    std::uint64_t generation = 0;
    std::uint64_t ip = 0;
    record::ChainDigest chain;
    std::uint32_t event = 0, cpu = 0;
    std::uint32_t chain_size = 0;  // bytes of call chain words
    std::uint8_t cpumode = 0;
    std::uint32_t value = 0;
  };
  bool same(const Entry& e, const RawSample& r, std::uint64_t generation,
            const record::ChainDigest& chain) const;
  void place(std::uint64_t hash, std::size_t index);

  RawKeyOptions opts_;
  std::vector<Entry> entries_;
  // By cpu (its low bits), the entry its last sample matched, plus one (0:
  // none): a cpu's samples mostly repeat the one before (a hot loop's few
  // addresses), found so without hashing.
  std::array<std::uint32_t, 64> last_{};
  // Open addressing: the hash's high half beside an index into entries_.
  std::vector<std::uint64_t> slots_;
  Entry miss_;  // what find() last turned down
  bool pending_ = false;
};

}  // namespace perfkit::session
