// An option a command does not know: perf's error line ("  Error: unknown
// option `NAME'", "unknown switch `C'"), then the usage, and exit status 129,
// in every command. Compared with perf 6.1 where perf has the command; dump
// and pt-synth, perfkit's own, are held to the same form.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

const char* const kCommands[] = {"record",        "report",      "script", "stat",
                                 "stat record",   "stat report", "inject", "buildid-list",
                                 "buildid-cache", "list"};
// Long, long with a value, a short one, a short cluster whose first letter
// is already unknown; each before "--" and a program, which record and stat
// would otherwise run.
const char* const kBadOptions[] = {"--overwritex", "--foo=3", "-Z", "-Zq"};

TEST(UnknownOption, MatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* cmd : kCommands) {
    for (const char* bad : kBadOptions) {
      const std::string args = std::string(cmd) + " " + bad + " -- true";
      auto theirs = run("perf " + args);
      auto ours = run(perfkit_bin() + " " + args);
      ASSERT_EQ(theirs.status, 129) << "perf " << args << ": " << theirs.err;
      EXPECT_EQ(ours.status, theirs.status) << "perfkit " << args << ": " << ours.err;
      EXPECT_EQ(first_line(ours.err), first_line(theirs.err)) << "perfkit " << args;
      EXPECT_TRUE(ours.err.starts_with(first_line(theirs.err) + "\n\n")) << ours.err;
      EXPECT_EQ(ours.out, "") << "perfkit " << args;
      ++compared;
    }
  }
  EXPECT_EQ(compared, std::size(kCommands) * std::size(kBadOptions));
}

TEST(UnknownOption, PerfkitOwnCommandsSayItAlike) {
  for (const char* cmd : {"dump", "pt-synth", "archive"}) {
    auto r = run(perfkit_bin() + " " + cmd + " --overwritex -- true");
    EXPECT_EQ(r.status, 129) << cmd << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("  Error: unknown option `overwritex'\n\n"))
        << cmd << ": " << r.err;
    auto s = run(perfkit_bin() + " " + cmd + " -Z");
    EXPECT_EQ(s.status, 129) << cmd << ": " << s.err;
    EXPECT_TRUE(s.err.starts_with("  Error: unknown switch `Z'\n\n")) << cmd << ": " << s.err;
  }
}

TEST(UnknownOption, BeforeTheCommandAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  auto theirs = run("perf --overwritex");
  auto ours = run(perfkit_bin() + " --overwritex");
  EXPECT_EQ(theirs.status, 129);
  EXPECT_EQ(ours.status, theirs.status) << ours.err;
  EXPECT_EQ(first_line(ours.err), first_line(theirs.err));
  EXPECT_EQ(ours.out, "");
}

// A value that looks like an option is the value of the option before it,
// and options after "--" belong to the program: neither is unknown.
TEST(UnknownOption, ValuesAndProgramArgumentsAreNotOptions) {
  TempDir dir;
  auto r =
      run(perfkit_bin() + " record -q -o " + sh(dir.path("x.data")) + " -- sh -c 'exit 0' --zz");
  EXPECT_EQ(r.status, 0) << r.err;
  auto q = run(perfkit_bin() + " report -i -Z --stdio");
  EXPECT_NE(q.status, 129) << q.err;
  EXPECT_NE(q.err.find("-Z"), std::string::npos) << q.err;
}

}  // namespace
}  // namespace perfkit::test
