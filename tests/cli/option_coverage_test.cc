// Every option perf 6.1 lists for record, report, script, stat and inject
// (its -h) is one perfkit's --help lists too, or one named below with the
// reason it is not: left to other work, or not yet built. An option built
// since must leave the "not yet" list (the test says so), so that the list
// and the README's stay the truth.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

struct Excluded {
  const char* command;
  const char* option;
  bool not_yet;  // false: owned elsewhere for good (TUI, BPF, other issues)
  const char* why;
};

const Excluded kExcluded[] = {
    {"record", "--clang-path", false, "BPF program compilation: not in perfkit"},
    {"record", "--clang-opt", false, "BPF program compilation: not in perfkit"},
    {"record", "--off-cpu", false, "the off-CPU issue (without BPF)"},
    {"record", "--snapshot", false, "the Intel PT recording issue"},
    {"record", "-S", false, "--snapshot: the Intel PT recording issue"},
    {"record", "--aux-sample", false, "the Intel PT recording issue"},
    {"record", "--kcore", false, "the Intel PT recording issue"},
    {"script", "--script", false, "Python scripting comes later"},
    {"script", "-s", false, "--script: Python scripting comes later"},
    {"script", "--gen-script", false, "Python scripting comes later"},
    {"script", "-g", false, "--gen-script: Python scripting comes later"},
    {"script", "--list", false, "Python scripting comes later"},
    {"script", "-l", false, "--list: Python scripting comes later"},
};

// The options a -h/--help text lists: "--long" names and "-x" letters at
// the start of a line (perf: "    -x, --long"; CLI11: "  -x,--long").
std::set<std::string> options_of(const std::string& help) {
  std::set<std::string> out;
  static const std::regex long_opt(R"(--[a-z0-9][a-z0-9-]*)");
  static const std::regex short_opt(R"(^\s+(-[a-zA-Z0-9])\b)");
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    const std::size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line[start] != '-') continue;  // (a description's line)
    std::smatch m;
    if (std::regex_search(line, m, short_opt)) out.insert(m[1].str());
    const std::size_t text = line.find("  ", start);
    const std::string names = line.substr(0, text);  // not the description's words
    for (std::sregex_iterator it(names.begin(), names.end(), long_opt), end; it != end; ++it)
      out.insert(it->str());
  }
  return out;
}

TEST(OptionCoverage, EveryPerfOptionIsBuiltOrExcludedWithAReason) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* command : {"record", "report", "script", "stat", "inject"}) {
    SCOPED_TRACE(command);
    auto perf = run(std::string("perf ") + command + " -h 2>&1");
    auto ours = run(perfkit_bin() + " " + command + " --help 2>&1");
    ASSERT_EQ(ours.status, 0) << ours.out;
    const std::set<std::string> theirs = options_of(perf.out), mine = options_of(ours.out);
    ASSERT_GT(theirs.size(), 15u) << perf.out;
    std::map<std::string, const Excluded*> excluded;
    for (const Excluded& e : kExcluded)
      if (std::string_view(e.command) == command) excluded[e.option] = &e;
    for (const std::string& o : theirs) {
      if (mine.count(o)) continue;
      EXPECT_TRUE(excluded.count(o))
          << "perf " << command << " " << o << ": neither built nor excluded with a reason";
    }
    for (const auto& [option, e] : excluded) {
      EXPECT_FALSE(e->not_yet && mine.count(option))
          << "perfkit " << command << " " << option << " is built now: off the not-yet list";
      EXPECT_TRUE(theirs.count(option)) << "perf " << command << " has no " << option;
    }
  }
}

}  // namespace
}  // namespace perfkit::test
