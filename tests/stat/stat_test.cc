// StatEngine and StatPrinter from recorded counter values: multiplexing
// scaling and its running percentage, not counted / not supported lines,
// derived metrics, repeated runs, aggregation modes, and the three layouts
// (CSV and JSON parsed back). The layouts' expected strings follow perf 6.1's
// printf formats (tools/perf/util/stat-display.c), field by field.
#include "stat/stat.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "abi/perf_event.h"
#include "stat/stat_print.h"

namespace perfkit::stat {
namespace {

using abi::CounterValue;

StatEvent event(std::string name, std::uint32_t type, std::uint64_t config) {
  StatEvent e;
  e.name = std::move(name);
  e.attr.type = type;
  e.attr.config = config;
  if (is_clock_event(e.attr)) e.unit = "msec", e.scale = 1e-6;
  return e;
}

// One cpu, one thread: the workload case.
StatSetup task_setup(std::vector<StatEvent> events) {
  StatSetup s;
  s.events = std::move(events);
  return s;
}

StatReading reading(const std::vector<CounterValue>& per_event) {
  StatReading r;
  for (const auto& v : per_event) {
    r.values.push_back({v});
    r.ok.push_back({true});
  }
  return r;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    auto p = s.find(sep, at);
    out.push_back(s.substr(at, p - at));
    if (p == std::string::npos) break;
    at = p + 1;
  }
  return out;
}

TEST(StatScale, MultiplexedCountIsScaledByEnabledOverRunning) {
  // Recorded from a hardware counter that ran a third of the time.
  auto s = abi::scale_count(1000000, 3000000, 1000000);
  EXPECT_EQ(s.value, 3000000u);
  EXPECT_EQ(s.state, abi::ScaleState::kScaled);
  // Truncated as perf does: (u64)((double)val * ena / run).
  s = abi::scale_count(10, 3, 2);
  EXPECT_EQ(s.value, 15u);
  s = abi::scale_count(7, 10, 3);
  EXPECT_EQ(s.value, 23u);  // 23.33
  s = abi::scale_count(100, 100, 100);
  EXPECT_EQ(s.state, abi::ScaleState::kExact);
  s = abi::scale_count(5, 100, 0);
  EXPECT_EQ(s.state, abi::ScaleState::kNotRunning);
  EXPECT_EQ(s.value, 0u);
  s = abi::scale_count(7, 10, 3, /*scale=*/false);
  EXPECT_EQ(s.value, 7u);
}

TEST(StatReadFormat, GroupAndSingleLayouts) {
  const std::uint64_t rf = abi::kFormatGroup | abi::kFormatId | abi::kFormatTotalTimeEnabled |
                           abi::kFormatTotalTimeRunning;
  EXPECT_EQ(abi::read_format_words(rf, 2), 3u + 2 * 2);
  std::vector<std::uint64_t> words = {2, 900, 300, 11, 101, 22, 102};
  auto v = abi::parse_read_values(words, rf);
  ASSERT_TRUE(v);
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[1].value, 22u);
  EXPECT_EQ((*v)[1].id, 102u);
  EXPECT_EQ((*v)[1].enabled, 900u);
  EXPECT_EQ((*v)[1].running, 300u);
  words.pop_back();
  EXPECT_FALSE(abi::parse_read_values(words, rf));
  const std::uint64_t single = abi::kFormatTotalTimeEnabled | abi::kFormatTotalTimeRunning;
  auto one = abi::parse_read_values(std::vector<std::uint64_t>{5, 6, 7}, single);
  ASSERT_TRUE(one);
  EXPECT_EQ((*one)[0], (CounterValue{5, 6, 7, 0, 0}));
  EXPECT_FALSE(abi::parse_read_values(std::vector<std::uint64_t>{5, 6}, single));
}

