// perfkit script report stackcollapse against perf's stackcollapse.py on the
// same recordings (every line, in order, with each of its options and with
// perf script's filters), and perfkit data convert --to-folded: per event,
// weighted by samples or period as perf script counts them, its errors, and
// no output left behind on failure.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

const char* const kFixtures[] = {"fp.data",         "dwarf.data", "nocg.data",
                                 "syswide_g.data",  "multi.data", "mixedcg.data",
                                 "tracepoint.data", "pipe.data",  "compressed.data"};

TEST(Stackcollapse, MatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : kFixtures) {
    PK_FIXTURE_OR_SKIP(f, name);
    for (std::string opts : {"", "--include-pid", "--include-pid --include-tid", "--no-comm",
                             "--kernel", "--tidy-java"}) {
      const std::string args = " script report stackcollapse -i " + sh(f) + " -- " + opts;
      auto [theirs, ours] = run_pair("perf" + args + " 2>/dev/null", perfkit_bin() + args);
      ASSERT_EQ(theirs.status, 0) << name << " " << opts;
      EXPECT_EQ(ours.status, 0) << name << " " << opts << ": " << ours.err;
      EXPECT_TRUE(ours.out == theirs.out) << name << " " << opts << "\n"
                                          << first_difference(ours.out, theirs.out);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6 * static_cast<int>(std::size(kFixtures)));
}

TEST(Stackcollapse, FiltersMatchPerfScripts) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "syswide_g.data");
  int compared = 0;
  for (std::string filter :
       {"-C 0", "--comms sleep", "--time 20%-60%", "--dsos '[kernel.kallsyms]'", "--max-stack 3"}) {
    const std::string args = " script report stackcollapse -i " + sh(f) + " " + filter;
    auto [theirs, ours] = run_pair("perf" + args + " 2>/dev/null", perfkit_bin() + args);
    ASSERT_EQ(theirs.status, 0) << filter;
    EXPECT_FALSE(theirs.out.empty()) << filter;
    EXPECT_TRUE(ours.out == theirs.out) << filter << "\n" << first_difference(ours.out, theirs.out);
    ++compared;
  }
  EXPECT_EQ(compared, 5);
}

TEST(Stackcollapse, OptionErrorsAsOptparse) {
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  auto bad = run(perfkit_bin() + " script report stackcollapse -i " + sh(f) + " -- --bogus");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err,
            "Usage: stackcollapse.py [options]\n\nstackcollapse.py: error: no such option: "
            "--bogus\n");
  auto tid = run(perfkit_bin() + " script report stackcollapse -i " + sh(f) +
                 " -- --no-comm --include-tid");
  EXPECT_EQ(tid.status, 2);
  EXPECT_NE(tid.err.find("requesting tid but not comm is invalid"), std::string::npos);
  auto none = run(perfkit_bin() + " script report nosuch -i " + sh(f));
  EXPECT_EQ(none.status, 255);
  EXPECT_NE(none.err.find("Please specify a valid report script"), std::string::npos);
}

// Sum of the counts of folded lines.
std::uint64_t folded_total(const std::string& text) {
  std::uint64_t sum = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) sum += std::stoull(line.substr(line.rfind(' ') + 1));
  return sum;
}

TEST(DataConvert, FoldedCountsEachEventAsPerfScript) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "multi.data");
  // perf script's samples and periods per event.
  auto script = run("perf script -F event,period -i " + sh(f) + " 2>/dev/null");
  ASSERT_EQ(script.status, 0);
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> perf_counts;
  std::istringstream in(script.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::uint64_t period = 0;
    std::string event;
    w >> period >> event;
    event.pop_back();  // "cpu-clock:"
    perf_counts[event].first += 1;
    perf_counts[event].second += period;
  }
  ASSERT_EQ(perf_counts.size(), 3u);
  for (const auto& [event, counts] : perf_counts) {
    for (const char* weight : {"samples", "period"}) {
      auto r = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-folded - -e " + event +
                   " --folded-weight " + weight);
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(folded_total(r.out),
                std::string(weight) == "samples" ? counts.first : counts.second)
          << event << " " << weight;
    }
  }
}

TEST(DataConvert, FoldedIsStackcollapseForOneEvent) {
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  auto sc = run(perfkit_bin() + " script report stackcollapse -i " + sh(f));
  auto fo = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-folded -");
  ASSERT_EQ(fo.status, 0) << fo.err;
  EXPECT_EQ(fo.out, sc.out);  // one event with call chains: the same lines
  TempDir dir;
  auto file = run(perfkit_bin() + " data convert -q -i " + sh(f) + " --to-folded " +
                  sh(dir.path("out.folded")));
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_EQ(read_file(dir.path("out.folded")), fo.out);
}

