#include "record/sample.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "record/encode.h"

namespace perfkit::record {
namespace {

using namespace perfkit::abi;

constexpr std::uint64_t kAllSampleBits = (kSampleMax - 1) & ~kSampleWeight;

struct Fixture {
  std::vector<std::uint8_t> storage;
  Sample s;
};

// A sample with every field set; variable parts point into `storage`.
Fixture full_sample(const RecordLayout& l, bool swap) {
  Fixture f;
  auto& st = f.storage;
  auto u64s = [&](std::initializer_list<std::uint64_t> v) {
    std::size_t at = st.size();
    for (auto x : v) append<std::uint64_t>(st, x, swap);
    return at;
  };
  st.reserve(4096);
  std::size_t cc = u64s({kContextUser, 0x401000, 0x401234});
  std::size_t rv = u64s({100, 7, 3, 200, 8, 4});  // group: value,id,lost x2
  std::size_t br = u64s({0x10, 0x20, 0x1, 0x30, 0x40, 0x2});
  std::size_t ur = u64s({1, 2, 3});
  std::size_t ir = u64s({9, 8});
  std::size_t stack = st.size();
  for (int i = 0; i < 64; ++i) st.push_back(static_cast<std::uint8_t>(i));
  std::size_t raw = st.size();
  for (int i = 0; i < 12; ++i) st.push_back(static_cast<std::uint8_t>(0xa0 + i));
  std::size_t aux = st.size();
  for (int i = 0; i < 16; ++i) st.push_back(static_cast<std::uint8_t>(0x50 + i));
  const std::uint8_t* b = st.data();
  Sample& s = f.s;
  s.identifier = 42;
  s.ip = 0x401234;
  s.pid = 100;
  s.tid = 101;
  s.time = 123456789;
  s.addr = 0xdead;
  s.id = 42;
  s.stream_id = 43;
  s.cpu = 3;
  s.period = 4000;
  s.read.read_format = l.read_format;
  s.read.nr = 2;
  s.read.time_enabled = 1000;
  s.read.time_running = 900;
  s.read.values = b + rv;
  s.read.swap = swap;
  s.callchain = U64Array(b + cc, 3, swap);
  s.raw = Bytes(b + raw, 12);
  s.branch_stack.nr = 2;
  s.branch_stack.hw_idx = 5;
  s.branch_stack.entries = b + br;
  s.branch_stack.swap = swap;
  s.user_regs.abi = kRegsAbi64;
  s.user_regs.values = U64Array(b + ur, 3, swap);
  s.user_stack = Bytes(b + stack, 64);
  s.user_stack_dyn_size = 48;
  s.weight = 0x0003000200000001ULL;
  s.data_src = 0x1234;
  s.transaction = 0x5;
  s.intr_regs.abi = kRegsAbi64;
  s.intr_regs.values = U64Array(b + ir, 2, swap);
  s.phys_addr = 0x7000;
  s.cgroup = 77;
  s.data_page_size = 4096;
  s.code_page_size = 2 << 20;
  s.aux = Bytes(b + aux, 16);
  return f;
}

EventAttr attr_with(std::uint64_t st) {
  EventAttr a;
  a.sample_type = st;
  a.read_format =
      kFormatGroup | kFormatTotalTimeEnabled | kFormatTotalTimeRunning | kFormatId | kFormatLost;
  a.branch_sample_type = kBranchAny | kBranchHwIndex;
  a.sample_regs_user = 0x7;
  a.sample_regs_intr = 0x3;
  a.set(kAttrSampleIdAll);
  return a;
}

RecordView view_of(const std::vector<std::uint8_t>& bytes, bool swap) {
  RecordView v = view_header(bytes.data(), swap);
  v.bytes = bytes;
  v.offset = 0x1000;
  return v;
}

class SampleRoundTrip : public ::testing::TestWithParam<bool> {};

TEST_P(SampleRoundTrip, EveryFieldSurvives) {
  const bool swap = GetParam();
  auto layout = make_layout(attr_with(kAllSampleBits));
  auto f = full_sample(layout, swap);
  auto bytes = encode_sample(f.s, layout, kMiscUser, swap);
  RecordView v = view_of(bytes, swap);
  EXPECT_EQ(v.type, kRecordSample);
  EXPECT_EQ(v.size, bytes.size());
  Sample d;
  auto st = decode_sample(v, layout, d);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(d.identifier, 42u);
  EXPECT_EQ(d.ip, 0x401234u);
  EXPECT_EQ(d.pid, 100u);
  EXPECT_EQ(d.tid, 101u);
  EXPECT_EQ(d.time, 123456789u);
  EXPECT_EQ(d.addr, 0xdeadu);
  EXPECT_EQ(d.stream_id, 43u);
  EXPECT_EQ(d.cpu, 3u);
  EXPECT_EQ(d.period, 4000u);
  ASSERT_EQ(d.read.nr, 2u);
  EXPECT_EQ(d.read.time_enabled, 1000u);
  EXPECT_EQ(d.read.time_running, 900u);
  EXPECT_EQ(d.read.at(1).value, 200u);
  EXPECT_EQ(d.read.at(1).id, 8u);
  EXPECT_EQ(d.read.at(1).lost, 4u);
  ASSERT_EQ(d.callchain.size(), 3u);
  EXPECT_EQ(d.callchain[0], kContextUser);
  EXPECT_EQ(d.callchain[2], 0x401234u);
  ASSERT_EQ(d.raw.size(), 12u);
  EXPECT_EQ(d.raw[11], 0xab);
  ASSERT_EQ(d.branch_stack.nr, 2u);
  EXPECT_TRUE(d.branch_stack.has_hw_idx);
  EXPECT_EQ(d.branch_stack.hw_idx, 5u);
  EXPECT_EQ(d.branch_stack.at(1).to, 0x40u);
  EXPECT_EQ(d.user_regs.abi, kRegsAbi64);
  ASSERT_EQ(d.user_regs.values.size(), 3u);
  EXPECT_EQ(d.user_regs.values[2], 3u);
  EXPECT_EQ(d.user_stack.size(), 64u);
  EXPECT_EQ(d.user_stack_dyn_size, 48u);
  EXPECT_EQ(d.weight_var1(), 1u);
  EXPECT_EQ(d.weight_var2(), 2u);
  EXPECT_EQ(d.weight_var3(), 3u);
  EXPECT_EQ(d.data_src, 0x1234u);
  EXPECT_EQ(d.transaction, 5u);
  EXPECT_EQ(d.intr_regs.values[1], 8u);
  EXPECT_EQ(d.phys_addr, 0x7000u);
  EXPECT_EQ(d.cgroup, 77u);
  EXPECT_EQ(d.data_page_size, 4096u);
  EXPECT_EQ(d.code_page_size, 2u << 20);
  ASSERT_EQ(d.aux.size(), 16u);
  EXPECT_EQ(d.aux[15], 0x5f);
  // Re-encoding the decoded sample gives the same bytes.
  EXPECT_EQ(encode_sample(d, layout, kMiscUser, swap), bytes);
}

INSTANTIATE_TEST_SUITE_P(BothOrders, SampleRoundTrip, ::testing::Bool());

TEST(Sample, NonGroupReadAndAbiNoneRegs) {
  EventAttr a;
  a.sample_type = kSampleRead | kSampleRegsUser | kSampleStackUser;
  a.read_format = kFormatTotalTimeEnabled | kFormatId;
  a.sample_regs_user = 0xff;
  auto l = make_layout(a);
  RecordBuilder b(kRecordSample);
  b.u64(55).u64(1000).u64(9);  // value, enabled, id
  b.u64(kRegsAbiNone);         // no registers follow
  b.u64(0);                    // empty stack: no dyn_size
  auto bytes = std::move(b).finish();
  Sample s;
  ASSERT_TRUE(decode_sample(view_of(bytes, false), l, s));
  EXPECT_EQ(s.read.nr, 1u);
  EXPECT_EQ(s.read.at(0).value, 55u);
  EXPECT_EQ(s.read.at(0).id, 9u);
  EXPECT_EQ(s.read.time_enabled, 1000u);
  EXPECT_EQ(s.user_regs.values.size(), 0u);
  EXPECT_TRUE(s.user_stack.empty());
}

// Cutting a full sample short at any 8-byte boundary gives an error naming
// the record's offset, never a read past the end.
TEST(Sample, EveryTruncationIsAnError) {
  auto layout = make_layout(attr_with(kAllSampleBits));
  auto f = full_sample(layout, false);
  auto bytes = encode_sample(f.s, layout, 0, false);
  for (std::size_t n = 8; n < bytes.size(); n += 8) {
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    RecordView v = view_of(bytes, false);
    v.bytes = cut;
    Sample s;
    auto st = decode_sample(v, layout, s);
    ASSERT_FALSE(st) << "accepted a sample cut to " << n << " bytes";
    EXPECT_NE(st.error().message().find("offset 0x1000"), std::string::npos);
  }
}

// The common sample (fixed fields and a call chain, nothing after it) in
// both byte orders: each field from its place.
TEST(Sample, FixedFieldsAndChain) {
  const std::uint64_t bits = kSampleIp | kSampleTid | kSampleTime | kSampleId | kSampleCpu |
                             kSamplePeriod | kSampleCallchain;
  for (bool swap : {false, true}) {
    auto layout = make_layout(attr_with(bits));
    EXPECT_EQ(layout.sample_head_size, 48u);
    auto f = full_sample(layout, swap);
    auto bytes = encode_sample(f.s, layout, kMiscUser, swap);
    Sample d;
    ASSERT_TRUE(decode_sample(view_of(bytes, swap), layout, d));
    EXPECT_EQ(d.ip, 0x401234u);
    EXPECT_EQ(d.pid, 100u);
    EXPECT_EQ(d.tid, 101u);
    EXPECT_EQ(d.time, 123456789u);
    EXPECT_EQ(d.id, 42u);
    EXPECT_EQ(d.cpu, 3u);
    EXPECT_EQ(d.period, 4000u);
    ASSERT_EQ(d.callchain.size(), 3u);
    EXPECT_EQ(d.callchain[1], 0x401000u);
    EXPECT_EQ(encode_sample(d, layout, kMiscUser, swap), bytes);
  }
}

// A sample cut inside its fixed fields names the first field it lacks.
TEST(Sample, CutInTheFixedFieldsNamesTheField) {
  auto layout = make_layout(attr_with(kSampleIp | kSampleTid | kSampleTime | kSamplePeriod));
  auto f = full_sample(layout, false);
  auto bytes = encode_sample(f.s, layout, 0, false);
  const char* want[] = {"IP", "TID", "TIME", "PERIOD"};
  for (std::size_t field = 0; field < 4; ++field) {
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + 8 + 8 * field);
    RecordView v = view_of(bytes, false);
    v.bytes = cut;
    Sample s;
    auto st = decode_sample(v, layout, s);
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message().find(std::string("its ") + want[field] + " field"),
              std::string::npos)
        << st.error().message();
  }
}

