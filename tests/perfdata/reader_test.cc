#include "perfdata/reader.h"

#include <gtest/gtest.h>

#include "perfdata/decompressor.h"
#include "perfdata/writer.h"
#include "record/encode.h"
#include "record/records.h"
#include "support/test_support.h"

namespace perfkit::perfdata {
namespace {

using namespace perfkit::abi;
using record::RecordBuilder;

EventAttr sample_attr(std::uint64_t config) {
  EventAttr a;
  a.type = kTypeSoftware;
  a.config = config;
  a.sample_period = 1000;
  a.sample_type = kSampleIp | kSampleTid | kSampleTime | kSampleId | kSampleCpu | kSamplePeriod;
  a.read_format = kFormatId;
  a.set(kAttrSampleIdAll);
  a.set(kAttrMmap);
  a.set(kAttrComm);
  return a;
}

struct Built {
  EventSet events;
  std::vector<std::vector<std::uint8_t>> records;
};

// Two attrs (ids 10,11 and 20), a COMM, an MMAP and samples of both.
Built build(bool swap) {
  Built b;
  b.events.add(sample_attr(0), {10, 11});
  b.events.add(sample_attr(1), {20});
  const auto& l0 = b.events[0].layout;
  record::SampleId sid;
  sid.pid = sid.tid = 7;
  sid.time = 100;
  sid.id = 10;
  b.records.push_back(
      RecordBuilder(kRecordComm, 0, swap).u32(7).u32(7).string("work").sample_id(sid, l0).finish());
  sid.time = 150;
  b.records.push_back(RecordBuilder(kRecordMmap, kMiscUser, swap)
                          .u32(7)
                          .u32(7)
                          .u64(0x400000)
                          .u64(0x1000)
                          .u64(0)
                          .string("/bin/work")
                          .sample_id(sid, l0)
                          .finish());
  for (int i = 0; i < 6; ++i) {
    record::Sample s;
    s.ip = 0x400100 + i;
    s.pid = s.tid = 7;
    s.time = 200 + i;
    s.id = i % 2 ? 20 : 11;
    s.cpu = 1;
    s.period = 1000;
    b.records.push_back(record::encode_sample(s, b.events[i % 2].layout, kMiscUser, swap));
  }
  b.records.push_back(RecordBuilder(kRecordFinishedRound, 0, swap).finish());
  return b;
}

std::vector<FeatureData> some_features() {
  std::vector<std::uint8_t> host;
  append<std::uint32_t>(host, 8);
  append_padded_string(host, "testhost", 8);
  return {FeatureData{kFeatHostname, host}, FeatureData{200, {1, 2, 3}}};
}

class ReadBack : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(ReadBack, WhatTheWriterWroteIsReadBack) {
  auto [pipe, swap] = GetParam();
  test::TempDir dir;
  Built b = build(swap);
  WriterOptions wo;
  wo.pipe = pipe;
  wo.swap = swap;
  auto w = Writer::create(dir.path("out.data"), wo);
  ASSERT_TRUE(w);
  auto feats = some_features();
  ASSERT_TRUE((*w)->begin(
      b.events, pipe ? std::span<const FeatureData>(feats) : std::span<const FeatureData>()));
  for (const auto& r : b.records) ASSERT_TRUE((*w)->write(r));
  ASSERT_TRUE((*w)->finish(b.events, feats));