TEST(DataConvert, ErrorsLeaveNoFile) {
  PK_FIXTURE_OR_SKIP(f, "multi.data");
  TempDir dir;
  const std::string out = dir.path("x.folded");
  auto ev =
      run(perfkit_bin() + " data convert -i " + sh(f) + " --to-folded " + sh(out) + " -e nosuch");
  EXPECT_EQ(ev.status, 1);
  EXPECT_NE(ev.err.find("no event 'nosuch' in the recording (it has 'cpu-clock'"),
            std::string::npos)
      << ev.err;
  auto w = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-folded " + sh(out) +
               " --folded-weight bytes");
  EXPECT_EQ(w.status, 1);
  EXPECT_NE(w.err.find("--folded-weight: 'bytes' is not samples or period"), std::string::npos);
  auto dirout = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-folded /nonexistent/x");
  EXPECT_EQ(dirout.status, 1);
  EXPECT_NE(dirout.err.find("/nonexistent/x: cannot create"), std::string::npos) << dirout.err;
  auto input = run(perfkit_bin() + " data convert -i /nonexistent.data --to-folded " + sh(out));
  EXPECT_EQ(input.status, 1);
  EXPECT_NE(input.err.find("/nonexistent.data"), std::string::npos);
  std::size_t left = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.dir())) left += !e.path().empty();
  EXPECT_EQ(left, 0u);  // neither the output nor a temporary file
  auto none = run(perfkit_bin() + " data convert -i " + sh(f));
  EXPECT_EQ(none.status, 255);
  auto ctf = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-ctf " + sh(dir.path("c")));
  EXPECT_EQ(ctf.status, 255);
  EXPECT_TRUE(ctf.err.starts_with("The libbabeltrace support is not compiled in.")) << ctf.err;
}

// While the kernel's symbols load on another thread the model holds its
// samples and replays them when the symbols are in: a kallsyms that arrives
// late through a FIFO must give the same bytes as the file read at once.
TEST(DataConvert, KernelSymbolsLoadingLateGiveTheSameFiles) {
  TempDir dir;
  const std::string copy = dir.path("kallsyms"), fifo = dir.path("slow");
  ASSERT_EQ(run("cat /proc/kallsyms > " + sh(copy) + " && mkfifo " + sh(fifo) + " && mkdir " +
                sh(dir.path("cache")))
                .status,
            0);
  PK_FIXTURE_OR_SKIP(syswide, "syswide_g.data");
  PK_FIXTURE_OR_SKIP(multi, "multi.data");
  for (const std::string& f : {syswide, multi}) {
    const std::string fixture = f.substr(f.rfind('/') + 1);
    for (const char* to : {"--to-pprof", "--to-firefox", "--to-folded"}) {
      // A build-id cache of its own: other tests' perf record may add to
      // ~/.debug between the two runs.
      const std::string cmd = "PERF_BUILDID_DIR=" + sh(dir.path("cache")) + " " + perfkit_bin() +
                              " data convert -q -i " + sh(f) + " " + to + " ";
      auto at_once = run(cmd + sh(dir.path("a")) + " --kallsyms " + sh(copy));
      auto late = run("(sleep 0.3; cat " + sh(copy) + " > " + sh(fifo) + ") & " + cmd +
                      sh(dir.path("b")) + " --kallsyms " + sh(fifo) + "; wait");
      ASSERT_EQ(at_once.status, 0) << at_once.err;
      ASSERT_EQ(late.status, 0) << late.err;
      const std::string a = read_file(dir.path("a")), b = read_file(dir.path("b"));
      // (multi.data has no call chains: its folded file is a line a process)
      EXPECT_GT(a.size(), 8u) << fixture << " " << to;
      EXPECT_TRUE(a == b) << fixture << " " << to;
    }
    const std::string report =
        "PERF_BUILDID_DIR=" + sh(dir.path("cache")) + " " + perfkit_bin() + " report -q --html ";
    auto at_once =
        run(report + sh(dir.path("a.html")) + " -i " + sh(f) + " --kallsyms " + sh(copy));
    auto late = run("(sleep 0.3; cat " + sh(copy) + " > " + sh(fifo) + ") & " + report +
                    sh(dir.path("b.html")) + " -i " + sh(f) + " --kallsyms " + sh(fifo) + "; wait");
    ASSERT_EQ(at_once.status, 0) << at_once.err;
    ASSERT_EQ(late.status, 0) << late.err;
    EXPECT_TRUE(read_file(dir.path("a.html")) == read_file(dir.path("b.html"))) << fixture;
  }
}

}  // namespace
}  // namespace perfkit::test
