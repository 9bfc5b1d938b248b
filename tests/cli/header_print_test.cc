// The header printer against perf 6.1's own output: every corpus file whose
// `perf report --header-only -I` reference is a header must print the same
// text (but for "captured on", the file's mtime when perf ran); the plain
// --header-only variant and the printer's pieces are checked on their own.
#include "dump/header_print.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "perfdata/reader.h"
#include "support/test_support.h"

namespace perfkit::dump {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// perf's reference: stdout and stderr together. Its lines not starting with
// '#' are perf's messages on stderr ("Failed to process auxtrace index").
std::vector<std::string> header_lines(const std::string& text) {
  std::vector<std::string> out;
  for (auto& l : lines_of(text))
    if (l.starts_with("#") && !l.starts_with("# captured on")) out.push_back(l);
  return out;
}

// Prints the header of `path` with the library, as text.
std::string print_header(const std::string& path, bool full, std::string* error = nullptr) {
  test::TempDir dir;
  std::string out_path = dir.path("out.txt");
  auto reader = perfdata::Reader::open(path);
  if (!reader) {
    if (error) *error = reader.error().message();
    return "";
  }
  auto w = FdWriter::create(out_path);
  EXPECT_TRUE(w);
  HeaderPrintOptions opts;
  opts.full = full;
  auto st = print_header_info(**reader, opts, *w);
  if (!st && error) *error = st.error().message();
  EXPECT_TRUE(w->close());
  return test::read_file(out_path);
}

std::string first_difference(const std::vector<std::string>& want,
                             const std::vector<std::string>& got) {
  for (std::size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    std::string w = i < want.size() ? want[i] : "<end>";
    std::string g = i < got.size() ? got[i] : "<end>";
    if (w != g) return fmt::format("line {}:\n  perf:    {}\n  perfkit: {}", i + 1, w, g);
  }
  return "";
}

TEST(HeaderPrintCorpus, EveryHeaderMatchesPerf) {
  PK_SKIP_WITHOUT_CORPUS();
  const std::string ref_dir = test::corpus_dir() + "/_reference-perf-6.1/";
  int compared = 0, matched = 0;
  std::vector<std::string> mismatches;
  for (const auto& file : test::corpus_files()) {
    std::string rel = file.substr(test::corpus_dir().size() + 1);
    std::string ref_path = ref_dir + rel + ".header-only-I.txt";
    if (!fs::exists(ref_path)) continue;
    auto want = header_lines(test::read_file(ref_path));
    if (want.empty()) continue;  // perf could not read the file
    ++compared;
    std::string error;
    auto got = header_lines(print_header(file, true, &error));
    std::string diff = first_difference(want, got);
    if (diff.empty()) {
      ++matched;
    } else {
      mismatches.push_back(rel + " " + error + "\n" + diff);
    }
  }
  std::printf("corpus headers identical to perf's: %d of %d\n", matched, compared);
  for (const auto& m : mismatches) ADD_FAILURE() << m;
  EXPECT_GE(compared, 110);
}

TEST(HeaderPrint, NormalizesCpuListsAsPerfCpuMaps) {
  EXPECT_EQ(normalize_cpu_list("0-3"), "0-3");
  EXPECT_EQ(normalize_cpu_list("3,0,1,2,8"), "0-3,8");
  EXPECT_EQ(normalize_cpu_list("0-1,1-2"), "0-2");
  EXPECT_EQ(normalize_cpu_list("5"), "5");
  EXPECT_EQ(normalize_cpu_list(""), "-1");
  EXPECT_EQ(normalize_cpu_list("1,99999999999999999999999"), "1");
}

TEST(HeaderPrint, AttrFieldsInPerfsOrderAndSpelling) {
  abi::EventAttr a;
  a.type = 1;
  a.size = 128;
  a.config = 9;
  a.sample_period = 4000;
  a.sample_type =
      abi::kSampleIp | abi::kSampleIdentifier | abi::kSampleRegsIntr | abi::kSampleTransaction;
  a.read_format = abi::kFormatId | abi::kFormatLost;
  a.set(abi::kAttrDisabled);
  a.set_precise_ip(3);
  a.config1 = 0x10;
  a.branch_sample_type = abi::kBranchAny | abi::kBranchPrivSave;
  a.clockid = -1;
  std::string s;
  for_each_attr_field(
      a, [&](std::string_view n, std::string_view v) { s += fmt::format(", {} = {}", n, v); });
  EXPECT_EQ(s,
            ", type = 1, size = 128, config = 0x9, { sample_period, sample_freq } = 4000, "
            "sample_type = IP|IDENTIFIER|REGS_INTR, read_format = ID|LOST, disabled = 1, "
            "precise_ip = 3, { bp_addr, config1 } = 0x10, branch_sample_type = ANY|PRIV_SAVE, "
            "clockid = -1");
}

TEST(HeaderPrint, UnknownBitsRepeatTheLastValueAsPerfDoes) {
  abi::EventAttr a;
  a.size = 64;
  a.sample_type = abi::kSampleTransaction;  // perf's table lacks TRANSACTION
  std::string s;
  for_each_attr_field(
      a, [&](std::string_view n, std::string_view v) { s += fmt::format(", {} = {}", n, v); });
  EXPECT_EQ(s, ", size = 64, sample_type = 64");
}

}  // namespace
}  // namespace perfkit::dump