  auto r = Reader::open(dir.path("out.data"));
  ASSERT_TRUE(r) << r.error().message();
  Reader& rd = **r;
  EXPECT_EQ(rd.is_pipe(), pipe);
  EXPECT_EQ(rd.swapped(), swap);
  std::vector<std::vector<std::uint8_t>> got;
  ReadRecord rec;
  for (;;) {
    auto n = rd.next(rec);
    ASSERT_TRUE(n) << n.error().message();
    if (!*n) break;
    if (rec.view.type == kRecordHeaderAttr || rec.view.type == kRecordHeaderFeature) continue;
    got.emplace_back(rec.view.bytes.begin(), rec.view.bytes.end());
  }
  EXPECT_EQ(got, b.records);
  ASSERT_EQ(rd.events().size(), 2u);
  EventAttr expect = b.events[0].attr;
  expect.size = 128;  // the writer stores VER7 attrs, which perf 6.1 reads
  EXPECT_EQ(rd.events()[0].attr, expect);
  EXPECT_EQ(rd.events()[0].ids, (std::vector<std::uint64_t>{10, 11}));
  EXPECT_EQ(rd.events()[1].ids, (std::vector<std::uint64_t>{20}));
  auto host = rd.feature(kFeatHostname);
  ASSERT_TRUE(host);
  EXPECT_EQ(c_string(host->data.subspan(4)), "testhost");
  auto unknown = rd.feature(200);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(std::vector<std::uint8_t>(unknown->data.begin(), unknown->data.end()),
            (std::vector<std::uint8_t>{1, 2, 3}));
}

INSTANTIATE_TEST_SUITE_P(FileAndPipeBothOrders, ReadBack,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

TEST(Reader, AttributesRecordsById) {
  Built b = build(false);
  for (const auto& bytes : b.records) {
    record::RecordView v = record::view_header(bytes.data(), false);
    v.bytes = bytes;
    if (v.type == kRecordFinishedRound) continue;
    int idx = b.events.attr_index(v);
    ASSERT_GE(idx, 0);
    if (v.type == kRecordSample) {
      std::uint64_t id;
      ASSERT_TRUE(b.events.record_id(v, id));
      EXPECT_EQ(idx, id == 20 ? 1 : 0);
    }
  }
}

std::string write_file_mode(const Built& b, test::TempDir& dir, const std::string& name) {
  auto w = Writer::create(dir.path(name), WriterOptions{});
  EXPECT_TRUE(w);
  EXPECT_TRUE((*w)->begin(b.events));
  for (const auto& r : b.records) EXPECT_TRUE((*w)->write(r));
  auto f = some_features();
  EXPECT_TRUE((*w)->finish(b.events, f));
  return test::read_file(dir.path(name));
}

Status read_all(const std::string& bytes) {
  auto r = Reader::open_memory(as_bytes(bytes), "mem");
  if (!r) return r.error();
  ReadRecord rec;
  for (;;) {
    PK_ASSIGN(bool got, (*r)->next(rec));
    if (!got) return ok();
  }
}

std::uint64_t u64_at(const std::string& s, std::size_t off) {
  return load<std::uint64_t>(reinterpret_cast<const std::uint8_t*>(s.data()) + off, false);
}
void set_u64(std::string& s, std::size_t off, std::uint64_t v) {
  store<std::uint64_t>(reinterpret_cast<std::uint8_t*>(s.data()) + off, v, false);
}

TEST(ReaderErrors, TruncatedFile) {
  test::TempDir dir;
  std::string f = write_file_mode(build(false), dir, "a");
  auto st = read_all(f.substr(0, u64_at(f, 0x28) + 40));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("truncated"), std::string::npos) << st.error().message();
}

TEST(ReaderErrors, ZeroRecordSize) {
  test::TempDir dir;
  std::string f = write_file_mode(build(false), dir, "a");
  std::size_t data = u64_at(f, 0x28);
  f[data + 6] = 0;
  f[data + 7] = 0;
  auto st = read_all(f);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find(fmt::format("offset {:#x}: record size 0", data)),
            std::string::npos)
      << st.error().message();
}

TEST(ReaderErrors, RecordPastEndOfData) {
  test::TempDir dir;
  std::string f = write_file_mode(build(false), dir, "a");
  std::size_t data = u64_at(f, 0x28);
  f[data + 6] = static_cast<char>(0xf0);  // first record claims 0xff?? bytes
  f[data + 7] = static_cast<char>(0xff);
  auto st = read_all(f);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("runs past the end of the data section"), std::string::npos)
      << st.error().message();
  EXPECT_NE(st.error().message().find(fmt::format("offset {:#x}", data)), std::string::npos);
}

TEST(ReaderErrors, AttrSizeNonsense) {
  test::TempDir dir;
  std::string f = write_file_mode(build(false), dir, "a");
  set_u64(f, 0x10, 3);
  auto st = read_all(f);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("attr_size 3 makes no sense"), std::string::npos)
      << st.error().message();
}

TEST(ReaderErrors, FeatureSectionOutsideFile) {
  test::TempDir dir;
  std::string f = write_file_mode(build(false), dir, "a");
  std::size_t table = u64_at(f, 0x28) + u64_at(f, 0x30);
  set_u64(f, table, f.size() + 100);  // HOSTNAME section offset
  auto st = read_all(f);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("feature HOSTNAME section"), std::string::npos)
      << st.error().message();
}

TEST(ReaderErrors, BadMagic) {
  std::string f(200, 'x');
  auto st = read_all(f);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("not a perf.data file"), std::string::npos);
}

TEST(ReaderErrors, ShortSample) {
  test::TempDir dir;
  Built b = build(false);
  // A SAMPLE shorter than its sample_type needs reads but fails to decode.
  b.records.push_back(RecordBuilder(kRecordSample, kMiscUser).u64(1).finish());
  std::string f = write_file_mode(b, dir, "a");
  auto r = Reader::open_memory(as_bytes(f), "mem");
  ASSERT_TRUE(r);
  ReadRecord rec;
  int samples_bad = 0;
  while (*(*r)->next(rec)) {
    if (rec.view.type != kRecordSample) continue;
    int idx = (*r)->events().attr_index(rec.view);
    if (idx < 0) {
      ++samples_bad;
      continue;
    }
    record::Sample s;
    if (!record::decode_sample(rec.view, (*r)->events()[idx].layout, s)) ++samples_bad;
  }
  EXPECT_EQ(samples_bad, 1);
}

