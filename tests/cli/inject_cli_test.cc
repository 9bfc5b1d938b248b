// perfkit inject round trips: /usr/bin/perf reads what perfkit wrote and
// prints the same perf script output as for the original.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace perfkit {
namespace {

std::string perf_script(const std::string& input_cmd) {
  auto r = test::run(input_cmd);
  EXPECT_EQ(r.status, 0) << input_cmd << "\n" << r.err;
  return r.out;
}

class InjectRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(InjectRoundTrip, FileToFile) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  test::TempDir dir;
  std::string out = dir.path("out.data");
  auto inj = test::run(test::perfkit_bin() + " inject -i " + test::sh(f) + " -o " + test::sh(out));
  ASSERT_EQ(inj.status, 0) << inj.err;
  std::string a = perf_script("perf script -i " + test::sh(f));
  std::string b = perf_script("perf script -i " + test::sh(out));
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  auto warn = test::run("perf report --stdio -i " + test::sh(out) + " >/dev/null");
  EXPECT_EQ(warn.err.find("WARNING"), std::string::npos) << warn.err;
}

TEST_P(InjectRoundTrip, ThroughPipes) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  std::string a = perf_script("perf script -i " + test::sh(f));
  // file -> pipe -> pipe -> perf script reading stdin
  std::string b = perf_script(test::perfkit_bin() + " inject -i " + test::sh(f) + " -o - | " +
                              test::perfkit_bin() + " inject -i - -o - | perf script -i -");
  EXPECT_EQ(a, b);
  // pipe -> file
  test::TempDir dir;
  std::string out = dir.path("back.data");
  auto r = test::run(test::perfkit_bin() + " inject -i " + test::sh(f) + " -o - | " +
                     test::perfkit_bin() + " inject -i - -o " + test::sh(out));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(a, perf_script("perf script -i " + test::sh(out)));
}

// perf inject -s: each sched_stat_* sample becomes its task's last
// sched_switch sample (call chain and all) with the stat's time and period.
// This kernel may lack schedstats (no sched_stat_sleep), but perf merges any
// sched:sched_stat_* event, and sched_stat_runtime is always there. Both
// injected files read by perf alike, for a file and a pipe-mode output.
TEST(InjectSchedStat, MergesAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  const std::string raw = dir.path("raw.data"), loop = test::sh(test::workload("cpuloop"));
  auto rec = test::run(
      "perf record -q -e sched:sched_stat_runtime -e sched:sched_switch -e "
      "sched:sched_process_exit -g -o " +
      test::sh(raw) + " -- sh -c '" + loop + " 20; sleep 0.01; " + loop +
      " 20; sleep 0.01' >/dev/null 2>&1");
  if (rec.status != 0) GTEST_SKIP() << "perf cannot record the sched tracepoints here";
  const std::string theirs = dir.path("theirs.data"), ours = dir.path("ours.data");
  ASSERT_EQ(test::run("perf inject -s -i " + test::sh(raw) + " -o " + test::sh(theirs)).status, 0);
  auto inj =
      test::run(test::perfkit_bin() + " inject -s -i " + test::sh(raw) + " -o " + test::sh(ours));
  ASSERT_EQ(inj.status, 0) << inj.err;
  const std::string fields = " -F comm,tid,time,event,period,ip,sym";
  const std::string want = perf_script("perf script" + fields + " -i " + test::sh(theirs));
  ASSERT_NE(want.find("sched:sched_switch"), std::string::npos) << want;
  EXPECT_EQ(perf_script("perf script" + fields + " -i " + test::sh(ours)), want);
  // (perf's report ends with a random tip: left out)
  const std::string report = "perf report --stdio --sort comm,sym -i ";
  EXPECT_EQ(perf_script(report + test::sh(ours) + " | grep -v '(Tip:'"),
            perf_script(report + test::sh(theirs) + " | grep -v '(Tip:'"));
  // (perf's own pipe output is cut short; perfkit's reads as its file does)
  EXPECT_EQ(perf_script(test::perfkit_bin() + " inject -s -i " + test::sh(raw) +
                        " -o - | perf script" + fields + " -i -"),
            want);
  // A pipe-mode input: perf refuses it with -EINVAL, and so does perfkit.
  auto pipe = test::run(test::perfkit_bin() + " inject -i " + test::sh(raw) + " -o - | " +
                        test::perfkit_bin() + " inject -s -o " + test::sh(dir.path("p.data")));
  EXPECT_EQ(pipe.status, 234) << pipe.err;
  EXPECT_NE(pipe.err.find("pipe"), std::string::npos) << pipe.err;
}

