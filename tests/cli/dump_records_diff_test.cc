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
  PK_SKIP_IF_MISSING(f.empty(), "fixture " << GetParam());
  expect_same_dump(f);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureDump,
                         ::testing::Values("fp.data", "dwarf.data", "nocg.data", "syswide.data",
                                           "multi.data", "group.data", "tracepoint.data",
                                           "compressed.data", "pipe.data", "switch.data",
                                           "faults.data", "threads.data"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

// perf names a [vdso] map's dso after the temporary copy it makes of the
// running vdso (/tmp/perf-vdso.so-XXXXXX); perfkit keeps "[vdso]".
std::string vdso_named(const std::string& text) {
  static const std::string kTemp = "/tmp/perf-vdso.so-";
  std::string out = text;
  for (std::size_t at = out.find(kTemp); at != std::string::npos; at = out.find(kTemp, at))
    out.replace(at, kTemp.size() + 6, "[vdso]");
  return out;
}

// perfkit report -D: the whole of perf report -D, with the thread and dso
// lines its sample handling adds and the preamble.
void expect_same_report_dump(const std::string& path) {
  auto theirs = test::perf_report_dump(path);
  ASSERT_EQ(theirs.status, 0) << theirs.err;
  auto ours = test::run(test::perfkit_bin() + " report -D -i " + test::sh(path) + " </dev/null");
  ASSERT_EQ(ours.status, 0) << ours.err;
  ASSERT_NE(theirs.out.find(" ...... dso: "), std::string::npos) << path;
  EXPECT_EQ(test::first_mismatch(vdso_named(theirs.out), ours.out), "") << path;
}

// perfkit script -D: the whole of perf script -D, each sample followed by
// its resolution lines and its script output, THREAD_MAP, CPU_MAP and
// THROTTLE handled, no stats at the end.
void expect_same_script_dump(const std::string& path) {
  auto theirs = test::run("perf script -D -i " + test::sh(path) + " </dev/null");
  ASSERT_EQ(theirs.status, 0) << theirs.err;
  auto ours = test::run(test::perfkit_bin() + " script -D -i " + test::sh(path) + " </dev/null");
  ASSERT_EQ(ours.status, 0) << ours.err;
  EXPECT_EQ(test::first_mismatch(vdso_named(theirs.out), ours.out), "") << path;
}

TEST_P(FixtureDump, ScriptDumpEqualsPerfsWhole) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  PK_SKIP_IF_MISSING(f.empty(), "fixture " << GetParam());
  expect_same_script_dump(f);
}

TEST(CorpusScriptDump, SamplesFollowedByTheirScriptLines) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  for (const char* f : {"quipper/perf.data.forkexit-3.4", "quipper/perf.data.callgraph-3.4",
                        "quipper/perf.data.piped.hw_and_sw-3.4", "quipper/perf.data.intel_pt-4.14"})
    expect_same_script_dump(test::corpus_dir() + "/" + f);
}

TEST_P(FixtureDump, ReportDumpEqualsPerfsWhole) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  PK_SKIP_IF_MISSING(f.empty(), "fixture " << GetParam());
  expect_same_report_dump(f);
}

TEST(CorpusReportDump, ThreadsAndMapsAsPerfResolvesThem) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  for (const char* f : {"quipper/perf.data.forkexit-3.4", "quipper/perf.data.systemwide.5-3.4",
                        "quipper/perf.data.piped.target-3.4", "quipper/perf.data.intel_pt-4.14"})
    expect_same_report_dump(test::corpus_dir() + "/" + f);
}

TEST(SyntheticDump, EveryRecordTypeAndSampleFieldEqualsPerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string path = dir.path("synthetic.data");
  ASSERT_EQ(test::write_synthetic_recording(path), "");
  expect_same_dump(path);
}

// script --show-text-poke-events on a TEXT_POKE record: its address, the
// kernel symbol there, the old and new bytes, as perf script prints them.
TEST(SyntheticDump, TextPokeEventsAsPerfScript) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string path = dir.path("synthetic.data");
  ASSERT_EQ(test::write_synthetic_recording(path), "");
  const std::string args = " script --show-text-poke-events -F comm,tid,time -i " + test::sh(path);
  auto theirs = test::run("perf" + args + " 2>/dev/null | grep -A8 TEXT_POKE");
  auto ours = test::run(test::perfkit_bin() + args + " 2>/dev/null | grep -A8 TEXT_POKE");
  EXPECT_NE(theirs.out.find("PERF_RECORD_TEXT_POKE"), std::string::npos) << theirs.out;
  EXPECT_EQ(ours.out, theirs.out);
}

TEST(SyntheticDump, StdinStreamPrintsPipeOffsets) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("pipe.data");
  PK_SKIP_IF_MISSING(f.empty(), "fixture pipe.data");
  auto theirs = test::run("perf report -D -i - <" + test::sh(f));
  ASSERT_EQ(theirs.status, 0) << theirs.err;
  auto ours = test::run(test::perfkit_bin() + " dump --no-header -i - <" + test::sh(f));
  ASSERT_EQ(ours.status, 0) << ours.err;
  EXPECT_EQ(test::first_mismatch(test::perf_dump_comparable(theirs.out), ours.out), "");
}

}  // namespace
}  // namespace perfkit
