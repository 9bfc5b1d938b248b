#include "abi/event_names.h"

#include <gtest/gtest.h>

namespace perfkit::abi {
namespace {

// As perf opens events by default: guest samples excluded.
EventAttr attr(std::uint32_t type, std::uint64_t config) {
  EventAttr a;
  a.type = type;
  a.config = config;
  a.set(kAttrExcludeGuest);
  return a;
}

TEST(EventNames, GenericTables) {
  EXPECT_EQ(default_event_name(attr(kTypeHardware, 0)), "cycles");
  EXPECT_EQ(default_event_name(attr(kTypeHardware, 9)), "ref-cycles");
  EXPECT_EQ(default_event_name(attr(kTypeSoftware, 0)), "cpu-clock");
  EXPECT_EQ(default_event_name(attr(kTypeSoftware, 11)), "cgroup-switches");
  EXPECT_EQ(default_event_name(attr(kTypeRaw, 0x1cd)), "raw 0x1cd");
  EventAttr host_and_guest = attr(kTypeHardware, 0);
  host_and_guest.set(kAttrExcludeGuest, false);
  EXPECT_EQ(default_event_name(host_and_guest), "cycles:HG");
}

TEST(EventNames, CacheEvents) {
  EXPECT_EQ(cache_event_name(0 | (0 << 8) | (1 << 16)), "L1-dcache-load-misses");
  EXPECT_EQ(cache_event_name(0 | (0 << 8) | (0 << 16)), "L1-dcache-loads");
  EXPECT_EQ(cache_event_name(2 | (1 << 8) | (1 << 16)), "LLC-store-misses");
  EXPECT_EQ(cache_event_name(4 | (1 << 8)), "");  // iTLB has no stores
}

TEST(EventNames, ModifiersLikePerf) {
  EventAttr a = attr(kTypeSoftware, 0);
  a.set_precise_ip(3);
  EXPECT_EQ(default_event_name(a), "cpu-clock:ppp");  // perf's default cpu-clock
  EventAttr u = attr(kTypeHardware, 0);
  u.set(kAttrExcludeKernel);
  u.set(kAttrExcludeHv);
  EXPECT_EQ(default_event_name(u), "cycles:u");
  EventAttr d = attr(kTypeSoftware, 9);  // dummy as perf record opens it
  d.set(kAttrExcludeGuest, false);
  EXPECT_EQ(default_event_name(d), "dummy:HG");
  EventAttr g = attr(kTypeHardware, 1);
  g.set(kAttrExcludeGuest);
  EXPECT_EQ(default_event_name(g), "instructions");
}

TEST(EventNames, Breakpoints) {
  EventAttr a = attr(kTypeBreakpoint, 0);
  a.config1 = 0x4010a0;
  a.bp_type = 2;
  a.set(kAttrExcludeGuest);
  EXPECT_EQ(default_event_name(a), "mem:0x4010a0:w");
}

}  // namespace
}  // namespace perfkit::abi
