// The header features of every corpus file and fixture: each section perf
// wrote parses and encodes back to the same bytes.
#include <gtest/gtest.h>

#include "abi/names.h"
#include "perfdata/features.h"
#include "perfdata/reader.h"
#include "support/test_support.h"

namespace perfkit::perfdata {
namespace {

bool expected_malformed(const std::string& path) {
  return path.find("/quipper-fuzz/") != std::string::npos ||
         path.find("corrupted") != std::string::npos ||
         path.find("invalid_perf.data") != std::string::npos;
}

// Files written by other tools than perf, whose sections need not be in
// perf's layout: simpleperf, and quipper's serializer (perf_data_converter),
// which pads strings to 8 bytes instead of 64.
bool written_by_perf(const std::string& path) {
  for (const char* other : {"/simpleperf/", "/autofdo/ro_sample.perf", "/autofdo/test.lbr",
                            "/quipper/perf.data.weight_struct"})
    if (path.find(other) != std::string::npos) return false;
  return true;
}

// Sections perf 6.1 cannot process either: an empty CPUDESC section (perf
// prints "(null)"), simpleperf's own AUXTRACE layout ("Failed to process
// auxtrace index").
bool perf_fails_too(const std::string& path, std::uint32_t id) {
  if (id == abi::kFeatCpudesc) return path.ends_with("/perf.data.armv7.perf_3.14-3.8");
  if (id == abi::kFeatAuxtrace) return path.find("/simpleperf/etm/") != std::string::npos;
  return false;
}

struct Tally {
  int sections = 0;
  int exact = 0;
  std::vector<std::string> failures;
};

void check_file(const std::string& path, Tally& t) {
  auto r = Reader::open(path);
  if (!r) return;
  ReadRecord rec;
  for (;;) {  // pipe mode: features arrive as records
    auto got = (*r)->next(rec);
    if (!got || !*got) break;
  }
  Features f;
  for (const auto& blob : (*r)->features()) {
    ++t.sections;
    auto name = std::string(abi::feature_name(blob.id));
    auto st = parse_feature(blob.id, blob.data, (*r)->swapped(), blob.offset, f);
    if (!st) {
      if (!perf_fails_too(path, blob.id)) t.failures.push_back(path + ": " + st.error().message());
      continue;
    }
    auto back = encode_feature(f, blob.id, (*r)->swapped());
    if (!back) {
      t.failures.push_back(path + ": " + name + ": " + back.error().message());
      continue;
    }
    if (std::equal(back->begin(), back->end(), blob.data.begin(), blob.data.end())) {
      ++t.exact;
    } else if (written_by_perf(path)) {
      std::size_t i = 0;
      while (i < back->size() && i < blob.data.size() && (*back)[i] == blob.data[i]) ++i;
      t.failures.push_back(fmt::format("{}: {} ({} bytes, re-encoded {}) differs at +{:#x}", path,
                                       name, blob.data.size(), back->size(), i));
    }
  }
}

TEST(FeaturesCorpus, PerfWrittenSectionsRoundTrip) {
  PK_SKIP_WITHOUT_CORPUS();
  Tally t;
  for (const auto& f : test::corpus_files())
    if (!expected_malformed(f)) check_file(f, t);
  std::printf("feature sections: %d, byte-exact after parse+encode: %d\n", t.sections, t.exact);
  for (std::size_t i = 0; i < t.failures.size() && i < 40; ++i) ADD_FAILURE() << t.failures[i];
  EXPECT_TRUE(t.failures.empty()) << t.failures.size() << " sections differ";
  EXPECT_GT(t.sections, 1000);
}

TEST(FeaturesCorpus, FixturesRoundTrip) {
  Tally t;
  for (const char* name :
       {"fp.data", "dwarf.data", "nocg.data", "syswide.data", "multi.data", "group.data",
        "tracepoint.data", "compressed.data", "pipe.data", "switch.data", "faults.data"}) {
    auto p = test::fixture(name);
    if (!p.empty()) check_file(p, t);
  }
  if (t.sections == 0) GTEST_SKIP() << "no fixtures (run the make_fixtures test)";
  for (const auto& f : t.failures) ADD_FAILURE() << f;
  EXPECT_EQ(t.exact, t.sections);
}

}  // namespace
}  // namespace perfkit::perfdata
