// perfkit buildid-list against perf buildid-list, and report's build-id
// rules: a rebuilt binary (different build-id) is refused with a warning; a
// deleted one is found in the build-id cache.
#include <gtest/gtest.h>

#include "report_compare.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

class BuildIdList : public ::testing::TestWithParam<std::string> {};

TEST_P(BuildIdList, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
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
  // perf finds its cache through $HOME (PERF_BUILDID_DIR is perf archive's);
  // it creates HOME/.debug but not HOME.
  std::string env = "HOME=" + test::sh(cache) + " ";
  ASSERT_EQ(test::run("mkdir -p " + test::sh(cache)).status, 0);
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
  auto no_cache = test::run("HOME=" + test::sh(dir.path("none")) + " " + report);
  ASSERT_EQ(no_cache.status, 0);
  EXPECT_EQ(no_cache.out.find("[.] spin"), std::string::npos) << no_cache.out;
  EXPECT_NE(no_cache.err.find(" with build id "), std::string::npos) << no_cache.err;
  EXPECT_NE(no_cache.err.find("not found, continuing without symbols"), std::string::npos);
  auto perf_view = test::run("HOME=" + test::sh(dir.path("none")) +
                             " perf report --stdio --no-children --sort sym -i " + test::sh(data) +
                             " 2>/dev/null");
  EXPECT_EQ(perf_view.out.find("[.] spin"), std::string::npos);

  // Deleted: perf record put a copy in the build-id cache; report finds it there.
  ASSERT_EQ(test::run("rm -f " + test::sh(bin)).status, 0);
  auto from_cache = test::run(env + report);
  EXPECT_NE(from_cache.out.find("[.] spin"), std::string::npos) << from_cache.err;
}

// With DEBUGINFOD_URLS set, a binary neither on disk nor in the build-id
// cache comes from a debuginfod server (a file:// one here); libdebuginfod
// is loaded only then.
TEST(BuildIdReport, MissingBinaryComesFromDebuginfod) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string src = std::string(PERFKIT_SOURCE_DIR) + "/tests/workloads/cpuloop.c";
  std::string bin = dir.path("loop");
  ASSERT_EQ(test::run("cc -O1 -fno-omit-frame-pointer -fno-inline-functions-called-once -o " +
                      test::sh(bin) + " " + test::sh(src))
                .status,
            0);
  std::string data = dir.path("perf.data");
  std::string home = "HOME=" + test::sh(dir.path("none")) + " ";
  ASSERT_EQ(test::run(home + "perf record -q -N -o " + test::sh(data) + " " + test::sh(bin) +
                      " 100 >/dev/null 2>&1")
                .status,
            0);
  auto id = test::run("readelf -n " + test::sh(bin) + " | awk '/Build ID/ {print $3}'");
  ASSERT_EQ(id.out.size(), 41u) << id.out;
  std::string served = dir.path("srv/buildid/" + id.out.substr(0, 40));
  ASSERT_EQ(test::run("mkdir -p " + test::sh(served) + " && mv " + test::sh(bin) + " " +
                      test::sh(served + "/executable"))
                .status,
            0);
  std::string report =
      test::perfkit_bin() + " report --stdio --no-children --sort sym -i " + test::sh(data);
  auto without = test::run(home + report);
  EXPECT_EQ(without.out.find("[.] spin"), std::string::npos) << without.out;
  auto with = test::run(home + "DEBUGINFOD_URLS=file://" + test::sh(dir.path("srv")) +
                        " DEBUGINFOD_CACHE_PATH=" + test::sh(dir.path("dcache")) + " " + report);
  ASSERT_EQ(with.status, 0) << with.err;
  EXPECT_NE(with.out.find("[.] spin"), std::string::npos) << with.out << with.err;
}

}  // namespace
}  // namespace perfkit

