// Damaged traces: bit flips, truncation, a missing first PSB, garbage bytes
// and overflows. The decoder must report errors (never silently drop trace),
// resync at the next PSB, and finish: after the last error it must be back on
// the recorded instruction sequence, to its end.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "intelpt/flow_decoder.h"
#include "intelpt/synth.h"
#include "pt_test_util.h"

namespace perfkit {
namespace {

struct Result {
  std::vector<std::uint64_t> ips;
  std::vector<std::pair<std::uint64_t, std::size_t>> psbs;  // trace offset, ips.size()
  std::vector<std::size_t> error_at;                        // ips.size() when each error came
  std::vector<std::string> errors;
};

struct Collect : intelpt::FlowSink {
  Result r;
  void on_step(const intelpt::Step& s) override {
    if (s.kind == intelpt::StepKind::kError ||
        (s.kind == intelpt::StepKind::kEvent && s.event == intelpt::EventKind::kOverflow)) {
      r.error_at.push_back(r.ips.size());
      r.errors.push_back(s.error ? s.error : "overflow");
      return;
    }
    // Where decoding stood at a PSB: its event, or, when the walk to its
    // FUP failed, the trace begin there that perf makes instead.
    if ((s.kind == intelpt::StepKind::kEvent && s.event == intelpt::EventKind::kPsb) ||
        s.kind == intelpt::StepKind::kBegin)
      r.psbs.emplace_back(s.offset, r.ips.size());
    if (s.kind != intelpt::StepKind::kRun) return;
    std::uint64_t ip = s.ip;
    for (std::uint32_t i = 0; i < s.ninsn; ++i) {
      r.ips.push_back(ip);
      ip += s.lengths[i];
    }
  }
};

Result decode(const pt_synth::PtSynthResult& r, Bytes trace) {
  intelpt::ImageSet images;
  auto space = pt_synth::pt_synth_address_space(r, images);
  intelpt::FlowOptions fo;
  fo.return_compression = r.config.return_compression();
  intelpt::FlowDecoder d(trace, r.config, &*space, fo, 0, r.encoded.end_tsc);
  Collect c;
  auto t0 = std::chrono::steady_clock::now();
  d.run(c);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "decode too slow";
  return std::move(c.r);
}

// The instructions after the last error must be the recorded sequence's tail.
void expect_resynced_to_the_end(const Result& got, const std::vector<std::uint64_t>& want) {
  std::size_t from = got.error_at.empty() ? 0 : got.error_at.back();
  std::size_t n = got.ips.size() - from;
  ASSERT_GT(n, 0u) << "nothing decoded after the last error";
  ASSERT_LE(n, want.size());
  std::vector<std::uint64_t> tail(got.ips.begin() + static_cast<std::ptrdiff_t>(from),
                                  got.ips.end());
  std::vector<std::uint64_t> want_tail(want.end() - static_cast<std::ptrdiff_t>(n), want.end());
  pttest::expect_same_seq(want_tail, tail, "after the last error", pttest::show_hex);
}

class DamageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pt_synth::PtSynthOptions o;
    o.encode.psb_period = 128;
    r_ = pttest::reencode(pttest::traced({pttest::ptflow(true), "200"}), o);
    want_ = pt_synth::pt_synth_expected_ips(r_);
    ASSERT_GT(r_.encoded.psbs, 20u);
  }
  pt_synth::PtSynthResult r_;
  std::vector<std::uint64_t> want_;
};

TEST_F(DamageTest, CleanTraceHasNoErrors) {
  auto got = decode(r_, r_.encoded.bytes);
  EXPECT_TRUE(got.errors.empty());
  EXPECT_EQ(got.ips, want_);
}

TEST_F(DamageTest, GarbageBytesAreErrorsThenResync) {
  auto bytes = r_.encoded.bytes;
  std::size_t at = bytes.size() / 3;
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), {0x02, 0x99, 0x02, 0x99, 0xb9});
  auto got = decode(r_, bytes);
  ASSERT_FALSE(got.errors.empty());
  expect_resynced_to_the_end(got, want_);
  EXPECT_GT(got.ips.size(), want_.size() / 2);
}

