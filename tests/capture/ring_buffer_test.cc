// RingBuffer and AuxBuffer: the head/tail protocol and wrap-around on memory
// the test fills itself (as the kernel would), then on a real perf event.
#include "capture/ring_buffer.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <set>

#include "abi/perf_event.h"
#include "capture/perf_event.h"

namespace perfkit::capture {
namespace {

using namespace perfkit::abi;

// A fake mmap area: one user page and a data ring, written like the kernel.
class FakeRing {
 public:
  explicit FakeRing(std::size_t data_size) : mem_(kPage + data_size, 0), size_(data_size) {}
  RingBuffer buffer() { return RingBuffer::over(mem_.data(), kPage, size_); }

  // Appends a record of `size` bytes (type, then a fill byte) at head.
  void produce(std::uint32_t type, std::uint16_t size, std::uint8_t fill) {
    std::vector<std::uint8_t> rec(size, fill);
    store<std::uint32_t>(rec.data(), type, false);
    store<std::uint16_t>(rec.data() + 4, 0, false);
    store<std::uint16_t>(rec.data() + 6, size, false);
    for (std::size_t i = 0; i < size; ++i) data()[(head_ + i) % size_] = rec[i];
    head_ += size;
    __atomic_store_n(reinterpret_cast<std::uint64_t*>(mem_.data() + user_page::kDataHead), head_,
                     __ATOMIC_RELEASE);
  }
  // Writes a record as a write_backward buffer does: before the head.
  void produce_backward(std::uint32_t type, std::uint16_t size) {
    head_ -= size;
    std::vector<std::uint8_t> rec(size, 0);
    store<std::uint32_t>(rec.data(), type, false);
    store<std::uint16_t>(rec.data() + 6, size, false);
    for (std::size_t i = 0; i < size; ++i) data()[(head_ + i) % size_] = rec[i];
    __atomic_store_n(reinterpret_cast<std::uint64_t*>(mem_.data() + user_page::kDataHead), head_,
                     __ATOMIC_RELEASE);
  }
  std::uint64_t tail() const {
    return load<std::uint64_t>(mem_.data() + user_page::kDataTail, false);
  }
  std::uint8_t* data() { return mem_.data() + kPage; }
  std::uint8_t* user_page() { return mem_.data(); }

  static constexpr std::size_t kPage = 4096;