// A hardware counter multiplexed 3:1 shows its estimate and "(33.33%)" in
// the default layout, the integer percentage in CSV (perf computes
// 100 * run / ena in u64) and JSON.
TEST(StatPrint, MultiplexedRunningPercentage) {
  StatEngine eng(task_setup({event("task-clock", abi::kTypeSoftware, 1),
                             event("instructions", abi::kTypeHardware, 1)}),
                 AggrMode::kGlobal);
  eng.add_run(reading({{2000000, 2000000, 2000000}, {1000, 3000000, 1000000}}), 4000000);
  StatPrintOptions o;
  o.target.argv = {"./app"};
  StatPrinter p(eng, o);
  auto out = lines(p.counters(""));
  ASSERT_EQ(out.size(), 2u);
  // No cycles counted: the insn-per-cycle column stays blank.
  EXPECT_EQ(out[1], "              3000      instructions                    " +
                        std::string(35, ' ') + "  (33.33%)")
      << "got: '" << out[1] << "'";

  o.format = StatFormat::kCsv;
  StatPrinter csv(eng, o);
  auto c = lines(csv.counters(""));
  EXPECT_EQ(c[1], "3000,,instructions,1000000,33.00,,");
  o.format = StatFormat::kJson;
  StatPrinter json(eng, o);
  auto j = lines(json.counters(""));
  EXPECT_NE(j[1].find("\"pcnt-running\" : 33.00"), std::string::npos) << j[1];
  EXPECT_NE(j[1].find("\"counter-value\" : \"3000.000000\""), std::string::npos) << j[1];
}

TEST(StatPrint, NotRunningIsNotCountedAndUnsupportedSaysSo) {
  auto setup = task_setup(
      {event("cycles", abi::kTypeHardware, 0), event("branches", abi::kTypeHardware, 4)});
  setup.events[1].supported = false;
  StatEngine eng(setup, AggrMode::kGlobal);
  eng.add_run(reading({{0, 500, 0}, {0, 0, 0}}), 1000);
  StatPrintOptions o;
  StatPrinter p(eng, o);
  auto out = lines(p.counters(""));
  ASSERT_EQ(out.size(), 2u);
  // 18-wide marker, the unit column, the name in 25 columns, 35 blank
  // metric columns, then the running percentage of a counter that never ran.
  EXPECT_EQ(out[0], "     <not counted>      cycles                   " + std::string(35, ' ') +
                        "  (0.00%)");
  EXPECT_EQ(out[1], "   <not supported>      branches                 " + std::string(35, ' '));
  o.format = StatFormat::kCsv;
  StatPrinter csv(eng, o);
  auto c = lines(csv.counters(""));
  EXPECT_EQ(c[0], "<not counted>,,cycles,0,0.00,,");
  EXPECT_EQ(c[1], "<not supported>,,branches,0,100.00,,");
}

TEST(StatPrint, DefaultLayoutAndMetrics) {
  StatEngine eng(
      task_setup(
          {event("task-clock", abi::kTypeSoftware, 1),
           event("context-switches", abi::kTypeSoftware, 3),
           event("page-faults", abi::kTypeSoftware, 2), event("cycles", abi::kTypeHardware, 0),
           event("instructions", abi::kTypeHardware, 1), event("branches", abi::kTypeHardware, 4),
           event("branch-misses", abi::kTypeHardware, 5)}),
      AggrMode::kGlobal);
  const std::uint64_t ns = 1500000;  // 1.5 ms of task-clock
  eng.add_run(reading({{ns, ns, ns},
                       {3, ns, ns},
                       {4500, ns, ns},
                       {3000000, ns, ns},
                       {6000000, ns, ns},
                       {1000000, ns, ns},
                       {25000, ns, ns}}),
              3000000);
  StatPrintOptions o;
  o.target.argv = {"./app", "x"};
  o.ru_display = true;
  o.ru_user_s = 0.001;
  StatPrinter p(eng, o);
  auto text = p.final_report();
  auto out = lines(text);
  ASSERT_GE(out.size(), 12u) << text;
  EXPECT_EQ(out[1], " Performance counter stats for './app x':");
  EXPECT_EQ(out[3],
            "              1.50 msec task-clock                       #    0.500 CPUs "
            "utilized          ");
  EXPECT_EQ(out[4],
            "                 3      context-switches                 #    2.000 K/sec  "
            "                ");
  EXPECT_EQ(out[5],
            "              4500      page-faults                      #    3.000 M/sec  "
            "                ");
  EXPECT_EQ(out[6],
            "           3000000      cycles                           #    2.000 GHz    "
            "                ");
  EXPECT_EQ(out[7],
            "           6000000      instructions                     #    2.00  insn per "
            "cycle         ");
  EXPECT_EQ(out[8],
            "           1000000      branches                         #  666.667 M/sec  "
            "                ");
  EXPECT_EQ(out[9],
            "             25000      branch-misses                    #    2.50% of all "
            "branches        ");
  EXPECT_EQ(out[11], "       0.003000000 seconds time elapsed");
  EXPECT_EQ(out[13], "       0.001000000 seconds user");
  EXPECT_EQ(out[14], "       0.000000000 seconds sys");
}