TEST(Sample, HugeCallchainCountIsAnError) {
  auto layout = make_layout(attr_with(kSampleCallchain));
  RecordBuilder b(kRecordSample);
  b.u64(~0ULL >> 3).u64(1);
  auto bytes = std::move(b).finish();
  Sample s;
  auto st = decode_sample(view_of(bytes, false), layout, s);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("CALLCHAIN"), std::string::npos);
}

TEST(SampleId, TrailerRoundTripBothOrders) {
  for (bool swap : {false, true}) {
    EventAttr a = attr_with(kSampleTid | kSampleTime | kSampleId | kSampleStreamId | kSampleCpu |
                            kSampleIdentifier | kSampleIp);
    auto l = make_layout(a);
    SampleId id;
    id.pid = 1;
    id.tid = 2;
    id.time = 3;
    id.id = 4;
    id.stream_id = 5;
    id.cpu = 6;
    id.identifier = 4;
    RecordBuilder b(kRecordComm, 0, swap);
    b.u32(1).u32(2).string("bash").sample_id(id, l);
    auto bytes = std::move(b).finish();
    auto d = decode_sample_id(view_of(bytes, swap), l);
    ASSERT_TRUE(d.present);
    EXPECT_EQ(d.pid, 1u);
    EXPECT_EQ(d.tid, 2u);
    EXPECT_EQ(d.time, 3u);
    EXPECT_EQ(d.id, 4u);
    EXPECT_EQ(d.stream_id, 5u);
    EXPECT_EQ(d.cpu, 6u);
    EXPECT_EQ(d.identifier, 4u);
  }
}