// perf inject --jit: jitgen (a tiny JIT writing a jitdump: two functions,
// one with source lines, one moved half way) recorded by perf with -k mono;
// perf's injected file and perfkit's read by perf alike: the JIT functions
// resolve to the jitted-PID-N.so images beside the dump, and the MMAP2
// records stand where perf puts them (inode numbers aside: other files).
TEST(InjectJit, ImagesAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  const std::string raw = dir.path("raw.data"), dumps = dir.path("dumps");
  ASSERT_EQ(test::run("mkdir " + test::sh(dumps)).status, 0);
  auto rec = test::run("perf record -q -k mono -o " + test::sh(raw) + " -- " +
                       test::sh(test::workload("jitgen")) + " " + test::sh(dumps) + " 0.3");
  ASSERT_EQ(rec.status, 0) << rec.err;
  // The MMAP records as perf dumps them, the inode (an image's) masked.
  auto maps = [](const std::string& file) {
    return perf_script(
        "perf report -D -i " + test::sh(file) +
        " 2>/dev/null | grep -E '^[0-9]+ 0x[0-9a-f]+ .*PERF_RECORD_MMAP' |"
        " sed -E 's/^[0-9]+ 0x[0-9a-f]+ //; s/(fe|[0-9a-f]+):[0-9a-f]+ [0-9]+ /DEV INO /'");
  };
  const std::string report = "perf report --stdio --sort dso,sym -F overhead,sample,dso,sym -i ";
  const std::string script = "perf script -F tid,time,ip,sym,symoff,dso -i ";
  // perf first (the images of both go to the same place), then perfkit.
  const std::string theirs = dir.path("theirs.data"), ours = dir.path("ours.data");
  ASSERT_EQ(test::run("perf inject --jit -i " + test::sh(raw) + " -o " + test::sh(theirs)).status,
            0);
  const std::string want_report = perf_script(report + test::sh(theirs) + " | grep -v '(Tip:'");
  const std::string want_script = perf_script(script + test::sh(theirs));
  ASSERT_NE(want_report.find("jit_spin"), std::string::npos) << want_report;
  ASSERT_NE(want_report.find("jit_count"), std::string::npos) << want_report;
  auto inj = test::run(test::perfkit_bin() + " inject --jit -i " + test::sh(raw) + " -o " +
                       test::sh(ours));
  ASSERT_EQ(inj.status, 0) << inj.err;
  EXPECT_EQ(perf_script(report + test::sh(ours) + " | grep -v '(Tip:'"), want_report);
  EXPECT_EQ(perf_script(script + test::sh(ours)), want_script);
  const std::string want_maps = maps(theirs);
  EXPECT_NE(want_maps.find("jitted-"), std::string::npos) << want_maps;
  EXPECT_EQ(want_maps.find("//anon"), std::string::npos) << want_maps;
  EXPECT_EQ(maps(ours), want_maps);
  // perfkit reads its own the same, and the dump's lines are the image's.
  EXPECT_EQ(perf_script(test::perfkit_bin() +
                        " report --stdio --sort dso,sym -F "
                        "overhead,sample,dso,sym -i " +
                        test::sh(ours) + " | grep -v '(Tip:'"),
            want_report);
  auto lines =
      test::run(test::perfkit_bin() + " report --stdio --sort sym,srcline -i " + test::sh(ours));
  EXPECT_NE(lines.out.find("jitsrc.js:1"), std::string::npos) << lines.out;
  // Recorded on another clock than the dump's: perf's error, and no output.
  const std::string other = dir.path("other.data"), bad = dir.path("bad.data");
  ASSERT_EQ(test::run("perf record -q -o " + test::sh(other) + " -- " +
                      test::sh(test::workload("jitgen")) + " " + test::sh(dumps) + " 0.05")
                .status,
            0);
  auto refused = test::run(test::perfkit_bin() + " inject --jit -i " + test::sh(other) + " -o " +
                           test::sh(bad));
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.err.find("jitted code must be sampled with perf record -k 1"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(test::run("test -e " + test::sh(bad)).status, 0) << "a half-written output was left";
  // TSC times (the dump's arch-timestamp flag) need the recording's
  // TIME_CONV, which a machine without user-readable time has not.
  const std::string tsc = dir.path("tsc.data");
  ASSERT_EQ(test::run("perf record -q -o " + test::sh(tsc) + " -- " +
                      test::sh(test::workload("jitgen")) + " " + test::sh(dumps) + " 0.05 tsc")
                .status,
            0);
  auto theirs_tsc = test::run("perf inject --jit -i " + test::sh(tsc) + " -o " +
                              test::sh(dir.path("tsc-theirs.data")));
  auto ours_tsc = test::run(test::perfkit_bin() + " inject --jit -i " + test::sh(tsc) + " -o " +
                            test::sh(dir.path("tsc-ours.data")));
  EXPECT_EQ(ours_tsc.status == 0, theirs_tsc.status == 0) << ours_tsc.err << theirs_tsc.err;
  if (theirs_tsc.status == 0) {
    EXPECT_EQ(perf_script(script + test::sh(dir.path("tsc-ours.data"))),
              perf_script(script + test::sh(dir.path("tsc-theirs.data"))));
  } else {
    EXPECT_NE(ours_tsc.err.find(theirs_tsc.err.substr(0, theirs_tsc.err.find('\n'))),
              std::string::npos)
        << ours_tsc.err << " vs perf's " << theirs_tsc.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, InjectRoundTrip,
                         ::testing::Values("fp.data", "dwarf.data", "syswide.data", "multi.data",
                                           "group.data", "tracepoint.data", "compressed.data",
                                           "pipe.data"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

}  // namespace
}  // namespace perfkit
