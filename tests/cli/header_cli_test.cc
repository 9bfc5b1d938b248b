// The header printer against live `perf report --header-only [-I]` on the
// fixtures /usr/bin/perf records (file and pipe mode, groups, tracepoints,
// compression): whole outputs, "captured on" included, must be equal.
#include <gtest/gtest.h>

#include <sstream>

#include "abi/names.h"
#include "analysis/header_print.h"
#include "perfdata/features.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "record/encode.h"
#include "support/test_support.h"

namespace perfkit::analysis {
namespace {

const char* const kFixtures[] = {"fp.data",    "dwarf.data",  "nocg.data",       "syswide.data",
                                 "multi.data", "group.data",  "tracepoint.data", "compressed.data",
                                 "pipe.data",  "switch.data", "faults.data"};

std::string perfkit_header(const std::string& path, bool full) {
  test::TempDir dir;
  auto reader = perfdata::Reader::open(path);
  EXPECT_TRUE(reader) << reader.error().message();
  if (!reader) return "";
  auto w = FdWriter::create(dir.path("out"));
  EXPECT_TRUE(w);
  HeaderPrintOptions opts;
  opts.full = full;
  auto st = print_header_info(**reader, opts, *w);
  EXPECT_TRUE(st) << st.error().message();
  EXPECT_TRUE(w->close());
  return test::read_file(dir.path("out"));
}

std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ha = static_cast<bool>(std::getline(a, la));
    bool hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "";
    if (!ha) la = "<end>";
    if (!hb) lb = "<end>";
    if (la != lb) return fmt::format("line {}:\n  perf:    {}\n  perfkit: {}", line, la, lb);
  }
}

class HeaderVsPerf : public testing::TestWithParam<bool> {};

TEST_P(HeaderVsPerf, EveryFixture) {
  PK_SKIP_WITHOUT_PERF();
  const bool full = GetParam();
  int compared = 0;
  for (const char* name : kFixtures) {
    std::string path = test::fixture(name);
    if (path.empty()) continue;
    auto perf = test::run(std::string("perf report --header-only ") + (full ? "-I " : "") + "-i " +
                          test::sh(path) + " 2>/dev/null");
    ASSERT_EQ(perf.status, 0) << name;
    ++compared;
    std::string diff = first_difference(perf.out, perfkit_header(path, full));
    EXPECT_TRUE(diff.empty()) << name << (full ? " -I" : "") << "\n" << diff;
  }
  if (compared == 0) GTEST_SKIP() << "no fixtures (run the make_fixtures test)";
  EXPECT_EQ(compared, static_cast<int>(std::size(kFixtures)));
}

// The corpus files perf reads, with live perf (whose references in the
// corpus are for -I only), the "captured on" line included.
TEST_P(HeaderVsPerf, Corpus) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  const bool full = GetParam();
  int compared = 0, matched = 0;
  for (const auto& path : test::corpus_files()) {
    if (path.find("/quipper-fuzz/") != std::string::npos) continue;
    auto perf = test::run(std::string("perf report --header-only ") + (full ? "-I " : "") + "-i " +
                          test::sh(path) + " 2>/dev/null");
    if (perf.out.find("# ========") == std::string::npos) continue;  // perf cannot read it
    ++compared;
    std::string diff = first_difference(perf.out, perfkit_header(path, full));
    if (diff.empty())
      ++matched;
    else
      ADD_FAILURE() << path << (full ? " -I" : "") << "\n" << diff;
  }
  std::printf("corpus headers identical to live perf%s: %d of %d\n", full ? " -I" : "", matched,
              compared);
  EXPECT_GE(compared, 110);
}

// perfkit dump starts with the header, as perf report --header-only -I prints it.
TEST(DumpHeader, StartsWithPerfsHeader) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : kFixtures) {
    std::string path = test::fixture(name);
    if (path.empty()) continue;
    ++compared;
    auto perf = test::run("perf report --header-only -I -i " + test::sh(path) + " 2>/dev/null");
    auto ours = test::run(test::perfkit_bin() + " dump -i " + test::sh(path));
    ASSERT_EQ(ours.status, 0) << name << ": " << ours.err;
    std::string head = ours.out.substr(0, perf.out.size());
    std::string diff = first_difference(perf.out, head);
    EXPECT_TRUE(diff.empty()) << name << "\n" << diff;
    auto bare = test::run(test::perfkit_bin() + " dump --no-header -i " + test::sh(path));
    EXPECT_EQ(bare.out.find("# ========"), std::string::npos) << name;
  }
  if (compared == 0) GTEST_SKIP() << "no fixtures (run the make_fixtures test)";
}

