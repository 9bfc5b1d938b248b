// Repeated samples resolved once: what a sample resolved to (its location
// and call-chain frames), kept by its raw key (session/raw_key.h) and handed
// back for the samples that repeat it while the machine's maps stay as they
// were. For visitors that take every sample resolved (perf script): most
// samples of a profile repeat one another, and a look-up is cheaper than
// resolving each frame again.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "session/raw_key.h"
#include "session/session.h"

namespace perfkit::session {

class RepeatResolutions {
 public:
  explicit RepeatResolutions(bool with_chain) : table_({false, with_chain}) {}

  // The id of what a sample like `r` resolved to in `generation`, or
  // kNoResolution (then keep() may keep this one's).
  std::uint32_t find(const RawSample& r, std::uint64_t generation);
  // Keeps the resolution of the sample find() last turned down; its id.
  // `pending`: some of its kernel locations wait for the kernel's symbols.
  std::uint32_t keep(const machine::Location& loc, std::span<const Frame> frames, bool pending);
  // Whether resolution `id` waits for the kernel's symbols: it stands for
  // its repeats only while they still load.
  bool pending(std::uint32_t id) const { return kept_[id].pending; }
  const machine::Location& loc(std::uint32_t id) const { return kept_[id].loc; }
  std::span<const Frame> frames(std::uint32_t id) const {
    return std::span<const Frame>(frames_).subspan(kept_[id].frames_begin, kept_[id].frames_size);
  }
  // Changes when the ids start over (what was kept is dropped).
  std::uint64_t epoch() const { return epoch_; }
  // False once samples were seen to seldom repeat: then nothing is kept.
  bool on() const { return on_; }

 private:
  struct Kept {
    machine::Location loc;
    std::uint32_t frames_begin = 0, frames_size = 0;
    bool pending = false;
  };
  RawKeyTable table_;
  std::vector<Kept> kept_;
  std::vector<Frame> frames_;
  std::uint64_t epoch_ = 0, hits_ = 0;
  bool on_ = true;
};

}  // namespace perfkit::session
