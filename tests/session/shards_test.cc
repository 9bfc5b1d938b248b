// Sample shards (session/shards.h): how samples are dealt, the order the
// slices' parts are written in whatever order the shards make them, where
// a failure ends the output, and the warnings said once.
#include "session/shards.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace perfkit::session {
namespace {

TEST(SliceDeal, DealsSlicesInTurnAndSaysWhenOneEnds) {
  // 3 shards, slices of 2 samples: shard 1 takes samples 2, 3, 8, 9.
  SliceDeal d(1, 3, 2);
  std::vector<int> mine, ended_before;
  for (int i = 0; i < 12; ++i) {
    SliceDeal::Step st = d.take();
    if (st.mine) mine.push_back(i);
    if (st.ended) {
      ended_before.push_back(i);
      EXPECT_EQ(st.ended_slice, i < 8 ? 1u : 4u);
    }
    EXPECT_EQ(d.last_slice(), static_cast<std::uint64_t>(i / 2));
  }
  EXPECT_EQ(mine, (std::vector<int>{2, 3, 8, 9}));
  EXPECT_EQ(ended_before, (std::vector<int>{4, 10}));
  EXPECT_FALSE(d.open_slice());
  SliceDeal last(0, 2, 4);
  (void)last.take();
  ASSERT_TRUE(last.open_slice());
  EXPECT_EQ(*last.open_slice(), 0u);
}

// A slice of costly samples ends before its count: 2 shards, slices of at
// most 4 samples or 100 bytes.
TEST(SliceDeal, EndsASliceAtItsBytes) {
  SliceDeal d(0, 2, 4, 100);
  const std::uint64_t bytes[] = {0, 0, 0, 0, 0, 60, 60, 60, 10, 0, 0, 0, 0};
  std::vector<std::uint64_t> slices;
  std::vector<int> mine;
  for (int i = 0; i < 13; ++i) {
    if (d.take(bytes[i]).mine) mine.push_back(i);
    slices.push_back(d.last_slice());
  }
  // 0-3 (4 samples), 4-6 (60 + 60 reach 100 after sample 6), 7-10, 11-12.
  EXPECT_EQ(slices, (std::vector<std::uint64_t>{0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3}));
  EXPECT_EQ(mine, (std::vector<int>{0, 1, 2, 3, 7, 8, 9, 10}));
}

// Shards that push their slices' parts from threads of their own, the
// later slices first where they can: the text comes out in slice order.
TEST(OrderedWrites, WritesInSliceOrderWhateverTheShardsPace) {
  constexpr unsigned kShards = 3;
  constexpr std::uint64_t kSlices = 60;
  std::string written;
  OrderedWrites<std::string> w(kShards, 2, [&](std::string& s) -> Status {
    written += s;
    return ok();
  });
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < kShards; ++k)
    threads.emplace_back([&, k] {
      for (std::uint64_t i = k; i < kSlices; i += kShards) {
        // Slices in 1 to 3 parts; shard 0 slower.
        const int parts = 1 + static_cast<int>(i % 3);
        for (int p = 0; p < parts; ++p) {
          if (k == 0) std::this_thread::yield();
          ASSERT_TRUE(
              w.push(k, i, std::to_string(i) + (p + 1 == parts ? ";" : ","), p + 1 == parts));
        }
      }
    });
  for (auto& t : threads) t.join();
  std::string want;
  for (std::uint64_t i = 0; i < kSlices; ++i)
    for (int p = 0, parts = 1 + static_cast<int>(i % 3); p < parts; ++p)
      want += std::to_string(i) + (p + 1 == parts ? ";" : ",");
  EXPECT_EQ(written, want);
  EXPECT_TRUE(w.status());
}

// A shard that fails in slice 2: slices 0 and 1 and what it made of 2 are
// written, nothing of 3 (made before by the other shard), its error kept.
TEST(OrderedWrites, AFailureEndsTheOutputInItsSlice) {
  std::string written;
  OrderedWrites<std::string> w(2, 2, [&](std::string& s) -> Status {
    written += s;
    return ok();
  });
  EXPECT_TRUE(w.push(1, 1, "b", true));
  EXPECT_TRUE(w.push(1, 3, "d", true));  // waits in its queue
  EXPECT_TRUE(w.push(0, 0, "a", true));
  EXPECT_EQ(written, "ab");
  w.fail(make_error("bad record at 0x40"), 2);
  EXPECT_TRUE(w.push(0, 2, "c", true));
  EXPECT_FALSE(w.push(1, 5, "f", true));
  EXPECT_EQ(written, "abc");
  ASSERT_FALSE(w.status());
  EXPECT_EQ(w.status().error().message(), "bad record at 0x40");
}

TEST(OrderedWrites, AWriteErrorStopsEveryShard) {
  int writes = 0;
  OrderedWrites<std::string> w(2, 2, [&](std::string&) -> Status {
    return ++writes == 2 ? Status(make_error("stdout: write failed: Broken pipe")) : ok();
  });
  EXPECT_TRUE(w.push(0, 0, "a", true));
  EXPECT_FALSE(w.push(1, 1, "b", true));
  EXPECT_FALSE(w.push(0, 2, "c", true));
  EXPECT_EQ(writes, 2);
  ASSERT_FALSE(w.status());
  EXPECT_EQ(w.status().error().message(), "stdout: write failed: Broken pipe");
}

// What every shard says alike is said once; a shard's own repeats are
// said as often as it says them.
TEST(ShardWarnings, SaysEachMessageAsOftenAsOneShardDoes) {
  std::vector<std::string> said;
  ShardWarnings w(2, [&](const std::string& m) { said.push_back(m); });
  auto s0 = w.for_shard(0), s1 = w.for_shard(1);
  s0("no symbols for libfoo.so");
  s1("no symbols for libfoo.so");
  s1("unprocessable sample at 0x10");
  s1("unprocessable sample at 0x10");
  s0("unprocessable sample at 0x10");
  EXPECT_EQ(said,
            (std::vector<std::string>{"no symbols for libfoo.so", "unprocessable sample at 0x10",
                                      "unprocessable sample at 0x10"}));
}

// Contiguous runs: what the sessions said, in session order at the end,
// each message as often as the session that said it most often (a later
// run reads the side-band records before it again: its copies of their
// warnings are not said twice).
TEST(RunWarnings, SaysInSessionOrderAtTheEnd) {
  std::vector<std::string> said;
  RunWarnings w(2);
  auto s0 = w.for_shard(0), s1 = w.for_shard(1);
  s1("lost 3 samples");
  s1("no symbols for libbar.so");
  s0("lost 3 samples");
  s0("no symbols for libfoo.so");
  s1("lost 3 samples");
  EXPECT_TRUE(said.empty());
  w.say([&](const std::string& m) { said.push_back(m); });
  EXPECT_EQ(said, (std::vector<std::string>{"lost 3 samples", "no symbols for libfoo.so",
                                            "no symbols for libbar.so", "lost 3 samples"}));
  said.clear();
  w.say([&](const std::string& m) { said.push_back(m); });
  EXPECT_TRUE(said.empty());  // (said once)
}

}  // namespace
}  // namespace perfkit::session
