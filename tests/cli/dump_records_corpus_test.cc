// `perfkit dump --no-header` against `perf report -D` on every corpus file
// perf reads to the end. Files that differ for a known reason are listed
// below with it; any other difference fails, and so does a listed file that
// stopped differing (so the list stays true).
#include <gtest/gtest.h>

#include <map>

#include "cli/dump_records_compare.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

// Corpus path (relative to the corpus directory) -> why perfkit's dump differs.
const std::map<std::string, std::string>& known_differences() {
  static const std::map<std::string, std::string> m = {
      {"simpleperf/etm/perf_etm.data",
       "perf prints CoreSight ETM decoder output (not implemented)"},
      {"simpleperf/etm/perf_kernel.data",
       "perf prints CoreSight ETM decoder output (not implemented)"},
      {"simpleperf/etm/perf_with_missing_aux_data.data",
       "perf prints CoreSight ETM decoder output (not implemented)"},
      {"simpleperf/etm/perf_with_unformatted_trace.data",
       "perf prints CoreSight ETM decoder output (not implemented)"},
      {"perfparser/probe.data.stream",
       "the tracepoint's name comes from the trace format data (no EVENT_DESC in the stream); "
       "perfkit does not parse trace formats yet"},
      {"quipper-fuzz/clusterfuzz-testcase-minimized-quipper_perf_reader_read_fuzzer-"
       "4883679740166144",
       "malformed: perf prints an 8-byte MMAP2 with fields read past the record"},
      {"quipper-fuzz/poc-15c4696aab8d47509154302563290062647df5c1d0156fb35382f62f22e86511",
       "malformed: perf prints a 16-byte MMAP with fields read past the record"},
      {"quipper-fuzz/poc-7bef7f895afc2ab06ed34b6ab7a961edac3c6ef0ff821a59a54f1e30a1ef3aa7",
       "malformed: perf swaps and prints a 16-byte NAMESPACES with its count read past the "
       "record, from heap memory it never wrote (a pipe's buffer): perf crashes or not as that "
       "memory happens to be"},
  };
  return m;
}

// Whether perf read the whole file: it printed the stats and no error.
bool perf_read_it(const test::RunResult& r) {
  if (r.status != 0 || r.out.find("\nAggregated stats:") == std::string::npos) return false;
  for (const char* e : {"failed to process", "bad event header size",
                        "unexpected end of event stream", "incompatible file format"})
    if (r.err.find(e) != std::string::npos) return false;
  return true;
}

class CorpusDump : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusDump, EqualsPerfReportDumpWherePerfReadsTheFile) {
  PK_SKIP_WITHOUT_PERF();
  const std::string& path = GetParam();
  const std::string rel = path.substr(test::corpus_dir().size() + 1);
  auto theirs = test::perf_report_dump(path);
  if (!perf_read_it(theirs)) GTEST_SKIP() << "perf 6.1 does not read " << rel << " to the end";
  auto ours = test::perfkit_dump(path);
  ASSERT_EQ(ours.status, 0) << rel << ": " << ours.err;
  std::string diff = test::first_mismatch(test::perf_dump_comparable(theirs.out), ours.out);
  auto known = known_differences().find(rel);
  if (known == known_differences().end()) {
    EXPECT_EQ(diff, "") << rel;
  } else {
    EXPECT_NE(diff, "") << rel << " now dumps like perf: remove it from known_differences()";
    if (!diff.empty()) std::cout << "[ known    ] " << rel << ": " << known->second << "\n";
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(test::corpus_dir().size() + 1);
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusDump, ::testing::ValuesIn(test::corpus_files()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusDump);

}  // namespace
}  // namespace perfkit