TEST_F(DamageTest, TruncationIsReported) {
  auto bytes = r_.encoded.bytes;
  // Cut in the middle of a multi-byte packet: a TIP's payload.
  std::size_t pos = bytes.size() / 2;
  intelpt::PacketContext ctx = intelpt::PacketContext::kNone;
  std::size_t at = 0;
  while (at < bytes.size()) {
    intelpt::Packet p;
    int n = intelpt::decode_packet(bytes.data() + at, bytes.size() - at, ctx, p);
    ASSERT_GT(n, 0);
    if (at >= pos && n > 2) break;
    at += static_cast<std::size_t>(n);
  }
  bytes.resize(at + 2);
  auto got = decode(r_, bytes);
  ASSERT_FALSE(got.errors.empty());
  EXPECT_EQ(got.errors.back(), std::string("truncated packet"));
  // Everything before the cut decoded as recorded.
  std::vector<std::uint64_t> head(want_.begin(),
                                  want_.begin() + static_cast<std::ptrdiff_t>(got.ips.size()));
  EXPECT_EQ(got.ips, head);
}

TEST_F(DamageTest, MissingFirstPsbStartsAtTheNext) {
  auto bytes = r_.encoded.bytes;
  ASSERT_TRUE(intelpt::is_psb_at(bytes, 0));
  bytes[1] = 0x83;  // 02 83: TraceStop, the PSB is gone
  auto got = decode(r_, bytes);
  EXPECT_TRUE(got.errors.empty());  // a trace may start anywhere: nothing is lost silently
  ASSERT_GT(got.ips.size(), want_.size() / 2);
  expect_resynced_to_the_end(got, want_);
}

TEST_F(DamageTest, RandomBitFlipsNeverCrashOrHang) {
  std::mt19937 rng(1234);
  int with_errors = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(round);
    auto bytes = r_.encoded.bytes;
    std::size_t last_flip = 0;
    for (int k = 0; k < 3; ++k) {
      std::size_t at = std::uniform_int_distribution<std::size_t>(16, bytes.size() / 2)(rng);
      bytes[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      last_flip = std::max(last_flip, at);
    }
    auto got = decode(r_, bytes);
    if (!got.errors.empty()) ++with_errors;
    // A flipped TNT bit or IP byte can send the decoder down a wrong path
    // that no packet contradicts, but from the first PSB after the last flip
    // on, the decoder must be back on the recorded sequence, to its end. A
    // PSB that starts right after the flip may be lost to a packet that the
    // flip made longer (a FUP whose IP bytes run into it), as it is to perf,
    // which parses the same bytes: then decoding resumes at the next one.
    auto psb = std::find_if(r_.encoded.psb_steps.begin(), r_.encoded.psb_steps.end(),
                            [&](const auto& p) { return p.first > last_flip; });
    ASSERT_NE(psb, r_.encoded.psb_steps.end());
    auto seen_at = [&](std::uint64_t at) {
      return std::find_if(got.psbs.begin(), got.psbs.end(),
                          [&](const auto& p) { return p.first == at; });
    };
    auto seen = seen_at(psb->first);
    constexpr std::size_t kLongestPacket = 16;
    if (seen == got.psbs.end() && psb->first < last_flip + kLongestPacket &&
        psb + 1 != r_.encoded.psb_steps.end())
      seen = seen_at((++psb)->first);
    ASSERT_NE(seen, got.psbs.end()) << "the PSB at " << psb->first << " was not decoded";
    std::vector<std::uint64_t> tail(got.ips.begin() + static_cast<std::ptrdiff_t>(seen->second),
                                    got.ips.end());
    std::vector<std::uint64_t> want_tail(want_.begin() + static_cast<std::ptrdiff_t>(psb->second),
                                         want_.end());
    pttest::expect_same_seq(want_tail, tail, "after the first PSB after the flips",
                            pttest::show_hex);
  }
  EXPECT_GT(with_errors, 10);
}

TEST_F(DamageTest, OverflowsAreErrorsAndDecodingResumes) {
  pt_synth::PtSynthOptions o;
  o.encode.psb_period = 128;
  o.encode.ovf_every = 4000;
  auto r = pttest::reencode(pttest::traced({pttest::ptflow(true), "200"}), o);
  auto got = decode(r, r.encoded.bytes);
  EXPECT_EQ(got.errors.size(), r.encoded.overflows);
  EXPECT_EQ(got.ips, pt_synth::pt_synth_expected_ips(r));
}

}  // namespace
}  // namespace perfkit
