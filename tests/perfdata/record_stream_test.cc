// process_records with read_ahead: the records a sink gets, their order,
// their timestamps, errors and what the reader tells meanwhile are those of
// the reading on the caller's thread.
#include "perfdata/record_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

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
  a.set(kAttrComm);
  return a;
}

struct Recording {
  EventSet events;
  std::vector<std::vector<std::uint8_t>> records;
};

// `rounds` rounds of samples whose times interleave across rounds (as per-cpu
// buffers read one after another make them), a COMM now and then, and with
// `rename_at` >= 0 an EVENT_UPDATE naming event 1 before that round.
Recording make(int rounds, int per_round, int rename_at = -1) {
  Recording b;
  b.events.add(sample_attr(0), {10});
  b.events.add(sample_attr(1), {20});
  std::mt19937 rng(7);
  for (int r = 0; r < rounds; ++r) {
    if (r == rename_at) {
      b.records.push_back(RecordBuilder(kRecordEventUpdate)
                              .u64(record::EventUpdateRecord::kName)
                              .u64(20)
                              .string("renamed")
                              .finish());
    }
    for (int i = 0; i < per_round; ++i) {
      record::Sample s;
      s.ip = 0x400000 + rng() % 4096;
      s.pid = s.tid = 7 + i % 3;
      s.time = 1000 + static_cast<std::uint64_t>(r) * 100 + rng() % 150;  // overlaps the next round
      s.id = i % 2 ? 20 : 10;
      s.cpu = i % 2;
      s.period = 1000 + i;
      b.records.push_back(record::encode_sample(s, b.events[i % 2].layout, kMiscUser, false));
      if (i % 97 == 0) {
        record::SampleId sid;
        sid.pid = sid.tid = 7;
        sid.time = s.time;
        sid.id = 10;
        b.records.push_back(RecordBuilder(kRecordComm)
                                .u32(7)
                                .u32(7)
                                .string("w" + std::to_string(r))
                                .sample_id(sid, b.events[0].layout)
                                .finish());
      }
    }
    b.records.push_back(RecordBuilder(kRecordFinishedRound).finish());
  }
  return b;
}

// The file: every record as it is, or (compressed) the records of each
// round inside COMPRESSED records, cut in the middle of a record.
std::string write(const Recording& b, test::TempDir& dir, bool compressed) {
  auto w = Writer::create(dir.path("rs.data"), WriterOptions{});
  EXPECT_TRUE(w);
  EXPECT_TRUE((*w)->begin(b.events));
  if (!compressed) {
    for (const auto& r : b.records) EXPECT_TRUE((*w)->write(r));
  } else {
    std::vector<std::uint8_t> plain;
    for (const auto& r : b.records) plain.insert(plain.end(), r.begin(), r.end());
    const std::size_t step = 1000;  // not a record boundary
    for (std::size_t at = 0; at < plain.size(); at += step) {
      const std::size_t n = std::min(step, plain.size() - at);
      auto z = zstd_compress(Bytes(plain.data() + at, n), 1);
      EXPECT_TRUE(z);
      EXPECT_TRUE((*w)->write(RecordBuilder(kRecordCompressed).bytes(*z).finish()));
    }
  }
  EXPECT_TRUE((*w)->finish(b.events, {}));
  return test::read_file(dir.path("rs.data"));
}

struct Seen {
  std::vector<std::vector<std::uint8_t>> bytes;
  std::vector<std::uint64_t> stamps;
  std::vector<std::string> names;  // event 1's name as each record came
  std::vector<std::uint64_t> positions;
  Status status = ok();
};

// Reads `file` with process_records; the sink fails at record `fail_at`.
Seen read(const std::string& file, bool ahead, std::size_t fail_at = SIZE_MAX) {
  Seen s;
  auto r = Reader::open_memory(as_bytes(file), "mem");
  EXPECT_TRUE(r) << r.error().message();
  if (!r) return s;
  RecordStreamOptions o;
  o.read_ahead = ahead;
  std::uint64_t pos = 0;
  o.position = &pos;
  Reader& reader = **r;
  s.status = process_records(reader, o, [&](const ReadRecord& rec, std::uint64_t ts) -> Status {
    if (s.bytes.size() == fail_at) return make_error("the sink's own error");
    s.bytes.emplace_back(rec.view.bytes.begin(), rec.view.bytes.end());
    s.stamps.push_back(ts);
    s.names.push_back(reader.events()[1].name);
    s.positions.push_back(pos);
    return ok();
  });
  return s;
}

void expect_same(const Seen& a, const Seen& b) {
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.stamps, b.stamps);
  EXPECT_EQ(a.names, b.names);
  EXPECT_EQ(bool(a.status), bool(b.status));
  if (!a.status && !b.status) {
    EXPECT_EQ(a.status.error().message(), b.status.error().message());
  }
}

