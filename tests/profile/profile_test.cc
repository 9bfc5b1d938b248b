// The profile model's tables: interning gives one id per distinct row, in
// order of first appearance; stacks are prefix trees read back root first;
// merge() remaps every table and appends samples, deterministically.
#include "profile/profile.h"

#include <gtest/gtest.h>

namespace perfkit::profile {
namespace {

// A profile with one thread whose samples have the stacks `chains` (each
// root first, names of functions of one lib).
Profile make(std::int32_t tid, const std::vector<std::vector<std::string>>& chains) {
  Profile p;
  p.events.push_back({p.strings.intern("cpu-clock"), 1, true, 0, 0});
  const Index lib = p.lib({p.strings.intern("/bin/x"), p.strings.intern("x"), 0, LibKind::kUser});
  Thread& t = p.threads[p.thread(100, tid)];
  for (const auto& chain : chains) {
    Index stack = kNone;
    std::uint64_t addr = 0x10;
    for (const auto& f : chain)
      stack = p.stack(p.frame({p.func({p.strings.intern(f), lib}), addr++, false, false}), stack);
    t.time.push_back(1000 + t.size());
    t.stack.push_back(stack);
    t.event.push_back(0);
    t.weight.push_back(7);
    t.cpu.push_back(0);
    t.comm.push_back(p.strings.intern("x"));
    p.order.push_back(0);
    p.events[0].samples += 1;
    p.events[0].period += 7;
    p.summary.samples += 1;
  }
  return p;
}

std::vector<std::string> names(const Profile& p, Index stack) {
  std::vector<Index> frames;
  p.frames_of(stack, frames);
  std::vector<std::string> out;
  for (Index f : frames) out.emplace_back(p.func_name(f));
  return out;
}

TEST(Profile, InternsEachRowOnce) {
  Profile p;
  EXPECT_EQ(p.strings.intern(""), 0u);
  const Index a = p.strings.intern("a");
  EXPECT_EQ(p.strings.intern("a"), a);
  const Index lib = p.lib({a, a, 0, LibKind::kUser});
  EXPECT_EQ(p.lib({a, a, 0, LibKind::kUser}), lib);
  EXPECT_NE(p.lib({a, a, p.strings.intern("abcd"), LibKind::kUser}), lib);  // other build-id
  const Index f = p.func({a, lib});
  EXPECT_EQ(p.func({a, lib}), f);
  EXPECT_NE(p.func({a, kNone}), f);
  const Index fr = p.frame({f, 0x40, false, false});
  EXPECT_EQ(p.frame({f, 0x40, false, false}), fr);
  EXPECT_NE(p.frame({f, 0x40, true, false}), fr);  // inlined there: another frame
  const Index root = p.stack(fr, kNone);
  EXPECT_EQ(p.stack(fr, kNone), root);
  EXPECT_NE(p.stack(fr, root), root);
  EXPECT_EQ(p.thread(1, 2), p.thread(1, 2));
  EXPECT_NE(p.thread(1, 3), p.thread(1, 2));
}

TEST(Profile, StacksReadBackRootFirst) {
  Profile p = make(1, {{"main", "run", "spin"}, {"main", "run"}, {"main", "other"}});
  const Thread& t = p.threads[0];
  EXPECT_EQ(names(p, t.stack[0]), (std::vector<std::string>{"main", "run", "spin"}));
  EXPECT_EQ(names(p, t.stack[1]), (std::vector<std::string>{"main", "run"}));
  // The shared prefix is one stack: "main;run" is spin's prefix.
  EXPECT_EQ(p.stacks[t.stack[0]].prefix, t.stack[1]);
  EXPECT_EQ(p.stacks.size(), 4u);
}

TEST(Profile, MergeRemapsAndAppends) {
  Profile a = make(1, {{"main", "run"}});
  Profile b = make(2, {{"zeta", "main"}, {"main", "run"}});
  Profile whole;
  ASSERT_TRUE(merge(whole, a));
  ASSERT_TRUE(merge(whole, b));
  ASSERT_EQ(whole.threads.size(), 2u);
  EXPECT_EQ(whole.events.size(), 1u);
  EXPECT_EQ(whole.events[0].samples, 3u);
  EXPECT_EQ(whole.events[0].period, 21u);
  EXPECT_EQ(whole.summary.samples, 3u);
  EXPECT_EQ(names(whole, whole.threads[1].stack[0]), (std::vector<std::string>{"zeta", "main"}));
  // The same function at the same address is one frame across chunks.
  EXPECT_EQ(whole.threads[1].stack[1], whole.threads[0].stack[0]);
  // Merging a thread's samples again appends them in order.
  ASSERT_TRUE(merge(whole, b));
  EXPECT_EQ(whole.threads[1].size(), 4u);
  EXPECT_EQ(whole.threads[1].time, (Column<std::uint64_t>{1000, 1001, 1000, 1001}));
  // The order across threads: a's sample, b's two, b's two again.
  EXPECT_EQ(whole.order, (Column<Index>{0, 1, 1, 1, 1}));
}

TEST(Profile, MergeIsDeterministic) {
  Profile a = make(1, {{"main", "a"}, {"main", "b"}});
  Profile b = make(1, {{"main", "c"}});
  Profile x, y;
  ASSERT_TRUE(merge(x, a));
  ASSERT_TRUE(merge(x, b));
  ASSERT_TRUE(merge(y, a));
  ASSERT_TRUE(merge(y, b));
  ASSERT_EQ(x.stacks.size(), y.stacks.size());
  for (std::size_t i = 0; i < x.stacks.size(); ++i) {
    EXPECT_EQ(x.stacks[i].frame, y.stacks[i].frame);
    EXPECT_EQ(x.stacks[i].prefix, y.stacks[i].prefix);
  }
  EXPECT_EQ(x.threads[0].stack, y.threads[0].stack);
}

TEST(Profile, MergeAddsTheEventsOfLaterChunks) {
  Profile a = make(1, {{"main"}});
  Profile b = make(1, {{"main"}});
  b.events.push_back({b.strings.intern("task-clock"), 1, false, 2, 9});
  ASSERT_TRUE(merge(a, b));
  ASSERT_EQ(a.events.size(), 2u);
  EXPECT_EQ(a.strings.at(a.events[1].name), "task-clock");
  EXPECT_EQ(a.events[1].samples, 2u);
  EXPECT_EQ(a.events[1].period, 9u);
  EXPECT_FALSE(a.events[1].callchains);
  EXPECT_EQ(a.events[0].samples, 2u);
}

// A column grows from the heap into a mapping of its own (past 1 MiB) and
// on by remapping: the values stay, copies and moves keep them.
TEST(Column, GrowsPastTheHeapIntoAMappingKeepingItsValues) {
  Column<std::uint64_t> c;
  constexpr std::size_t kCount = 3 << 18;  // 6 MiB of values
  for (std::size_t i = 0; i < kCount; ++i) c.push_back(i * 7);
  ASSERT_EQ(c.size(), kCount);
  for (std::size_t i = 0; i < kCount; i += 4099) ASSERT_EQ(c[i], i * 7) << i;
  EXPECT_EQ(c.back(), (kCount - 1) * 7);
  Column<std::uint64_t> copy(c);
  EXPECT_EQ(copy, c);
  Column<std::uint64_t> moved(std::move(copy));
  EXPECT_EQ(moved, c);
  Column<std::uint16_t> narrow;
  narrow.resize(700000, 3);
  narrow.push_back(9);
  EXPECT_EQ(narrow[699999], 3u);
  EXPECT_EQ(narrow.back(), 9u);
  narrow = Column<std::uint16_t>{1, 2};
  EXPECT_EQ(narrow.size(), 2u);
}

}  // namespace
}  // namespace perfkit::profile
