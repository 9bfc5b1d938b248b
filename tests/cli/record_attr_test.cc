// perfkit record configures its events exactly as perf record does: for each
// option set below, both record the same workload and `perf evlist -v` of
// the two files must be identical (every attr field perf shows). Also the
// side-band before FINISHED_INIT and the header features match perf's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>
#include <sstream>

#include "record_test_support.h"

namespace perfkit::test {
namespace {

class RecordAttrTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { PK_SKIP_WITHOUT_PERF(); }
  TempDir dir_;
};

TEST_P(RecordAttrTest, EvlistMatchesPerf) {
  const std::string opts = GetParam();
  const std::string loop = workload("cpuloop") + " 2";
  const std::string ours = dir_.path("ours.data"), theirs = dir_.path("perf.data");
  auto p = run("perf record -q " + opts + " -o " + sh(theirs) + " -- " + loop);
  auto k = run(perfkit_bin() + " record -q " + opts + " -o " + sh(ours) + " -- " + loop);
  ASSERT_EQ(p.status, 0) << "perf record " << opts << ": " << p.err;
  ASSERT_EQ(k.status, 0) << "perfkit record " << opts << ": " << k.err;
  EXPECT_EQ(evlist(ours), evlist(theirs)) << "options: " << opts;
}

// Every option that changes an attr, alone and in the combinations perf
// treats specially (groups, :S leaders, per-event terms over global options).
INSTANTIATE_TEST_SUITE_P(
    Options, RecordAttrTest,
    ::testing::Values(
        "", "-g", "--call-graph dwarf", "--call-graph dwarf,4096", "--call-graph fp",
        "-e cpu-clock", "-e cycles", "-e cpu-clock:u", "-e cpu-clock:k", "-e cpu-clock:ppp",
        "-e faults,cs:k", "-e cpu-clock,task-clock,page-faults", "-e {cpu-clock,task-clock}",
        "-e {cpu-clock,task-clock}:u", "-e {faults:u,cs:k}:S", "-e cpu-clock -e task-clock",
        "--group -e cpu-clock,task-clock", "-e page-faults -c 1", "-e page-faults -c 1 -d",
        "-e sched:sched_switch", "-e sched:sched_switch -g", "-e sched:sched_switch -c 5",
        "-e mem:0x1000:w", "-e mem:0x1000/8:rw:u", "-e dummy", "-e software/config=2,name=foo/",
        "-e cpu-clock/period=100/ -F 50", "-e cpu-clock/freq=100/", "-e cpu-clock/time=0/",
        "-e cpu-clock/inherit=0/", "-e cpu-clock/no-inherit/", "-e cpu-clock/call-graph=dwarf/",
        "-e cpu-clock/max-stack=5/ -g", "-F 100", "-c 10000", "-W", "-R", "-T", "-P -c 1000", "-d",
        "--phys-data", "--data-page-size", "--code-page-size", "--sample-identifier",
        "--running-time -e cpu-clock:S", "-s", "--switch-events", "--namespaces", "--all-cgroups",
        "-k mono", "-k 1", "--user-regs=ax,bx", "--intr-regs=ax",
        "--user-regs=ax --call-graph dwarf", "--buildid-mmap", "-n", "--no-bpf-event",
        "--per-thread", "-i", "--all-user", "--all-kernel", "--kernel-callchains -g",
        "--user-callchains -g", "-D 10", "--no-buffering", "--sample-cpu", "-a", "-C 0",
        "-a -e sched:sched_switch", "-a --per-thread"));

class RecordSideBandTest : public ::testing::Test {
 protected:
  void SetUp() override { PK_SKIP_WITHOUT_PERF(); }
  TempDir dir_;
};

// The records perf synthesizes before FINISHED_INIT, kind by kind.
TEST_F(RecordSideBandTest, SameKindsInTheSameOrderAsPerf) {
  const std::string loop = workload("cpuloop") + " 5";
  for (std::string opts : {"-g", "-e {cpu-clock,task-clock}", "--namespaces"}) {
    auto p = run("perf record -q " + opts + " -o " + sh(dir_.path("p.data")) + " -- " + loop);
    auto k = run(perfkit_bin() + " record -q " + opts + " -o " + sh(dir_.path("k.data")) + " -- " +
                 loop);
    ASSERT_EQ(k.status, 0) << k.err;
    EXPECT_EQ(record_kinds_until_init(dir_.path("k.data")),
              record_kinds_until_init(dir_.path("p.data")))
        << opts;
  }
  // Pipe mode: ATTR, HEADER_FEATUREs, then the same side-band plus EVENT_UPDATE names.
  run("perf record -q -o - -- " + loop + " > " + sh(dir_.path("p.pipe")));
  run(perfkit_bin() + " record -q -o - -- " + loop + " > " + sh(dir_.path("k.pipe")));
  EXPECT_EQ(record_kinds_until_init(dir_.path("k.pipe")),
            record_kinds_until_init(dir_.path("p.pipe")));
}

TEST_F(RecordSideBandTest, ExistingProcessSideBandMatchesPerf) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  pid_t pid = fork();
  if (pid == 0) {
    execl(workload("cpuloop").c_str(), "cpuloop", "100000", static_cast<char*>(nullptr));
    _exit(127);
  }
  usleep(200000);
  const std::string p = std::to_string(pid);
  run("timeout -s INT 0.5 perf record -q -p " + p + " -o " + sh(dir_.path("p.data")));
  run(perfkit_bin() + " record -q -p " + p + " --duration 0.5 -o " + sh(dir_.path("k.data")));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(record_kinds_until_init(dir_.path("k.data")),
            record_kinds_until_init(dir_.path("p.data")));
  EXPECT_EQ(evlist(dir_.path("k.data")), evlist(dir_.path("p.data")));
}

