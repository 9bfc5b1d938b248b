// Cross-endian files: each fixture (and the synthetic file with every record
// type) is written big-endian by perfkit's inject, then
//  - perf report -D and perf script read it as they read the same recording
//    written little-endian (raw hex dumps aside: perf swaps some records
//    only partly);
//  - perfkit dump prints both identically;
//  - `perfkit inject` turns it back into the little-endian file, byte for byte.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/dump_records_compare.h"
#include "cli/dump_records_synthetic.h"
#include "inject/inject.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

// Writes `in` again through inject, in host order or swapped, as a file or a stream.
void rewrite(const std::string& in, const std::string& out, bool swap_output, bool stream) {
  auto reader = perfdata::Reader::open(in);
  ASSERT_TRUE(reader) << reader.error().message();
  inject::InjectOptions opts;
  opts.swap_output = swap_output;
  opts.pipe_output = stream;
  auto st = inject::run_inject(**reader, out, opts);
  ASSERT_TRUE(st) << st.error().message();
}

bool is_swapped(const std::string& path) {
  auto r = perfdata::Reader::open(path);
  return r && (*r)->swapped();
}

// What perf 6.1 misreads in a cross-endian file, hidden from the comparison
// of its outputs: MMAP2's prot and flags (perf_event__mmap2_swap leaves them)
// and EVENT_UPDATE's scale (only its type and id are swapped).
std::string without_perf_swap_bugs(const std::string& text) {
  std::string out;
  for (const auto& line : test::split_lines(text)) {
    std::string l = line;
    if (l.find("PERF_RECORD_MMAP2 ") != std::string::npos) {
      auto at = l.find("]: ", l.find(" @ "));
      if (at != std::string::npos && at + 7 <= l.size()) l.replace(at + 3, 4, "????");
    }
    if (l.starts_with("... scale: ")) l = "... scale: ?";
    out += l + "\n";
  }
  return out;
}

// Runs `cmd` in `dir` on the file "x.data" there, so that outputs naming the
// file are comparable between directories.
test::RunResult run_in(const std::string& dir, const std::string& cmd) {
  return test::run("cd " + test::sh(dir) + " && " + cmd + " </dev/null");
}

class ByteOrder : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    PK_SKIP_WITHOUT_PERF();
    std::string name = GetParam();
    if (name.starts_with("stream:")) {
      stream_ = true;
      name = name.substr(7);
    }
    if (name.starts_with("synthetic")) {
      // perf 6.1 misreads some records of a cross-endian file: the variant
      // for it leaves them out.
      const bool all = name == "synthetic";
      perf_reads_ = !all;
      source_ = tmp_.path("synthetic.data");
      ASSERT_EQ(test::write_synthetic_recording(source_, all), "");
    } else {
      source_ = test::fixture(name);
      PK_SKIP_IF_MISSING(source_.empty(), "fixture " << name);
    }
    std::filesystem::create_directories(tmp_.path("le"));
    std::filesystem::create_directories(tmp_.path("be"));
    le_dir_ = tmp_.path("le");
    be_dir_ = tmp_.path("be");
    rewrite(source_, le_dir_ + "/x.data", false, stream_);
    rewrite(source_, be_dir_ + "/x.data", true, stream_);
    ASSERT_FALSE(is_swapped(le_dir_ + "/x.data"));
    ASSERT_TRUE(is_swapped(be_dir_ + "/x.data"));
  }
  // perf 6.1 does not swap HEADER_FEATURE records, so it cannot read a
  // cross-endian stream that has them.
  bool perf_reads_big_endian() const { return !stream_ && perf_reads_; }

  test::TempDir tmp_;
  bool stream_ = false;
  bool perf_reads_ = true;
  std::string source_, le_dir_, be_dir_;
};

TEST_P(ByteOrder, PerfReportDumpReadsBothAlike) {
  if (!perf_reads_big_endian()) GTEST_SKIP() << "perf 6.1 rejects cross-endian stream features";
  auto le = run_in(le_dir_, "perf report -D -i x.data");
  auto be = run_in(be_dir_, "perf report -D -i x.data");
  ASSERT_EQ(le.status, 0) << le.err;
  ASSERT_EQ(be.status, 0) << be.err;
  ASSERT_NE(le.out.find("Aggregated stats:"), std::string::npos);
  EXPECT_EQ(test::first_mismatch(without_perf_swap_bugs(test::without_raw_dumps(le.out)),
                                 without_perf_swap_bugs(test::without_raw_dumps(be.out))),
            "");
}

TEST_P(ByteOrder, PerfScriptReadsBothAlike) {
  if (!perf_reads_big_endian()) GTEST_SKIP() << "perf 6.1 rejects cross-endian stream features";
  auto le = run_in(le_dir_, "perf script -i x.data");
  auto be = run_in(be_dir_, "perf script -i x.data");
  ASSERT_EQ(le.status, 0) << le.err;
  ASSERT_EQ(be.status, 0) << be.err;
  EXPECT_EQ(test::first_mismatch(le.out, be.out), "");
}

TEST_P(ByteOrder, PerfkitDumpPrintsBothIdentically) {
  const std::string dump = test::perfkit_bin() + " dump --no-header -i x.data";
  auto le = run_in(le_dir_, dump);
  auto be = run_in(be_dir_, dump);
  ASSERT_EQ(le.status, 0) << le.err;
  ASSERT_EQ(be.status, 0) << be.err;
  ASSERT_NE(le.out.find("Aggregated stats:"), std::string::npos);
  EXPECT_EQ(test::first_mismatch(le.out, be.out), "");
}

TEST_P(ByteOrder, InjectWritesTheBigEndianFileBackInHostOrder) {
  std::string back = tmp_.path("back.data");
  // A stream goes through stdin and stdout; a file is read and written in place.
  auto r = stream_ ? test::run(test::perfkit_bin() + " inject -i - -o - <" +
                               test::sh(be_dir_ + "/x.data") + " >" + test::sh(back))
                   : test::run(test::perfkit_bin() + " inject -i " + test::sh(be_dir_ + "/x.data") +
                               " -o " + test::sh(back));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(is_swapped(back));
  EXPECT_TRUE(test::read_file(back) == test::read_file(le_dir_ + "/x.data"))
      << "the round trip through big-endian changed the file";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ByteOrder,
                         ::testing::Values("synthetic", "synthetic_nobpf", "fp.data", "dwarf.data",
                                           "nocg.data", "syswide.data", "multi.data", "group.data",
                                           "tracepoint.data", "compressed.data", "pipe.data",
                                           "switch.data", "faults.data", "stream:synthetic",
                                           "stream:fp.data", "stream:pipe.data"),
                         [](const auto& info) {
                           std::string n = info.param;
                           n = n.substr(0, n.find('.'));
                           if (n.starts_with("stream:")) n = "stream_" + n.substr(7);
                           return n;
                         });

}  // namespace
}  // namespace perfkit
