// Samples of tasks on their way out, as a system-wide recording takes them:
// the kernel gives such a sample tid -1 (and sometimes pid -1 too), so one
// thread of the machine (tid -1, no comm: ":-1") holds the samples of many
// processes. perf's scripts are given each sample's own pid and tid, as
// unsigned 32-bit numbers; perfkit's stackcollapse and flamegraph reports
// must say the same. The chains end in a frame at address 0, as stack walks
// of user code often do, which report --html names as perf report does.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "abi/perf_event.h"
#include "perfdata/writer.h"
#include "record/encode.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

using namespace perfkit::abi;
using record::RecordBuilder;

constexpr std::uint64_t kBase = 0x555555554000;
constexpr std::uint64_t kContextUserMark = static_cast<std::uint64_t>(-512);
constexpr std::uint32_t kGone = static_cast<std::uint32_t>(-1);

// A process `pid` running `binary`; then samples of it with tid -1 (pids
// 700, 701 and -1 in turn), and samples of a live thread between them.
std::string write_recording(const std::string& path, const std::string& binary) {
  perfdata::EventSet events;
  EventAttr a;
  a.type = kTypeSoftware;
  a.config = 0;  // cpu-clock
  a.sample_period = 1000;
  a.sample_type = kSampleIp | kSampleTid | kSampleTime | kSamplePeriod | kSampleCallchain;
  a.set(kAttrSampleIdAll);
  a.set(kAttrDisabled);
  events.add(a, {7});
  const RecordLayout& layout = events[0].layout;

  std::vector<std::vector<std::uint8_t>> records;
  for (std::uint32_t pid : {700u, 701u, 702u}) {
    record::SampleId s;
    s.pid = s.tid = pid;
    s.time = 1;
    RecordBuilder comm(kRecordComm);
    comm.u32(pid).u32(pid).string("leaver");
    records.push_back(comm.sample_id(s, layout).finish());
    RecordBuilder mmap(kRecordMmap, kMiscUser);
    mmap.u32(pid).u32(pid).u64(kBase).u64(0x3000).u64(0).string(binary);
    records.push_back(mmap.sample_id(s, layout).finish());
  }
  const std::uint32_t pids[] = {700, 701, kGone, 702, 700};
  const std::uint32_t tids[] = {kGone, kGone, kGone, 702, kGone};
  for (std::uint64_t i = 0; i < 40; ++i) {
    const std::uint32_t k = static_cast<std::uint32_t>(i % 5);
    RecordBuilder b(kRecordSample, kMiscUser);
    b.u64(kBase + 0x1130 + i % 3).u32(pids[k]).u32(tids[k]).u64(1000 + i).u64(1000);
    b.u64(4).u64(kContextUserMark).u64(kBase + 0x1130 + i % 3).u64(kBase + 0x1180).u64(0);
    records.push_back(b.finish());
  }
  auto w = perfdata::Writer::create(path, {});
  if (!w) return w.error().message();
  if (auto st = (*w)->begin(events); !st) return st.error().message();
  for (const auto& r : records)
    if (auto st = (*w)->write(r); !st) return st.error().message();
  if (auto st = (*w)->finish(events, {}); !st) return st.error().message();
  return "";
}

TEST(ExitingTasks, ScriptReportsSeeEachSamplesPidLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir tmp;
  const std::string file = tmp.path("exit.data");
  ASSERT_EQ(write_recording(file, test::workload("cpuloop")), "");
  int compared = 0;
  for (std::string opts : {"", "--include-pid", "--include-pid --include-tid", "--no-comm"}) {
    const std::string args = " script report stackcollapse -i " + test::sh(file) + " -- " + opts;
    auto theirs = test::run("perf" + args + " 2>/dev/null");
    auto ours = test::run(test::perfkit_bin() + args + " 2>/dev/null");
    ASSERT_EQ(theirs.status, 0) << opts;
    if (opts.find("pid") != std::string::npos)
      EXPECT_NE(theirs.out.find("-4294967295"), std::string::npos) << theirs.out;
    EXPECT_EQ(ours.out, theirs.out) << opts;
    ++compared;
  }
  EXPECT_EQ(compared, 4);
  auto theirs = test::run("cd " + test::sh(tmp.dir()) + " && perf script -i " + test::sh(file) +
                          " -s /usr/lib/perf-core/scripts/python/flamegraph.py -- -f json -o " +
                          test::sh(tmp.path("theirs.json")) + " 2>&1");
  ASSERT_EQ(theirs.status, 0) << theirs.out;
  auto ours = test::run(test::perfkit_bin() + " script report flamegraph -i " + test::sh(file) +
                        " -f json -o " + test::sh(tmp.path("ours.json")) + " 2>&1");
  ASSERT_EQ(ours.status, 0) << ours.out;
  const std::string want = test::read_file(tmp.path("theirs.json"));
  EXPECT_NE(want.find("(701)"), std::string::npos) << want;
  EXPECT_EQ(test::read_file(tmp.path("ours.json")), want);
}

// perf report names the frame at address 0 "0000000000000000" (C's "%#.16llx"
// gives zero no prefix); the page's data names it so too.
TEST(ExitingTasks, PageNamesAddressZeroAsReport) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir tmp;
  const std::string file = tmp.path("exit.data");
  ASSERT_EQ(write_recording(file, test::workload("cpuloop")), "");
  auto report = test::run("perf report --stdio --children -i " + test::sh(file) + " 2>/dev/null");
  ASSERT_EQ(report.status, 0);
  EXPECT_NE(report.out.find("[.] 0000000000000000"), std::string::npos) << report.out;
  const std::string page = tmp.path("r.html");
  auto r = test::run(test::perfkit_bin() + " report --html " + test::sh(page) + " -i " +
                     test::sh(file) + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string html = test::read_file(page);
  EXPECT_NE(html.find("\"0000000000000000\"]"), std::string::npos);
  EXPECT_EQ(html.find("\"0x0000000000000000\""), std::string::npos);
}

}  // namespace
}  // namespace perfkit
