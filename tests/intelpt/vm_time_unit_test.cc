// The VM time correlation pass on packet streams built here (perf's own
// behaviour on whole recordings is vm_time_test's): guest TSCs in PSB+ get
// the host's time when the offset is known, the host's stay, a dry run
// changes nothing; and VmcsTable reads perf's option syntax.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "intelpt/packet_encoder.h"
#include "intelpt/vm_time.h"

namespace perfkit::intelpt {
namespace {

constexpr std::uint64_t kSeven = 0xffffffffffffffULL;
constexpr std::uint64_t kVmcs = 0x1bff6a;

struct Recorder : VmTimeSink {
  std::vector<std::string> messages;
  struct Patch {
    std::size_t buffer, offset;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Patch> patches;
  void message(std::string_view line) override { messages.emplace_back(line); }
  void patch(std::size_t buffer, std::size_t offset, const std::uint8_t* bytes,
             std::size_t n) override {
    patches.push_back({buffer, offset, {bytes, bytes + n}});
  }
};

// A trace of PSB+ after PSB+ (TSC, TMA, PIP, VMCS) with branches between,
// its TSCs the host's `host[i]` plus `offset` when `guest`. The offsets of
// the TSC packets go to `tsc_at`.
std::vector<std::uint8_t> trace(const std::vector<std::uint64_t>& host, std::uint64_t offset,
                                bool guest, std::vector<std::size_t>& tsc_at) {
  std::vector<std::uint8_t> out;
  PacketEncoder e(out);
  for (std::uint64_t h : host) {
    e.psb();
    e.mode_exec(64);
    e.ip_packet(PacketType::kFup, 0x401000);
    tsc_at.push_back(out.size());
    e.tsc((guest ? h + offset : h) & kSeven);
    e.tma(static_cast<std::uint16_t>(h / 50), static_cast<std::uint16_t>(h % 50));
    e.pip(0x1a2b3c000, guest);
    if (guest) e.vmcs(kVmcs);
    e.cbr(20);
    e.psbend();
    for (int i = 0; i < 20; ++i) e.tnt(0xa000000000000000ULL, 3);
    e.ip_packet(PacketType::kTip, 0x401234);
  }
  return out;
}

std::uint64_t patched_tsc(const Recorder::Patch& p) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < p.bytes.size(); ++i) v |= std::uint64_t{p.bytes[i]} << (8 * i);
  return v;
}

struct PassRun {
  Recorder sink;
  bool synced = false;
};

void correlate(const std::vector<std::uint8_t>& data, std::string_view args, bool dry_run,
               PassRun& r) {
  auto table = VmcsTable::parse(args);
  ASSERT_TRUE(table) << table.error().message();
  VmTimeParams p;
  p.timer.mtc_period = 3;
  p.timer.tsc_ctc_ratio_n = 100;
  p.timer.tsc_ctc_ratio_d = 2;
  p.timer.max_non_turbo_ratio = 20;
  p.dry_run = dry_run;
  const VmTimeBuffer buf{Bytes(data.data(), data.size()), 0x2000000000};
  VmTimeCorrelator c(std::span(&buf, 1), p, *table, r.sink);
  r.synced = c.sync();
  if (r.synced) c.run();
}

const std::vector<std::uint64_t> kHost = {0x1000000000, 0x1000010000, 0x1000020000, 0x1000030000};

TEST(VmTimePass, GuestTscsGetHostTimeWithTheGivenOffset) {
  const std::uint64_t offset = 0x123456789;
  std::vector<std::size_t> at;
  const auto data = trace(kHost, offset, true, at);
  PassRun r;
  correlate(data, "0x123456789", false, r);
  ASSERT_TRUE(r.synced);
  EXPECT_TRUE(r.sink.messages.empty()) << r.sink.messages.front();
  ASSERT_EQ(r.sink.patches.size(), kHost.size());
  for (std::size_t i = 0; i < kHost.size(); ++i) {
    EXPECT_EQ(r.sink.patches[i].offset, at[i] + 1);  // the payload, after the opcode
    EXPECT_EQ(r.sink.patches[i].bytes.size(), 7u);
    EXPECT_EQ(patched_tsc(r.sink.patches[i]), kHost[i]);
  }
}

TEST(VmTimePass, AnOffsetForAnotherVmcsIsNotUsed) {
  std::vector<std::size_t> at;
  const auto data = trace(kHost, 0x123456789, true, at);
  PassRun r;
  correlate(data, "0x123456789:0x55", false, r);
  ASSERT_FALSE(r.sink.messages.empty());
  EXPECT_EQ(r.sink.messages.front(), "ERROR: First TSC, unknown TSC Offset");
  for (const auto& p : r.sink.patches) EXPECT_NE(patched_tsc(p), kHost[0]);
}

TEST(VmTimePass, HostTscsStayAndADryRunChangesNothing) {
  std::vector<std::size_t> at;
  PassRun host;
  correlate(trace(kHost, 0x123456789, false, at), "0x123456789", false, host);
  EXPECT_TRUE(host.synced);
  EXPECT_TRUE(host.sink.patches.empty());
  EXPECT_TRUE(host.sink.messages.empty());
  PassRun dry;
  correlate(trace(kHost, 0x123456789, true, at), "", true, dry);
  EXPECT_TRUE(dry.sink.patches.empty());
  ASSERT_FALSE(dry.sink.messages.empty());  // the unknown offset is reported
  EXPECT_EQ(dry.sink.messages.front(), "ERROR: First TSC, unknown TSC Offset");
}

TEST(VmTimePass, NoPsbNoPass) {
  const std::vector<std::uint8_t> data(100, 0);  // PAD only
  PassRun r;
  correlate(data, "", false, r);
  EXPECT_FALSE(r.synced);
}

TEST(VmcsTable, ParsesPerfsSyntax) {
  auto t = VmcsTable::parse("  12  34 : 5 , 6  7");
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_NE(t->findnew(5), nullptr);
  EXPECT_EQ(t->findnew(5)->tsc_offset, 34u);
  EXPECT_TRUE(t->findnew(6)->reliable);
  EXPECT_EQ(t->findnew(8)->tsc_offset, 7u);  // the last default given
  EXPECT_EQ(t->findnew(0)->tsc_offset, 7u);
  auto none = VmcsTable::parse("");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->findnew(0), nullptr);  // no VMCS, no default: nothing known
  EXPECT_EQ(none->findnew(9)->tsc_offset, 0u);
  EXPECT_FALSE(none->findnew(9)->reliable);
  auto colon = VmcsTable::parse(":5");  // offset 0 for VMCS 5
  ASSERT_TRUE(colon);
  EXPECT_EQ(colon->findnew(5)->tsc_offset, 0u);
  auto neg = VmcsTable::parse("-5");  // strtoull's two's complement
  ASSERT_TRUE(neg);
  EXPECT_EQ(neg->findnew(1)->tsc_offset, ~std::uint64_t{4});
  int e = 0;
  EXPECT_FALSE(VmcsTable::parse("1:0", &e));
  EXPECT_EQ(e, EINVAL);
  EXPECT_FALSE(VmcsTable::parse("junk", &e));
  EXPECT_EQ(e, EINVAL);
  EXPECT_FALSE(VmcsTable::parse("0x10000000000000000", &e));
  EXPECT_EQ(e, ERANGE);
}

}  // namespace
}  // namespace perfkit::intelpt
