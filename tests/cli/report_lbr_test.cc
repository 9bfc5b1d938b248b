// perfkit report on LBR branch stacks with cycles, predictions and branch
// types (lbr_synthetic.h: made up for the cpuloop workload, as no recording
// here has them), against perf report 6.1 on the same file.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/lbr_synthetic.h"
#include "report_compare.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

class ReportLbr : public ::testing::Test {
 protected:
  void SetUp() override {
    PK_SKIP_WITHOUT_PERF();
    const std::string bin = test::workload("cpuloop");
    auto samples = test::cpuloop_lbr_samples(bin);
    ASSERT_FALSE(samples.empty()) << "no branches found in " << bin;
    path_ = dir_.path("lbr.data");
    ASSERT_EQ(test::write_lbr_recording(path_, bin, samples), "");
  }
  // "" when perf and perfkit print the same report.
  std::string diff(const std::string& args) {
    const std::string in = " report --stdio -i " + test::sh(path_) + " " + args;
    auto p = test::run("perf" + in);
    auto k = test::run(test::perfkit_bin() + in);
    if (k.status != 0) return "perfkit failed: " + k.err;
    if (p.status != 0) return "perf failed: " + p.err;
    return test::report_mismatches(p.out, k.out);
  }
  test::TempDir dir_;
  std::string path_;
};

// perf's branch mode, its "Branch Statistics" at the end included, and its
// branch keys (mispredict, in_tx and abort compare 0 or 1, no order: perf's
// trees keep equal entries apart, as perfkit's simulation of them does). (perf
// 6.1 dies of a --sort naming "symbol" on stacks with cycles: its IPC
// column's accounting; those are left out.)
TEST_F(ReportLbr, BranchModeAsPerf) {
  for (const char* args :
       {"", "--sort cycles,dso_from", "-n --sort dso_to,cycles", "--sort mispredict,dso_from",
        "--sort in_tx,abort,cycles", "--sort addr_from,addr_to", "--sort addr_to,mispredict -n",
        "--sort srcline_from,srcline_to", "--sort comm,srcline_to,cycles -n"}) {
    std::string d = diff(args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
}

// --branch-history: each target's branch types ("COND_BWD", "CALL") and
// prediction, each source's cycles and loop iterations.
TEST_F(ReportLbr, BranchHistoryAsPerf) {
  for (const char* args : {"--branch-history", "--branch-history --no-children -g caller",
                           "--branch-history --sort dso -g flat", "--branch-history -g folded"}) {
    std::string d = diff(args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
  // (the raw text too: the statistics end without a newline)
  auto p = test::run("perf report --stdio -i " + test::sh(path_));
  auto k = test::run(test::perfkit_bin() + " report --stdio -i " + test::sh(path_));
  EXPECT_EQ(p.out.substr(p.out.rfind("# Branch")), k.out.substr(k.out.rfind("# Branch")));
}

// --total-cycles: perf 6.1's stdio output dies on the first block (its
// block table is printed as perf diff's), so the blocks are checked for
// what perf's accounting makes of this file: run's loop (its back edge in
// every stack, never with a start: from run's first line) is the hottest,
// spin's body next; the shares fall and add up to at most 100%.
TEST_F(ReportLbr, TotalCyclesBlocks) {
  auto k = test::run(test::perfkit_bin() + " report --stdio --total-cycles -i " + test::sh(path_));
  ASSERT_EQ(k.status, 0) << k.err;
  std::vector<std::string> rows;
  std::istringstream in(k.out);
  for (std::string line; std::getline(in, line);)
    if (line.find(" -> ") != std::string::npos) rows.push_back(line);
  ASSERT_GE(rows.size(), 6u) << k.out;
  EXPECT_NE(k.out.find("# Sampled Cycles%  Sampled Cycles  Avg Cycles%  Avg Cycles"),
            std::string::npos);
  double last = 100.0, sum = 0.0;
  for (const std::string& r : rows) {
    double pct = std::stod(r);
    EXPECT_LE(pct, last) << r;
    last = pct;
    sum += pct;
    EXPECT_NE(r.find(" -> "), std::string::npos) << r;
    EXPECT_EQ(r.substr(r.size() - 7), "cpuloop") << r;
  }
  EXPECT_LE(sum, 100.0 + 0.005 * static_cast<double>(rows.size()));  // (rounded shares)
  EXPECT_GT(sum, 90.0) << k.out;  // (the blocks of run, hot, warm, cool and spin: nearly all)
  EXPECT_NE(rows[0].find("[cpuloop.c:22 -> cpuloop.c:22]"), std::string::npos) << k.out;
  EXPECT_NE(rows[1].find("[cpuloop.c:10 -> cpuloop.c:12]"), std::string::npos) << k.out;
}

// Without cycles there is no block: perf's table stays empty, as perfkit's;
// outside branch mode --total-cycles changes nothing.
TEST_F(ReportLbr, TotalCyclesWithoutCyclesAsPerf) {
  const std::string fp = test::fixture("fp.data");
  PK_SKIP_IF_MISSING(fp.empty(), "fixture fp.data");
  std::vector<std::string> files = {fp};
  if (!test::corpus_dir().empty()) files.push_back(test::corpus_dir() + "/simpleperf/perf_b.data");
  for (const std::string& f : files) {
    const std::string in = " report --stdio --total-cycles -i " + test::sh(f);
    auto p = test::run("perf" + in + " 2>/dev/null");
    auto k = test::run(test::perfkit_bin() + in + " 2>/dev/null");
    EXPECT_EQ(test::report_mismatches(p.out, k.out), "") << f;
  }
}

// A guest's samples (perf kvm record) count in the totals but show nowhere
// without guest symbols, in report and script, as perf.
TEST(ReportGuest, GuestSamplesFilteredAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  const std::string f = dir.path("guest.data");
  ASSERT_EQ(test::write_guest_recording(f, test::workload("cpuloop")), "");
  for (const char* cmd : {"report --stdio", "report --stdio --sort dso,sym -n", "script",
                          "script -F comm,pid,ip,sym"}) {
    const std::string in = std::string(" ") + cmd + " -i " + test::sh(f);
    auto p = test::run("perf" + in + " 2>/dev/null");
    auto k = test::run(test::perfkit_bin() + in + " 2>/dev/null");
    EXPECT_EQ(test::report_mismatches(p.out, k.out), "") << cmd;
    EXPECT_NE(k.out.find("spin"), std::string::npos) << cmd << ": " << k.out;
  }
}

}  // namespace
}  // namespace perfkit
