// Reads every file of the perf.data corpus: well-formed files without error,
// malformed ones with a clean error; per-type record counts equal perf's.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "abi/names.h"
#include "perfdata/reader.h"
#include "support/test_support.h"

namespace perfkit::perfdata {
namespace {

bool expected_malformed(const std::string& path) {
  return path.find("/quipper-fuzz/") != std::string::npos ||
         path.find("corrupted") != std::string::npos ||
         path.find("invalid_perf.data") != std::string::npos;
}

// Files where perf's counts include records its AUX decoders synthesize.
bool perf_synthesizes(const std::string& path) { return path.find("/etm/") != std::string::npos; }

struct Counts {
  std::map<std::string, std::uint64_t> by_type;
  bool error = false;
  std::string message;
};

Counts read_counts(const std::string& path) {
  Counts c;
  auto r = Reader::open(path);
  if (!r) {
    c.error = true;
    c.message = r.error().message();
    return c;
  }
  ReadRecord rec;
  for (;;) {
    auto got = (*r)->next(rec);
    if (!got) {
      c.error = true;
      c.message = got.error().message();
      return c;
    }
    if (!*got) break;
    auto name = abi::record_type_name(rec.view.type);
    ++c.by_type[name.empty() ? "UNKNOWN" : std::string(name)];
    ++c.by_type["TOTAL"];
  }
  return c;
}

std::map<std::string, std::uint64_t> perf_counts(const std::string& path) {
  auto res = test::run("perf report -D -i " + test::sh(path) + " 2>/dev/null");
  std::map<std::string, std::uint64_t> out;
  std::istringstream in(res.out);
  std::string line;
  bool in_stats = false;
  static const std::regex re(R"(^\s*(\w+) events:\s+(\d+))");
  while (std::getline(in, line)) {
    if (line.starts_with("Aggregated stats")) {
      in_stats = true;
      continue;
    }
    if (!in_stats) continue;
    if (line.ends_with("stats:")) break;
    std::smatch m;
    if (std::regex_search(line, m, re)) out[m[1]] = std::stoull(m[2]);
  }
  return out;
}

TEST(Corpus, EveryFileReadsOrFailsCleanly) {
  PK_SKIP_WITHOUT_CORPUS();
  auto files = test::corpus_files();
  ASSERT_GT(files.size(), 100u);
  for (const auto& f : files) {
    Counts c = read_counts(f);
    if (expected_malformed(f)) continue;  // any clean outcome is fine; ASan checks the rest
    EXPECT_FALSE(c.error) << f << ": " << c.message;
  }
}

TEST(Corpus, RecordCountsMatchPerf) {
  PK_SKIP_WITHOUT_CORPUS();
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const auto& f : test::corpus_files()) {
    if (expected_malformed(f) || perf_synthesizes(f)) continue;
    auto theirs = perf_counts(f);
    if (theirs.empty()) continue;  // perf cannot read it
    Counts ours = read_counts(f);
    ASSERT_FALSE(ours.error) << f << ": " << ours.message;
    EXPECT_EQ(ours.by_type, theirs) << f;
    ++compared;
  }
  EXPECT_GT(compared, 90);
}

}  // namespace
}  // namespace perfkit::perfdata
