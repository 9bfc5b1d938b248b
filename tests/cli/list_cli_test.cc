// perfkit list against perf list on this machine: the same events, kinds,
// order and layout (perf's SDT events from its build-id cache and its metric
// groups from its built-in tables are perf's own, and left out).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

std::string perf_list(const std::string& filter) {
  std::string out =
      run("perf list " + filter + " 2>/dev/null | sed -n '/\\[SDT event\\]/q;/^Metric Groups/q;p'")
          .out;
  // (the blank line perf puts before its metric groups goes with them)
  while (out.ends_with("\n\n")) out.pop_back();
  return out;
}

TEST(ListCliTest, SameAsPerfList) {
  PK_SKIP_WITHOUT_PERF();
  for (std::string filter :
       {"", "sw", "hw", "cache", "pmu", "tracepoint", "'sched:*'", "'*clock*'"}) {
    auto ours = run(perfkit_bin() + " list " + filter);
    EXPECT_EQ(ours.status, 0) << ours.err;
    EXPECT_EQ(ours.out, perf_list(filter)) << "perfkit list " << filter;
  }
}

TEST(ListCliTest, HelpIsRealUsage) {
  auto r = run(perfkit_bin() + " list --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: perfkit list"), std::string::npos) << r.out;
  auto rec = run(perfkit_bin() + " help record");
  EXPECT_EQ(rec.status, 0);
  EXPECT_NE(rec.out.find("--call-graph"), std::string::npos) << rec.out;
}

}  // namespace
}  // namespace perfkit::test
