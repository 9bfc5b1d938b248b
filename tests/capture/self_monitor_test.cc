// The self-monitoring API: the user-page seqlock read (with a fake page and
// fake rdpmc/rdtsc, since this machine has no hardware counters to map), and
// live groups on the calling thread: exact breakpoint counts, reset, group
// ioctls, prctl, scaling, and the example program's output.
#include "capture/self_monitor.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace perfkit::capture {
namespace {

volatile unsigned long g_sink;

__attribute__((noinline)) void probe(unsigned long i) {
  g_sink = g_sink + i;
  __asm__ volatile("" ::: "memory");
}

std::string bp_spec() {
  char buf[64];
  std::snprintf(buf, sizeof buf, "mem:%#lx:x", reinterpret_cast<unsigned long>(&probe));
  return buf;
}

TEST(UserPage, RdpmcCountIsOffsetPlusSignExtendedCounter) {
  UserPage pg;
  pg.lock = 2;
  pg.index = 3;
  pg.offset = -100;
  pg.cap_user_rdpmc = true;
  pg.pmc_width = 48;
  pg.time_enabled = pg.time_running = 5000;
  std::uint32_t asked = 99;
  CounterSources hw{[&](std::uint32_t c) {
                      asked = c;
                      return 1100ull | (0xffffull << 48);  // bits above the width are noise
                    },
                    [] { return 0ull; }};
  auto r = read_user_page([&] { return pg; }, hw);
  EXPECT_TRUE(r.usable);
  EXPECT_EQ(asked, 2u);  // rdpmc(index - 1)
  EXPECT_EQ(r.count, 1000u);
  // A counter value with its top (width) bit set is negative.
  CounterSources neg{[](std::uint32_t) { return (1ull << 47) | 5; }, nullptr};
  pg.offset = static_cast<std::int64_t>(1ull << 47);
  r = read_user_page([&] { return pg; }, neg);
  EXPECT_EQ(r.count, 5u);
}

TEST(UserPage, RetriesWhileTheKernelUpdatesIt) {
  // The first loads race with an update: the lock differs between the
  // start and the end of the read, so the loop goes round again.
  std::vector<UserPage> pages(5);
  for (std::size_t i = 0; i < pages.size(); ++i) {
    pages[i].lock = static_cast<std::uint32_t>(i < 3 ? i : 3);
    pages[i].index = 1;
    pages[i].cap_user_rdpmc = true;
    pages[i].pmc_width = 64;
    pages[i].offset = static_cast<std::int64_t>(i * 1000);
  }
  std::size_t at = 0;
  auto load = [&] { return pages[std::min(at++, pages.size() - 1)]; };
  auto r = read_user_page(load, {[](std::uint32_t) { return 7ull; }, nullptr});
  // Loads 0,1 (lock 0 then 1: retry), 2,3 (2 then 3: retry), 4,4 (3, 3: done).
  EXPECT_EQ(r.count, 4007u);
}

TEST(UserPage, TimeIsExtendedWhileMultiplexedAndNoCounterMeansNoFastPath) {
  UserPage pg;
  pg.index = 1;
  pg.cap_user_rdpmc = true;
  pg.cap_user_time = true;
  pg.pmc_width = 64;
  pg.time_enabled = 1000;
  pg.time_running = 400;
  pg.time_shift = 1;
  pg.time_mult = 3;  // ns = cyc * 3 / 2
  pg.time_offset = 10;
  auto r = read_user_page([&] { return pg; },
                          {[](std::uint32_t) { return 0ull; }, [] { return 100ull; }});
  // delta = 10 + (100 >> 1) * 3 + ((0 * 3) >> 1) = 160
  EXPECT_EQ(r.enabled, 1160u);
  EXPECT_EQ(r.running, 560u);
  pg.index = 0;  // a software event, or one not on a counter now
  r = read_user_page([&] { return pg; }, {[](std::uint32_t) { return 0ull; }, nullptr});
  EXPECT_FALSE(r.usable);
  pg.index = 1;
  pg.cap_user_rdpmc = false;
  r = read_user_page([&] { return pg; }, {[](std::uint32_t) { return 0ull; }, nullptr});
  EXPECT_FALSE(r.usable);
}

TEST(SelfMonitor, CountsExactlyWhileEnabled) {
  PK_SKIP_WITHOUT_BREAKPOINTS();
  auto mon = SelfMonitor::open("{" + bp_spec() + ",page-faults,task-clock}");
  ASSERT_TRUE(mon) << mon.error().message();
  ASSERT_EQ(mon->size(), 3u);
  for (unsigned long i = 0; i < 10; ++i) probe(i);  // before enable: not counted
  ASSERT_TRUE(mon->reset());
  ASSERT_TRUE(mon->enable());
  for (unsigned long i = 0; i < 321; ++i) probe(i);
  ASSERT_TRUE(mon->disable());
  for (unsigned long i = 0; i < 10; ++i) probe(i);  // after disable: not counted
  auto c = mon->read();
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ((*c)[0].raw, 321u);
  EXPECT_EQ((*c)[0].scaled, 321u);
  EXPECT_EQ((*c)[0].state, abi::ScaleState::kExact);
  EXPECT_FALSE((*c)[0].via_rdpmc);  // a breakpoint has no hardware counter to rdpmc
  EXPECT_GT((*c)[2].raw, 0u);
  EXPECT_EQ((*c)[2].enabled, (*c)[2].running);
  // Reset clears the counts (not the times).
  ASSERT_TRUE(mon->reset());
  auto z = mon->read();
  ASSERT_TRUE(z);
  EXPECT_EQ((*z)[0].raw, 0u);
}

TEST(SelfMonitor, PrctlSwitchesEveryGroup) {
  PK_SKIP_WITHOUT_BREAKPOINTS();
  auto a = SelfMonitor::open(bp_spec());
  auto b = SelfMonitor::open("page-faults");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(SelfMonitor::enable_all());
  for (unsigned long i = 0; i < 77; ++i) probe(i);
  ASSERT_TRUE(SelfMonitor::disable_all());
  for (unsigned long i = 0; i < 5; ++i) probe(i);
  auto c = a->read();
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)[0].raw, 77u);
  auto d = b->read();
  ASSERT_TRUE(d);
  EXPECT_GT((*d)[0].enabled, 0u);
}

