// perf.data directories (perf record --threads): the `data` file's header
// and records, then its data.* files, read in perf's turns of 2 MiB each and
// delivered in time order. A directory built here gives two data files
// whose samples all carry one timestamp, more than a turn each, so that the
// order perf script prints them in is the order the files were read in:
// perfkit must print the same.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "abi/perf_event.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "support/test_support.h"

namespace perfkit::test {
namespace {

// nocg.data's samples: IP, TID, TIME, PERIOD (8 bytes each after the header).
constexpr std::size_t kTimeAt = 8 + 8 + 8, kPeriodAt = kTimeAt + 8, kSampleSize = kPeriodAt + 8;

void put64(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v) {
  std::memcpy(b.data() + at, &v, 8);
}

// Writes `dir` from nocg.data: `data` with its records and a DIR_FORMAT
// (version 1), and data.0/data.1 with `per_file` samples each, copies of its
// samples at one time after all of them, their periods telling file and place.
void write_dir(const std::string& from, const std::string& dir, std::size_t per_file) {
  auto r = perfdata::Reader::open(from);
  ASSERT_TRUE(r) << r.error().message();
  std::filesystem::create_directory(dir);
  auto out = perfdata::Writer::create(dir + "/data", {});
  ASSERT_TRUE(out) << out.error().message();
  ASSERT_TRUE((*out)->begin((*r)->events()));
  std::vector<std::vector<std::uint8_t>> samples;
  std::uint64_t last = 0;
  perfdata::ReadRecord rec;
  while (true) {
    auto got = (*r)->next(rec);
    ASSERT_TRUE(got) << got.error().message();
    if (!*got) break;
    const auto& v = rec.view;
    if (v.type == abi::kRecordSample) {
      ASSERT_EQ(v.bytes.size(), kSampleSize);
      samples.emplace_back(v.bytes.begin(), v.bytes.end());
      std::uint64_t t;
      std::memcpy(&t, v.bytes.data() + kTimeAt, 8);
      last = std::max(last, t);
    }
    if (v.type >= abi::kRecordUserTypeStart && v.type != abi::kRecordFinishedRound) continue;
    ASSERT_TRUE((*out)->write(v.bytes, v.trailing));
  }
  ASSERT_FALSE(samples.empty());
  std::vector<perfdata::FeatureData> feats;
  for (const auto& f : (*r)->features())
    if (f.id != abi::kFeatDirFormat) feats.push_back({f.id, {f.data.begin(), f.data.end()}});
  std::vector<std::uint8_t> version(8);
  put64(version, 0, 1);
  feats.push_back({abi::kFeatDirFormat, version});
  ASSERT_TRUE((*out)->finish((*r)->events(), feats));
  for (std::uint64_t file = 0; file < 2; ++file) {
    std::vector<std::uint8_t> bytes;
    bytes.reserve(per_file * kSampleSize);
    for (std::size_t i = 0; i < per_file; ++i) {
      std::vector<std::uint8_t> s = samples[i % samples.size()];
      put64(s, kTimeAt, last + 1000);
      put64(s, kPeriodAt, (file + 1) * 1000000 + i);
      bytes.insert(bytes.end(), s.begin(), s.end());
    }
    write_file(dir + "/data." + std::to_string(file), std::string(bytes.begin(), bytes.end()));
  }
}

TEST(DirFormat, TurnsAndTiesAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "nocg.data");
  TempDir tmp;
  const std::string dir = tmp.path("threads.data");
  // 2.4 MiB a file: each is read in two turns
  write_dir(f, dir, (12 << 20) / 5 / kSampleSize);
  if (HasFatalFailure()) return;
  int compared = 0;
  for (const char* args : {"-F period,ip,sym", "-F time,period --show-task-events"}) {
    const std::string in = " script -i " + sh(dir) + " " + args;
    auto want = run("perf" + in);
    auto got = run(sh(perfkit_bin()) + in);
    ASSERT_EQ(want.status, 0) << want.err;
    ASSERT_EQ(got.status, 0) << got.err;
    // both files' samples, interleaved by turns
    ASSERT_NE(want.out.find(" 1000000 "), std::string::npos) << args;
    ASSERT_NE(want.out.find(" 2000000 "), std::string::npos) << args;
    EXPECT_TRUE(want.out == got.out) << args << "\n" << first_difference(got.out, want.out);
    ++compared;
  }
  // the header reads the directory's version; -D names each record's file
  for (const char* args : {"--header-only", "-D"}) {
    const std::string in = " report -i " + sh(dir) + " " + args;
    auto want = run("perf" + in);
    auto got = run(sh(perfkit_bin()) + in);
    EXPECT_TRUE(want.out == got.out) << args << "\n" << first_difference(got.out, want.out);
    ++compared;
  }
  EXPECT_EQ(compared, 4);
}

// script --per-event-dump names its files after DIR/data, as perf does.
TEST(DirFormat, PerEventDumpFilesAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "threads.data");
  TempDir tmp;
  int compared = 0;
  for (const char* who : {"perf", "perfkit"}) {
    const std::string dir = tmp.path(who);
    std::filesystem::copy(f, dir);
    const std::string tool = std::string(who) == "perf" ? "perf" : sh(perfkit_bin());
    auto r = run(tool + " script --per-event-dump -i " + sh(dir));
    ASSERT_EQ(r.status, 0) << who << ": " << r.err;
  }
  for (const auto& e : std::filesystem::directory_iterator(tmp.path("perf"))) {
    const std::string name = e.path().filename().string();
    if (!name.ends_with(".dump")) continue;
    const std::string ours = tmp.path("perfkit") + "/" + name;
    ASSERT_TRUE(std::filesystem::exists(ours)) << name;
    EXPECT_TRUE(read_file(e.path().string()) == read_file(ours)) << name;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

// Without DIR_FORMAT (or at version 0) the data.* files are not perf's:
// only `data` is read. A corrupt data file is an error naming it.
TEST(DirFormat, DataFilesNeedTheVersionAndAreChecked) {
  PK_FIXTURE_OR_SKIP(f, "nocg.data");
  TempDir tmp;
  const std::string dir = tmp.path("d");
  std::filesystem::create_directory(dir);
  std::filesystem::copy_file(f, dir + "/data");
  write_file(dir + "/data.0", std::string(40, '\xff'));
  auto single = run(sh(perfkit_bin()) + " script -F period -i " + sh(f));
  auto alone = run(sh(perfkit_bin()) + " script -F period -i " + sh(dir));
  ASSERT_EQ(alone.status, 0) << alone.err;
  EXPECT_EQ(alone.out, single.out);
  if (have_perf()) EXPECT_EQ(alone.out, run("perf script -F period -i " + sh(dir)).out);

  const std::string v1 = tmp.path("v1");
  write_dir(f, v1, 10);
  if (HasFatalFailure()) return;
  write_file(v1 + "/data.1", std::string(12, '\x01'));  // a record header of size 0x0101
  auto bad = run(sh(perfkit_bin()) + " script -i " + sh(v1));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find(v1 + "/data.1"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find('\n'), bad.err.size() - 1) << bad.err;
}

}  // namespace
}  // namespace perfkit::test
