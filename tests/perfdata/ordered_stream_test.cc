#include "perfdata/ordered_stream.h"

#include <gtest/gtest.h>

namespace perfkit::perfdata {
namespace {

// An 8-byte record (a header alone) of type `tag`: the queue reads a
// record's header back from its bytes.
std::vector<std::uint8_t> header_record(std::uint8_t tag) { return {tag, 0, 0, 0, 0, 0, 8, 0}; }

struct Harness {
  std::vector<std::uint64_t> delivered;
  std::vector<std::vector<std::uint8_t>> storage;
  OrderedStream stream{[this](const ReadRecord& r, std::uint64_t ts) -> Status {
    delivered.push_back(ts);
    EXPECT_EQ(r.view.bytes.size(), 8u);
    EXPECT_EQ(r.view.bytes[0], static_cast<std::uint8_t>(ts));  // the copy holds the bytes
    return ok();
  }};

  void push(std::uint64_t ts, bool transient = false) {
    storage.push_back(header_record(static_cast<std::uint8_t>(ts)));
    ReadRecord r;
    r.view.bytes = storage.back();
    r.transient = transient;
    ASSERT_TRUE(stream.push(r, ts));
    if (transient) storage.back().assign(8, 0xee);  // the source buffer is reused
  }
};

TEST(OrderedStream, FlushesUpToThePreviousRoundsMaximum) {
  Harness h;
  for (std::uint64_t t : {10, 30, 20}) h.push(t);
  ASSERT_TRUE(h.stream.round());  // first round: nothing can be delivered yet
  EXPECT_TRUE(h.delivered.empty());
  for (std::uint64_t t : {25, 40, 15}) h.push(t);
  ASSERT_TRUE(h.stream.round());  // delivers <= 30 (max of the first round)
  EXPECT_EQ(h.delivered, (std::vector<std::uint64_t>{10, 15, 20, 25, 30}));
  ASSERT_TRUE(h.stream.finish());
  EXPECT_EQ(h.delivered, (std::vector<std::uint64_t>{10, 15, 20, 25, 30, 40}));
}

TEST(OrderedStream, NoTimestampGoesStraightThrough) {
  Harness h;
  h.push(50);
  h.push(0);
  EXPECT_EQ(h.delivered, (std::vector<std::uint64_t>{0}));
  ASSERT_TRUE(h.stream.finish());
  EXPECT_EQ(h.delivered, (std::vector<std::uint64_t>{0, 50}));
}

TEST(OrderedStream, EqualTimestampsKeepArrivalOrder) {
  std::vector<int> order;
  std::vector<std::vector<std::uint8_t>> storage;
  OrderedStream s([&](const ReadRecord& r, std::uint64_t) -> Status {
    order.push_back(r.view.bytes[0]);
    return ok();
  });
  for (int i = 0; i < 5; ++i) {
    storage.push_back(header_record(static_cast<std::uint8_t>(i)));
    ReadRecord r;
    r.view.bytes = storage.back();
    ASSERT_TRUE(s.push(r, i == 2 ? 5 : 7));
  }
  ASSERT_TRUE(s.finish());
  EXPECT_EQ(order, (std::vector<int>{2, 0, 1, 3, 4}));
}

TEST(OrderedStream, TransientRecordsAreCopied) {
  Harness h;
  for (std::uint64_t t = 200; t > 100; --t) h.push(t, true);
  ASSERT_TRUE(h.stream.finish());
  ASSERT_EQ(h.delivered.size(), 100u);
  EXPECT_TRUE(std::is_sorted(h.delivered.begin(), h.delivered.end()));
}

TEST(OrderedStream, RoundWithEmptyQueueKeepsTheLimit) {
  Harness h;
  ASSERT_TRUE(h.stream.round());
  h.push(5);
  ASSERT_TRUE(h.stream.round());  // limit was 0: nothing
  EXPECT_TRUE(h.delivered.empty());
  h.push(3);
  ASSERT_TRUE(h.stream.round());  // limit 5
  EXPECT_EQ(h.delivered, (std::vector<std::uint64_t>{3, 5}));
  h.push(4);  // below what was delivered: counted as out of order
  EXPECT_EQ(h.stream.out_of_order(), 1u);
  ASSERT_TRUE(h.stream.finish());
  EXPECT_EQ(h.delivered.back(), 4u);
}

// A queued record comes out as it went in: its header (read back from its
// bytes, in either byte order), offset, event, file and origin.
TEST(OrderedStream, DeliversTheRecordAsQueued) {
  std::vector<ReadRecord> out;
  OrderedStream s([&](const ReadRecord& r, std::uint64_t) -> Status {
    out.push_back(r);
    return ok();
  });
  const std::vector<std::uint8_t> le = {9, 0, 0, 0, 2, 0, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<std::uint8_t> be = {0, 0, 0, 9, 0, 2, 0, 16, 1, 2, 3, 4, 5, 6, 7, 8};
  ReadRecord a;
  a.view = record::view_header(le.data(), false);
  a.view.bytes = le;
  a.view.offset = 0x1234;
  a.attr = 3;
  a.file = 2;
  ReadRecord b;
  b.view = record::view_header(be.data(), true);
  b.view.bytes = be;
  b.view.offset = 0x5678;
  b.attr = 1;
  b.from_compressed = true;
  b.transient = true;
  ASSERT_TRUE(s.push(b, 20));
  ASSERT_TRUE(s.push(a, 10));
  ASSERT_TRUE(s.finish());
  ASSERT_EQ(out.size(), 2u);
  for (const ReadRecord& r : out) {
    EXPECT_EQ(r.view.type, 9u);
    EXPECT_EQ(r.view.misc, 2u);
    EXPECT_EQ(r.view.size, 16u);
    EXPECT_EQ(r.view.bytes.size(), 16u);
    EXPECT_EQ(r.view.bytes[8], 1u);
    EXPECT_TRUE(r.view.trailing.empty());
    EXPECT_FALSE(r.transient);
  }
  EXPECT_FALSE(out[0].view.swap);
  EXPECT_EQ(out[0].view.offset, 0x1234u);
  EXPECT_EQ(out[0].attr, 3);
  EXPECT_EQ(out[0].file, 2u);
  EXPECT_FALSE(out[0].from_compressed);
  EXPECT_TRUE(out[1].view.swap);
  EXPECT_EQ(out[1].view.offset, 0x5678u);
  EXPECT_EQ(out[1].attr, 1);
  EXPECT_TRUE(out[1].from_compressed);
  EXPECT_NE(out[1].view.bytes.data(), be.data());  // a copy
  // Trailing bytes belong to perf's own records, which are never queued.
  ReadRecord t = a;
  t.view.trailing = le;
  EXPECT_FALSE(s.push(t, 30));
}

TEST(OrderedStream, SinkErrorStopsDelivery) {
  int calls = 0;
  std::vector<std::uint8_t> b = header_record(0);
  OrderedStream s([&](const ReadRecord&, std::uint64_t) -> Status {
    ++calls;
    return make_error("stop");
  });
  ReadRecord r;
  r.view.bytes = b;
  ASSERT_TRUE(s.push(r, 1));
  ASSERT_TRUE(s.push(r, 2));
  auto st = s.finish();
  ASSERT_FALSE(st);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace perfkit::perfdata
