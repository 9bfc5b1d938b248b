// The Intel PT commands through the perfkit binary: `perfkit dump` prints the
// corpus recording's packets exactly as `perf report -D` does, and
// `perfkit pt-synth` writes recordings that perf decodes (file and pipe mode),
// with its usage and its errors.
#include <gtest/gtest.h>

#include <sstream>

#include "support/test_support.h"

namespace perfkit {
namespace {

std::vector<std::string> pt_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(". ... Intel Processor Trace data") ||
        (line.size() > 12 && line.starts_with(".  ") && line[11] == ':'))
      out.push_back(line);
  return out;
}

// dump, report -D and script -D all print the packets as perf report -D does.
TEST(PtCliTest, DumpPrintsPerfsPacketLinesForTheCorpusRecording) {
  PK_SKIP_WITHOUT_CORPUS();
  std::string dir = test::corpus_dir();
  auto ref = test::run("zcat " + test::sh(dir + "/_reference-perf-6.1/quipper/"
                                                "perf.data.intel_pt-4.14.report-D.txt.gz"));
  auto want = pt_lines(ref.out);
  ASSERT_GT(want.size(), 80000u);
  for (const char* cmd : {" dump --no-header", " report -D", " script -D"}) {
    auto mine = test::run(test::sh(test::perfkit_bin()) + cmd + " -i " +
                          test::sh(dir + "/quipper/perf.data.intel_pt-4.14"));
    ASSERT_EQ(mine.status, 0) << cmd << ": " << mine.err;
    auto got = pt_lines(mine.out);
    ASSERT_EQ(want.size(), got.size()) << cmd;
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(want[i], got[i]) << cmd << " line " << i;
  }
}

// The side-band record counts of `perf report --stats` (samples, switches,
// maps, comms), the records inject --strip decides about.
std::string side_band_counts(const std::string& stats) {
  std::string out;
  std::istringstream in(stats);
  std::string line;
  for (const char* kind : {" MMAP events:", " MMAP2 events:", " COMM events:", " EXIT events:",
                           " SAMPLE events:", " SWITCH_CPU_WIDE events:"})
    for (in.clear(), in.seekg(0); std::getline(in, line);)
      if (line.find(kind) != std::string::npos) {
        std::istringstream words(line.substr(line.find(':') + 1));
        std::string n;
        words >> n;
        out += std::string(kind) + " " + n + "\n";
        break;
      }
  return out;
}

// inject --itrace --strip on the real recording: its cycles samples and
// context switches go, the maps and comms stay, as with perf inject --strip.
TEST(PtCliTest, InjectStripDropsWhatPerfDrops) {
  PK_SKIP_WITHOUT_CORPUS();
  PK_SKIP_WITHOUT_PERF();
  test::TempDir out;
  const std::string in = test::sh(test::corpus_dir() + "/quipper/perf.data.intel_pt-4.14");
  for (const char* strip : {"", " --strip"}) {
    const std::string theirs = out.path("perf.data"), ours = out.path("perfkit.data");
    auto p = test::run("perf inject --itrace=i100000ie" + std::string(strip) + " -i " + in +
                       " -o " + test::sh(theirs));
    ASSERT_EQ(p.status, 0) << p.err;
    auto k = test::run(test::sh(test::perfkit_bin()) + " inject --itrace=i100000ie" + strip +
                       " -i " + in + " -o " + test::sh(ours));
    ASSERT_EQ(k.status, 0) << k.err;
    auto want = side_band_counts(test::run("perf report --stats -i " + test::sh(theirs)).out);
    auto got = side_band_counts(test::run("perf report --stats -i " + test::sh(ours)).out);
    ASSERT_NE(want.find("MMAP events"), std::string::npos) << want;
    EXPECT_EQ(got, want) << "inject" << strip;
    EXPECT_EQ(want.find("SWITCH_CPU_WIDE") == std::string::npos, *strip != 0) << want;
  }
  auto bad = test::run(test::sh(test::perfkit_bin()) + " inject --strip -i " + in + " -o " +
                       test::sh(out.path("x.data")));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--strip option requires --itrace option"), std::string::npos) << bad.err;
}

