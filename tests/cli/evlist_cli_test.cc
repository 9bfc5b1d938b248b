// perfkit evlist against perf evlist on the suite's recordings and the
// perf-corpus files perf reads: names, -F, -v, -g, --trace-fields, line for
// line (perf's tip names perf evlist, perfkit's perfkit evlist), and its
// refusals.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

// "" when both print the same; else what differs.
std::string compare(const std::string& file, const std::string& opts) {
  auto theirs = run("perf evlist -i " + sh(file) + " " + opts + " 2>/dev/null");
  // perf fails on some corpus files, sees no event in some old streams
  // (quipper's), and names the events of others "unknown tracepoint":
  // nothing to compare there. perf also reads an old stream's shorter attr
  // whole, the ids after it as fields (-v): not compared either.
  if (theirs.status != 0 || theirs.out.empty() ||
      theirs.out.find("unknown tracepoint") != std::string::npos)
    return "";
  if (opts.find("-v") != std::string::npos &&
      file.find("quipper/perf.data.piped") != std::string::npos)
    return "";
  auto ours = run(perfkit_bin() + " evlist -i " + sh(file) + " " + opts + " 2>&1");
  std::string want = theirs.out;
  if (auto at = want.find("'perf evlist"); at != std::string::npos) want.replace(at, 5, "'perfkit");
  if (ours.status != 0) return "status " + std::to_string(ours.status) + ": " + ours.out;
  return ours.out == want ? "" : "ours:\n" + ours.out + "theirs:\n" + want;
}

TEST(Evlist, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::vector<std::string> files;
  for (const char* name : {"fp.data", "multi.data", "group.data", "tracepoint.data", "tponly.data",
                           "syswide_g.data", "pipe.data", "faults.data", "switch.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    files.push_back(f);
  }
  // the corpus's recordings (its fuzz cases are for the readers' errors)
  for (const std::string& f : corpus_files())
    if (f.find("fuzz") == std::string::npos) files.push_back(f);
  int compared = 0;
  for (const std::string& f : files)
    for (const char* opts : {"", "-F", "-v", "-g", "--trace-fields", "-v -F"}) {
      EXPECT_EQ(compare(f, opts), "") << f << " [" << opts << "]";
      ++compared;
    }
  EXPECT_GE(compared, 9 * 6);
}

TEST(Evlist, RefusesAsPerf) {
  PK_FIXTURE_OR_SKIP(f, "group.data");
  auto both = run(perfkit_bin() + " evlist -g -v -i " + sh(f));
  EXPECT_EQ(both.status, 129);
  EXPECT_EQ(both.err.substr(0, both.err.find('\n')),
            "  Error: --group option is not compatible with other options");
  TempDir tmp;
  auto missing = run(perfkit_bin() + " evlist -i " + sh(tmp.path("none.data")));
  EXPECT_EQ(missing.status, 255);
  EXPECT_NE(missing.err.find("none.data"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace perfkit::test