TEST(StatPrint, ThousandsGroupingFollowsTheLocaleSeparator) {
  EXPECT_EQ(format_grouped(1234567, 18, 0, ","), "         1,234,567");
  EXPECT_EQ(format_grouped(1234.5, 18, 2, ","), "          1,234.50");
  EXPECT_EQ(format_grouped(999, 18, 0, ","), "               999");
  EXPECT_EQ(format_grouped(1234567, 18, 0, ""), "           1234567");
}

// -r 3: perf 6.1 shows the last run's count with the noise of all runs
// relative to it, and the metrics from the averages.
TEST(StatPrint, RepeatedRunsShowLastCountAndNoise) {
  StatEngine eng(task_setup({event("task-clock", abi::kTypeSoftware, 1),
                             event("page-faults", abi::kTypeSoftware, 2)}),
                 AggrMode::kGlobal);
  const std::uint64_t pf[] = {100, 200, 300};
  const std::uint64_t ns[] = {1000000, 2000000, 3000000};
  for (int i = 0; i < 3; ++i)
    eng.add_run(reading({{ns[i], ns[i], ns[i]}, {pf[i], ns[i], ns[i]}}), 2 * ns[i]);
  EXPECT_EQ(eng.runs(), 3);
  EXPECT_DOUBLE_EQ(eng.value(1, 0).val, 300);
  // stddev of the mean of 100,200,300 is 57.735; relative to 300: 19.25%.
  EXPECT_NEAR(eng.noise_stddev(1), 57.735, 0.001);
  StatPrintOptions o;
  o.run_count = 3;
  o.format = StatFormat::kCsv;
  StatPrinter csv(eng, o);
  auto c = lines(csv.counters(""));
  // 300 faults over the average task-clock of 2 ms: 150 K/sec.
  EXPECT_EQ(c[1], "300,,page-faults,19.25%,3000000,100.00,150.000,K/sec");
  o.format = StatFormat::kStd;
  StatPrinter std_p(eng, o);
  auto text = std_p.final_report();
  EXPECT_NE(text.find(" Performance counter stats for 'pipe' (3 runs):"), std::string::npos);
  EXPECT_NE(text.find("#  150.000 K/sec                    ( +- 19.25% )"), std::string::npos)
      << text;
  // Wall times 2, 4, 6 ms: mean 4 ms, stddev of the mean 1.1547 ms.
  EXPECT_NE(text.find("           0.00400 +- 0.00115 seconds time elapsed  ( +- 28.87% )"),
            std::string::npos)
      << text;
}

StatSetup cpu_setup() {
  StatSetup s;
  s.events = {event("cpu-clock", abi::kTypeSoftware, 0),
              event("page-faults", abi::kTypeSoftware, 2)};
  s.cpus = {0, 1, 2, 3};
  s.threads = {-1};
  s.topology[0] = {0, 0, 0, 0};
  s.topology[1] = {0, 0, 1, 0};
  s.topology[2] = {1, 0, 0, 1};
  s.topology[3] = {1, 0, 1, 1};
  return s;
}

