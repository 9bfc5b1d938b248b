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

// The names perf 6.1 gives these attrs (perf evlist on the corpus and on
// its own recordings).
TEST(EventNames, ModifiersLikePerf) {
  EventAttr a = attr(kTypeSoftware, 0);
  a.set(kAttrExcludeGuest, false);
  a.set_precise_ip(3);
  EXPECT_EQ(default_event_name(a), "cpu-clock:ppp");  // perf record's fallback event (AMD)
  EventAttr h = attr(kTypeSoftware, 0);
  h.set(kAttrExcludeGuest, true);
  h.set_precise_ip(3);
  EXPECT_EQ(default_event_name(h), "cpu-clock:pppH");  // the same elsewhere
  EventAttr old = attr(kTypeSoftware, 0);
  old.set(kAttrExcludeGuest, false);
  EXPECT_EQ(default_event_name(old), "cpu-clock:HG");  // hotspot/perf.data.true.v1
  EventAttr d = attr(kTypeSoftware, 9);
  d.set(kAttrExcludeGuest, false);
  EXPECT_EQ(default_event_name(d), "dummy:HG");
  EXPECT_EQ(default_event_name(attr(kTypeHardware, 5)), "branch-misses");  // piped.hw_and_sw-3.4
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
