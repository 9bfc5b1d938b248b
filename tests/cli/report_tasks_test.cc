// perfkit report --tasks and --mmaps against perf's on the suite's
// recordings and the perf-corpus files perf reads: the thread tree (each
// thread under its FORK's parent, in perf's order) and each process's maps
// with their protection, offset, inode and file, line for line.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

// "" when both print the same (or perf printed nothing to compare); else
// what differs. Counts the files compared in `compared`.
std::string compare(const std::string& file, const std::string& opt, int& compared) {
  auto theirs = run("perf report -i " + sh(file) + " " + opt);
  // perf fails on some corpus files (and prints nothing for others); on a
  // stream cut short it never delivers the records it still held in order.
  if (theirs.status != 0 || theirs.out.empty() ||
      theirs.err.find("unexpected end of event stream") != std::string::npos)
    return "";
  ++compared;
  auto ours = run(perfkit_bin() + " report -i " + sh(file) + " " + opt + " 2>&1");
  if (ours.status != 0) return "status " + std::to_string(ours.status) + ": " + ours.out;
  return ours.out == theirs.out ? "" : "ours:\n" + ours.out + "theirs:\n" + theirs.out;
}

TEST(ReportTasks, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::vector<std::string> files;
  for (const char* name : {"fp.data", "dwarf.data", "multi.data", "tracepoint.data", "syswide.data",
                           "syswide_g.data", "pipe.data", "faults.data", "switch.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    files.push_back(f);
  }
  // corpus files where perf's rules show: threads only maps name (listed by
  // --mmaps alone), an inode the DSO took from an earlier map, a vdso, pid
  // reuse and threads of other machines' tools
  for (const char* name :
       {"simpleperf/perf.data", "simpleperf/perf_with_meta_info.data",
        "simpleperf/perf_merge1.data", "simpleperf/perf_unwind_embedded_lib_in_apk.data",
        "simpleperf/perf_with_arm_regs.data", "quipper/perf.data.busy.1-3.8",
        "quipper/perf.data.systemwide.5-3.8", "perfparser/probe.data.stream",
        "perf_data_converter-testdata/single-event-multi-process.perf.data"}) {
    const std::string f = corpus_dir() + "/" + name;
    if (corpus_dir().empty() || !std::filesystem::exists(f)) {
      if (in_ci()) ADD_FAILURE() << f << " is missing in CI";
      continue;
    }
    files.push_back(f);
  }
  int compared = 0;
  for (const std::string& f : files)
    for (const char* opt : {"--tasks", "--mmaps"})
      EXPECT_EQ(compare(f, opt, compared), "") << f << " " << opt;
  // the suite's own recordings are all read by perf: each was compared
  EXPECT_GE(compared, 9 * 2);
  for (const char* name : {"syswide.data", "faults.data"}) {
    auto r = run(perfkit_bin() + " report --mmaps -i " + sh(fixture(name)));
    EXPECT_NE(r.out.find("|swapper"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" r-xp "), std::string::npos) << r.out;
  }
}

TEST(ReportTasks, BadInputFailsCleanly) {
  TempDir tmp;
  auto missing = run(perfkit_bin() + " report --tasks -i " + sh(tmp.path("none.data")));
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.err.find("none.data"), std::string::npos) << missing.err;
  EXPECT_TRUE(missing.out.empty()) << missing.out;
}

}  // namespace
}  // namespace perfkit::test