TEST(PtCliTest, PtSynthWritesWhatPerfDecodes) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string file = dir.path("pt.data");
  auto r = test::run(test::sh(test::perfkit_bin()) + " pt-synth --mtc --cyc -o " + test::sh(file) +
                     " -- " + test::sh(std::string(PT_WORKLOAD_DIR) + "/ptflow-static") + " 5");
  ASSERT_EQ(r.status, 0) << r.err;
  // "[ perfkit pt-synth: N instructions, ..."
  auto at = r.err.find("pt-synth: ");
  ASSERT_NE(at, std::string::npos) << r.err;
  std::uint64_t insns = std::stoull(r.err.substr(at + 10));
  auto perf = test::run("perf script --itrace=i0ns -F ip -i " + test::sh(file) + " | wc -l");
  EXPECT_EQ(std::stoull(perf.out), insns);
  // Pipe mode, read by perf from a pipe: a second run of the program, whose
  // count pt-synth reports again (the runs need not retire the same number).
  std::string err = dir.path("pipe.err");
  auto p = test::run(test::sh(test::perfkit_bin()) + " pt-synth -o - -- " +
                     test::sh(std::string(PT_WORKLOAD_DIR) + "/ptflow-static") + " 5 2>" +
                     test::sh(err) + " | perf script -i - --itrace=i0ns -F ip | wc -l");
  std::string pipe_err = test::run("cat " + test::sh(err)).out;
  at = pipe_err.find("pt-synth: ");
  ASSERT_NE(at, std::string::npos) << pipe_err;
  EXPECT_EQ(std::stoull(p.out), std::stoull(pipe_err.substr(at + 10)));
}

// The decode's progress bar: on a terminal stderr only, never in stdout,
// wiped at the end. The output goes to a pipe whose reader starts 2 s late,
// so that the decode (stalled on the full pipe) takes more than the second
// after which the bar shows; `script` gives stderr a pseudo-terminal.
TEST(PtCliTest, DecodeProgressBarOnlyOnATerminal) {
  test::TempDir dir;
  const std::string rec = dir.path("pt.data"), out = dir.path("out.txt");
  auto r = test::run(test::sh(test::perfkit_bin()) + " pt-synth -o " + test::sh(rec) + " -- " +
                     test::sh(std::string(PT_WORKLOAD_DIR) + "/ptflow-static") + " 5");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string cmd =
      test::sh(test::perfkit_bin()) + " script --itrace=i0ns -i " + test::sh(rec);
  auto plain = test::run(cmd + " >" + test::sh(out));
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.err, "");  // stderr is not a terminal: no bar
  const std::string want = test::run("cat " + test::sh(out)).out;
  ASSERT_GT(want.size(), 2u << 20);  // more than the pipe and the output buffer hold
  if (test::run("command -v script").status != 0) GTEST_SKIP() << "no script(1) for a terminal";
  const std::string inner = cmd + " | (sleep 2; cat >" + test::sh(out) + ")";
  auto tty = test::run("script -qec " + test::sh(inner) + " /dev/null");
  ASSERT_EQ(tty.status, 0) << tty.err;
  EXPECT_NE(tty.out.find("\rProcessing Intel PT trace... "), std::string::npos) << tty.out;
  EXPECT_EQ(tty.out.find('\n'), std::string::npos) << tty.out;  // nothing else on the terminal
  EXPECT_TRUE(tty.out.ends_with("\r")) << tty.out;              // wiped
  EXPECT_EQ(test::run("cat " + test::sh(out)).out, want);       // stdout untouched
}

TEST(PtCliTest, PtSynthUsageAndErrors) {
  auto help = test::run(test::sh(test::perfkit_bin()) + " pt-synth -h");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--psb-period"), std::string::npos);
  EXPECT_NE(help.out.find("--ovf-every"), std::string::npos);
  auto period = test::run(test::sh(test::perfkit_bin()) + " pt-synth --mtc-period 20 -- true");
  EXPECT_EQ(period.status, 1);
  EXPECT_EQ(period.err, "perfkit pt-synth: --mtc-period 20 is out of range (0-15)\n");
  auto missing =
      test::run(test::sh(test::perfkit_bin()) + " pt-synth -o /dev/null -- /nonexistent/program");
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.err,
            "perfkit pt-synth: /nonexistent/program: cannot run it (not found or not "
            "executable)\n");
}

}  // namespace
}  // namespace perfkit
