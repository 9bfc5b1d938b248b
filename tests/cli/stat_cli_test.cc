// perfkit stat against /usr/bin/perf stat on the same workloads: the same
// lines in the same layout (every field is fixed width, so equal layouts give
// equal line lengths), counts within run-to-run noise, exact breakpoint
// counts, CSV and JSON parsed from both, exit statuses, Ctrl-C, and stat
// record files read by perf stat report (and perf's by perfkit stat report).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "capture/cgroup.h"
#include "support/test_support.h"

namespace perfkit::test {
namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    auto p = s.find(sep, at);
    out.push_back(s.substr(at, p - at));
    if (p == std::string::npos) break;
    at = p + sep.size();
  }
  return out;
}

std::string callcount() { return workload("callcount"); }

std::string bp_address() {
  auto r = run("nm " + sh(callcount()) + " | awk '$3==\"counted_function\"{print $1}'");
  return "0x" + r.out.substr(0, r.out.find('\n'));
}

// Numbers masked, per-second prefixes folded: what stays is the layout.
std::string mask(const std::string& line) {
  static const std::regex num("[0-9]+([.][0-9]+)?");
  static const std::regex rate(" [KMG]?/sec");
  static const std::regex noise("  [(] [+]- *[0-9.]+% [)]");
  std::string s = std::regex_replace(line, noise, "");
  s = std::regex_replace(s, num, "N");
  s = std::regex_replace(s, rate, " /sec");
  // Runs of blanks carry the alignment, which the line length checks.
  static const std::regex blanks(" +");
  return std::regex_replace(s, blanks, " ");
}

// Compares two outputs of the default layout line by line: the same number
// of lines, each of the same length with the same text around the numbers.
void expect_same_layout(const std::string& ours, const std::string& perf, const std::string& what) {
  auto a = lines_of(ours), b = lines_of(perf);
  ASSERT_EQ(a.size(), b.size()) << what << "\n--- perfkit:\n" << ours << "--- perf:\n" << perf;
  // The noise column of -r appears only for counts that varied.
  static const std::regex noise("  [(] [+]- *[0-9.]+% [)]");
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = std::regex_replace(a[i], noise, "");
    b[i] = std::regex_replace(b[i], noise, "");
    // (The -r footer's precision follows its stddev: no fixed width there.)
    if (a[i].find(" +- ") == std::string::npos)
      EXPECT_EQ(a[i].size(), b[i].size())
          << what << " line " << i << "\n perfkit: '" << a[i] << "'\n perf:    '" << b[i] << "'";
    EXPECT_EQ(mask(a[i]), mask(b[i]))
        << what << " line " << i << "\n perfkit: '" << a[i] << "'\n perf:    '" << b[i] << "'";
  }
}

struct Pair {
  RunResult ours, perf;
};

// Runs "perfkit stat ARGS" and "perf stat ARGS"; the counts go to stderr.
Pair both(const std::string& args) {
  return {run(sh(perfkit_bin()) + " stat " + args), run("/usr/bin/perf stat " + args)};
}

TEST(StatCli, DefaultEventsLayoutAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  auto p = both("-- " + sh(callcount()) + " 100");
  ASSERT_EQ(p.ours.status, 0) << p.ours.err;
  ASSERT_EQ(p.perf.status, 0) << p.perf.err;
  expect_same_layout(p.ours.err, p.perf.err, "perf stat -- callcount");
  EXPECT_NE(p.ours.err.find("<not supported>      cycles"), std::string::npos) << p.ours.err;
}

TEST(StatCli, LayoutsAsPerfForEveryMode) {
  PK_SKIP_WITHOUT_PERF();
  const std::string cmd = " -- sleep 0.05";
  const std::vector<std::string> cases = {
      "-e task-clock,page-faults,cs -r 3 -- true",
      "-a -e cpu-clock,page-faults" + cmd,
      "-a -A -e cpu-clock,page-faults" + cmd,
      "-a --per-core -e cpu-clock,page-faults" + cmd,
      "-a --per-socket -e cpu-clock,page-faults" + cmd,
      "-a --per-node -e cpu-clock,page-faults" + cmd,
      "-e '{task-clock,page-faults}',cycles,instructions -- true",
      "-C 1 -e cpu-clock" + cmd,
      "--no-big-num -e task-clock -- true"};
  for (const std::string& args : cases) {
    auto p = both(args);
    ASSERT_EQ(p.ours.status, 0) << args << ": " << p.ours.err;
    ASSERT_EQ(p.perf.status, 0) << args << ": " << p.perf.err;
    expect_same_layout(p.ours.err, p.perf.err, args);
  }
}

