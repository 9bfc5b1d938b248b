// perfkit buildid-list against perf buildid-list, and report's build-id
// rules: a rebuilt binary (different build-id) is refused with a warning; a
// deleted one is found in the build-id cache.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace perfkit {
namespace {

class BuildIdList : public ::testing::TestWithParam<std::string> {};

TEST_P(BuildIdList, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  if (f.empty()) GTEST_SKIP() << "fixture missing";
  for (const char* args : {"", "--with-hits"}) {
    auto p = test::run("perf buildid-list -i " + test::sh(f) + " " + args + " 2>/dev/null");
    auto k = test::run(test::perfkit_bin() + " buildid-list -i " + test::sh(f) + " " + args);
    ASSERT_EQ(k.status, 0) << k.err;
    EXPECT_EQ(p.out, k.out) << GetParam() << " " << args;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BuildIdList,
                         ::testing::Values("fp.data", "syswide.data", "multi.data", "pipe.data"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

TEST(BuildIdList, KernelIsTheRunningOnes) {
  PK_SKIP_WITHOUT_PERF();
  auto p = test::run("perf buildid-list -k 2>/dev/null");
  auto k = test::run(test::perfkit_bin() + " buildid-list -k");
  EXPECT_EQ(p.out, k.out);
}

TEST(BuildIdReport, RebuiltBinaryIsRefusedDeletedOneComesFromTheCache) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string src = std::string(PERFKIT_SOURCE_DIR) + "/tests/workloads/cpuloop.c";
  std::string bin = dir.path("loop");
  std::string cache = dir.path("cache");
  auto cc = test::run("cc -O1 -g -fno-omit-frame-pointer -fno-inline-functions-called-once -o " +
                      test::sh(bin) + " " + test::sh(src));
  ASSERT_EQ(cc.status, 0) << cc.err;
  std::string data = dir.path("perf.data");
  std::string env = "PERF_BUILDID_DIR=" + test::sh(cache) + " ";
  auto rec = test::run(env + "perf record -q -o " + test::sh(data) + " " + test::sh(bin) +
                       " 100 >/dev/null 2>&1");
  ASSERT_EQ(rec.status, 0);
  std::string report =
      test::perfkit_bin() + " report --stdio --no-children --sort sym -i " + test::sh(data);
  auto fresh = test::run(env + report);
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_NE(fresh.out.find("[.] spin"), std::string::npos) << fresh.out;

  // Rebuilt with different code: a different build-id, refused, warned once.
  auto rebuilt = test::run("cc -O0 -DREBUILT=1 -o " + test::sh(bin) + " " + test::sh(src));
  ASSERT_EQ(rebuilt.status, 0);
  auto no_cache = test::run("PERF_BUILDID_DIR=" + test::sh(dir.path("none")) + " " + report);
  ASSERT_EQ(no_cache.status, 0);
  EXPECT_EQ(no_cache.out.find("[.] spin"), std::string::npos) << no_cache.out;
  EXPECT_NE(no_cache.err.find(" with build id "), std::string::npos) << no_cache.err;
  EXPECT_NE(no_cache.err.find("not found, continuing without symbols"), std::string::npos);
  auto perf_view = test::run("PERF_BUILDID_DIR=" + test::sh(dir.path("none")) +
                             " perf report --stdio --no-children --sort sym -i " + test::sh(data) +
                             " 2>/dev/null");
  EXPECT_EQ(perf_view.out.find("[.] spin"), std::string::npos);

  // Deleted: perf record put a copy in the build-id cache; report finds it there.
  ASSERT_EQ(test::run("rm -f " + test::sh(bin)).status, 0);
  auto from_cache = test::run(env + report);
  EXPECT_NE(from_cache.out.find("[.] spin"), std::string::npos) << from_cache.err;
}

}  // namespace
}  // namespace perfkit
