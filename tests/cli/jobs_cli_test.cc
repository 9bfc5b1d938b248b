// --jobs: the output of every command that takes it is the same bytes for
// one thread and for several (the records read ahead on another thread, the
// files of a diff side by side), on the recordings of the fixtures: call
// graphs by frame pointers and DWARF, system-wide, several events,
// tracepoints, a pipe-mode file and a compressed one.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

const char* const kFixtures[] = {"fp.data",    "dwarf.data",     "syswide_g.data",
                                 "multi.data", "mixedcg.data",   "tracepoint.data",
                                 "pipe.data",  "compressed.data"};

// " --kallsyms FILE": the kernel's symbols as they were when first asked
// for. The tests running beside these ones add symbols to /proc/kallsyms
// (kprobe and ftrace trampolines), which would change the names of the
// system-wide recordings' kernel samples between two runs.
std::string pinned_kallsyms() {
  static TempDir dir;
  static const std::string path = [] {
    const std::string p = dir.path("kallsyms");
    write_file(p, read_file("/proc/kallsyms"));
    return p;
  }();
  return " --kallsyms " + sh(path);
}

// Runs `args` with --jobs 1 and --jobs 3; both must exit alike and print
// the same. Returns whether it compared outputs of a success. perf script's
// shards (sessions side by side, script/script.h) deal slices of 5 samples
// here, so that each prints some of every fixture.
bool same_for_any_jobs(const std::string& args) {
  const bool script = args.starts_with("script ") && !args.starts_with("script report");
  const std::string slices = script ? " --shard-samples 5" : "";
  auto one = run(perfkit_bin() + " " + args + pinned_kallsyms() + " --jobs 1 2>&1");
  auto three = run(perfkit_bin() + " " + args + pinned_kallsyms() + slices + " --jobs 3 2>&1");
  EXPECT_EQ(one.status, three.status) << args;
  EXPECT_EQ(one.out, three.out) << args << "\n" << first_difference(three.out, one.out);
  return one.status == 0;
}

TEST(Jobs, ReportScriptAndExportsPrintTheSame) {
  int compared = 0;
  for (const char* name : kFixtures) {
    PK_FIXTURE_OR_SKIP(f, name);
    for (std::string cmd :
         {"report --stdio", "report --stdio -g none --sort comm,dso,sym -n", "report --stdio -T",
          "script", "script -F comm,tid,time,event,ip,sym,dso", "script -F +srcline,+period",
          "data convert -q --to-folded -", "script report stackcollapse"}) {
      compared += same_for_any_jobs(cmd + " -i " + sh(f));
    }
  }
  // Every command succeeds on every fixture but srcline's on the tracepoint
  // recording (no ip sampled: perf's error, the same for both).
  EXPECT_EQ(compared, 8 * static_cast<int>(std::size(kFixtures)) - 1);
}

TEST(Jobs, HtmlAndPprofAreTheSameBytes) {
  PK_FIXTURE_OR_SKIP(f, "syswide_g.data");
  TempDir dir;
  for (const char* jobs : {"1", "3"}) {
    auto html = run(perfkit_bin() + " report -q --html " + sh(dir.path(std::string("r") + jobs)) +
                    " -i " + sh(f) + pinned_kallsyms() + " --jobs " + jobs);
    ASSERT_EQ(html.status, 0) << html.err;
    auto pprof = run(perfkit_bin() + " data convert -q -i " + sh(f) + " --to-pprof " +
                     sh(dir.path(std::string("p") + jobs)) + pinned_kallsyms() + " --jobs " + jobs);
    ASSERT_EQ(pprof.status, 0) << pprof.err;
  }
  EXPECT_EQ(read_file(dir.path("r1")), read_file(dir.path("r3")));
  EXPECT_EQ(read_file(dir.path("p1")), read_file(dir.path("p3")));
}

// The exports read the recording with sessions side by side, each building
// a run of the samples (profile::build_profile_shards): every format's file
// is the same bytes as one session's, with 3 runs merged (2 where source
// lines take a thread), on recordings with kernel frames (held while the
// kernel's symbols load), DWARF stacks, several events, context switches
// (markers), threads, and a compressed one split by reader position.
TEST(Jobs, ExportsAreTheSameBytes) {
  TempDir dir;
  int compared = 0;
  for (const char* name :
       {"fp.data", "dwarf.data", "syswide_g.data", "multi.data", "switch.data", "threads.data",
        "compressed.data", "compressed_rounds.data", "tracepoint.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    for (std::string to : {"--to-folded", "--to-chrome", "--to-flamegraph", "--to-firefox",
                           "--to-speedscope", "--to-pprof", "--folded-weight period --to-folded"}) {
      std::string outs[2];
      for (int j = 0; j < 2; ++j) {
        const std::string path = dir.path(std::to_string(j));
        auto r = run(perfkit_bin() + " data convert -q -i " + sh(f) + pinned_kallsyms() + " " + to +
                     " " + sh(path) + (j ? " --jobs 3" : " --jobs 1") + " 2>&1");
        ASSERT_EQ(r.status, 0) << name << " " << to << "\n" << r.out;
        outs[j] = read_file(path);
      }
      EXPECT_EQ(outs[0], outs[1]) << name << " " << to << "\n"
                                  << first_difference(outs[1], outs[0]);
      compared += !outs[0].empty();
    }
  }
  EXPECT_EQ(compared, 9 * 7);
}

TEST(Jobs, DiffPrintsTheSame) {
  PK_FIXTURE_OR_SKIP(a, "fp.data");
  PK_FIXTURE_OR_SKIP(b, "dwarf.data");
  PK_FIXTURE_OR_SKIP(c, "syswide_g.data");
  int compared = 0;
  for (std::string files : {sh(a) + " " + sh(b), sh(a) + " " + sh(b) + " " + sh(c)})
    for (std::string opts : {"", "-c ratio -p", "--sort comm,dso"})
      compared += same_for_any_jobs("diff " + opts + " " + files);
  EXPECT_EQ(compared, 6);
}

TEST(Jobs, ErrorsAreTheSame) {
  TempDir dir;
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  // The first half of a recording: the reading stops at its end, with the
  // same records handed over before it.
  std::string bytes = read_file(f);
  write_file(dir.path("cut.data"), bytes.substr(0, bytes.size() / 2));
  for (std::string cmd :
       {"report --stdio", "script", "script --shard-samples 3", "data convert --to-folded -"}) {
    auto one = run(perfkit_bin() + " " + cmd + " -i " + sh(dir.path("cut.data")) + " --jobs 1");
    auto two = run(perfkit_bin() + " " + cmd + " -i " + sh(dir.path("cut.data")) + " --jobs 2");
    EXPECT_EQ(one.status, two.status) << cmd;
    EXPECT_EQ(one.out, two.out) << cmd;
    EXPECT_EQ(one.err, two.err) << cmd;
  }
  auto bad = run(perfkit_bin() + " report --stdio --jobs x -i " + sh(f));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--jobs"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace perfkit::test
