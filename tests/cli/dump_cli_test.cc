// perfkit dump against perf report -D on files /usr/bin/perf recorded here.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "support/test_support.h"

namespace perfkit {
namespace {

std::string stats_lines(const std::string& text, bool perf) {
  // "<NAME> events: <N>" lines of the aggregated section, sorted.
  std::istringstream in(text);
  std::vector<std::string> lines;
  std::string line;
  bool on = !perf;
  static const std::regex re(R"(^\s*(\w+) events:\s+(\d+))");
  while (std::getline(in, line)) {
    if (perf && line.starts_with("Aggregated stats")) {
      on = true;
      continue;
    }
    if (!on) continue;
    if (perf && line.ends_with("stats:")) break;
    std::smatch m;
    if (std::regex_search(line, m, re))
      lines.push_back(std::string(m[1]) + " " + std::string(m[2]));
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (auto& l : lines) out += l + "\n";
  return out;
}

class FixtureStats : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureStats, DumpStatsEqualsPerfAggregatedStats) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  PK_SKIP_IF_MISSING(f.empty(), "fixture " << GetParam());
  auto ours = test::run(test::perfkit_bin() + " dump --stats -i " + test::sh(f));
  ASSERT_EQ(ours.status, 0) << ours.err;
  auto theirs = test::run("perf report -D -i " + test::sh(f));
  std::string a = stats_lines(ours.out, false), b = stats_lines(theirs.out, true);
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(a, b);
}

TEST_P(FixtureStats, StdinPipeGivesTheSameCounts) {
  std::string f = test::fixture(GetParam());
  PK_SKIP_IF_MISSING(f.empty(), "fixture " << GetParam());
  auto direct = test::run(test::perfkit_bin() + " dump --stats -i " + test::sh(f));
  // A file-mode file can only be read from a pipe after conversion to pipe mode.
  auto piped = test::run(test::perfkit_bin() + " inject -i " + test::sh(f) + " -o - | " +
                         test::perfkit_bin() + " dump --stats -i -");
  ASSERT_EQ(piped.status, 0) << piped.err;
  std::string a = stats_lines(direct.out, false), b = stats_lines(piped.out, false);
  // The pipe stream carries the attrs and features as records, and no COMPRESSED.
  EXPECT_NE(b.find("ATTR "), std::string::npos);
  auto sample_count = [](const std::string& s) {
    std::smatch m;
    static const std::regex re(R"(SAMPLE (\d+))");
    return std::regex_search(s, m, re) ? std::stoull(m[1]) : 0ULL;
  };
  EXPECT_EQ(sample_count(a), sample_count(b));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureStats,
                         ::testing::Values("fp.data", "dwarf.data", "nocg.data", "syswide.data",
                                           "multi.data", "group.data", "tracepoint.data",
                                           "compressed.data", "pipe.data", "switch.data",
                                           "faults.data"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

TEST(DumpCli, MissingFileIsAOneLineError) {
  auto r = test::run(test::perfkit_bin() + " dump -i /nonexistent.data");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent.data"), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(DumpCli, UnknownOptionFails) {
  auto r = test::run(test::perfkit_bin() + " dump --bogus");
  EXPECT_EQ(r.status, 129);
  EXPECT_TRUE(r.err.starts_with("  Error: unknown option `bogus'\n\n")) << r.err;
}

TEST(DumpCli, HelpPrintsUsage) {
  auto r = test::run(test::perfkit_bin() + " help dump");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--stats"), std::string::npos);
  auto h = test::run(test::perfkit_bin() + " dump -h");
  EXPECT_EQ(h.out, r.out);
}

}  // namespace
}  // namespace perfkit
