// CounterSet against the kernel: software events on a workload, group reads
// with PERF_FORMAT_GROUP, an execute breakpoint that counts calls exactly,
// the ENOSPC error of a fifth breakpoint, and perf stat's attr settings.
#include "capture/counter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "abi/perf_event.h"
#include "capture/pmu.h"
#include "capture/workload.h"
#include "support/test_support.h"

namespace perfkit::capture {
namespace {

using namespace perfkit::abi;

EventList parse(const std::string& text) {
  static PmuCatalog pmus = PmuCatalog::load(SystemPaths{});
  EventList list;
  auto st = parse_events(text, {&pmus, nullptr}, list);
  EXPECT_TRUE(st) << st.error().message();
  return list;
}

// counted_function's address in the non-PIE callcount workload.
std::string function_address(const std::string& binary, const std::string& name) {
  auto r = test::run("nm " + test::sh(binary) + " | awk '$3==\"" + name + "\"{print $1}'");
  std::string a = r.out.substr(0, r.out.find('\n'));
  return a.empty() ? "" : "0x" + a;
}

struct Measured {
  CounterSet set;
  CounterReadings readings;
  ExitInfo exit;
};

// Runs `argv` as perf stat does: counters opened on the held child with
// enable_on_exec, the child released, read after it exits.
Measured measure(const std::string& events, std::vector<std::string> argv) {
  Measured m;
  auto w = Workload::prepare(std::move(argv));
  EXPECT_TRUE(w) << w.error().message();
  CountingOptions o;
  o.enable_on_exec = true;
  auto evs = counting_events(parse(events), o);
  std::vector<std::string> notes;
  auto set = CounterSet::open(std::move(evs), {{-1}, {w->pid()}},
                              OpenErrorContext::read(SystemPaths{}), notes);
  EXPECT_TRUE(set) << set.error().message();
  if (!set) return m;
  m.set = std::move(*set);
  EXPECT_TRUE(w->start());
  auto e = w->wait();
  EXPECT_TRUE(e);
  m.exit = *e;
  m.readings = m.set.read();
  return m;
}

TEST(CountingEvents, PerfStatAttrSettings) {
  CountingOptions o;
  o.enable_on_exec = true;
  auto evs = counting_events(parse("task-clock,{page-faults,cs},mem:0x1000:x"), o);
  ASSERT_EQ(evs.size(), 4u);
  // Breakpoints come with a sample period of 1: counting has none.
  EXPECT_EQ(evs[3].attr.sample_period, 0u);
  const auto& tc = evs[0];
  EXPECT_EQ(tc.unit, "msec");
  EXPECT_DOUBLE_EQ(tc.scale, 1e-6);
  EXPECT_EQ(tc.attr.read_format, kFormatTotalTimeEnabled | kFormatTotalTimeRunning);
  EXPECT_TRUE(tc.attr.has(kAttrDisabled));
  EXPECT_TRUE(tc.attr.has(kAttrEnableOnExec));
  EXPECT_TRUE(tc.attr.has(kAttrInherit));
  EXPECT_EQ(tc.attr.sample_type, kSampleIdentifier);
  const auto& pf = evs[1];
  const auto& cs = evs[2];
  EXPECT_EQ(pf.group_size, 2u);
  EXPECT_EQ(cs.leader, 1u);
  EXPECT_EQ(cs.attr.read_format,
            kFormatTotalTimeEnabled | kFormatTotalTimeRunning | kFormatId | kFormatGroup);
  // Only leaders start disabled and wait for exec.
  EXPECT_FALSE(cs.attr.has(kAttrDisabled));
  EXPECT_FALSE(cs.attr.has(kAttrEnableOnExec));
  EXPECT_EQ(pf.unit, "");
}

TEST(CountingEvents, DefaultEventsAsPerf61) {
  auto none = PmuCatalog::from({});
  EXPECT_EQ(default_stat_events(false, none),
            "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,"
            "branch-misses");
  Pmu cpu;
  cpu.name = "cpu";
  cpu.type = 4;
  cpu.events = {{"stalled-cycles-backend", "event=0x1", "", std::nullopt, false, false},
                {"stalled-cycles-frontend", "event=0x2", "", std::nullopt, false, false}};
  auto with = PmuCatalog::from({cpu});
  EXPECT_EQ(default_stat_events(true, with),
            "cpu-clock,context-switches,cpu-migrations,page-faults,cycles,"
            "stalled-cycles-frontend,stalled-cycles-backend,instructions,branches,branch-misses");
}

TEST(CounterSet, SoftwareEventsOnAWorkload) {
  auto bin = test::workload("callcount");
  auto m = measure("task-clock,page-faults,context-switches,cpu-migrations", {bin, "1000", "2000"});
  ASSERT_EQ(m.readings.values.size(), 4u);
  for (std::size_t ev = 0; ev < 4; ++ev) EXPECT_TRUE(m.readings.ok_at(ev, 0, 0)) << ev;
  const auto& tc = m.readings.at(0, 0, 0);
  EXPECT_GT(tc.value, 100000u);  // 2000 fresh pages take well over 0.1 ms
  EXPECT_EQ(tc.enabled, tc.running);
  // 2000 touched pages fault at least 2000 times (plus the loader's).
  EXPECT_GE(m.readings.at(1, 0, 0).value, 2000u);
  EXPECT_LT(m.readings.at(1, 0, 0).value, 2000u + 400u);
}

TEST(CounterSet, GroupIsReadInOneCall) {
  auto bin = test::workload("callcount");
  auto m = measure("{task-clock,page-faults}", {bin, "10", "500"});
  ASSERT_TRUE(m.readings.ok_at(0, 0, 0));
  ASSERT_TRUE(m.readings.ok_at(1, 0, 0));
  // One read: both members carry the group's times and their own ids.
  EXPECT_EQ(m.readings.at(0, 0, 0).enabled, m.readings.at(1, 0, 0).enabled);
  EXPECT_EQ(m.readings.at(1, 0, 0).id, m.set.ids(1)[0]);
  EXPECT_GE(m.readings.at(1, 0, 0).value, 500u);
}

TEST(CounterSet, UnsupportedGroupMemberLeavesTheGroupNotCounted) {
  auto bin = test::workload("callcount");
  auto pmus = PmuCatalog::load(SystemPaths{});
  if (pmus.core()) GTEST_SKIP() << "this machine has a hardware PMU";
  auto m = measure("{task-clock,cycles}", {bin, "1"});
  EXPECT_TRUE(m.set.supported(0));
  EXPECT_FALSE(m.set.supported(1));
  // perf's group read expects both members: the leader reads as failed.
  EXPECT_FALSE(m.readings.ok_at(0, 0, 0));
}

TEST(CounterSet, ExecuteBreakpointCountsCallsExactly) {
  PK_SKIP_WITHOUT_BREAKPOINTS();
  auto bin = test::workload("callcount");
  auto addr = function_address(bin, "counted_function");
  ASSERT_FALSE(addr.empty()) << "no counted_function in " << bin;
  for (unsigned long calls : {1ul, 12345ul}) {
    auto m = measure("mem:" + addr + ":x", {bin, std::to_string(calls)});
    ASSERT_TRUE(m.readings.ok_at(0, 0, 0));
    EXPECT_EQ(m.readings.at(0, 0, 0).value, calls);
  }
}

TEST(CounterSet, FifthBreakpointIsENOSPCWithTheLimit) {
  auto bin = test::workload("callcount");
  auto addr = function_address(bin, "counted_function");
  ASSERT_FALSE(addr.empty());
  std::string five;
  for (int i = 0; i < 5; ++i) five += (i ? "," : "") + ("mem:" + addr + ":x");
  auto w = Workload::prepare({bin, "1"});
  ASSERT_TRUE(w);
  CountingOptions o;
  o.enable_on_exec = true;
  std::vector<std::string> notes;
  auto set = CounterSet::open(counting_events(parse(five), o), {{-1}, {w->pid()}},
                              OpenErrorContext::read(SystemPaths{}), notes);
  ASSERT_FALSE(set) << "five breakpoints opened: this machine has more than 4 debug registers";
  const std::string msg = set.error().message();
  EXPECT_NE(msg.find("ENOSPC"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4 debug registers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mem:" + addr + ":x"), std::string::npos) << msg;
}

TEST(CounterSet, CpuWideCountersReadPerCpu) {
  auto w = Workload::prepare({"sleep", "0.05"});
  ASSERT_TRUE(w);
  std::vector<std::string> notes;
  auto set = CounterSet::open(counting_events(parse("cpu-clock"), {}), {{0}, {-1}},
                              OpenErrorContext::read(SystemPaths{}), notes);
  ASSERT_TRUE(set) << set.error().message();
  ASSERT_TRUE(set->enable());
  ASSERT_TRUE(w->start());
  ASSERT_TRUE(w->wait());
  ASSERT_TRUE(set->disable());
  auto r = set->read();
  ASSERT_TRUE(r.ok_at(0, 0, 0));
  // A cpu clock runs all the time it is enabled: about the 50 ms of the sleep.
  EXPECT_GT(r.at(0, 0, 0).value, 30000000u);
}

}  // namespace
}  // namespace perfkit::capture