StatReading cpu_reading() {
  StatReading r;
  r.values = {{{10000000, 10000000, 10000000},
               {20000000, 20000000, 20000000},
               {30000000, 30000000, 30000000},
               {40000000, 40000000, 40000000}},
              {{1, 10000000, 10000000},
               {2, 20000000, 20000000},
               {3, 30000000, 30000000},
               {4, 40000000, 40000000}}};
  r.ok = {{true, true, true, true}, {true, true, true, true}};
  return r;
}

TEST(StatAggr, PerCpuPerCorePerSocketPerNode) {
  EXPECT_EQ(aggr_slots(cpu_setup(), AggrMode::kSocket).size(), 2u);
  EXPECT_EQ(aggr_slots(cpu_setup(), AggrMode::kCore).size(), 4u);
  StatPrintOptions o;
  o.format = StatFormat::kCsv;

  StatEngine none(cpu_setup(), AggrMode::kNone);
  none.add_run(cpu_reading(), 40000000);
  auto c = lines(StatPrinter(none, o).counters(""));
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[0], "CPU0,10.00,msec,cpu-clock,10000000,100.00,0.250,CPUs utilized");
  EXPECT_EQ(c[4], "CPU0,1,,page-faults,10000000,100.00,100.000,/sec");

  StatEngine sock(cpu_setup(), AggrMode::kSocket);
  sock.add_run(cpu_reading(), 40000000);
  c = lines(StatPrinter(sock, o).counters(""));
  ASSERT_EQ(c.size(), 4u);
  // Socket by socket, each event; the cpus column counts the socket's cpus.
  EXPECT_EQ(c[0], "S0,2,30.00,msec,cpu-clock,30000000,100.00,0.750,CPUs utilized");
  EXPECT_EQ(c[1], "S0,2,3,,page-faults,30000000,100.00,100.000,/sec");
  EXPECT_EQ(c[2], "S1,2,70.00,msec,cpu-clock,70000000,100.00,1.750,CPUs utilized");

  StatEngine node(cpu_setup(), AggrMode::kNode);
  node.add_run(cpu_reading(), 40000000);
  o.format = StatFormat::kStd;
  auto s = lines(StatPrinter(node, o).counters(""));
  EXPECT_EQ(s[0].substr(0, 11), "N0        2");

  StatEngine core(cpu_setup(), AggrMode::kCore);
  core.add_run(cpu_reading(), 40000000);
  s = lines(StatPrinter(core, o).counters(""));
  EXPECT_EQ(s[0].substr(0, 20), "S0-D0-C0           1");
}

TEST(StatAggr, OneCpuNotRunningMakesItsSocketNotCounted) {
  StatEngine sock(cpu_setup(), AggrMode::kSocket);
  auto r = cpu_reading();
  r.values[0][1] = {0, 0, 0};
  sock.add_run(r, 40000000);
  EXPECT_FALSE(sock.value(0, 0).counted);
  EXPECT_TRUE(sock.value(0, 1).counted);
}

TEST(StatAggr, IntervalsShowDeltas) {
  StatEngine eng(task_setup({event("task-clock", abi::kTypeSoftware, 1),
                             event("page-faults", abi::kTypeSoftware, 2)}),
                 AggrMode::kGlobal);
  eng.add_interval(reading({{1000000, 1000000, 1000000}, {10, 1000000, 1000000}}), 100000000);
  EXPECT_DOUBLE_EQ(eng.value(1, 0).val, 10);
  eng.add_interval(reading({{1500000, 1500000, 1500000}, {14, 1500000, 1500000}}), 100000000);
  EXPECT_DOUBLE_EQ(eng.value(1, 0).val, 4);
  EXPECT_EQ(eng.value(1, 0).run, 500000u);
  // A third interval in which nothing ran: not counted.
  eng.add_interval(reading({{1500000, 1500000, 1500000}, {14, 1500000, 1500000}}), 100000000);
  EXPECT_FALSE(eng.value(0, 0).counted);
  StatPrintOptions o;
  o.interval_ms = 100;
  StatPrinter p(eng, o);
  auto out = lines(p.interval(200417107));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "#           time             counts unit events");
  EXPECT_EQ(out[1], "     0.200417107      <not counted> msec task-clock               " +
                        std::string(35, ' '));
  // The column header comes once, then again after 25 intervals.
  EXPECT_EQ(lines(p.interval(300000000)).size(), 2u);
}

