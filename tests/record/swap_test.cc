// record::swap_record: each record type built field by field in both byte
// orders (what each endianness writes) must convert into the other one, and
// converting twice must give the original bytes back.
#include "record/swap.h"

#include <gtest/gtest.h>

#include <functional>

#include "abi/attr.h"
#include "abi/layout.h"
#include "abi/perf_event.h"
#include "record/encode.h"
#include "record/record_view.h"

namespace perfkit::record {
namespace {

using namespace perfkit::abi;
using Build = std::function<std::vector<std::uint8_t>(bool swap)>;

RecordView view_of(const std::vector<std::uint8_t>& b, bool swap) {
  RecordView v = view_header(b.data(), swap);
  v.bytes = Bytes(b.data(), b.size());
  v.offset = 0x1000;
  return v;
}

EventAttr attr_with(std::uint64_t sample_type) {
  EventAttr a;
  a.type = kTypeSoftware;
  a.sample_type = sample_type;
  a.read_format = kFormatTotalTimeEnabled | kFormatId | kFormatGroup | kFormatLost;
  a.branch_sample_type = kBranchAny | kBranchHwIndex;
  a.sample_regs_user = 0x7;
  a.sample_regs_intr = 0x3;
  a.set(kAttrSampleIdAll);
  a.set(kAttrFreq);
  a.set_precise_ip(2);
  a.sample_period = 4000;
  a.config = 0x1234;
  return a;
}

const EventAttr kSampleAttr = attr_with(
    kSampleIdentifier | kSampleIp | kSampleTid | kSampleTime | kSampleAddr | kSampleId |
    kSampleStreamId | kSampleCpu | kSamplePeriod | kSampleRead | kSampleCallchain | kSampleRaw |
    kSampleBranchStack | kSampleRegsUser | kSampleStackUser | kSampleWeightStruct | kSampleDataSrc |
    kSampleTransaction | kSampleRegsIntr | kSamplePhysAddr | kSampleCgroup | kSampleDataPageSize |
    kSampleCodePageSize | kSampleAux);
const RecordLayout kLayout = make_layout(kSampleAttr);

RecordBuilder& trailer(RecordBuilder& b) {
  SampleId id;
  id.pid = 1;
  id.tid = 2;
  id.time = 3;
  id.id = 4;
  id.stream_id = 5;
  id.cpu = 6;
  id.identifier = 7;
  return b.sample_id(id, kLayout);
}

std::vector<std::uint8_t> sample(bool swap) {
  RecordBuilder b(kRecordSample, kMiscUser, swap);
  b.u64(7).u64(0x401000).u32(10).u32(11).u64(123456789).u64(0xdead).u64(7).u64(8).u32(1).u32(0);
  b.u64(4000);
  b.u64(2).u64(1000).u64(100).u64(7).u64(0).u64(200).u64(8).u64(1);  // READ group
  b.u64(3).u64(static_cast<std::uint64_t>(-128)).u64(0xffffffff81000000).u64(0x401000);
  const std::uint8_t raw[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  b.u32(12).bytes(raw);  // RAW: the data keeps its bytes
  const std::uint64_t flags = 1 | (7 << 4) | (4ULL << 20) | (2ULL << 24) | (3ULL << 30);
  b.u64(1).u64(5);  // nr, hw_idx
  b.u64(0x1000).u64(0x2000).u64(swap ? convert_branch_flags(flags, ByteOrder::kLittle) : flags);
  b.u64(kRegsAbi64).u64(1).u64(2).u64(3);     // REGS_USER
  b.u64(16).u64(0x1111).u64(0x2222).u64(12);  // STACK_USER as words, dyn_size
  b.u64(0x0007005600001234ULL);               // WEIGHT_STRUCT
  b.u64(0x5080021).u64(0x1f);                 // DATA_SRC, TRANSACTION
  b.u64(kRegsAbi32).u64(4).u64(5);            // REGS_INTR
  b.u64(0xbeef000).u64(77).u64(4096).u64(2 << 20);
  const std::uint8_t aux[8] = {0x02, 0x82, 0x02, 0x82, 0, 0, 0, 1};
  b.u64(8).bytes(aux);  // AUX data keeps its bytes
  return b.finish();
}

std::vector<std::uint8_t> header_attr(bool swap) {
  std::vector<std::uint8_t> out;
  append<std::uint32_t>(out, kRecordHeaderAttr, swap);
  append<std::uint16_t>(out, 0, swap);
  append<std::uint16_t>(out, 8 + 128 + 16, swap);
  encode_attr(kSampleAttr, 128, swap, out);
  append<std::uint64_t>(out, 7, swap);
  append<std::uint64_t>(out, 8, swap);
  return out;
}

// Every record type, built in the byte order given.
std::vector<std::pair<std::string, Build>> all_records() {
  std::vector<std::pair<std::string, Build>> v;
  auto kernel = [&](std::string name, std::uint32_t type, std::uint16_t misc,
                    std::function<void(RecordBuilder&)> body) {
    v.emplace_back(name, [=](bool swap) {
      RecordBuilder b(type, misc, swap);
      body(b);
      trailer(b);
      return b.finish();
    });
  };
  kernel("mmap", kRecordMmap, 0, [](RecordBuilder& b) {
    b.u32(1).u32(2).u64(0x400000).u64(0x1000).u64(0).string("/bin/true");
  });
  kernel("mmap2", kRecordMmap2, 0, [](RecordBuilder& b) {
    b.u32(1).u32(2).u64(0x400000).u64(0x1000).u64(0).u32(8).u32(1).u64(99).u64(3).u32(5).u32(2);
    b.string("/lib/x.so");
  });
  kernel("mmap2-buildid", kRecordMmap2, kMiscMmapBuildId, [](RecordBuilder& b) {
    const std::uint8_t id[20] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    b.u32(1).u32(2).u64(0x400000).u64(0x1000).u64(0).u8(20).zeros(3).bytes(id).u32(5).u32(2);
    b.string("/lib/y.so");
  });
  kernel("comm", kRecordComm, kMiscCommExec,
         [](RecordBuilder& b) { b.u32(1).u32(2).string("true"); });
  kernel("exit", kRecordExit, 0, [](RecordBuilder& b) { b.u32(1).u32(0).u32(2).u32(0).u64(9); });
  kernel("fork", kRecordFork, 0, [](RecordBuilder& b) { b.u32(1).u32(0).u32(2).u32(0).u64(9); });
  kernel("lost", kRecordLost, 0, [](RecordBuilder& b) { b.u64(7).u64(3); });
  kernel("throttle", kRecordThrottle, 0, [](RecordBuilder& b) { b.u64(1).u64(7).u64(8); });
  kernel("read", kRecordRead, 0, [](RecordBuilder& b) {
    b.u32(1).u32(2).u64(2).u64(100).u64(5).u64(7).u64(0).u64(6).u64(8).u64(1);
  });
  kernel("aux", kRecordAux, 0, [](RecordBuilder& b) { b.u64(0x1000).u64(0x100).u64(1); });
  kernel("itrace", kRecordItraceStart, 0, [](RecordBuilder& b) { b.u32(1).u32(2); });
  kernel("lost-samples", kRecordLostSamples, 0, [](RecordBuilder& b) { b.u64(4); });
  kernel("switch", kRecordSwitch, kMiscSwitchOut, [](RecordBuilder&) {});
  kernel("switch-cpu-wide", kRecordSwitchCpuWide, 0, [](RecordBuilder& b) { b.u32(3).u32(4); });
  kernel("namespaces", kRecordNamespaces, 0, [](RecordBuilder& b) {
    b.u32(1).u32(2).u64(2).u64(3).u64(0xf0000001).u64(3).u64(0xf0000002);
  });
  kernel("ksymbol", kRecordKsymbol, 0, [](RecordBuilder& b) {
    b.u64(0xffffffffc0000000).u32(64).u16(1).u16(0).string("bpf_prog");
  });
  kernel("bpf", kRecordBpfEvent, 0, [](RecordBuilder& b) {
    const std::uint8_t tag[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    b.u16(1).u16(0).u32(42).bytes(tag);
  });
  kernel("cgroup", kRecordCgroup, 0, [](RecordBuilder& b) { b.u64(9).string("/a/b"); });
  kernel("text-poke", kRecordTextPoke, 0, [](RecordBuilder& b) {
    const std::uint8_t code[4] = {0x90, 0x90, 0xcc, 0xc3};
    b.u64(0xffffffff81000000).u16(2).u16(2).bytes(code);
  });
  kernel("aux-hw-id", kRecordAuxOutputHwId, 0, [](RecordBuilder& b) { b.u64(0x42); });
  v.emplace_back("sample", sample);
  v.emplace_back("header-attr", header_attr);
  auto user = [&](std::string name, std::uint32_t type, std::function<void(RecordBuilder&)> body) {
    v.emplace_back(name, [=](bool swap) {
      RecordBuilder b(type, 0, swap);
      body(b);
      return b.finish();
    });
  };
  user("event-type", kRecordHeaderEventType,
       [](RecordBuilder& b) { b.u64(3).fixed_string("x", 64); });
  user("tracing-data", kRecordHeaderTracingData, [](RecordBuilder& b) { b.u32(4096).u32(0); });
  user("build-id", kRecordHeaderBuildId, [](RecordBuilder& b) {
    const std::uint8_t id[24] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    b.u32(static_cast<std::uint32_t>(-1)).bytes(id).string("[kernel.kallsyms]", 64);
  });
  user("finished-round", kRecordFinishedRound, [](RecordBuilder&) {});
  user("id-index", kRecordIdIndex, [](RecordBuilder& b) {
    b.u64(1).u64(7).u64(0).u64(1).u64(static_cast<std::uint64_t>(-1)).u64(0).u64(0);
  });
  user("auxtrace-info", kRecordAuxtraceInfo,
       [](RecordBuilder& b) { b.u32(1).u32(0).u64(6).u64(31); });
  user("auxtrace", kRecordAuxtrace,
       [](RecordBuilder& b) { b.u64(0x100).u64(0).u64(0xabc).u32(1).u32(2).u32(3).u32(0); });
  user("auxtrace-error", kRecordAuxtraceError, [](RecordBuilder& b) {
    b.u32(1).u32(2).u32(3).u32(4).u32(5).u32(2).u64(0x401000).u64(99).fixed_string("oops", 64);
    b.u32(6).u32(7);
  });
  user("thread-map", kRecordThreadMap, [](RecordBuilder& b) {
    b.u64(2).u64(10).fixed_string("a", 16).u64(11).fixed_string("b", 16);
  });
  user("cpu-map-cpus", kRecordCpuMap,
       [](RecordBuilder& b) { b.u16(0).u16(3).u16(0).u16(1).u16(5).zeros(6); });
  user("cpu-map-mask32", kRecordCpuMap,
       [](RecordBuilder& b) { b.u16(1).u16(2).u16(4).u32(5).u32(1).zeros(6); });
  user("cpu-map-mask64", kRecordCpuMap,
       [](RecordBuilder& b) { b.u16(1).u16(1).u16(8).zeros(4).u64(9).zeros(6); });
  user("cpu-map-range", kRecordCpuMap,
       [](RecordBuilder& b) { b.u16(2).u8(1).u8(0).u16(2).u16(9).zeros(6); });
  user("stat-config", kRecordStatConfig, [](RecordBuilder& b) { b.u64(1).u64(0).u64(2); });
  user("stat", kRecordStat, [](RecordBuilder& b) { b.u64(7).u32(1).u32(2).u64(3).u64(4).u64(5); });
  user("stat-round", kRecordStatRound, [](RecordBuilder& b) { b.u64(1).u64(99); });
  user("event-update-unit", kRecordEventUpdate,
       [](RecordBuilder& b) { b.u64(0).u64(7).string("ms"); });
  user("event-update-scale", kRecordEventUpdate,
       [](RecordBuilder& b) { b.u64(1).u64(7).u64(0x3fe0000000000000ULL); });
  user("event-update-cpus", kRecordEventUpdate,
       [](RecordBuilder& b) { b.u64(3).u64(7).u16(0).u16(2).u16(0).u16(1).zeros(2); });
  user("time-conv", kRecordTimeConv, [](RecordBuilder& b) {
    b.u64(31).u64(1000).u64(5).u64(6).u64(0xffff).u8(1).u8(0).zeros(6);
  });
  user("finished-init", kRecordFinishedInit, [](RecordBuilder&) {});
  user("unknown", 30, [](RecordBuilder& b) {  // an unknown type keeps its body's bytes
    const std::uint8_t body[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    b.bytes(body);
  });
  return v;
}

class SwapRecord : public ::testing::TestWithParam<std::pair<std::string, Build>> {};

TEST_P(SwapRecord, ConvertsToWhatTheOtherEndiannessWrites) {
  const auto& build = GetParam().second;
  const auto le = build(false), be = build(true);
  ASSERT_EQ(le.size(), be.size());
  std::vector<std::uint8_t> out(le.size());
  ASSERT_TRUE(swap_record(view_of(le, false), &kLayout, out.data()));
  EXPECT_EQ(out, be);
  ASSERT_TRUE(swap_record(view_of(be, true), &kLayout, out.data()));
  EXPECT_EQ(out, le);
}

TEST_P(SwapRecord, TwiceIsTheIdentity) {
  const auto le = GetParam().second(false);
  std::vector<std::uint8_t> once(le.size()), twice(le.size());
  ASSERT_TRUE(swap_record(view_of(le, false), &kLayout, once.data()));
  ASSERT_TRUE(swap_record(view_of(once, true), &kLayout, twice.data()));
  EXPECT_EQ(twice, le);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, SwapRecord, ::testing::ValuesIn(all_records()),
                         [](const auto& info) {
                           std::string n = info.param.first;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(SwapRecordErrors, SampleWithoutLayout) {
  auto s = sample(false);
  std::vector<std::uint8_t> out(s.size());
  auto st = swap_record(view_of(s, false), nullptr, out.data());
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("offset 0x1000"), std::string::npos) << st.error().message();
}

TEST(SwapRecordErrors, TruncatedSample) {
  auto s = sample(false);
  s.resize(s.size() - 40);
  store<std::uint16_t>(s.data() + 6, static_cast<std::uint16_t>(s.size()), false);
  std::vector<std::uint8_t> out(s.size());
  auto st = swap_record(view_of(s, false), &kLayout, out.data());
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("SAMPLE"), std::string::npos) << st.error().message();
}

TEST(SwapRecordErrors, CompressedNeedsDecompressionFirst) {
  auto c = RecordBuilder(kRecordCompressed).u64(0).finish();
  std::vector<std::uint8_t> out(c.size());
  auto st = swap_record(view_of(c, false), nullptr, out.data());
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("decompressed"), std::string::npos);
}

TEST(SwapRecordErrors, NamespacesCountPastTheEnd) {
  auto n = RecordBuilder(kRecordNamespaces).u32(1).u32(2).u64(1000).finish();
  std::vector<std::uint8_t> out(n.size());
  EXPECT_FALSE(swap_record(view_of(n, false), nullptr, out.data()));
}

TEST(BranchFlags, MoveToTheOtherLayoutAndBack) {
  auto to_be = [](std::uint64_t v) { return convert_branch_flags(v, ByteOrder::kLittle); };
  EXPECT_EQ(to_be(1), 1ULL << 63);                    // mispred
  EXPECT_EQ(to_be(8), 1ULL << 60);                    // abort
  EXPECT_EQ(to_be(0x1234ULL << 4), 0x1234ULL << 44);  // cycles keep their bit order
  EXPECT_EQ(to_be(5ULL << 20), 5ULL << 40);           // type
  EXPECT_EQ(to_be(1ULL << 33), 1ULL << 0);            // reserved
  for (std::uint64_t v : {0x0ULL, 0x123456789abcdefULL, ~0ULL, 0x8000000000000001ULL})
    EXPECT_EQ(convert_branch_flags(to_be(v), ByteOrder::kBig), v);
}

TEST(SwapAttr, MatchesTheAttrEncodedInTheOtherOrder) {
  std::vector<std::uint8_t> le, be;
  for (std::uint32_t size : {kAttrSizeVer0, kAttrSizeVer5, kAttrSizeVer8}) {
    le.clear();
    be.clear();
    encode_attr(kSampleAttr, size, false, le);
    encode_attr(kSampleAttr, size, true, be);
    std::vector<std::uint8_t> out(size);
    swap_attr(le.data(), size, out.data());
    EXPECT_EQ(out, be) << size;
    auto back = parse_attr(out, true);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->flags, kSampleAttr.flags);
    EXPECT_EQ(back->sample_type, kSampleAttr.sample_type);
  }
}

}  // namespace
}  // namespace perfkit::record
