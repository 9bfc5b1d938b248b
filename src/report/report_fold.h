// Folding of repeated samples for perfkit report.
//
// Most samples of a profile repeat one another exactly: the same thread in
// the same loop, with the same callchain. Two samples with the same raw
// content (thread, event, cpumode, ip, callchain words and, when it is a
// sort key, cpu), taken while the machine's maps and threads stayed as they
// were (machine::Machine::generation), resolve to the same locations and
// land in the same entries. The report resolves the first of them and
// counts the others with it, before any address is resolved.
//
// Kept samples are handed back (drain) in the order they were first seen:
// the order in which their entries and call-graph nodes would have been
// made one sample at a time, so that the histograms come out the same.
// Kernel locations may be kept while the kernel's symbols still load on
// another thread (machine::kSymbolPending); drain resolves them then.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "session/raw_key.h"
#include "session/session.h"

namespace perfkit::report {

class SampleFold {
 public:
  // `with_cpu`: the cpu tells samples apart (a sort key); `with_chain`: the
  // callchain does (it is resolved at all). `max_kept`: how many distinct
  // samples are kept before full() asks for a drain; `max_frames`: how many
  // of their resolved frames. Where each drained sample grows call graphs,
  // a fold that holds a deep recursion's distinct stacks whole (some 8k of
  // ~30 frames) pays for its memory: drained every few thousand samples,
  // each would be added again.
  SampleFold(bool with_cpu, bool with_chain, std::size_t max_kept,
             std::size_t max_frames = kSmallFrames)
      : index_({with_cpu, with_chain}), max_kept_(max_kept), max_frames_(max_frames) {
    // Room for the frames at once: growing by copies would hold two arrays
    // at the peak (the pages are only touched as frames come).
    frames_.reserve(max_frames_ + 1024);
    // (as far as a budget a caller may set very high leaves sensible)
    const std::size_t kept = std::min<std::size_t>(max_kept_, 1 << 16);
    kept_.reserve(kept);
    index_.reserve(kept);
  }
  // Frame budgets: small where frames are not kept at all, medium where a
  // sample's frames become children entries (no call graph), large where
  // they also grow call graphs.
  static constexpr std::size_t kSmallFrames = 1 << 16, kMediumFrames = 1 << 18,
                               kLargeFrames = 1 << 19;

  // Whether `r`, of `period`, repeats a kept sample of `generation`; if so
  // it is counted there. Otherwise it is remembered for keep().
  bool fold(const session::RawSample& r, std::uint64_t period, std::uint64_t generation);
  // Keeps the resolved form of the sample fold() last turned down; its
  // locations are valid in `generation` (resolving may have begun a new one).
  void keep(const session::ResolvedSample& s, std::uint64_t generation);
  // Enough is kept that it should be drained (memory stays bounded).
  bool full() const { return kept_.size() >= max_kept_ || frames_.size() >= max_frames_; }
  // Whether folding has paid so far: more repeats than distinct samples.
  bool paying() const { return repeats_ >= kept_.size(); }
  // Samples counted with a kept one since the last drain.
  std::uint64_t repeats() const { return repeats_; }

  // Calls f(sample, period, count) for each kept sample in first-seen order,
  // with pending kernel locations resolved in `m`, then forgets them.
  // Returns f's first error.
  template <class F>
  Status drain(machine::Machine& m, F&& f) {
    Status st = ok();
    for (Kept& k : kept_) {
      if (!st) break;
      st = f(replay(m, k), k.period, k.count);
    }
    clear();
    return st;
  }

 private:
  struct Kept {
    machine::Thread* thread = nullptr;
    const std::string* comm = nullptr;
    std::uint64_t generation = 0;
    std::uint64_t ip = 0;
    std::uint64_t sample_type = 0;
    std::uint32_t event = 0, cpu = 0;
    std::uint8_t cpumode = 0;
    std::uint32_t frames_begin = 0, frames_size = 0;  // resolved frames in frames_
    machine::Location loc;
    std::uint64_t period = 0, count = 0;
  };
  // A kept frame: session::Frame without its two rarely set names (40
  // bytes, not 64: a deep recursion's distinct stacks hold some 250k
  // frames). A frame with a source line or an inlined name has them in
  // extras_, in the order of frames_.
  struct PackedFrame {
    std::uint64_t ip = 0;
    const machine::Map* map = nullptr;
    machine::Dso* dso = nullptr;
    std::uint64_t addr = 0;
    std::int32_t symbol = -1;
    char level = 0;
    bool kernel_maps = false;
    bool extra = false;  // its names are in extras_
  };
  struct Extra {
    std::uint32_t frame;  // index in frames_
    const char* srcline;
    const char* inlined;
  };
  // A copy of `map` that outlives later changes to the maps.
  const machine::Map* stable(const machine::Map* map, std::uint64_t generation);
  const session::ResolvedSample& replay(machine::Machine& m, Kept& k);
  void clear();

  session::RawKeyTable index_;  // raw sample -> its entry in kept_
  std::size_t max_kept_, max_frames_;
  std::vector<Kept> kept_;
  std::vector<PackedFrame> frames_;
  std::vector<Extra> extras_;
  std::deque<machine::Map> maps_;
  std::unordered_map<const machine::Map*, const machine::Map*> map_copies_;
  std::uint64_t map_copies_generation_ = 0;
  std::uint64_t repeats_ = 0;
  // What fold() last turned down, for keep().
  std::uint64_t miss_period_ = 0, miss_generation_ = 0;
  // The replayed sample and its record (the fields the report reads).
  record::Sample replay_sample_;
  session::ResolvedSample replay_;
  std::vector<session::Frame> replay_frames_;  // the replayed sample's chain
};

}  // namespace perfkit::report