TEST(StatCli, IntervalLayoutAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const std::string fmt : {"", "-x, ", "-j "}) {
    auto p = both(fmt + "-I 100 --interval-count 2 -e task-clock,page-faults -- sleep 1");
    ASSERT_EQ(p.ours.status, 0) << p.ours.err;
    ASSERT_EQ(p.perf.status, 0) << p.perf.err;
    if (fmt.empty()) {
      expect_same_layout(p.ours.err, p.perf.err, "-I 100");
    } else {
      auto a = lines_of(p.ours.err), b = lines_of(p.perf.err);
      ASSERT_EQ(a.size(), b.size()) << p.ours.err << "---\n" << p.perf.err;
      for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(mask(a[i]), mask(b[i]));
    }
  }
}

// The counts of software events on a deterministic workload: perf's spread
// over five runs, widened by the noise of a shared machine, holds ours.
TEST(StatCli, SoftwareCountsMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  const std::string args = "-x, -e task-clock,page-faults,context-switches,cpu-migrations -- " +
                           sh(callcount()) + " 1000 3000";
  std::map<std::string, std::vector<double>> ours, perf;
  for (int i = 0; i < 5; ++i) {
    auto p = both(args);
    ASSERT_EQ(p.ours.status, 0) << p.ours.err;
    for (auto [res, dst] : {std::pair{&p.ours, &ours}, std::pair{&p.perf, &perf}})
      for (const auto& l : lines_of(res->err)) {
        auto f = split(l, ",");
        ASSERT_GE(f.size(), 3u) << l;
        (*dst)[f[2]].push_back(std::atof(f[0].c_str()));
      }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  ASSERT_EQ(ours.size(), 4u);
  for (auto& [ev, vals] : perf) {
    const double lo = *std::min_element(vals.begin(), vals.end());
    const double hi = *std::max_element(vals.begin(), vals.end());
    const double m = median(ours[ev]);
    if (ev == "page-faults") {
      // 3000 touched pages plus the loader's: the same to within a few faults.
      EXPECT_GE(m, lo - 10) << ev;
      EXPECT_LE(m, hi + 10) << ev;
      EXPECT_GE(m, 3000) << ev;
    } else if (ev == "task-clock") {
      EXPECT_GE(m, lo * 0.5) << ev;
      EXPECT_LE(m, hi * 2.0) << ev;
    } else {
      // Context switches and migrations are scheduler noise: a handful.
      EXPECT_LE(m, hi + 5) << ev;
    }
  }
}

TEST(StatCli, BreakpointCountsCallsExactlyAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_BREAKPOINTS();
  const std::string ev = "mem:" + bp_address() + ":x";
  auto p = both("-x, -e " + ev + " -- " + sh(callcount()) + " 54321");
  ASSERT_EQ(p.ours.status, 0) << p.ours.err;
  auto ours = split(lines_of(p.ours.err).at(0), ",");
  auto perf = split(lines_of(p.perf.err).at(0), ",");
  EXPECT_EQ(ours[0], "54321");
  EXPECT_EQ(ours[0], perf[0]);
  EXPECT_EQ(ours[2], ev);
  EXPECT_EQ(ours.size(), perf.size());
}

TEST(StatCli, FifthBreakpointNamesENOSPCAndTheLimit) {
  const std::string ev = "mem:" + bp_address() + ":x";
  std::string five = ev;
  for (int i = 0; i < 4; ++i) five += "," + ev;
  auto r = run(sh(perfkit_bin()) + " stat -e " + five + " -- " + sh(callcount()) + " 10");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("ENOSPC"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4 debug registers"), std::string::npos) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
}

TEST(StatCli, CsvParsesLikePerfs) {
  PK_SKIP_WITHOUT_PERF();
  for (const std::string sep : {",", ";", "\\t"}) {
    auto p = both("-x '" + sep + "' -- " + sh(callcount()) + " 10");
    const std::string real = sep == "\\t" ? "\t" : sep;
    auto a = lines_of(p.ours.err), b = lines_of(p.perf.err);
    ASSERT_EQ(a.size(), b.size()) << p.ours.err;
    for (std::size_t i = 0; i < a.size(); ++i) {
      auto fa = split(a[i], real), fb = split(b[i], real);
      ASSERT_EQ(fa.size(), fb.size()) << a[i] << " vs " << b[i];
      EXPECT_EQ(fa[1], fb[1]);  // unit
      EXPECT_EQ(fa[2], fb[2]);  // event
      EXPECT_EQ(fa[4], fb[4]);  // running percentage
      // The metric unit (CPUs utilized, /sec): its SI prefix follows the
      // count, which differs between runs (1 context switch is 2 K/sec, 0 is 0 /sec).
      auto unit = [](std::string u) {
        if (!u.empty() && (u[0] == 'K' || u[0] == 'M' || u[0] == 'G')) u.erase(0, 1);
        return u;
      };
      EXPECT_EQ(unit(fa[6]), unit(fb[6])) << a[i] << " vs " << b[i];
    }
  }
}

// perf's JSON lines: {"key" : value, ...}; both parse to the same keys.
std::vector<std::vector<std::string>> json_keys(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  static const std::regex key("\"([a-z-]+)\" : ");
  for (const auto& l : lines_of(text)) {
    EXPECT_EQ(l.front(), '{') << l;
    EXPECT_EQ(l.back(), '}') << l;
    std::vector<std::string> keys;
    for (std::sregex_iterator it(l.begin(), l.end(), key), end; it != end; ++it)
      keys.push_back((*it)[1]);
    out.push_back(keys);
  }
  return out;
}

TEST(StatCli, JsonParsesLikePerfs) {
  PK_SKIP_WITHOUT_PERF();
  for (const std::string extra : {"", "-r 2 ", "-a -A "}) {
    auto p = both("-j " + extra + "-e task-clock,page-faults,cycles -- " + sh(callcount()) + " 10");
    auto a = json_keys(p.ours.err), b = json_keys(p.perf.err);
    ASSERT_EQ(a.size(), b.size()) << p.ours.err;
    EXPECT_EQ(a, b) << p.ours.err << "---\n" << p.perf.err;
  }
}

// Two cgroups of their own under the perf_event cgroup mount, removed at the
// end; a workload that moves itself into the first before its exec.
class StatCgroups : public ::testing::Test {
 protected:
  void SetUp() override {
    PK_SKIP_WITHOUT_PERF();
    auto mnt = capture::cgroup_mountpoint(capture::SystemPaths{});
    if (!mnt) GTEST_SKIP() << "no cgroup file system";
    const std::string tag = "perfkit-test-" + std::to_string(::getpid());
    a_ = tag + "-a", b_ = tag + "-b";
    dir_ = *mnt;
    if (::mkdir((dir_ + "/" + a_).c_str(), 0755) != 0 ||
        ::mkdir((dir_ + "/" + b_).c_str(), 0755) != 0)
      GTEST_SKIP() << "cannot make a cgroup under " << dir_ << " (not root?)";
  }
  void TearDown() override {
    if (dir_.empty()) return;
    ::rmdir((dir_ + "/" + a_).c_str());
    ::rmdir((dir_ + "/" + b_).c_str());
  }
  std::string workload() const {
    return "-- sh -c " +
           sh("echo $$ > " + dir_ + "/" + a_ + "/cgroup.procs && exec " + sh(callcount()) + " 200");
  }
  std::string dir_, a_, b_;
};

// -G and --for-each-cgroup: the cgroup after each event's name, the
// metrics of each cgroup from its own counts, in the default, CSV and JSON
// layouts.
TEST_F(StatCgroups, LayoutsAsPerf) {
  const std::string w = workload();
  for (const std::string& args : std::vector<std::string>{
           "-a -e task-clock,context-switches,page-faults -G " + a_,
           "-a -e task-clock,page-faults -G " + a_ + "," + b_,
           "-a -e task-clock,page-faults -G ," + a_,
           "-a -e task-clock,page-faults --for-each-cgroup " + a_ + "," + b_,
           // patterns: the cgroups they match, in the order of a walk of the mount
           "-a -e task-clock --for-each-cgroup " + sh(a_.substr(0, a_.size() - 1) + "[ba]"),
           "-a -e task-clock --for-each-cgroup " + sh("^" + b_ + "$," + a_ + ".*")}) {
    auto p = both(args + " " + w);
    ASSERT_EQ(p.ours.status, 0) << args << "\n" << p.ours.err;
    ASSERT_EQ(p.perf.status, 0) << args << "\n" << p.perf.err;
    expect_same_layout(p.ours.err, p.perf.err, args);
  }
  auto csv = both("-a -x, -e task-clock,page-faults --for-each-cgroup " + a_ + "," + b_ + " " + w);
  auto ours = lines_of(csv.ours.err), theirs = lines_of(csv.perf.err);
  ASSERT_EQ(ours.size(), theirs.size()) << csv.ours.err << "---\n" << csv.perf.err;
  for (std::size_t i = 0; i < ours.size(); ++i) EXPECT_EQ(mask(ours[i]), mask(theirs[i]));
  auto json = both("-a -j -e task-clock -G " + a_ + " " + w);
  EXPECT_EQ(json_keys(json.ours.err), json_keys(json.perf.err)) << json.ours.err;
  EXPECT_NE(json.ours.err.find("\"cgroup\" : \"" + a_ + "\""), std::string::npos) << json.ours.err;
}

// perf's refusals, word for word, with perf's statuses.
TEST_F(StatCgroups, RefusalsAsPerf) {
  for (const std::string& args : std::vector<std::string>{
           "-e task-clock -G " + a_ + " -- true", "-a -G " + a_ + " -e task-clock -- true",
           "-a -e task-clock -G no-such-cgroup-here -- true",
           "-a -e task-clock --for-each-cgroup " + a_ + " -G " + a_ + " -- true",
           "-a -e task-clock -G " + a_ + " --for-each-cgroup " + a_ + " -- true",
           "-a -e task-clock --for-each-cgroup no-such-cgroup-here -- true",
           "-a -e task-clock --for-each-cgroup 'no-such-cgroup-.*' -- true",
           "-e task-clock --for-each-cgroup " + a_ + " -- true"}) {
    auto p = both(args);
    std::string want = p.perf.err;
    for (std::size_t at; (at = want.find("perf stat")) != std::string::npos;)
      want.replace(at, 9, "perfkit stat");
    EXPECT_EQ(p.ours.err, want) << args;
    EXPECT_EQ(p.ours.status, p.perf.status) << args;
  }
}

TEST(StatCli, WorkloadExitStatusBecomesOurs) {
  PK_SKIP_WITHOUT_PERF();
  // perf returns WEXITSTATUS of the workload: 0 when a signal killed it.
  // (perf itself sometimes returns 0 for a workload that exits at once: its
  // SIGCHLD handler can forget the child before wait4. Ours does not race.)
  const std::vector<std::pair<std::string, int>> cases = {
      {"true", 0}, {"false", 1}, {"sh -c 'exit 3'", 3}, {"sh -c 'kill -TERM $$'", 0}};
  for (const auto& [cmd, status] : cases) {
    auto p = both("-e task-clock -- " + cmd);
    EXPECT_EQ(p.ours.status, status) << cmd << ": " << p.ours.err;
    // A workload killed by a signal is named as perf names it (psignal);
    // perf's own line is subject to the race above, so perf is the oracle
    // only where it printed it.
    const bool killed = cmd.find("kill") != std::string::npos;
    const bool ours_named = p.ours.err.find("sh: Terminated") != std::string::npos;
    EXPECT_EQ(ours_named, killed) << cmd << ": " << p.ours.err;
    if (p.perf.err.find("sh: Terminated") != std::string::npos) EXPECT_TRUE(ours_named) << cmd;
  }
  auto r = run(sh(perfkit_bin()) + " stat -- /nonexistent/cmd");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("Workload failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
}

// Ctrl-C: the terminal sends SIGINT to the whole process group.
// The command runs in its own session with SIGINT at its default (a
// background job of a shell starts with it ignored).
RunResult interrupted(const std::string& cmd) {
  return run("bash -c 'setsid bash -c \"trap - INT; exec " + cmd +
             "\" & pid=$!; sleep 0.5; kill -INT -$pid; wait $pid; echo status=$?'");
}

TEST(StatCli, CtrlCPrintsTheCountsSoFar) {
  // Without a workload perf stops, prints and dies of the SIGINT it got.
  auto r = interrupted(perfkit_bin() + " stat -a -e cpu-clock");
  EXPECT_NE(r.err.find("Performance counter stats for 'system wide'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("msec cpu-clock"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("status=130"), std::string::npos) << r.out;
  // With one, the workload dies of it; perf reports that and exits with 0.
  r = interrupted(perfkit_bin() + " stat -e task-clock -- sleep 10");
  EXPECT_NE(r.err.find("sleep: Interrupt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("msec task-clock"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("status=0"), std::string::npos) << r.out;
}

// -n/--null: no counter, only the run's times, in perf's layout.
TEST(StatCli, NullRunPrintsOnlyTheTimes) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* args : {"-n -- true", "--null -r 3 -- true", "-n -x, -- true"}) {
    auto p = both(args);
    ASSERT_EQ(p.ours.status, 0) << p.ours.err;
    expect_same_layout(p.ours.err, p.perf.err, std::string("perf stat ") + args);
  }
  auto r = run(sh(perfkit_bin()) + " stat -n -- true");
  EXPECT_NE(r.err.find("seconds time elapsed"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("task-clock"), std::string::npos) << r.err;
}

// --table: each run's time, its difference from the mean and a bar of
// 1 + |difference|/5% '#', then the result; refused without -r.
TEST(StatCli, TableOfEachRunAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  auto p = both("--table -r 4 -e task-clock -- true");
  ASSERT_EQ(p.ours.status, 0) << p.ours.err;
  static const std::regex row(R"( +([0-9.]+) \(([+-][0-9.]+)\) (#+))");
  auto rows = [](const std::string& err) {
    std::vector<std::string> v;
    for (const std::string& l : lines_of(err))
      if (std::regex_match(l, row)) v.push_back(l);
    return v;
  };
  const auto ours = rows(p.ours.err);
  EXPECT_EQ(ours.size(), 4u) << p.ours.err;
  EXPECT_EQ(rows(p.perf.err).size(), 4u) << p.perf.err;
  for (const std::string& l : ours) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, row));
    const double run = std::stod(m[1]), diff = std::stod(m[2]);
    const int pct = static_cast<int>(100.0 * diff / run);
    // (printed digits: the bar may differ by one at a 5% boundary)
    EXPECT_NEAR(static_cast<double>(m[3].length()), 1 + std::abs(pct) / 5, 1.0) << l;
  }
  for (const char* heading : {"# Table of individual measurements:", "# Final result:"}) {
    EXPECT_NE(p.ours.err.find(heading), std::string::npos) << p.ours.err;
    EXPECT_NE(p.perf.err.find(heading), std::string::npos) << p.perf.err;
  }
  auto bad = both("--table -e task-clock -- true");
  EXPECT_EQ(bad.ours.status, 234);
  EXPECT_EQ(bad.ours.status, bad.perf.status);
  EXPECT_EQ(lines_of(bad.ours.err).front(), "--table is only supported with -r");
}

// --interval-clear: the terminal cleared on stdout and the header again
// before every interval, as perf does.
TEST(StatCli, IntervalClearAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  auto p = both("-I 100 --interval-clear -e task-clock -- sleep 0.35");
  ASSERT_EQ(p.ours.status, 0) << p.ours.err;
  const std::string clear = "\033[H\033[2J\n";
  auto count = [](const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  for (const auto* r : {&p.ours, &p.perf}) {
    const std::size_t clears = count(r->out, clear);
    EXPECT_GE(clears, 3u) << r->out;
    EXPECT_EQ(r->out.size(), clears * clear.size()) << r->out;  // nothing else on stdout
    EXPECT_EQ(count(r->err, "#           time"), clears) << r->err;
  }
}

// --pre and --post run through the shell around each run, as perf's do
// (their output on stdout, in the same order); a failing one is an error.
TEST(StatCli, PreAndPostCommandsAroundEachRun) {
  PK_SKIP_WITHOUT_PERF();
  auto p = both("--pre 'echo pre' --post 'echo post' -r 3 -e task-clock -- true");
  EXPECT_EQ(p.ours.status, 0) << p.ours.err;
  EXPECT_EQ(p.ours.out, "pre\npost\npre\npost\npre\npost\n");
  EXPECT_EQ(p.ours.out, p.perf.out);
  EXPECT_NE(p.ours.err.find("( +-"), std::string::npos) << p.ours.err;  // 3 runs' spread
  auto bad = run(sh(perfkit_bin()) + " stat --pre false -e task-clock -- true");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--pre command 'false' failed"), std::string::npos) << bad.err;
}

// --timeout, -D/--delay, -d/-dd/-ddd, -g, --summary (-x with and without
// --no-csv-summary), --log-fd: perf's layout, messages and statuses.
TEST(StatCli, TimeoutDelayDetailedGroupSummaryAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* args :
       {"--timeout 100 -e task-clock -- sleep 1", "--timeout 100 -e cpu-clock -a",
        "-D 100 -e task-clock -- sleep 0.3", "-D -1 -e task-clock,page-faults -- sleep 0.1",
        "-ddd -e task-clock -- true", "-d -- true", "-g -- true",
        "-g -e task-clock,page-faults -- true",
        "-I 100 --interval-count 2 --summary -e task-clock -- sleep 1"}) {
    auto p = both(args);
    ASSERT_EQ(p.ours.status, p.perf.status) << args << ": " << p.ours.err;
    expect_same_layout(p.ours.err, p.perf.err, args);
  }
  for (const char* args : {"-I 100 --interval-count 2 --summary -x, -e task-clock -- sleep 1",
                           "-I 100 --interval-count 2 --summary --no-csv-summary -x, -e "
                           "task-clock -- sleep 1"}) {
    auto p = both(args);
    auto a = lines_of(p.ours.err), b = lines_of(p.perf.err);
    ASSERT_EQ(a.size(), b.size()) << args << "\n" << p.ours.err << "---\n" << p.perf.err;
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(mask(a[i]), mask(b[i])) << args;
  }
  auto t = run(sh(perfkit_bin()) + " stat --timeout 100 -e task-clock -- sleep 1");
  EXPECT_EQ(lines_of(t.err).front(), "sleep: Terminated") << t.err;
  auto d = run(sh(perfkit_bin()) + " stat -D 50 -e task-clock -- true");
  EXPECT_EQ(d.err.rfind("Events disabled\nEvents enabled\n", 0), 0u) << d.err;
  // The counts on the descriptor given, nothing on stderr.
  TempDir dir;
  auto l =
      run(sh(perfkit_bin()) + " stat --log-fd 3 -e task-clock -- true 3>" + sh(dir.path("log")));
  EXPECT_EQ(l.err, "");
  EXPECT_NE(read_file(dir.path("log")).find("msec task-clock"), std::string::npos);
  // perf's refusals: the message, then its usage with the options' help.
  for (const char* args : {"--timeout 5 -- true", "--timeout 200 -I 100 -- true",
                           "--log-fd -2 -- true", "-o /dev/null --log-fd 3 -- true"}) {
    auto p = both(args);
    EXPECT_EQ(p.ours.status, 234) << args;
    EXPECT_EQ(p.ours.status, p.perf.status) << args;
    auto a = lines_of(p.ours.err), b = lines_of(p.perf.err);
    ASSERT_EQ(a.size(), b.size()) << args << "\n" << p.ours.err << "---\n" << p.perf.err;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i].find("Usage:") == std::string::npos) EXPECT_EQ(a[i], b[i]) << args;
  }
}

// --metric-only in each layout and aggregation (software events have no
// metric perf shows there: empty columns for the counters that did not
// count), and perf's words where the machine lacks what an option needs
// (top-down slots, SMI freezing, TSX, a hybrid cpu, uncore I/O), or a
// metric perfkit does not define.
TEST(StatCli, MetricOnlyAndPlatformOptionsAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* args :
       {"--metric-only -- true", "--metric-only -e task-clock -- true", "--metric-only -x, -- true",
        "--metric-only -j -- true", "--metric-only -a -A -e cpu-clock -- sleep 0.1",
        "--metric-only -x, -a --per-core -- sleep 0.1",
        "--metric-only -a -I 100 --interval-count 2",
        "--metric-only -x, -a -I 100 --interval-count 2 -e cpu-clock",
        "--td-level 2 -e task-clock -- true", "-M foo,bar -e task-clock -- true",
        "--topdown -a -- true", "--topdown -- true", "--topdown --td-level 3 -- true",
        "--smi-cost -- true", "-T -- true", "--cputype atom -- true", "--iostat -- true"}) {
    auto p = both(args);
    EXPECT_EQ(p.ours.status, p.perf.status) << args << ": " << p.ours.err;
    auto a = lines_of(p.ours.err), b = lines_of(p.perf.err);
    ASSERT_EQ(a.size(), b.size()) << args << "\n" << p.ours.err << "---\n" << p.perf.err;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i].find("Usage:") == std::string::npos) EXPECT_EQ(mask(a[i]), mask(b[i])) << args;
  }
}