TEST(PipeStream, TrailingBytesWarnAndEndCleanly) {
  test::TempDir dir;
  Built b = build(false);
  WriterOptions wo;
  wo.pipe = true;
  auto w = Writer::create(dir.path("p"), wo);
  ASSERT_TRUE((*w)->begin(b.events));
  for (const auto& r : b.records) ASSERT_TRUE((*w)->write(r));
  ASSERT_TRUE((*w)->finish(b.events, {}));
  std::string f = test::read_file(dir.path("p")) + "xyz";
  std::vector<std::string> warnings;
  ReaderOptions ro;
  ro.warn = [&](const std::string& m) { warnings.push_back(m); };
  auto r = Reader::open_memory(as_bytes(f), "mem", ro);
  ASSERT_TRUE(r);
  ReadRecord rec;
  int n = 0;
  for (;;) {
    auto got = (*r)->next(rec);
    ASSERT_TRUE(got);
    if (!*got) break;
    ++n;
  }
  EXPECT_EQ(n, 2 + static_cast<int>(b.records.size()));  // + 2 HEADER_ATTR
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("3 trailing bytes"), std::string::npos) << warnings[0];
}

TEST(PipeStream, ReadsFromAFileDescriptor) {
  test::TempDir dir;
  Built b = build(false);
  WriterOptions wo;
  wo.pipe = true;
  auto w = Writer::create(dir.path("p"), wo);
  ASSERT_TRUE((*w)->begin(b.events));
  for (const auto& r : b.records) ASSERT_TRUE((*w)->write(r));
  ASSERT_TRUE((*w)->finish(b.events, {}));
  FILE* f = std::fopen(dir.path("p").c_str(), "rb");
  auto r = Reader::open_fd(fileno(f), "fd");
  ASSERT_TRUE(r) << r.error().message();
  ReadRecord rec;
  int n = 0;
  while (*(*r)->next(rec)) {
    EXPECT_TRUE(rec.transient);
    ++n;
  }
  EXPECT_EQ(n, 2 + static_cast<int>(b.records.size()));
  EXPECT_EQ((*r)->events().size(), 2u);
  std::fclose(f);
}

// perf compresses a stream: records can straddle two COMPRESSED records.
TEST(Compressed, RecordsSpanningChunksAreReassembled) {
  Built b = build(false);
  std::vector<std::uint8_t> plain;
  for (const auto& r : b.records) plain.insert(plain.end(), r.begin(), r.end());
  std::size_t cut = b.records[0].size() + 13;  // inside the second record
  test::TempDir dir;
  auto w = Writer::create(dir.path("c"), WriterOptions{});
  ASSERT_TRUE((*w)->begin(b.events));
  for (auto [from, to] : {std::pair<std::size_t, std::size_t>{0, cut}, {cut, plain.size()}}) {
    auto z = zstd_compress(Bytes(plain.data() + from, to - from), 3);
    ASSERT_TRUE(z);
    auto rec = RecordBuilder(kRecordCompressed).bytes(*z).finish();  // unpadded, as perf writes it
    ASSERT_TRUE((*w)->write(rec));
  }
  ASSERT_TRUE((*w)->finish(b.events, {}));
  auto r = Reader::open(dir.path("c"));
  ASSERT_TRUE(r);
  std::vector<std::vector<std::uint8_t>> inner;
  int compressed = 0;
  ReadRecord rec;
  for (;;) {
    auto got = (*r)->next(rec);
    ASSERT_TRUE(got) << got.error().message();
    if (!*got) break;
    if (rec.view.type == kRecordCompressed) {
      ++compressed;
      continue;
    }
    EXPECT_TRUE(rec.from_compressed);
    inner.emplace_back(rec.view.bytes.begin(), rec.view.bytes.end());
  }
  EXPECT_EQ(compressed, 2);
  EXPECT_EQ(inner, b.records);
}

TEST(Compressed, CorruptDataIsAnError) {
  Built b = build(false);
  test::TempDir dir;
  auto w = Writer::create(dir.path("c"), WriterOptions{});
  ASSERT_TRUE((*w)->begin(b.events));
  auto rec = RecordBuilder(kRecordCompressed).u64(0x1234567890abcdefULL).u64(42).finish();
  ASSERT_TRUE((*w)->write(rec));
  ASSERT_TRUE((*w)->finish(b.events, {}));
  auto r = Reader::open(dir.path("c"));
  ASSERT_TRUE(r);
  ReadRecord out;
  auto got = (*r)->next(out);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message().find("does not decompress"), std::string::npos);
}

}  // namespace
}  // namespace perfkit::perfdata
