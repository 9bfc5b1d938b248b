#include "abi/attr.h"

#include <gtest/gtest.h>

#include "abi/layout.h"
#include "abi/names.h"

namespace perfkit::abi {
namespace {

EventAttr full_attr() {
  EventAttr a;
  a.type = kTypeSoftware;
  a.config = 0x9;
  a.sample_period = 4000;
  a.sample_type = kSampleIp | kSampleTid | kSampleTime | kSampleId | kSampleCpu | kSamplePeriod;
  a.read_format = kFormatId | kFormatLost;
  a.flags = kAttrDisabled | kAttrInherit | kAttrMmap | kAttrComm | kAttrFreq | kAttrSampleIdAll |
            kAttrMmap2 | kAttrCommExec | kAttrKsymbol | kAttrTextPoke | kAttrSigtrap;
  a.set_precise_ip(3);
  a.wakeup_events = 5;
  a.bp_type = 2;
  a.config1 = 0x1111;
  a.config2 = 0x2222;
  a.branch_sample_type = kBranchAny | kBranchHwIndex;
  a.sample_regs_user = 0xff0fff;
  a.sample_stack_user = 8192;
  a.clockid = 1;
  a.sample_regs_intr = 0x3;
  a.aux_watermark = 4096;
  a.sample_max_stack = 127;
  a.aux_sample_size = 512;
  a.sig_data = 0xabcdef;
  a.config3 = 0x3333;
  return a;
}

// Zeroes the fields an attr of `size` bytes cannot hold.
EventAttr truncated_to(EventAttr a, std::uint32_t size) {
  if (size < 136) a.config3 = 0;
  if (size < 128) a.sig_data = 0;
  if (size < 120) a.aux_sample_size = a.reserved_3 = 0;
  if (size < 112) a.aux_watermark = a.sample_max_stack = a.reserved_2 = 0;
  if (size < 104) a.sample_regs_intr = 0;
  if (size < 96) a.sample_regs_user = a.sample_stack_user = 0, a.clockid = 0;
  if (size < 80) a.branch_sample_type = 0;
  if (size < 72) a.config2 = 0;
  a.size = size;
  return a;
}

class AttrRoundTrip : public ::testing::TestWithParam<std::tuple<std::uint32_t, bool>> {};

TEST_P(AttrRoundTrip, EncodesAndParsesEverySize) {
  auto [size, swap] = GetParam();
  std::vector<std::uint8_t> bytes;
  encode_attr(full_attr(), size, swap, bytes);
  ASSERT_EQ(bytes.size(), size);
  auto parsed = parse_attr(bytes, swap);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(*parsed, truncated_to(full_attr(), size));
  EXPECT_EQ(parsed->precise_ip(), 3u);
  EXPECT_TRUE(parsed->has(kAttrSigtrap));
}

INSTANTIATE_TEST_SUITE_P(AllSizes, AttrRoundTrip,
                         ::testing::Combine(::testing::Values(64u, 72u, 80u, 96u, 104u, 112u, 120u,
                                                              128u, 136u, 200u),
                                            ::testing::Bool()));

TEST(Attr, TooShortIsAnError) {
  std::vector<std::uint8_t> bytes(63);
  auto a = parse_attr(bytes, false);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message().find("64"), std::string::npos);
}

TEST(Attr, SizeZeroMeansVer0) {
  std::vector<std::uint8_t> bytes;
  EventAttr a = full_attr();
  encode_attr(a, 136, false, bytes);
  store<std::uint32_t>(bytes.data() + 4, 0, false);
  auto p = parse_attr(bytes, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->config2, 0u);  // beyond VER0
  EXPECT_EQ(p->config1, 0x1111u);
}

TEST(Attr, BigEndianBitfieldIsBitReversed) {
  // On a big-endian host 'disabled' (the first bitfield) is the top bit.
  std::vector<std::uint8_t> bytes(64, 0);
  store<std::uint64_t>(bytes.data() + 40, 1ULL << 63, true);
  store<std::uint32_t>(bytes.data() + 4, 64, true);
  auto p = parse_attr(bytes, true);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->flags, kAttrDisabled);
}

TEST(Layout, IdPositions) {
  EventAttr a;
  a.sample_type = kSampleIp | kSampleTid | kSampleTime | kSampleId | kSampleCpu;
  a.set(kAttrSampleIdAll);
  auto l = make_layout(a);
  EXPECT_EQ(l.id_pos, 3);
  EXPECT_EQ(l.is_pos, 2);  // id, then cpu after it
  EXPECT_EQ(l.trailer_size, 32u);
  a.sample_type |= kSampleIdentifier;
  l = make_layout(a);
  EXPECT_EQ(l.id_pos, 0);
  EXPECT_EQ(l.is_pos, 1);
  EXPECT_EQ(l.trailer_size, 40u);
  a.sample_type = kSampleIp;
  l = make_layout(a);
  EXPECT_EQ(l.id_pos, -1);
  EXPECT_EQ(l.is_pos, -1);
}

TEST(Names, PerfWords) {
  EXPECT_EQ(record_type_name(kRecordSample), "SAMPLE");
  EXPECT_EQ(record_type_name(kRecordHeaderAttr), "ATTR");
  EXPECT_EQ(record_type_name(kRecordHeaderFeature), "FEATURE");
  EXPECT_EQ(record_type_name(kRecordFinishedInit), "FINISHED_INIT");
  EXPECT_EQ(record_type_name(5000), "");
  EXPECT_EQ(feature_name(kFeatPmuCaps), "PMU_CAPS");
  EXPECT_EQ(sample_type_string(kSampleIp | kSampleTid | kSampleWeightStruct),
            "IP|TID|WEIGHT_STRUCT");
  EXPECT_EQ(read_format_string(kFormatId | kFormatLost), "ID|LOST");
}

}  // namespace
}  // namespace perfkit::abi