// A small recording whose feature `bad` has the bytes `bytes` instead.
std::string write_with_bad_feature(const test::TempDir& dir, std::uint32_t bad,
                                   std::vector<std::uint8_t> bytes) {
  using namespace perfkit::abi;
  perfdata::EventSet events;
  EventAttr a;
  a.type = kTypeSoftware;
  a.size = kAttrSizeVer7;
  a.sample_period = 4000;
  a.sample_type = kSampleIp | kSampleTid;
  a.set(kAttrFreq);
  a.set(kAttrSampleIdAll);
  events.add(a, {7});
  perfdata::Features f;
  f.hostname = "h";
  f.osrelease = "6.1";
  f.nrcpus = perfdata::NrCpus{1, 1};
  f.event_desc = perfdata::EventDescList{kAttrSizeVer7, {{a, "cpu-clock", {7}}}};
  f.cache = perfdata::CacheInfo{1, {{1, 64, 64, 8, "Data", "32K", "0"}}};
  f.sample_time = perfdata::SampleTime{1000, 2000};
  f.clock_data = perfdata::ClockData{1, 1, 1700000000000000000ULL, 5000};
  auto sections = perfdata::encode_features(f, false);
  EXPECT_TRUE(sections);
  for (auto& s : *sections)
    if (s.id == bad) s.bytes = std::move(bytes);
  std::string path = dir.path(fmt::format("bad{}.data", bad));
  auto w = perfdata::Writer::create(path, {});
  EXPECT_TRUE(w);
  EXPECT_TRUE((*w)->begin(events));
  EXPECT_TRUE(
      (*w)->write(record::RecordBuilder(kRecordComm, 0, false).u32(1).u32(1).string("x").finish()));
  EXPECT_TRUE((*w)->finish(events, *sections));
  return path;
}

std::vector<std::uint8_t> u32s(std::initializer_list<std::uint32_t> words) {
  std::vector<std::uint8_t> out;
  for (auto w : words) append<std::uint32_t>(out, w);
  return out;
}

// Malformed sections: perfkit warns naming the feature and its offset, then
// prints what perf prints (perf stops processing at such a section). Not
// here: sections shorter than their content, which perf reads on into the
// next section's bytes (see header_print.cc).
TEST(HeaderMalformed, PrintsWhatPerfPrintsAndNamesTheFeature) {
  PK_SKIP_WITHOUT_PERF();
  using namespace perfkit::abi;
  struct Case {
    std::uint32_t id;
    std::vector<std::uint8_t> bytes;
  };
  const Case cases[] = {
      {kFeatHostname, u32s({0x7ffffff0u, 0})},     // a string longer than the file
      {kFeatEventDesc, u32s({100000, 128})},       // more events than bytes
      {kFeatCache, u32s({2, 0})},                  // a version perf does not know
      {kFeatClockData, u32s({7, 1, 0, 0, 0, 0})},  // idem
  };
  test::TempDir dir;
  for (const auto& c : cases) {
    std::string name(feature_name(c.id));
    std::string path = write_with_bad_feature(dir, c.id, c.bytes);
    auto perf = test::run("perf report --header-only -I -i " + test::sh(path) + " 2>/dev/null");
    ASSERT_EQ(perf.status, 0) << name;
    auto reader = perfdata::Reader::open(path);
    ASSERT_TRUE(reader) << reader.error().message();
    auto w = FdWriter::create(dir.path("out"));
    ASSERT_TRUE(w);
    std::vector<std::string> warnings;
    HeaderPrintOptions opts;
    opts.warn = [&](const std::string& m) { warnings.push_back(m); };
    ASSERT_TRUE(print_header_info(**reader, opts, *w));
    ASSERT_TRUE(w->close());
    std::string diff = first_difference(perf.out, test::read_file(dir.path("out")));
    EXPECT_TRUE(diff.empty()) << name << "\n" << diff;
    ASSERT_EQ(warnings.size(), 1u) << name;
    EXPECT_TRUE(warnings[0].starts_with("feature " + name + " at offset 0x")) << warnings[0];
  }
}

INSTANTIATE_TEST_SUITE_P(Info, HeaderVsPerf, testing::Bool(),
                         [](const auto& info) { return info.param ? "ShowInfo" : "Plain"; });

}  // namespace
}  // namespace perfkit::analysis
