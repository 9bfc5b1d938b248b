// The flow decoder on hand-written traces over a small code image, in the
// manner of libipt's annotated .ptt tests: every case says which packets the
// hardware writes for a piece of code and which instructions, branches and
// events a decoder must report.
#include <gtest/gtest.h>

#include <vector>

#include "intelpt/flow_decoder.h"
#include "intelpt/packet_encoder.h"
#include "intelpt/synth.h"

namespace perfkit::intelpt {
namespace {

//   400000: xor eax,eax          400012: syscall
//   400002: inc eax              400014: jmp 400000
//   400004: cmp eax,10           400016: nop; nop
//   400007: jne 400002           400018: test rdi,rdi
//   400009: call 400018          40001b: je 40001e
//   40000e: call rbx             40001d: ret
//   400010: jmp rax              40001e: ret
//                                40001f: rep movsq
//                                400022: loop 400022
//                                400024: ret
const std::vector<std::uint8_t> kCode = {0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x0a, 0x75, 0xf9, 0xe8,
                                         0x0a, 0x00, 0x00, 0x00, 0xff, 0xd3, 0xff, 0xe0, 0x0f, 0x05,
                                         0xeb, 0xea, 0x90, 0x90, 0x48, 0x85, 0xff, 0x74, 0x01, 0xc3,
                                         0xc3, 0xf3, 0x48, 0xa5, 0xe2, 0xfe, 0xc3};
constexpr std::uint64_t kBase = 0x400000;

std::uint64_t tnt_bits(std::string_view tn) {
  std::uint64_t b = 0;
  for (std::size_t i = 0; i < tn.size(); ++i)
    if (tn[i] == 'T') b |= 1ULL << (63 - i);
  return b;
}

struct Out : FlowSink {
  std::vector<std::uint64_t> ips;
  std::vector<std::string> log;  // branches, begins, events, errors
  void on_step(const Step& s) override {
    switch (s.kind) {
      case StepKind::kRun: {
        std::uint64_t ip = s.ip;
        for (std::uint32_t i = 0; i < s.ninsn; ++i, ip += s.lengths[i - 1]) ips.push_back(ip);
        if (s.end == RunEnd::kBranch) log.push_back(fmt::format("branch {:x}->{:x}", s.from, s.to));
        if (s.end == RunEnd::kDisabled) log.push_back(fmt::format("end {:x}->{:x}", s.from, s.to));
        return;
      }
      case StepKind::kBegin:
        log.push_back(fmt::format("begin {:x}", s.to));
        return;
      case StepKind::kAsync:
        log.push_back(fmt::format("async {:x}->{:x}", s.from, s.to));
        return;
      case StepKind::kEvent:
        log.push_back(fmt::format("event {} at {:x} aux {} payload {:x}", static_cast<int>(s.event),
                                  s.has_ip ? s.from : 0, s.aux, s.payload));
        return;
      case StepKind::kError:
        log.push_back(fmt::format("error {} at {:x}", static_cast<int>(s.code), s.from));
        return;
    }
  }
};

class FlowTest : public ::testing::Test {
 protected:
  FlowTest() : enc_(trace_) {
    img_ = Image::from_bytes("code", kCode);
    space_.add({kBase, kBase + kCode.size(), 0, img_.get(), 0});
  }
  // PSB+ with the tracing status at `ip` (0: tracing off).
  void psb(std::uint64_t ip) {
    enc_.psb();
    enc_.mode_exec(64);
    if (ip) enc_.ip_packet(PacketType::kFup, ip);
    enc_.tsc(0x1000);
    enc_.psbend();
  }
  void tnt(std::string_view tn) { enc_.tnt(tnt_bits(tn), static_cast<unsigned>(tn.size())); }
  void tip(std::uint64_t ip) { enc_.ip_packet(PacketType::kTip, ip); }
  Out decode(bool retcomp = true) {
    FlowOptions fo;
    fo.return_compression = retcomp;
    PtConfig cfg;
    FlowDecoder d(trace_, cfg, &space_, fo);
    Out out;
    d.run(out);
    return out;
  }
  static std::vector<std::uint64_t> loop_then(std::vector<std::uint64_t> tail) {
    std::vector<std::uint64_t> ips = {0x400000};
    for (int i = 0; i < 10; ++i) ips.insert(ips.end(), {0x400002, 0x400004, 0x400007});
    ips.insert(ips.end(), tail.begin(), tail.end());
    return ips;
  }

