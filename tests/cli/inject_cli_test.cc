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
  if (f.empty()) GTEST_SKIP() << "fixture missing";
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
  if (f.empty()) GTEST_SKIP() << "fixture missing";
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