// Reader::next_mapped, where it takes a record, takes the one next() would
// (same bytes, place, fields), declines where next() has more to do (events
// not yet named, a COMPRESSED record), and takes most of a plain file.
TEST(Reader, NextMappedReadsWhatNextReads) {
  test::TempDir dir;
  for (bool compressed : {false, true}) {
    const std::string f = write(make(10, 200, 3), dir, compressed);
    auto a = Reader::open_memory(as_bytes(f), "mem");
    auto b = Reader::open_memory(as_bytes(f), "mem");
    ASSERT_TRUE(a && b);
    ReadRecord x, y;
    std::size_t fast = 0, all = 0;
    for (;;) {
      bool got = true;
      if ((*a)->next_mapped(x)) {
        ++fast;
      } else {
        auto g = (*a)->next(x);
        ASSERT_TRUE(g) << g.error().message();
        got = *g;
      }
      auto g = (*b)->next(y);
      ASSERT_TRUE(g) << g.error().message();
      ASSERT_EQ(got, *g);
      if (!got) break;
      ++all;
      EXPECT_EQ(x.view.type, y.view.type);
      EXPECT_EQ(x.view.misc, y.view.misc);
      EXPECT_EQ(x.view.offset, y.view.offset);
      EXPECT_EQ(x.view.swap, y.view.swap);
      EXPECT_TRUE(std::equal(x.view.bytes.begin(), x.view.bytes.end(), y.view.bytes.begin(),
                             y.view.bytes.end()));
      EXPECT_EQ(x.view.trailing.size(), y.view.trailing.size());
      EXPECT_EQ(x.transient, y.transient);
      EXPECT_EQ(x.from_compressed, y.from_compressed);
      EXPECT_EQ(x.file, y.file);
      EXPECT_EQ((*a)->position(), (*b)->position());
    }
    EXPECT_GT(all, 2000u);
    if (compressed)
      EXPECT_EQ(fast, 0u);
    else
      EXPECT_GT(fast, all * 9 / 10);
  }
}

TEST(ReadAhead, SameRecordsInTheSameOrder) {
  test::TempDir dir;
  const std::string f = write(make(40, 500), dir, false);
  Seen one = read(f, false), two = read(f, true);
  ASSERT_TRUE(two.status) << two.status.error().message();
  EXPECT_GT(two.bytes.size(), 20000u);  // several batches
  expect_same(one, two);
  // Positions grow and end at the data's end.
  EXPECT_TRUE(std::is_sorted(two.positions.begin(), two.positions.end()));
  EXPECT_EQ(two.positions.back(), one.positions.back());
}

TEST(ReadAhead, DecompressedRecordsOutliveTheirBuffers) {
  test::TempDir dir;
  const std::string f = write(make(30, 400), dir, true);
  Seen one = read(f, false), two = read(f, true);
  ASSERT_TRUE(two.status) << two.status.error().message();
  EXPECT_GT(two.bytes.size(), 12000u);
  expect_same(one, two);
}

TEST(ReadAhead, TheReaderChangesNothingUnderTheSink) {
  // An EVENT_UPDATE in the data renames event 1: records delivered before it
  // see the old name, those after it the new one, as reading in one thread.
  test::TempDir dir;
  const std::string f = write(make(20, 600, 12), dir, false);
  Seen one = read(f, false), two = read(f, true);
  ASSERT_TRUE(two.status);
  expect_same(one, two);
  EXPECT_EQ(two.names.back(), "renamed");
  EXPECT_NE(two.names.front(), "renamed");
}

TEST(ReadAhead, TheSinksErrorStopsTheReading) {
  test::TempDir dir;
  const std::string f = write(make(40, 500), dir, false);
  for (std::size_t at : {0u, 1u, 2047u, 2048u, 9000u}) {
    Seen one = read(f, false, at), two = read(f, true, at);
    ASSERT_FALSE(two.status);
    EXPECT_EQ(two.status.error().message(), "the sink's own error");
    EXPECT_EQ(two.bytes.size(), at);
    expect_same(one, two);
  }
}

TEST(ReadAhead, AReadErrorComesAfterTheRecordsBeforeIt) {
  test::TempDir dir;
  std::string f = write(make(40, 500), dir, false);
  // A record header in the middle of the data claims 0 bytes.
  auto r = Reader::open_memory(as_bytes(f), "mem");
  ASSERT_TRUE(r);
  ReadRecord rec;
  std::uint64_t at = 0;
  for (int i = 0; i < 15000; ++i) {
    ASSERT_TRUE(*(*r)->next(rec));
    at = rec.view.offset;
  }
  f[at + 6] = 0;
  f[at + 7] = 0;
  Seen one = read(f, false), two = read(f, true);
  ASSERT_FALSE(two.status);
  EXPECT_GT(two.bytes.size(), 10000u);
  expect_same(one, two);
}

}  // namespace
}  // namespace perfkit::perfdata
