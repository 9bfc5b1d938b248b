#include "session/repeat_resolutions.h"

namespace perfkit::session {

std::uint32_t RepeatResolutions::find(const RawSample& r, std::uint64_t generation) {
  const std::uint32_t id = table_.find(r, generation);
  if (id != RawKeyTable::kNone) {
    ++hits_;
    return id;
  }
  return kNoResolution;
}

std::uint32_t RepeatResolutions::keep(const machine::Location& loc, std::span<const Frame> frames,
                                      bool pending) {
  // Samples that seldom repeat are cheaper resolved each time.
  constexpr std::size_t kJudgeAfter = 1024;
  if (kept_.size() + 1 == kJudgeAfter && hits_ < kJudgeAfter) {
    on_ = false;
    table_.clear();
    kept_ = {};
    frames_ = {};
    ++epoch_;
    return kNoResolution;
  }
  // Memory stays bounded: past it, everything starts over.
  constexpr std::size_t kMaxBytes = std::size_t{64} << 20;
  if (table_.bytes() + frames_.size() * sizeof(Frame) + kept_.size() * sizeof(Kept) > kMaxBytes) {
    table_.clear();
    kept_.clear();
    frames_.clear();
    ++epoch_;
    return kNoResolution;  // (the miss was forgotten with the table)
  }
  Kept k;
  k.loc = loc;
  k.frames_begin = static_cast<std::uint32_t>(frames_.size());
  k.frames_size = static_cast<std::uint32_t>(frames.size());
  k.pending = pending;
  frames_.insert(frames_.end(), frames.begin(), frames.end());
  const auto id = static_cast<std::uint32_t>(kept_.size());
  kept_.push_back(k);
  table_.insert(id);
  return id;
}

}  // namespace perfkit::session