 private:
  std::vector<std::uint8_t> mem_;
  std::size_t size_;
  std::uint64_t head_ = 0;
};

TEST(RingBufferTest, ReadsRecordsAndPublishesTail) {
  FakeRing ring(256);
  RingBuffer rb = ring.buffer();
  EXPECT_EQ(rb.pending().size(), 0u);
  ring.produce(9, 24, 0xaa);
  ring.produce(3, 40, 0xbb);
  SplitBytes p = rb.pending();
  EXPECT_EQ(p.size(), 64u);
  EXPECT_TRUE(p.contiguous());
  RecordCursor c(p);
  std::vector<std::uint8_t> scratch;
  Bytes rec;
  ASSERT_TRUE(c.next(rec, scratch));
  EXPECT_EQ(load<std::uint32_t>(rec.data(), false), 9u);
  EXPECT_EQ(rec.size(), 24u);
  ASSERT_TRUE(c.next(rec, scratch));
  EXPECT_EQ(rec.size(), 40u);
  EXPECT_EQ(rec[39], 0xbb);
  EXPECT_FALSE(c.next(rec, scratch));
  EXPECT_FALSE(c.failed());
  // The kernel sees nothing consumed until consume().
  EXPECT_EQ(ring.tail(), 0u);
  rb.consume(p.size());
  EXPECT_EQ(ring.tail(), 64u);
  EXPECT_EQ(rb.pending().size(), 0u);
}

TEST(RingBufferTest, WrapAroundGivesTwoSlicesAndWholeRecords) {
  FakeRing ring(128);
  RingBuffer rb = ring.buffer();
  ring.produce(1, 96, 1);
  rb.consume(rb.pending().size());
  // 48 bytes: 32 fit before the end, 16 wrap to the start; the header is intact.
  ring.produce(10, 48, 0x5c);
  // A record whose 8-byte header itself straddles the end.
  ring.produce(9, 16, 0x77);
  SplitBytes p = rb.pending();
  EXPECT_EQ(p.size(), 64u);
  EXPECT_FALSE(p.contiguous());
  EXPECT_EQ(p.first.size(), 32u);
  EXPECT_EQ(p.second.size(), 32u);
  RecordCursor c(p);
  std::vector<std::uint8_t> scratch;
  Bytes rec;
  ASSERT_TRUE(c.next(rec, scratch));
  EXPECT_EQ(rec.size(), 48u);
  EXPECT_EQ(load<std::uint32_t>(rec.data(), false), 10u);
  for (std::size_t i = 8; i < 48; ++i) ASSERT_EQ(rec[i], 0x5c) << i;
  EXPECT_EQ(rec.data(), scratch.data());  // copied because it wrapped
  ASSERT_TRUE(c.next(rec, scratch));
  EXPECT_EQ(load<std::uint32_t>(rec.data(), false), 9u);
  EXPECT_FALSE(c.next(rec, scratch));
  // Partial consumption keeps the rest.
  rb.consume(48);
  EXPECT_EQ(rb.pending().size(), 16u);
  rb.consume(16);
  EXPECT_EQ(ring.tail(), 96u + 64u);
}

TEST(RingBufferTest, StopsAtAHeaderThatDoesNotFit) {
  FakeRing ring(64);
  RingBuffer rb = ring.buffer();
  ring.produce(9, 16, 0);
  // Corrupt: a size of 0.
  ring.data()[16] = 9;
  ring.produce(9, 8, 0);
  ring.data()[16 + 6] = 0;
  ring.data()[16 + 7] = 0;
  RecordCursor c(rb.pending());
  std::vector<std::uint8_t> scratch;
  Bytes rec;
  ASSERT_TRUE(c.next(rec, scratch));
  EXPECT_FALSE(c.next(rec, scratch));
  EXPECT_TRUE(c.failed());
}

// perf record --overwrite: the newest records first; once the buffer has
// wrapped, as many whole records as fit; later reads only what came since.
TEST(RingBufferTest, BackwardBufferGivesTheNewestWholeRecords) {
  FakeRing ring(64);
  RingBuffer rb = ring.buffer();
  auto types = [](SplitBytes d) {
    std::vector<std::uint32_t> out;
    std::vector<std::uint8_t> all(d.size());
    d.copy_to(0, d.size(), all.data());
    for (std::size_t at = 0; at + 8 <= all.size();) {
      out.push_back(load<std::uint32_t>(all.data() + at, false));
      at += load<std::uint16_t>(all.data() + at + 6, false);
    }
    return out;
  };
  std::uint64_t since = 0;
  ring.produce_backward(1, 16);
  ring.produce_backward(2, 16);
  EXPECT_EQ(types(rb.backward(since)), (std::vector<std::uint32_t>{2, 1}));
  EXPECT_TRUE(types(rb.backward(since)).empty());
  for (std::uint32_t t = 3; t <= 7; ++t) ring.produce_backward(t, t == 5 ? 24 : 16);
  // 5 records (88 bytes) since the last read, 64 fit: 7, 6, 5 whole (56).
  EXPECT_EQ(types(rb.backward(since)), (std::vector<std::uint32_t>{7, 6, 5}));
  ring.produce_backward(8, 16);
  EXPECT_EQ(types(rb.backward(since)), (std::vector<std::uint32_t>{8}));
}

TEST(RingBufferTest, RingViewPositionsAreModuloSize) {
  std::vector<std::uint8_t> mem(16);
  for (std::size_t i = 0; i < 16; ++i) mem[i] = static_cast<std::uint8_t>(i);
  auto v = ring_view(mem.data(), 16, 30, 36);  // 14..15 then 0..3
  EXPECT_EQ(v.first.size(), 2u);
  EXPECT_EQ(v.first[0], 14);
  EXPECT_EQ(v.second.size(), 4u);
  EXPECT_EQ(v.second[3], 3);
  EXPECT_EQ(ring_view(mem.data(), 16, 5, 5).size(), 0u);
}

TEST(AuxBufferTest, AuxHeadTailOnAnAnonymousMapping) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto* user = static_cast<std::uint8_t*>(
      mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  auto* aux = static_cast<std::uint8_t*>(
      mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(user, MAP_FAILED);
  ASSERT_NE(aux, MAP_FAILED);
  AuxBuffer a = AuxBuffer::over(user, aux, 4 * page);
  // The "hardware" writes 3 pages of trace, then 2 more (wrapping).
  auto write_trace = [&](std::uint64_t from, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) aux[(from + i) % (4 * page)] = (from + i) & 0xff;
    __atomic_store_n(reinterpret_cast<std::uint64_t*>(user + user_page::kAuxHead), from + n,
                     __ATOMIC_RELEASE);
  };
  write_trace(0, 3 * page);
  SplitBytes p = a.pending();
  EXPECT_EQ(p.size(), 3 * page);
  EXPECT_TRUE(p.contiguous());
  a.consume(p.size());
  EXPECT_EQ(load<std::uint64_t>(user + user_page::kAuxTail, false), 3 * page);
  write_trace(3 * page, 2 * page);
  p = a.pending();
  EXPECT_EQ(p.first.size(), page);
  EXPECT_EQ(p.second.size(), page);
  EXPECT_EQ(p.second[5], (4 * page + 5) & 0xff);
  // A PERF_RECORD_AUX names a range by offset and size.
  SplitBytes r = a.range(4 * page - 8, 16);
  EXPECT_EQ(r.first.size(), 8u);
  EXPECT_EQ(r.second.size(), 8u);
  a.consume(p.size());
  EXPECT_EQ(a.tail(), 5 * page);
  munmap(user, page);
  munmap(aux, 4 * page);
}

// A real event: task-clock on this thread, sampled, read through the buffer.
TEST(RingBufferTest, RealSoftwareEventWithSharedOutput) {
  EventAttr attr;
  attr.type = kTypeSoftware;
  attr.config = 1;              // task-clock
  attr.sample_period = 100000;  // 100 us
  attr.sample_type = kSampleIp | kSampleTid | kSampleTime | kSampleIdentifier;
  attr.set(kAttrDisabled);
  attr.set(kAttrSampleIdAll);
  attr.set(kAttrExcludeKernel);
  auto ctx = OpenErrorContext::read(SystemPaths{});
  auto a = open_event(attr, OpenTarget{0, -1, -1, 0}, "task-clock", ctx);
  ASSERT_TRUE(a) << a.error().message();
  attr.config = 0;  // cpu-clock, redirected into a's buffer
  auto b = open_event(attr, OpenTarget{0, -1, -1, 0}, "cpu-clock", ctx);
  ASSERT_TRUE(b) << b.error().message();
  auto rb = RingBuffer::map(a->get(), 8);
  ASSERT_TRUE(rb) << rb.error().message();
  ASSERT_TRUE(b->set_output(*a));
  auto id_a = a->id(), id_b = b->id();
  ASSERT_TRUE(id_a && id_b);
  ASSERT_TRUE(a->enable());
  ASSERT_TRUE(b->enable());
  std::set<std::uint64_t> ids;
  std::size_t samples = 0;
  std::vector<std::uint8_t> scratch;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  volatile std::uint64_t x = 0;
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 10000; ++i) x = x + i;
    SplitBytes p = rb->pending();
    RecordCursor c(p);
    Bytes rec;
    while (c.next(rec, scratch)) {
      if (load<std::uint32_t>(rec.data(), false) != kRecordSample) continue;
      ++samples;
      ids.insert(load<std::uint64_t>(rec.data() + 8, false));  // IDENTIFIER comes first
    }
    ASSERT_FALSE(c.failed());
    rb->consume(c.offset());
  }
  ASSERT_TRUE(a->disable());
  EXPECT_GT(samples, 100u);
  EXPECT_EQ(ids, (std::set<std::uint64_t>{*id_a, *id_b}));
  EXPECT_EQ(rb->tail(), rb->head() - rb->pending().size());
}

}  // namespace
}  // namespace perfkit::capture
