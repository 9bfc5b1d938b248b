#include "report/report_fold.h"

#include <algorithm>
#include <cstring>

#include "abi/perf_event.h"
#include "session/raw_key.h"

namespace perfkit::report {

// PackedFrame holds every field of a Location: a field added there must be
// kept here too.
static_assert(sizeof(machine::Location) == 40, "SampleFold::PackedFrame copies Location's fields");
static_assert(sizeof(session::Frame) == 64, "SampleFold::PackedFrame copies Frame's fields");

bool SampleFold::fold(const session::RawSample& r, std::uint64_t period, std::uint64_t generation) {
  const std::uint32_t found = index_.find(r, generation);
  if (found != session::RawKeyTable::kNone) {
    Kept& k = kept_[found];
    k.period += period;
    ++k.count;
    ++repeats_;
    return true;
  }
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
  k.frames_begin = static_cast<std::uint32_t>(frames_.size());
  k.frames_size = static_cast<std::uint32_t>(s.callchain.size());
  for (const session::Frame& f : s.callchain) {
    const bool extra = f.srcline || f.inlined;
    if (extra)
      extras_.push_back({static_cast<std::uint32_t>(frames_.size()), f.srcline, f.inlined});
    frames_.push_back({f.ip, stable(f.loc.map, generation), f.loc.dso, f.loc.addr, f.loc.symbol,
                       f.loc.level, f.loc.kernel_maps, extra});
  }
  index_.insert(static_cast<std::uint32_t>(kept_.size()));
  kept_.push_back(k);
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
  replay_frames_.resize(k.frames_size);
  // The first of this sample's frames with names (extras_ is in frame order).
  auto extra = std::lower_bound(extras_.begin(), extras_.end(), k.frames_begin,
                                [](const Extra& e, std::uint32_t i) { return e.frame < i; });
  for (std::uint32_t i = 0; i < k.frames_size; ++i) {
    const PackedFrame& p = frames_[k.frames_begin + i];
    session::Frame& f = replay_frames_[i];
    f.ip = p.ip;
    f.loc.map = p.map;
    f.loc.dso = p.dso;
    f.loc.symbol = p.symbol;
    f.loc.addr = p.addr;
    f.loc.level = p.level;
    f.loc.kernel_maps = p.kernel_maps;
    f.srcline = f.inlined = nullptr;
    if (p.extra) {
      f.srcline = extra->srcline;
      f.inlined = extra->inlined;
      ++extra;
    }
    if (f.loc.symbol == machine::kSymbolPending)
      f.loc = m.resolve(*k.thread, abi::kMiscKernel, f.ip, false);
  }
  replay_.callchain = replay_frames_;
  return replay_;
}

void SampleFold::clear() {
  kept_.clear();
  index_.clear();
  frames_.clear();
  extras_.clear();
  maps_.clear();
  map_copies_.clear();
  repeats_ = 0;
}

}  // namespace perfkit::report