// --filter: the tracepoint filter of the -e before it (writes of 3 bytes
// only: 2 of the workload's 3), joined when given twice, perf's refusals
// without an -e before it or on a software event, and of a filter the
// kernel rejects.
TEST(StatCli, FilterAppliesToTheEventBeforeItAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  const std::string work = " -- sh -c 'echo hi; echo x; echo ho' >/dev/null";
  int compared = 0;
  for (const char* args :
       {"-x, -e syscalls:sys_enter_write --filter 'count == 3'",
        "-x, -e syscalls:sys_enter_write,syscalls:sys_enter_read --filter 'count == 3' -e "
        "task-clock",
        "-x, -e syscalls:sys_enter_write --filter 'count == 3' --filter 'fd == 1'",
        "-x, -e task-clock -e syscalls:sys_enter_write --filter 'count != 3'",
        "-e task-clock --filter 'fd == 1'", "--filter 'fd == 1' -e task-clock",
        "-e syscalls:sys_enter_write --filter 'bogus == 1'"}) {
    auto p = both(std::string(args) + work);
    EXPECT_EQ(p.ours.status, p.perf.status) << args << ": " << p.ours.err;
    auto a = lines_of(p.ours.err), b = lines_of(p.perf.err);
    ASSERT_EQ(a.size(), b.size()) << args << "\n" << p.ours.err << "---\n" << p.perf.err;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].find("Usage:") != std::string::npos) continue;
      // CSV: the counts of the tracepoints, exact; the clock's value varies.
      auto fa = split(a[i], ","), fb = split(b[i], ",");
      if (fa.size() > 2 && fa[2] == "task-clock") continue;
      EXPECT_EQ(fa.empty() ? a[i] : fa[0] + "," + (fa.size() > 2 ? fa[2] : ""),
                fb.empty() ? b[i] : fb[0] + "," + (fb.size() > 2 ? fb[2] : ""))
          << args;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 7);
}

