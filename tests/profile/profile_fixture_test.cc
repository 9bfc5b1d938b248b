// The profile model over perf's recordings: built in chunks and merged, it
// says what built whole says (the folded stacks of both are equal, in
// either merge order); the filters keep what they name.
#include <gtest/gtest.h>

#include <tuple>

#include "export/folded.h"
#include "profile/builder.h"
#include "session/session.h"
#include "support/test_support.h"

namespace perfkit::profile {
namespace {

Profile build(const std::string& path, const ProfileOptions& o) {
  session::SessionOptions so;
  so.warn = [](const std::string&) {};
  auto s = session::Session::open(path, so);
  EXPECT_TRUE(s) << (s ? "" : s.error().message());
  if (!s) return {};
  auto p = build_profile(**s, o);
  EXPECT_TRUE(p) << (p ? "" : p.error().message());
  return p ? std::move(*p) : Profile{};
}

std::string folded(const Profile& p) {
  test::TempDir dir;
  auto out = FdWriter::create(dir.path("f"));
  EXPECT_TRUE(out);
  exports::StackcollapseOptions o;
  o.include_pid = o.include_tid = true;
  EXPECT_TRUE(exports::write_stackcollapse(p, o, *out));
  EXPECT_TRUE(out->close());
  return test::read_file(dir.path("f"));
}

ProfileOptions on_cpu(int cpu) {
  ProfileOptions o;
  o.filter.have_cpus = true;
  o.filter.cpus = {cpu};
  return o;
}

TEST(ProfileFixture, ChunksMergeToTheWhole) {
  PK_FIXTURE_OR_SKIP(path, "syswide_g.data");
  const Profile whole = build(path, {});
  const Profile cpu0 = build(path, on_cpu(0)), cpu1 = build(path, on_cpu(1));
  ASSERT_GT(cpu0.summary.samples, 0u);
  ASSERT_GT(cpu1.summary.samples, 0u);
  ASSERT_EQ(cpu0.summary.samples + cpu1.summary.samples, whole.summary.samples);
  Profile a, b;
  ASSERT_TRUE(merge(a, cpu0));
  ASSERT_TRUE(merge(a, cpu1));
  ASSERT_TRUE(merge(b, cpu1));
  ASSERT_TRUE(merge(b, cpu0));
  const std::string expected = folded(whole);
  EXPECT_EQ(folded(a), expected);
  EXPECT_EQ(folded(b), expected);
  EXPECT_EQ(a.events[0].period, whole.events[0].period);
  EXPECT_EQ(a.summary.first_time, whole.summary.first_time);
  EXPECT_EQ(a.summary.last_time, whole.summary.last_time);
  EXPECT_EQ(a.summary.hostname, whole.summary.hostname);
}

TEST(ProfileFixture, ColumnsAndTablesAgree) {
  PK_FIXTURE_OR_SKIP(path, "multi.data");
  const Profile p = build(path, {});
  ASSERT_EQ(p.events.size(), 3u);  // cpu-clock, task-clock, page-faults
  std::vector<std::uint64_t> samples(3), period(3);
  for (const Thread& t : p.threads) {
    ASSERT_EQ(t.stack.size(), t.size());
    ASSERT_EQ(t.event.size(), t.size());
    ASSERT_EQ(t.weight.size(), t.size());
    ASSERT_EQ(t.cpu.size(), t.size());
    ASSERT_EQ(t.comm.size(), t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
      samples[t.event[i]] += 1;
      period[t.event[i]] += t.weight[i];
      ASSERT_LT(t.stack[i], p.stacks.size());  // no call chains: each a leaf
      EXPECT_EQ(p.stacks[t.stack[i]].prefix, kNone);
    }
  }
  for (std::size_t e = 0; e < 3; ++e) {
    EXPECT_GT(samples[e], 0u);
    EXPECT_EQ(samples[e], p.events[e].samples);
    EXPECT_EQ(period[e], p.events[e].period);
    EXPECT_FALSE(p.events[e].callchains);
  }
  EXPECT_EQ(p.strings.at(p.events[2].name), "page-faults");
}

// Repeats taken raw (their first's stack reused) give the profile that
// resolving every sample gives: the same tables, interned in the same order,
// source lines included (looked up on the line worker either way).
TEST(ProfileFixture, RepeatsTakenRawEqualEverySampleResolved) {
  int compared = 0;
  for (const char* name : {"fp.data", "syswide_g.data", "switch.data", "dwarf.data"}) {
    PK_FIXTURE_OR_SKIP(path, name);
    ProfileOptions reuse, resolve;
    reuse.source_lines = resolve.source_lines = true;
    resolve.reuse_repeats = false;
    const Profile a = build(path, reuse), b = build(path, resolve);
    SCOPED_TRACE(name);
    ASSERT_GT(a.summary.samples, 0u);
    ASSERT_EQ(a.strings.size(), b.strings.size());
    for (Index i = 0; i < a.strings.size(); ++i) ASSERT_EQ(a.strings.at(i), b.strings.at(i)) << i;
    ASSERT_EQ(a.frames.size(), b.frames.size());
    for (std::size_t i = 0; i < a.frames.size(); ++i) {
      const Frame &x = a.frames[i], &y = b.frames[i];
      ASSERT_EQ(std::tie(x.func, x.address, x.inlined, x.kernel, x.file, x.line),
                std::tie(y.func, y.address, y.inlined, y.kernel, y.file, y.line))
          << i;
    }
    ASSERT_EQ(a.stacks.size(), b.stacks.size());
    for (std::size_t i = 0; i < a.stacks.size(); ++i) {
      ASSERT_EQ(a.stacks[i].frame, b.stacks[i].frame);
      ASSERT_EQ(a.stacks[i].prefix, b.stacks[i].prefix);
    }
    EXPECT_EQ(a.order, b.order);
    ASSERT_EQ(a.threads.size(), b.threads.size());
    for (std::size_t t = 0; t < a.threads.size(); ++t) {
      const Thread &x = a.threads[t], &y = b.threads[t];
      EXPECT_EQ(x.stack, y.stack);
      EXPECT_EQ(x.time, y.time);
      EXPECT_EQ(x.weight, y.weight);
      EXPECT_EQ(x.cpu, y.cpu);
      EXPECT_EQ(x.comm, y.comm);
      EXPECT_EQ(x.event, y.event);
    }
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace perfkit::profile