// Scripts parse perf stat -x and -j; parse ours the same way.
TEST(StatPrint, CsvAndJsonParse) {
  StatEngine eng(task_setup({event("task-clock", abi::kTypeSoftware, 1),
                             event("page-faults", abi::kTypeSoftware, 2),
                             event("cycles", abi::kTypeHardware, 0)}),
                 AggrMode::kGlobal);
  eng.add_run(reading({{2000000, 2000000, 2000000}, {42, 2000000, 2000000}, {0, 0, 0}}), 4000000);
  StatPrintOptions o;
  o.format = StatFormat::kCsv;
  o.csv_sep = ";";
  auto c = lines(StatPrinter(eng, o).counters(""));
  ASSERT_EQ(c.size(), 3u);
  for (const auto& l : c) {
    auto f = split(l, ';');
    ASSERT_EQ(f.size(), 7u) << l;  // value;unit;event;runtime;pcnt;metric;metric-unit
  }
  EXPECT_EQ(split(c[1], ';')[0], "42");
  EXPECT_EQ(split(c[1], ';')[2], "page-faults");
  EXPECT_EQ(split(c[1], ';')[6], "K/sec");

  o.format = StatFormat::kJson;
  auto j = lines(StatPrinter(eng, o).counters(""));
  ASSERT_EQ(j.size(), 3u);
  for (const auto& l : j) {
    EXPECT_EQ(l.front(), '{');
    EXPECT_EQ(l.back(), '}');
    // "key" : value pairs separated by ", ".
    auto body = l.substr(1, l.size() - 2);
    for (const auto& kv : split(body, ',')) {
      auto colon = kv.find(" : ");
      ASSERT_NE(colon, std::string::npos) << kv;
      auto key = kv.substr(0, colon);
      EXPECT_NE(key.find('"'), std::string::npos) << kv;
    }
  }
  EXPECT_NE(j[1].find("\"event\" : \"page-faults\""), std::string::npos);
  EXPECT_NE(j[1].find("\"metric-unit\" : \"K/sec\""), std::string::npos);
  EXPECT_NE(j[2].find("\"counter-value\" : \"<not counted>\""), std::string::npos) << j[2];
}

TEST(StatPrint, PerThreadSortsByCountAndSkipsIdleThreadsSystemWide) {
  StatSetup s;
  s.events = {event("task-clock", abi::kTypeSoftware, 1)};
  s.threads = {100, 101, 102};
  s.comms = {"a", "b", "c"};
  StatEngine eng(s, AggrMode::kThread);
  StatReading r;
  r.values = {{{1000000, 1000000, 1000000}, {0, 0, 0}, {3000000, 3000000, 3000000}}};
  r.ok = {{true, true, true}};
  eng.add_run(r, 10000000);
  StatPrintOptions o;
  o.format = StatFormat::kCsv;
  auto c = lines(StatPrinter(eng, o).counters(""));
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], "c-102,3.00,msec,task-clock,3000000,100.00,0.300,CPUs utilized");
  EXPECT_EQ(c[2], "b-101,<not counted>,msec,task-clock,0,100.00,,");
  o.skip_zero_threads = true;
  EXPECT_EQ(lines(StatPrinter(eng, o).counters("")).size(), 2u);
}

}  // namespace
}  // namespace perfkit::stat