// --control fifo:CTL,ACK with -D -1: perf's messages for enable, disable
// and the enabling of one event by name, an ack for each command it knows
// (none for an unknown one), and the counts of what was enabled.
TEST(StatCli, ControlFifoAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  auto session = [](const std::string& tool) {
    TempDir dir;
    const std::string script =
        "cd " + sh(dir.dir()) + " && mkfifo ctl ack && exec 3<>ctl 4<>ack && { " + tool +
        " stat -e task-clock,context-switches --control fifo:ctl,ack -D -1 -- " +
        sh(workload("cpuloop")) +
        " 1500 >/dev/null 2>err & pid=$!; }; acks=; "
        "for c in enable disable bogus 'enable context-switches' ping; do echo \"$c\" >&3; "
        "[ \"$c\" = bogus ] && continue; read -t 20 x <&4; acks=\"$acks$x \"; sleep 0.1; done; "
        "wait $pid; echo \"status $? acks $acks\"; sed '/^$/q' err";
    return run("bash -c " + sh(script)).out;
  };
  const std::string want = session("/usr/bin/perf");
  EXPECT_NE(want.find("acks ack ack ack ack"), std::string::npos) << want;
  EXPECT_NE(want.find("Event context-switches enabled"), std::string::npos) << want;
  EXPECT_EQ(session(sh(perfkit_bin())), want);
}

