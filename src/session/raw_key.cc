#include "session/raw_key.h"

#include <algorithm>

#include "base/flat_map.h"

namespace perfkit::session {

namespace {
constexpr std::uint64_t kEmpty = ~0ULL;

}  // namespace

record::ChainDigest raw_chain_digest(const RawSample& r, RawKeyOptions o) {
  if (!o.with_chain) return {};
  if (r.chain_digest.made()) return r.chain_digest;
  return record::callchain_digest(r.sample->callchain.bytes());
}

std::uint64_t raw_sample_hash(const RawSample& r, RawKeyOptions o, std::uint64_t generation,
                              const record::ChainDigest& chain) {
  const record::Sample& s = *r.sample;
  constexpr std::uint64_t k1 = 0x9e3779b97f4a7c15ULL, k2 = 0xc2b2ae3d27d4eb4fULL;
  std::uint64_t a = reinterpret_cast<std::uintptr_t>(r.thread) ^ generation << 32 ^
                    static_cast<std::uint64_t>(r.event) << 16 ^ r.cpumode;
  std::uint64_t b = s.ip ^ (o.with_cpu ? static_cast<std::uint64_t>(s.cpu) << 48 : 0);
  if (o.with_chain) b = (b ^ chain.lo) * k1;
  return mix64(a * k2 ^ b);
}

// (inlined in find(): asked once or twice for every sample)
[[gnu::always_inline]] inline bool RawKeyTable::same(const Entry& e, const RawSample& r,
                                                     std::uint64_t generation,
                                                     const record::ChainDigest& chain) const {
  const record::Sample& s = *r.sample;
  if (e.thread != r.thread || e.generation != generation || e.ip != s.ip || e.event != r.event ||
      e.cpumode != r.cpumode || (opts_.with_cpu && e.cpu != s.cpu))
    return false;
  return !opts_.with_chain || (e.chain == chain && e.chain_size == s.callchain.bytes().size());
}

std::uint32_t RawKeyTable::find(const RawSample& r, std::uint64_t generation) {
  const record::ChainDigest chain = raw_chain_digest(r, opts_);
  std::uint32_t& last = last_[r.sample->cpu % last_.size()];
  if (last) {
    const Entry& e = entries_[last - 1];
    if (same(e, r, generation, chain)) return e.value;
  }
  const std::uint64_t h = raw_sample_hash(r, opts_, generation, chain);
  if (!slots_.empty()) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const std::uint64_t v = slots_[i];
      if (v == kEmpty) break;
      if ((v >> 32) != (h >> 32)) continue;
      const Entry& e = entries_[static_cast<std::uint32_t>(v)];
      if (e.hash == h && same(e, r, generation, chain)) {
        last = static_cast<std::uint32_t>(v) + 1;
        return e.value;
      }
    }
  }
  // Remember the miss for insert().
  const record::Sample& s = *r.sample;
  miss_ = Entry{
      .hash = h,
      .thread = r.thread,
      .generation = generation,
      .ip = s.ip,
      .chain = chain,
      .event = static_cast<std::uint32_t>(r.event),
      .cpu = s.cpu,
      .chain_size = opts_.with_chain ? static_cast<std::uint32_t>(s.callchain.bytes().size()) : 0,
      .cpumode = r.cpumode};
  pending_ = true;
  return kNone;
}

void RawKeyTable::insert(std::uint32_t value) {
  if (!pending_) return;
  pending_ = false;
  miss_.value = value;
  if ((entries_.size() + 1) * 2 > slots_.size()) {
    slots_.assign(std::max<std::size_t>(1024, slots_.size() * 2), kEmpty);
    for (std::size_t i = 0; i < entries_.size(); ++i) place(entries_[i].hash, i);
  }
  place(miss_.hash, entries_.size());
  entries_.push_back(miss_);
  last_[miss_.cpu % last_.size()] = static_cast<std::uint32_t>(entries_.size());
}

void RawKeyTable::place(std::uint64_t hash, std::size_t index) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  while (slots_[i] != kEmpty) i = (i + 1) & mask;
  slots_[i] = (hash >> 32) << 32 | index;
}

void RawKeyTable::clear() {
  entries_.clear();
  std::fill(slots_.begin(), slots_.end(), kEmpty);
  pending_ = false;
  last_.fill(0);
}

}  // namespace perfkit::session
