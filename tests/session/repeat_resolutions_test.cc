// Repeated samples resolved once (session/repeat_resolutions.h): a repeat
// gets the first one's location and frames, ids start over with a new
// epoch, and samples that seldom repeat turn keeping off.
#include "session/repeat_resolutions.h"

#include <gtest/gtest.h>

#include <vector>

namespace perfkit::session {
namespace {

struct Raw {
  machine::Thread* thread = nullptr;
  std::uint64_t ip = 0;
  std::vector<std::uint64_t> chain;
  record::Sample sample;
  RawSample get() {
    sample.ip = ip;
    sample.callchain =
        record::U64Array(reinterpret_cast<const std::uint8_t*>(chain.data()), chain.size(), false);
    return RawSample{0, &sample, 2, thread};
  }
};

std::vector<Frame> frames_at(std::vector<std::uint64_t> ips) {
  std::vector<Frame> out;
  for (std::uint64_t ip : ips) {
    Frame f;
    f.ip = ip;
    f.loc.addr = ip - 0x1000;
    out.push_back(f);
  }
  return out;
}

TEST(RepeatResolutions, ARepeatGetsTheFirstOnesResolution) {
  machine::Thread t;
  RepeatResolutions r(true);
  Raw a{&t, 0x1000, {0x1000, 0x2000}};
  EXPECT_EQ(r.find(a.get(), 1), kNoResolution);
  machine::Location loc;
  loc.addr = 0x10;
  const std::vector<Frame> frames = frames_at({0x1000, 0x2000});
  const std::uint32_t id = r.keep(loc, frames, false);
  ASSERT_NE(id, kNoResolution);
  Raw again = a;
  ASSERT_EQ(r.find(again.get(), 1), id);
  EXPECT_EQ(r.loc(id).addr, 0x10u);
  ASSERT_EQ(r.frames(id).size(), 2u);
  EXPECT_EQ(r.frames(id)[1].loc.addr, 0x1000u);
  // Another generation of the maps, another chain: resolved afresh.
  EXPECT_EQ(r.find(again.get(), 2), kNoResolution);
  Raw other = a;
  other.chain[1] = 0x2008;
  EXPECT_EQ(r.find(other.get(), 1), kNoResolution);
  EXPECT_TRUE(r.on());
  EXPECT_FALSE(r.pending(id));
  // One that waits for the kernel's symbols says so (the session hands it
  // out only while they load).
  const std::uint32_t waiting = r.keep(loc, frames, true);
  EXPECT_TRUE(r.pending(waiting));
  EXPECT_EQ(r.find(other.get(), 1), waiting);
}

TEST(RepeatResolutions, SamplesThatSeldomRepeatTurnItOff) {
  machine::Thread t;
  RepeatResolutions r(true);
  const std::uint64_t epoch = r.epoch();
  bool turned_off = false;
  for (std::uint64_t i = 0; i < 5000 && !turned_off; ++i) {
    Raw s{&t, 0x1000 + i, {0x1000 + i}};  // no two alike
    ASSERT_EQ(r.find(s.get(), 1), kNoResolution);
    const std::uint32_t id = r.keep(machine::Location{}, frames_at({0x1000 + i}), false);
    turned_off = id == kNoResolution;
  }
  EXPECT_TRUE(turned_off);
  EXPECT_FALSE(r.on());
  EXPECT_NE(r.epoch(), epoch);  // the ids handed out so far mean nothing now
}

TEST(RepeatResolutions, SamplesThatRepeatKeepItOn) {
  machine::Thread t;
  RepeatResolutions r(true);
  for (std::uint64_t i = 0; i < 20000; ++i) {
    Raw s{&t, 0x1000 + i % 512, {0x1000 + i % 512}};
    if (r.find(s.get(), 1) == kNoResolution)
      ASSERT_NE(r.keep(machine::Location{}, frames_at({s.ip}), false), kNoResolution);
  }
  EXPECT_TRUE(r.on());
}

}  // namespace
}  // namespace perfkit::session
