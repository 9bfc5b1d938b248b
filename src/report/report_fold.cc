#include "report/report_fold.h"

#include <algorithm>
#include <cstring>

#include "abi/perf_event.h"
#include "session/raw_key.h"

namespace perfkit::report {

namespace {
constexpr std::uint64_t kEmpty = ~0ULL;

std::uint64_t load_word(const std::uint8_t* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
}  // namespace

std::uint64_t SampleFold::hash_of(const session::RawSample& r, std::uint64_t generation) const {
  return session::raw_sample_hash(r, {with_cpu_, with_chain_}, generation);
}

bool SampleFold::same(const Kept& k, const session::RawSample& r, std::uint64_t generation) const {
  const record::Sample& s = *r.sample;
  if (k.thread != r.thread || k.generation != generation || k.ip != s.ip || k.event != r.event ||
      k.cpumode != r.cpumode || (with_cpu_ && k.cpu != s.cpu))
    return false;
  if (!with_chain_) return true;
  Bytes w = s.callchain.bytes();
  if (w.size() != k.raw_size) return false;
  const std::uint8_t* kept = raw_.data() + k.raw_begin;
  for (std::size_t i = 0; i + 8 <= w.size(); i += 8)
    if (load_word(kept + i) != load_word(w.data() + i)) return false;
  return true;
}

bool SampleFold::fold(const session::RawSample& r, std::uint64_t period, std::uint64_t generation) {
  const std::uint64_t h = hash_of(r, generation);
  const std::size_t mask = slots_.size() - 1;
  if (!slots_.empty()) {
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const std::uint64_t v = slots_[i];
      if (v == kEmpty) break;
      if ((v >> 32) != (h >> 32)) continue;
      Kept& k = kept_[static_cast<std::uint32_t>(v)];
      if (k.hash == h && same(k, r, generation)) {
        k.period += period;
        ++k.count;
        ++repeats_;
        return true;
      }
    }
  }
  miss_hash_ = h;
  miss_period_ = period;
  miss_generation_ = generation;
  return false;
}

const machine::Map* SampleFold::stable(const machine::Map* map, std::uint64_t generation) {
  if (!map) return nullptr;
  // Within one generation a map stays where it is; any change starts another.
  if (generation != map_copies_generation_) {
    map_copies_.clear();
    map_copies_generation_ = generation;
  }
  auto [it, added] = map_copies_.try_emplace(map, nullptr);
  if (added) it->second = &maps_.emplace_back(*map);
  return it->second;
}

void SampleFold::keep(const session::ResolvedSample& s, std::uint64_t generation) {
  Kept k;
  k.hash = miss_hash_;
  k.generation = miss_generation_;
  k.thread = s.thread;
  k.comm = s.comm;
  k.ip = s.sample->ip;
  k.sample_type = s.sample->sample_type;
  k.event = static_cast<std::uint32_t>(s.event);
  k.cpu = s.sample->cpu;
  k.cpumode = s.cpumode;
  k.loc = s.loc;
  k.loc.map = stable(s.loc.map, generation);
  k.period = miss_period_;
  k.count = 1;
  if (with_chain_) {
    Bytes b = s.sample->callchain.bytes();
    k.raw_begin = static_cast<std::uint32_t>(raw_.size());
    k.raw_size = static_cast<std::uint32_t>(b.size());
    raw_.insert(raw_.end(), b.begin(), b.end());
  }
  k.frames_begin = static_cast<std::uint32_t>(frames_.size());
  k.frames_size = static_cast<std::uint32_t>(s.callchain.size());
  for (const session::Frame& f : s.callchain) {
    session::Frame& c = frames_.emplace_back(f);
    c.loc.map = stable(f.loc.map, generation);
  }
  if ((kept_.size() + 1) * 2 > slots_.size()) {
    slots_.assign(std::max<std::size_t>(1024, slots_.size() * 2), kEmpty);
    for (std::size_t i = 0; i < kept_.size(); ++i) place(kept_[i].hash, i);
  }
  place(k.hash, kept_.size());
  kept_.push_back(k);
}

void SampleFold::place(std::uint64_t hash, std::size_t index) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  while (slots_[i] != kEmpty) i = (i + 1) & mask;
  slots_[i] = (hash >> 32) << 32 | index;
}

const session::ResolvedSample& SampleFold::replay(machine::Machine& m, Kept& k) {
  replay_sample_.sample_type = k.sample_type;
  replay_sample_.ip = k.ip;
  replay_sample_.cpu = k.cpu;
  replay_sample_.period = k.period;
  replay_.event = k.event;
  replay_.sample = &replay_sample_;
  replay_.cpumode = k.cpumode;
  replay_.thread = k.thread;
  replay_.comm = k.comm;
  replay_.loc = k.loc;
  if (k.loc.symbol == machine::kSymbolPending)
    replay_.loc = m.resolve(*k.thread, abi::kMiscKernel, k.ip, false);
  std::span<session::Frame> frames(frames_.data() + k.frames_begin, k.frames_size);
  for (session::Frame& f : frames)
    if (f.loc.symbol == machine::kSymbolPending)
      f.loc = m.resolve(*k.thread, abi::kMiscKernel, f.ip, false);
  replay_.callchain = frames;
  return replay_;
}

void SampleFold::clear() {
  kept_.clear();
  std::fill(slots_.begin(), slots_.end(), kEmpty);
  raw_.clear();
  frames_.clear();
  maps_.clear();
  map_copies_.clear();
  repeats_ = 0;
}

}  // namespace perfkit::report