namespace perfkit {
namespace {

// buildid-cache -a/-l/-r, archive, and inject -b against perf's views.
TEST(BuildIdCache, AddListRemoveLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string env = "HOME=" + test::sh(dir.path("h")) + " ";
  auto add = test::run(env + test::perfkit_bin() + " buildid-cache -a /bin/true");
  ASSERT_EQ(add.status, 0) << add.err;
  auto ours = test::run(env + test::perfkit_bin() + " buildid-cache -l");
  auto theirs = test::run(env + "perf buildid-cache -l 2>/dev/null");
  EXPECT_EQ(ours.out, theirs.out);
  EXPECT_NE(ours.out.find("/bin/true"), std::string::npos) << ours.out;
  auto rm = test::run(env + test::perfkit_bin() + " buildid-cache -r /bin/true");
  ASSERT_EQ(rm.status, 0) << rm.err;
  EXPECT_EQ(test::run(env + "perf buildid-cache -l 2>/dev/null").out, "");
}

// perf's global options before the command: --buildid-dir puts the cache
// where perf --buildid-dir puts it; --no-pager and --debug are taken; a
// missing value or an unknown debug variable gets perf's words and 129.
TEST(GlobalOptions, BuildidDirNoPagerDebugLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  const std::string cache = dir.path("cache");
  auto add = test::run(test::perfkit_bin() + " --no-pager --debug verbose=1 --buildid-dir " +
                       test::sh(cache) + " buildid-cache -a /bin/true");
  ASSERT_EQ(add.status, 0) << add.err;
  auto theirs =
      test::run("perf --buildid-dir " + test::sh(cache) + " buildid-cache -l 2>/dev/null");
  EXPECT_NE(theirs.out.find("/bin/true"), std::string::npos) << theirs.out;
  for (const char* bad : {"--buildid-dir", "--debug", "--debug nosuch version"}) {
    auto p = test::run(std::string("perf ") + bad);
    auto k = test::run(test::perfkit_bin() + " " + bad);
    EXPECT_EQ(k.status, 129) << bad;
    EXPECT_EQ(k.status, p.status) << bad;
    EXPECT_EQ(k.err.substr(0, k.err.find('\n')), p.err.substr(0, p.err.find('\n'))) << bad;
  }
}

TEST(Archive, ReportsOnAnotherMachinesCache) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("fp.data");
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  test::TempDir dir;
  std::string data = dir.path("fp.data");
  test::run("cp " + test::sh(f) + " " + test::sh(data));
  auto a = test::run(test::perfkit_bin() + " archive " + test::sh(data));
  ASSERT_EQ(a.status, 0) << a.err << a.out;
  // Unpack into an empty cache: report finds the workload there.
  std::string cache = dir.path("other-debug");
  ASSERT_EQ(test::run("mkdir -p " + test::sh(cache) + " && tar xjf " + test::sh(data + ".tar.bz2") +
                      " -C " + test::sh(cache))
                .status,
            0);
  auto listing = test::run("tar tjf " + test::sh(data + ".tar.bz2"));
  EXPECT_NE(listing.out.find(".build-id/"), std::string::npos) << listing.out;
  EXPECT_NE(listing.out.find("cpuloop"), std::string::npos) << listing.out;
}

TEST(InjectBuildIds, SameTableAsPerfInject) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string data = dir.path("nobid.data");
  auto rec = test::run("perf record -q --no-buildid -o " + test::sh(data) + " " +
                       test::sh(test::workload("cpuloop")) + " 50 >/dev/null 2>&1");
  ASSERT_EQ(rec.status, 0);
  std::string theirs = dir.path("perf-b.data"), ours = dir.path("perfkit-b.data");
  ASSERT_EQ(test::run("perf inject -b -i " + test::sh(data) + " -o " + test::sh(theirs)).status, 0);
  auto inj =
      test::run(test::perfkit_bin() + " inject -b -i " + test::sh(data) + " -o " + test::sh(ours));
  ASSERT_EQ(inj.status, 0) << inj.err;
  auto a = test::run("perf buildid-list -i " + test::sh(theirs) + " 2>/dev/null");
  auto b = test::run("perf buildid-list -i " + test::sh(ours) + " 2>/dev/null");
  EXPECT_FALSE(a.out.empty());
  EXPECT_EQ(a.out, b.out);
}

// --buildid-all: a record before each DSO's first map record (hit or not,
// without the size perf's -b records carry), the table in perf's order.
TEST(InjectBuildIds, AllDsosAsPerfInject) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  for (const char* name : {"fp.data", "syswide.data"}) {
    PK_FIXTURE_OR_SKIP(data, name);
    std::string theirs = dir.path("perf-all.data"), ours = dir.path("perfkit-all.data");
    ASSERT_EQ(
        test::run("perf inject --buildid-all -i " + test::sh(data) + " -o " + test::sh(theirs))
            .status,
        0);
    auto inj = test::run(test::perfkit_bin() + " inject --buildid-all -i " + test::sh(data) +
                         " -o " + test::sh(ours));
    ASSERT_EQ(inj.status, 0) << inj.err;
    // perf report -D names the file on each record: the rest must match.
    const std::string strip = " 2>/dev/null | sed 's/@[^ ]*//'";
    auto a = test::run("perf report -D -i " + test::sh(theirs) + strip);
    auto b = test::run("perf report -D -i " + test::sh(ours) + strip);
    EXPECT_NE(a.out.find("PERF_RECORD_BUILD_ID"), std::string::npos) << name;
    EXPECT_TRUE(a.out == b.out) << name << ": perf report -D differs";
    auto la = test::run("perf buildid-list -i " + test::sh(theirs) + " 2>/dev/null");
    auto lb = test::run("perf buildid-list -i " + test::sh(ours) + " 2>/dev/null");
    EXPECT_FALSE(la.out.empty());
    EXPECT_EQ(la.out, lb.out) << name;
  }
}