  std::vector<std::uint8_t> trace_;
  PacketEncoder enc_;
  std::shared_ptr<Image> img_;
  AddressSpace space_;
};

TEST_F(FlowTest, ConditionalsCallsCompressedReturnsIndirectsAndSyscall) {
  psb(0x400000);
  tnt("TTTTTTTTTNTT");                        // jne x9 taken, then not; je taken; ret compressed
  tip(0x40001f);                              // call rbx
  tnt("NT");                                  // loop not taken; ret compressed
  tip(0x400012);                              // jmp rax
  enc_.ip_packet_no_ip(PacketType::kTipPgd);  // syscall: into the kernel
  auto out = decode();
  EXPECT_EQ(out.ips, loop_then({0x400009, 0x400018, 0x40001b, 0x40001e, 0x40000e, 0x40001f,
                                0x400022, 0x400024, 0x400010, 0x400012}));
  ASSERT_GE(out.log.size(), 4u);
  EXPECT_EQ(out.log.back(), "end 400012->0");
  EXPECT_EQ(std::count(out.log.begin(), out.log.end(), "error 6 at 0"), 0);
}

TEST_F(FlowTest, UncompressedReturnsTakeTips) {
  psb(0x400000);
  tnt("TTTTTTTTTNT");
  tip(0x40000e);  // ret via TIP (noretcomp)
  tip(0x40001f);
  tnt("N");
  tip(0x400010);  // ret
  tip(0x400012);
  enc_.ip_packet_no_ip(PacketType::kTipPgd);
  auto out = decode(false);
  EXPECT_EQ(out.ips, loop_then({0x400009, 0x400018, 0x40001b, 0x40001e, 0x40000e, 0x40001f,
                                0x400022, 0x400024, 0x400010, 0x400012}));
}

TEST_F(FlowTest, DeferredTipAfterTheTntOfLaterBranches) {
  // libipt's call_indirect_deferred-ret_compressed: the TIP of `call rbx`
  // comes after the TNT packet that holds the bits of later branches.
  psb(0x40000e);
  tnt("TT");      // je taken; ret compressed (to after call rbx)
  tip(0x400018);  // call rbx's target, deferred
  tip(0x400012);  // jmp rax
  enc_.ip_packet_no_ip(PacketType::kTipPgd);
  auto out = decode();
  EXPECT_EQ(out.ips, (std::vector<std::uint64_t>{0x40000e, 0x400018, 0x40001b, 0x40001e, 0x400010,
                                                 0x400012}));
  EXPECT_EQ(std::count_if(out.log.begin(), out.log.end(),
                          [](const std::string& l) { return l.starts_with("error"); }),
            0);
}

TEST_F(FlowTest, AsyncBranchAtTheFupIp) {
  psb(0x400000);
  tnt("TT");                                   // two loop iterations
  enc_.ip_packet(PacketType::kFup, 0x400004);  // interrupted before cmp, 3rd time round
  tip(0x400018);
  tnt("N");
  tip(0x400010);  // ret (not compressed: the interrupt pushed nothing)
  auto out = decode();
  EXPECT_EQ(out.ips,
            (std::vector<std::uint64_t>{0x400000, 0x400002, 0x400004, 0x400007, 0x400002, 0x400004,
                                        0x400007, 0x400002, 0x400018, 0x40001b, 0x40001d}));
  EXPECT_NE(std::find(out.log.begin(), out.log.end(), "async 400004->400018"), out.log.end());
}

TEST_F(FlowTest, AsyncDisableThenEnableElsewhere) {
  psb(0x400000);
  enc_.ip_packet(PacketType::kFup, 0x400002);
  enc_.ip_packet_no_ip(PacketType::kTipPgd);
  enc_.mode_exec(64);
  enc_.ip_packet(PacketType::kTipPge, 0x40001f);
  tnt("N");
  auto out = decode();
  EXPECT_EQ(out.ips, (std::vector<std::uint64_t>{0x400000, 0x40001f, 0x400022}));
  EXPECT_NE(std::find(out.log.begin(), out.log.end(), "async 400002->0"), out.log.end());
  EXPECT_NE(std::find(out.log.begin(), out.log.end(), "begin 40001f"), out.log.end());
}

TEST_F(FlowTest, PsbInTheMiddleOfABlockIsWalkedTo) {
  psb(0x400000);
  tnt("T");
  psb(0x400004);  // PSB+ between inc and cmp of the second iteration
  tnt("TTTTTTTTN");
  auto out = decode();
  // The trace ends after the last bit: like perf, the decoder does not walk
  // on past the last packet.
  EXPECT_EQ(out.ips, loop_then({}));
  EXPECT_TRUE(std::none_of(out.log.begin(), out.log.end(),
                           [](const std::string& l) { return l.starts_with("error"); }));
}

TEST_F(FlowTest, TransactionAndPtwriteEventsBindToTheirIps) {
  psb(0x400000);
  enc_.mode_tsx(true, false);
  enc_.ip_packet(PacketType::kFup, 0x400002);
  enc_.ptwrite(0x1234, 8, true);
  enc_.ip_packet(PacketType::kFup, 0x400004);
  tnt("N");
  auto out = decode();
  EXPECT_EQ(out.ips, (std::vector<std::uint64_t>{0x400000, 0x400002, 0x400004, 0x400007}));
  EXPECT_NE(std::find(out.log.begin(), out.log.end(),
                      fmt::format("event {} at 400002 aux 1 payload 0",
                                  static_cast<int>(EventKind::kTsx))),
            out.log.end());
  EXPECT_NE(std::find(out.log.begin(), out.log.end(),
                      fmt::format("event {} at 400004 aux 8 payload 1234",
                                  static_cast<int>(EventKind::kPtwrite))),
            out.log.end());
}

TEST_F(FlowTest, OverflowResumesAtItsFup) {
  psb(0x400000);
  tnt("TT");
  enc_.ovf();
  enc_.last_ip().reset();
  enc_.ip_packet(PacketType::kFup, 0x400018);
  tnt("T");
  auto out = decode();
  // What ran between the last TNT bit and the resume point was lost.
  EXPECT_EQ(out.ips, (std::vector<std::uint64_t>{0x400000, 0x400002, 0x400004, 0x400007, 0x400002,
                                                 0x400004, 0x400007, 0x400018, 0x40001b}));
  EXPECT_NE(std::find(out.log.begin(), out.log.end(),
                      fmt::format("event {} at 400002 aux 0 payload 0",
                                  static_cast<int>(EventKind::kOverflow))),
            out.log.end());
}

TEST_F(FlowTest, MismatchesAreErrorsThenResyncAtTheNextPsb) {
  psb(0x400000);
  tip(0x400010);  // a TIP where the jne needs a TNT bit
  psb(0x40001f);
  tnt("N");
  auto out = decode();
  EXPECT_NE(std::find(out.log.begin(), out.log.end(), "error 6 at 400007"), out.log.end());
  // After the error, decoding goes on at the next PSB.
  ASSERT_GE(out.ips.size(), 2u);
  EXPECT_EQ(out.ips[out.ips.size() - 2], 0x40001fu);
  EXPECT_EQ(out.ips.back(), 0x400022u);
}

TEST_F(FlowTest, CompressedReturnWithAnEmptyStackIsAnError) {
  psb(0x400018);
  tnt("NT");  // je not taken; ret "compressed" with no call seen
  auto out = decode();
  EXPECT_NE(std::find(out.log.begin(), out.log.end(), "error 6 at 40001d"), out.log.end());
}

TEST_F(FlowTest, CodeOutsideTheImageIsAnError) {
  psb(0x500000);
  tnt("T");
  auto out = decode();
  EXPECT_NE(std::find(out.log.begin(), out.log.end(), "error 5 at 500000"), out.log.end());
  EXPECT_TRUE(out.ips.empty());
}

TEST_F(FlowTest, BadPacketIsAnErrorThenResync) {
  psb(0x400000);
  trace_.insert(trace_.end(), {0x02, 0x99});  // no such packet
  psb(0x40001f);
  tnt("N");
  auto out = decode();
  EXPECT_NE(std::find(out.log.begin(), out.log.end(), "error 3 at 400000"), out.log.end())
      << fmt::format("{}", fmt::join(out.log, "\n"));
  EXPECT_EQ(out.ips, (std::vector<std::uint64_t>{0x40001f, 0x400022}));
}

TEST_F(FlowTest, NoPsbIsAnError) {
  tnt("TTT");
  auto out = decode();
  ASSERT_EQ(out.log.size(), 1u);
  EXPECT_EQ(out.log[0], "error 3 at 0");
}

TEST_F(FlowTest, SuppressedTipEndsTracing) {
  psb(0x40000e);
  enc_.ip_packet_no_ip(PacketType::kTip);  // call rbx to somewhere out of context
  enc_.mode_exec(64);
  enc_.ip_packet(PacketType::kTipPge, 0x400012);
  enc_.ip_packet_no_ip(PacketType::kTipPgd);
  auto out = decode();
  EXPECT_EQ(out.ips, (std::vector<std::uint64_t>{0x40000e, 0x400012}));
  EXPECT_NE(std::find(out.log.begin(), out.log.end(), "end 40000e->0"), out.log.end());
  EXPECT_NE(std::find(out.log.begin(), out.log.end(), "begin 400012"), out.log.end());
}

// perf's decoder fetches the next packet before it walks: a run that ends in
// a direct call with no TNT bit left is walked at the time of the packet
// after it (here a TSC before the next TNT); with bits left, at the TNT's.
TEST_F(FlowTest, WalkTimeIsThatOfThePacketFetchedNext) {
  struct Times : FlowSink {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // first ip, walk time
    void on_step(const Step& s) override {
      if (s.kind == StepKind::kRun) runs.emplace_back(s.ip, s.walk_timestamp);
    }
  };
  auto walks = [&](bool bits_left) {
    trace_.clear();
    psb(0x400000);
    tnt(bits_left ? "TTTTTTTTTNT" : "TTTTTTTTTN");  // jne x9 taken, then not (je taken)
    enc_.tsc(0x2000);
    tnt(bits_left ? "T" : "TT");  // (je taken,) ret compressed
    enc_.ip_packet_no_ip(PacketType::kTipPgd);
    PtConfig cfg;
    FlowDecoder d(trace_, cfg, &space_, FlowOptions{}, 0, 0x1000);
    Times t;
    d.run(t);
    return t.runs;
  };
  using Runs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  // ... the last jne (its TNT's time), the call (the TSC after it), je, ret,
  // and call rbx (its TIP.PGD)
  auto runs = walks(false);
  ASSERT_GE(runs.size(), 5u);
  EXPECT_EQ(Runs(runs.end() - 5, runs.end() - 1),
            (Runs{{0x400002, 0x1000}, {0x400009, 0x2000}, {0x400018, 0x2000}, {0x40001e, 0x2000}}));
  runs = walks(true);
  ASSERT_GE(runs.size(), 5u);
  EXPECT_EQ(Runs(runs.end() - 5, runs.end() - 1),
            (Runs{{0x400002, 0x1000}, {0x400009, 0x1000}, {0x400018, 0x1000}, {0x40001e, 0x2000}}));
}

// On its way to an event's IP perf does not update the sample time: the
// instructions there, a direct call's included, keep the time they had, not
// that of the timing packets before the event.
TEST_F(FlowTest, WalkToAnEventIpKeepsTheSampleTime) {
  psb(0x400000);
  tnt("TTTTTTTTTN");  // jne x9 taken, then not
  enc_.tsc(0x2000);
  enc_.ptwrite(0x1234, 8, true);
  enc_.ip_packet(PacketType::kFup, 0x40001b);  // past call 400018 and test
  tnt("TT");                                   // je taken, ret compressed
  enc_.ip_packet_no_ip(PacketType::kTipPgd);
  struct Times : FlowSink {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> last;  // last ip, its time
    void on_step(const Step& s) override {
      if (s.kind == StepKind::kRun && s.ninsn) last.emplace_back(s.from, s.last_timestamp);
    }
  } t;
  PtConfig cfg;
  FlowDecoder d(trace_, cfg, &space_, FlowOptions{}, 0, 0x1000);
  d.run(t);
  using Runs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  ASSERT_GE(t.last.size(), 4u);
  // ... the call, test (up to the event), then je and ret at the new time
  EXPECT_EQ(Runs(t.last.end() - 5, t.last.end() - 1),
            (Runs{{0x400009, 0x1000}, {0x400018, 0x1000}, {0x40001b, 0x2000}, {0x40001e, 0x2000}}));
}

// ---- timing ----

TEST(TimerTest, TscTmaMtcAndCyc) {
  TimerParams p;
  p.mtc_period = 3;
  p.tsc_ctc_ratio_n = 100;
  p.tsc_ctc_ratio_d = 2;  // 50 TSC ticks per CTC tick
  p.max_non_turbo_ratio = 20;
  Timer t(p);
  t.set_reference(0x1234000000000000ULL);
  t.tsc(0x00ffff00001000ULL, false);
  // A TSC far below the reference wraps into the next 56-bit period instead.
  Timer w(p);
  w.set_reference(0x12ff000000000000ULL);
  w.tsc(0x0000000000000100ULL, false);
  EXPECT_EQ(w.timestamp(), 0x1300000000000100ULL);
  EXPECT_EQ(t.timestamp(), 0x1200ffff00001000ULL);  // top byte from the reference
  // TMA: CTC 0x108 (rem 0 after the 3 low bits), 20 fast-counter ticks.
  t.tma(0x108, 20);
  EXPECT_TRUE(t.have_tma());
  std::uint64_t ctc_base = 0x1200ffff00001000ULL - 20;
  // MTC 0x22: two periods of 8 CTC ticks after CTC 0x108 >> 3 = 0x21.
  t.mtc(0x22, false);
  EXPECT_EQ(t.timestamp(), ctc_base + 8 * 50);
  t.mtc(0x21, false);  // wraps: 255 periods later
  EXPECT_EQ(t.timestamp(), ctc_base + 8 * 50 + 255 * 8 * 50);
  // CYC counts from a CBR change: 40 cycles at CBR 10 = 80 TSC ticks (at a
  // TSC of a usual size: perf adds them in double precision).
  Timer c(p);
  const std::uint64_t before = 0x1000000000ULL;
  c.set_reference(before);
  c.tsc(before, false);
  c.cbr(10);
  c.cyc(40);
  EXPECT_EQ(c.timestamp(), before + 80);
  // A timestamp never goes backwards.
  c.tsc((before - 5) & 0x00ffffffffffffffULL, false);
  EXPECT_GE(c.timestamp(), before + 80);
}

// perf restarts its count of instructions since the time whenever a TSC, MTC
// or CYC sets the time, even to the value it had, and at an overflow.
TEST(TimerTest, UpdatesCountEverySettingOfTheTime) {
  TimerParams p;
  p.max_non_turbo_ratio = 20;
  Timer t(p);
  t.cyc(3);  // no reference time yet: nothing set
  EXPECT_EQ(t.updates(), 0u);
  const std::uint64_t at = 0x1000000000ULL;
  t.set_reference(at);
  t.tsc(at, false);
  EXPECT_EQ(t.updates(), 1u);
  t.cbr(40);  // half a TSC tick per cycle
  t.cyc(1);   // the time stays where it was, and is set all the same
  EXPECT_EQ(t.timestamp(), at);
  EXPECT_EQ(t.updates(), 2u);
  t.mtc(5, false);  // no TMA: perf ignores it
  EXPECT_EQ(t.updates(), 2u);
  t.overflow();
  EXPECT_EQ(t.updates(), 3u);
}

// ---- instructions ----

TEST(InsnTest, Classification) {
  InsnDecoder d;
  struct Case {
    std::vector<std::uint8_t> bytes;
    InsnClass cls;
    InsnOp op;
    int len;
    std::int64_t disp;
  };
  const Case cases[] = {
      {{0x75, 0xf9}, InsnClass::kCondJump, InsnOp::kJcc, 2, -7},
      {{0x0f, 0x84, 0x10, 0, 0, 0}, InsnClass::kCondJump, InsnOp::kJcc, 6, 16},
      {{0xe2, 0xfe}, InsnClass::kCondJump, InsnOp::kLoop, 2, -2},
      {{0xe3, 0x05}, InsnClass::kCondJump, InsnOp::kJcc, 2, 5},  // jrcxz
      {{0xeb, 0xea}, InsnClass::kJump, InsnOp::kJmp, 2, -22},
      {{0xe8, 0x0a, 0, 0, 0}, InsnClass::kCall, InsnOp::kCall, 5, 10},
      {{0xff, 0xd3}, InsnClass::kIndirectCall, InsnOp::kCall, 2, 0},
      {{0xff, 0x25, 0, 0, 0, 0}, InsnClass::kIndirectJump, InsnOp::kJmp, 6, 0},  // jmp [rip]
      {{0xc3}, InsnClass::kReturn, InsnOp::kRet, 1, 0},
      {{0xc2, 0x08, 0x00}, InsnClass::kReturn, InsnOp::kRet, 3, 0},
      {{0x0f, 0x05}, InsnClass::kFarCall, InsnOp::kSyscall, 2, 0},
      {{0xcc}, InsnClass::kFarCall, InsnOp::kInt, 1, 0},
      {{0x48, 0x0f, 0x07}, InsnClass::kFarReturn, InsnOp::kSysret, 3, 0},
      {{0x48, 0xcf}, InsnClass::kFarReturn, InsnOp::kIret, 2, 0},
      {{0xf3, 0x48, 0xa5}, InsnClass::kOther, InsnOp::kNone, 3, 0},
      {{0x0f, 0x0b}, InsnClass::kOther, InsnOp::kNone, 2, 0},              // ud2
      {{0xf3, 0x0f, 0x1e, 0xfa}, InsnClass::kOther, InsnOp::kNone, 4, 0},  // endbr64
  };
  for (const auto& c : cases) {
    Insn i = d.decode(c.bytes);
    SCOPED_TRACE(fmt::format("{:02x}", fmt::join(c.bytes, " ")));
    EXPECT_EQ(i.cls, c.cls);
    EXPECT_EQ(i.op, c.op);
    EXPECT_EQ(i.length, c.len);
    EXPECT_EQ(i.displacement, c.disp);
  }
  EXPECT_EQ(d.decode(std::vector<std::uint8_t>{0x0f}).cls, InsnClass::kInvalid);  // cut short
  EXPECT_EQ(d.decode(std::vector<std::uint8_t>{0xe8, 0x0a}).cls, InsnClass::kInvalid);
  EXPECT_EQ(d.disassemble(std::vector<std::uint8_t>{0xe8, 0x0a, 0, 0, 0}, 0x400009),
            "call 0x0000000000400018");
}

}  // namespace
}  // namespace perfkit::intelpt