TEST(StatCli, OutputFileStartsWithTheDate) {
  TempDir dir;
  auto r = run(sh(perfkit_bin()) + " stat -o " + sh(dir.path("out")) + " -e task-clock -- true");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto text = read_file(dir.path("out"));
  EXPECT_EQ(text.rfind("# started on ", 0), 0u) << text;
  EXPECT_NE(text.find("msec task-clock"), std::string::npos);
}

// perf stat report reads what perfkit stat record writes, and prints the
// same as perfkit stat report does from it.
TEST(StatCli, StatRecordIsReadByPerfStatReport) {
  PK_SKIP_WITHOUT_PERF();
  TempDir dir;
  const std::vector<std::string> cases = {
      "-e task-clock,page-faults -- " + sh(callcount()) + " 100 100",
      "-e '{task-clock,page-faults}',cycles -- " + sh(callcount()) + " 10",
      "-a -e cpu-clock,cs -- sleep 0.05", "-I 100 -e task-clock -- sleep 0.25"};
  for (const std::string& args : cases) {
    const std::string f = dir.path("pk.data");
    auto rec = run(sh(perfkit_bin()) + " stat record -o " + sh(f) + " " + args);
    ASSERT_EQ(rec.status, 0) << args << ": " << rec.err;
    auto perf = run("/usr/bin/perf stat report -i " + sh(f));
    ASSERT_EQ(perf.status, 0) << args << ": " << perf.err;
    auto ours = run(sh(perfkit_bin()) + " stat report -i " + sh(f));
    ASSERT_EQ(ours.status, 0) << args << ": " << ours.err;
    EXPECT_EQ(ours.err, perf.err) << args;
    EXPECT_NE(perf.err.find("-clock"), std::string::npos) << perf.err;
    if (args.find("-a") == 0) {
      for (const std::string mode : {"-A", "--per-core", "--per-socket"}) {
        auto p2 = run("/usr/bin/perf stat report " + mode + " -i " + sh(f));
        auto o2 = run(sh(perfkit_bin()) + " stat report " + mode + " -i " + sh(f));
        EXPECT_EQ(o2.err, p2.err) << mode;
      }
    }
  }
}

