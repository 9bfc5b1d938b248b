#include "perfdata/ordered_stream.h"

#include <gtest/gtest.h>

namespace perfkit::perfdata {
namespace {

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
    storage.push_back(std::vector<std::uint8_t>(8, static_cast<std::uint8_t>(ts)));
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
    storage.push_back(std::vector<std::uint8_t>(8, static_cast<std::uint8_t>(i)));
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

TEST(OrderedStream, SinkErrorStopsDelivery) {
  int calls = 0;
  std::vector<std::uint8_t> b(8);
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