TEST(SelfMonitor, ErrorsNameTheEvent) {
  auto bad = SelfMonitor::open("no-such-event");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("no-such-event"), std::string::npos);
}

// The example runs the library in its own process: under AddressSanitizer
// its shadow memory faults in too.
#if defined(__SANITIZE_ADDRESS__)  // gcc
#define PK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)  // clang
#define PK_TEST_ASAN 1
#endif
#endif
#ifdef PK_TEST_ASAN
constexpr unsigned long long kFaultSlack = 700;
#else
constexpr unsigned long long kFaultSlack = 400;
#endif

TEST(SelfMonitorExample, PrintsExactCounts) {
  PK_SKIP_WITHOUT_BREAKPOINTS();
  const std::string bin = SELF_MONITOR_EXAMPLE;
  for (bool prctl : {false, true}) {
    auto r = test::run(test::sh(bin) + " 4321 300" + (prctl ? " --prctl" : ""));
    ASSERT_EQ(r.status, 0) << r.err;
    std::istringstream in(r.out);
    std::string name;
    unsigned long long raw, ena, run, scaled;
    std::vector<std::pair<std::string, unsigned long long>> got;
    while (in >> name >> raw >> ena >> run >> scaled) {
      got.emplace_back(name, raw);
      EXPECT_EQ(raw, scaled) << name << " ran all the time it was enabled";
      std::string rest;
      std::getline(in, rest);
    }
    ASSERT_EQ(got.size(), 4u) << r.out;
    EXPECT_EQ(got[0], (std::pair<std::string, unsigned long long>{"work_function", 4321}));
    EXPECT_EQ(got[1].first, "page-faults");
    EXPECT_GE(got[1].second, 300u);  // 300 fresh pages touched
    EXPECT_LT(got[1].second, kFaultSlack);
    EXPECT_EQ(got[2].first, "task-clock");
    EXPECT_GT(got[2].second, 0u);
    EXPECT_EQ(got[3].first, "context-switches");
  }
}

}  // namespace
}  // namespace perfkit::capture