TEST(SampleId, AbsentWithoutSampleIdAll) {
  EventAttr a = attr_with(kSampleTid | kSampleTime);
  a.set(kAttrSampleIdAll, false);
  RecordBuilder b(kRecordComm);
  b.u32(1).u32(1).string("x");
  auto bytes = std::move(b).finish();
  EXPECT_FALSE(decode_sample_id(view_of(bytes, false), make_layout(a)).present);
}

// A chain's digest is the same for the same words and tells apart any change
// of a word or of the length, short chains and long ones alike (XXH3 takes
// different paths by length); it is never the "not made" value.
TEST(ChainDigest, SameWordsSameDigestAnyChangeAnother) {
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (std::size_t n : {0u, 1u, 2u, 7u, 16u, 30u, 31u, 64u, 127u}) {
    std::vector<std::uint64_t> words(n);
    for (std::size_t i = 0; i < n; ++i) words[i] = 0x400000 + i * 0x40;
    const Bytes b(reinterpret_cast<const std::uint8_t*>(words.data()), n * 8);
    const ChainDigest d = callchain_digest(b);
    EXPECT_TRUE(d.made());
    EXPECT_EQ(d, callchain_digest(b));
    EXPECT_TRUE(seen.insert({d.lo, d.hi}).second) << n;
    for (std::size_t i = 0; i < n; ++i) {
      for (int bit : {0, 17, 63}) {
        words[i] ^= 1ULL << bit;
        EXPECT_TRUE(seen.insert({callchain_digest(b).lo, callchain_digest(b).hi}).second)
            << n << " " << i << " " << bit;
        words[i] ^= 1ULL << bit;
      }
    }
  }
}

}  // namespace
}  // namespace perfkit::record