// perfkit stat report prints perf's own stat record files as perf does.
TEST(StatCli, StatReportReadsPerfsFiles) {
  PK_SKIP_WITHOUT_PERF();
  TempDir dir;
  const std::vector<std::string> cases = {
      "-e task-clock,page-faults,cycles -- " + sh(callcount()) + " 10",
      "-a -e cpu-clock,page-faults -- sleep 0.05", "-I 100 -e task-clock -- sleep 0.25",
      "-a -I 100 -e cpu-clock -- sleep 0.25"};
  for (const std::string& args : cases) {
    const std::string f = dir.path("perf.data");
    auto rec = run("/usr/bin/perf stat record -o " + sh(f) + " " + args + " 2>/dev/null");
    ASSERT_EQ(rec.status, 0) << args;
    for (const std::string mode : {"", "-A", "--per-core"}) {
      if (!mode.empty() && args.find("-a") != 0) continue;
      auto perf = run("/usr/bin/perf stat report " + mode + " -i " + sh(f));
      auto ours = run(sh(perfkit_bin()) + " stat report " + mode + " -i " + sh(f));
      ASSERT_EQ(ours.status, 0) << ours.err;
      EXPECT_EQ(ours.err, perf.err) << args << " " << mode;
    }
  }
}

TEST(StatCli, BadOptionsAsPerf) {
  auto r = run(sh(perfkit_bin()) + " stat -A -e task-clock -- true");
  EXPECT_EQ(r.status, 234);  // perf's -EINVAL, after its usage lines
  EXPECT_NE(r.err.find("only available in system-wide mode"), std::string::npos) << r.err;
  r = run(sh(perfkit_bin()) + " stat --per-thread -e task-clock -- true");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--per-thread option is only available"), std::string::npos) << r.err;
  r = run(sh(perfkit_bin()) + " stat record -r 2 -e task-clock -- true");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("Cannot use -r option with perf stat record"), std::string::npos);
  r = run(sh(perfkit_bin()) + " stat -e no-such-event -- true");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no-such-event"), std::string::npos) << r.err;
  r = run(sh(perfkit_bin()) + " stat -p 999999999 -e task-clock");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("999999999"), std::string::npos) << r.err;
  r = run(sh(perfkit_bin()) + " help stat");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--interval-print"), std::string::npos);
}

}  // namespace
}  // namespace perfkit::test