// The lines of perf's header dump that describe the machine, which must be
// the same for perf's recording and ours.
std::string machine_lines(const std::string& path) {
  auto r = run("perf report --header-only -I -i " + sh(path) + " 2>&1");
  static const std::regex keep(
      R"(^# (hostname|os release|arch|nrcpus|cpudesc|cpuid|total memory|sibling|CPU [0-9]|node[0-9]+ cpu list|pmu mappings|CPU cache|  L[0-9]|memory nodes|    [0-9]+ \[|missing features|event : name|group:))");
  std::istringstream in(r.out);
  std::string line, out;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, keep)) continue;
    // Ids differ from run to run.
    line = std::regex_replace(line, std::regex(R"(id = \{[^}]*\})"), "id = {}");
    out += line + "\n";
  }
  return out;
}

TEST_F(RecordSideBandTest, HeaderFeaturesMatchPerf) {
  const std::string loop = workload("cpuloop") + " 5";
  for (std::string opts :
       {"-g", "-e {cpu-clock,task-clock}", "-e sched:sched_switch", "-z", "-k mono", "-B"}) {
    run("perf record -q " + opts + " -o " + sh(dir_.path("p.data")) + " -- " + loop);
    auto k = run(perfkit_bin() + " record -q " + opts + " -o " + sh(dir_.path("k.data")) + " -- " +
                 loop);
    ASSERT_EQ(k.status, 0) << k.err;
    const std::string theirs = machine_lines(dir_.path("p.data"));
    EXPECT_NE(theirs.find("# hostname"), std::string::npos) << theirs;
    EXPECT_EQ(machine_lines(dir_.path("k.data")), theirs) << opts;
  }
  auto v = run("perf report --header-only -i " + sh(dir_.path("k.data")) +
               " 2>&1 | grep 'perf version'");
  EXPECT_NE(v.out.find("perfkit "), std::string::npos) << v.out;
}

}  // namespace
}  // namespace perfkit::test
