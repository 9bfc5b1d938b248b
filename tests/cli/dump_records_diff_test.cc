// `perfkit dump --no-header` against `perf report -D` (perf 6.1), whole
// outputs compared line by line: the fixtures recorded here, a file built
// with every record type and sample field, and the corpus.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "cli/dump_records_compare.h"
#include "cli/dump_records_synthetic.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

void expect_same_dump(const std::string& path) {
  auto theirs = test::perf_report_dump(path);
  ASSERT_EQ(theirs.status, 0) << theirs.err;
  auto ours = test::perfkit_dump(path);
  ASSERT_EQ(ours.status, 0) << ours.err;
  std::string expected = test::perf_dump_comparable(theirs.out);
  ASSERT_NE(expected.find("Aggregated stats:"), std::string::npos) << theirs.err;
  EXPECT_EQ(test::first_mismatch(expected, ours.out), "") << path;
}

class FixtureDump : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureDump, EqualsPerfReportDump) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  if (f.empty()) GTEST_SKIP() << "fixture " << GetParam() << " was not recorded";
  expect_same_dump(f);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureDump,
                         ::testing::Values("fp.data", "dwarf.data", "nocg.data", "syswide.data",
                                           "multi.data", "group.data", "tracepoint.data",
                                           "compressed.data", "pipe.data", "switch.data",
                                           "faults.data"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

TEST(SyntheticDump, EveryRecordTypeAndSampleFieldEqualsPerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string path = dir.path("synthetic.data");
  ASSERT_EQ(test::write_synthetic_recording(path), "");
  expect_same_dump(path);
}

TEST(SyntheticDump, StdinStreamPrintsPipeOffsets) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("pipe.data");
  if (f.empty()) GTEST_SKIP() << "fixture pipe.data was not recorded";
  auto theirs = test::run("perf report -D -i - <" + test::sh(f));
  ASSERT_EQ(theirs.status, 0) << theirs.err;
  auto ours = test::run(test::perfkit_bin() + " dump --no-header -i - <" + test::sh(f));
  ASSERT_EQ(ours.status, 0) << ours.err;
  EXPECT_EQ(test::first_mismatch(test::perf_dump_comparable(theirs.out), ours.out), "");
}

}  // namespace
}  // namespace perfkit