// --known-build-ids: the DSOs named get the build-ids given (in the table,
// with no record of their own), the rest are read; items perf drops (no
// space, odd length, a non-hex digit) are dropped; on a recording made
// without build-ids. perf's --buildid-all ignores them: its records are
// those of every DSO, the known one's read from its file.
TEST(InjectBuildIds, KnownBuildIdsAsPerfInject) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string data = dir.path("nobid.data");
  const std::string loop = test::workload("cpuloop");
  ASSERT_EQ(test::run("perf record -q --no-buildid -o " + test::sh(data) + " " + test::sh(loop) +
                      " 20 >/dev/null 2>&1")
                .status,
            0);
  const std::string known = "'00112233445566778899aabbccddeeff00112233 " + loop +
                            ",abc /usr/lib/x86_64-linux-gnu/libc.so.6,"
                            "zz00 /bin/true,nospace,ffee " +
                            loop + "'";
  int compared = 0;
  for (const char* mode : {"-b", "--buildid-all"}) {
    std::string theirs = dir.path("perf-k.data"), ours = dir.path("perfkit-k.data");
    const std::string args = std::string(" inject ") + mode + " --known-build-ids=" + known +
                             " -i " + test::sh(data) + " -o ";
    ASSERT_EQ(test::run("perf" + args + test::sh(theirs)).status, 0) << mode;
    auto inj = test::run(test::perfkit_bin() + args + test::sh(ours));
    ASSERT_EQ(inj.status, 0) << mode << ": " << inj.err;
    const bool all = std::string(mode) == "--buildid-all";
    auto la = test::run("perf buildid-list -i " + test::sh(theirs) + " 2>/dev/null");
    auto lb = test::run("perf buildid-list -i " + test::sh(ours) + " 2>/dev/null");
    EXPECT_EQ(la.out.find("00112233445566778899aabbccddeeff00112233 " + loop) == std::string::npos,
              all)
        << mode << ": " << la.out;
    // (perf's --buildid-all table of a recording without build-ids is its
    // own matter: the -D records are compared below.)
    if (!all) EXPECT_EQ(lb.out, la.out) << mode;
    // The records: one per DSO read from its file, none for the known one.
    const std::string records = " 2>/dev/null | grep -c 'PERF_RECORD_HEADER_BUILD_ID\\|BUILD_ID:'";
    EXPECT_EQ(test::run("perf report -D -i " + test::sh(ours) + records).out,
              test::run("perf report -D -i " + test::sh(theirs) + records).out)
        << mode;
    ++compared;
  }
  EXPECT_EQ(compared, 2);
}

// A stripped binary whose symbols are in a separate debug file (found by
// its .gnu_debuglink in DIR/.debug), with no build-id cache: the symbols
// come from the debug file, the layout of the mapping from the binary (the
// debug file's segments have other file offsets, its .dynsym is NOBITS).
TEST(BuildIdReport, SeparateDebugFileWithoutTheCacheLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string src = std::string(PERFKIT_SOURCE_DIR) + "/tests/workloads/cpuloop.c";
  std::string bin = dir.path("loop");
  std::string dbg = dir.path(".debug/loop.debug");
  auto cc = test::run(
      "cc -O1 -g -fno-omit-frame-pointer -fno-inline-functions-called-once -o " + test::sh(bin) +
      " " + test::sh(src) + " && mkdir -p " + test::sh(dir.path(".debug")) +
      " && objcopy --only-keep-debug " + test::sh(bin) + " " + test::sh(dbg) +
      " && objcopy --strip-all --add-gnu-debuglink=" + test::sh(dbg) + " " + test::sh(bin));
  ASSERT_EQ(cc.status, 0) << cc.err;
  std::string data = dir.path("perf.data");
  std::string env = "HOME=" + test::sh(dir.path("home")) + " ";
  ASSERT_EQ(test::run("mkdir -p " + test::sh(dir.path("home"))).status, 0);
  auto rec = test::run(env + "perf record -q -o " + test::sh(data) + " " + test::sh(bin) +
                       " 100 >/dev/null 2>&1");
  ASSERT_EQ(rec.status, 0);
  ASSERT_EQ(test::run("rm -rf " + test::sh(dir.path("home/.debug"))).status, 0);
  for (const char* mode : {"--no-children --sort dso,sym", "--sort sym"}) {
    std::string args = std::string(" report --stdio -i ") + test::sh(data) + " " + mode;
    auto p = test::run(env + "perf" + args + " 2>/dev/null");
    auto k = test::run(env + test::perfkit_bin() + args + " 2>/dev/null");
    ASSERT_EQ(k.status, 0) << k.err;
    EXPECT_NE(k.out.find("[.] spin"), std::string::npos) << k.out;
    EXPECT_EQ(test::report_mismatches(p.out, k.out), "") << mode;
  }
}

}  // namespace
}  // namespace perfkit
