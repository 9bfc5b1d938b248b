// perf's IPC (perf script -F+ipc) at the two levels that make it: the Timer's
// cycle count (CYC packets while tracing is on; else an estimate from MTC
// time and the core:bus ratio) and the Synthesizer's choice of the samples
// that show it (intel-pt-decoder.c's sample_cyc rules, per event kind).
// The whole-output comparisons with perf are in pt_script_test.cc.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

#include "intelpt/synth.h"
#include "intelpt/timing.h"

namespace perfkit::intelpt {
namespace {

TimerParams params() {
  TimerParams p;
  p.mtc_period = 3;
  p.tsc_ctc_ratio_n = 100;
  p.tsc_ctc_ratio_d = 2;  // 50 TSC ticks per CTC tick
  p.max_non_turbo_ratio = 20;
  return p;
}

TEST(IpcCyclesTest, CycPacketsCountWhileTracingIsOn) {
  Timer t(params());
  t.cbr(20);
  EXPECT_FALSE(t.have_cyc());
  t.cyc(100);  // tracing is off: a sampling point, no cycles
  EXPECT_TRUE(t.have_cyc());
  EXPECT_EQ(t.ipc_cycles(), 0u);
  EXPECT_EQ(t.cycle_marks(), 1u);
  t.trace_on(true);
  t.cyc(30);
  t.cyc(12);
  EXPECT_EQ(t.ipc_cycles(), 42u);
  EXPECT_EQ(t.cycle_marks(), 3u);
  t.trace_off();
  t.cyc(5);
  EXPECT_EQ(t.ipc_cycles(), 42u);
  EXPECT_EQ(t.cycle_marks(), 4u);
}

TEST(IpcCyclesTest, WithoutCycTheCountIsEstimatedFromMtcTime) {
  Timer t(params());
  t.set_reference(0x100000000ULL);
  t.tsc(0x100000000ULL, false);
  t.cbr(10);                         // half a cycle per TSC tick
  t.tma(0x108, 0, /*in_psb=*/true);  // CTC 0x108: MTC 0x21
  EXPECT_EQ(t.ipc_cycles(), 0u);     // tracing is off
  EXPECT_EQ(t.cycle_marks(), 1u);
  t.trace_on(true);    // the estimate starts here
  t.mtc(0x22, false);  // 8 CTC ticks = 400 TSC ticks on
  EXPECT_EQ(t.ipc_cycles(), 200u);
  EXPECT_EQ(t.cycle_marks(), 2u);
  t.cbr(20);  // a new rate from here: one cycle per tick
  t.mtc(0x23, false);
  EXPECT_EQ(t.ipc_cycles(), 600u);
  t.tma(0x120, 0);  // outside PSB+ while tracing: the estimate restarts
  EXPECT_EQ(t.ipc_cycles(), 600u);
  // From the first CYC packet on, only CYC packets count.
  t.cyc(7);
  EXPECT_EQ(t.ipc_cycles(), 607u);
  const std::uint64_t marks = t.cycle_marks();
  t.mtc(0x25, false);
  EXPECT_EQ(t.ipc_cycles(), 607u);
  EXPECT_EQ(t.cycle_marks(), marks);
}

// ---- which samples show IPC ----

struct Samples : SampleSink {
  struct Ipc {
    SampleKind kind;
    std::uint64_t ip, insns, cycles;
  };
  std::vector<Ipc> got;
  void on_sample(const SynthSample& s) override {
    got.push_back({s.kind, s.ip, s.insn_cnt, s.cyc_cnt});
  }
};

const std::uint8_t kLengths[8] = {2, 2, 2, 2, 2, 2, 2, 2};

// A run of `n` two-byte instructions from `ip` whose last is of class `cls`
// and leaves as `end`, with the cycle count of the trace taken for it.
Step run(std::uint64_t ip, std::uint32_t n, InsnClass cls, RunEnd end, std::uint64_t cycles,
         std::uint64_t marks, bool exact = true) {
  Step s;
  s.kind = StepKind::kRun;
  s.ip = ip;
  s.ninsn = n;
  s.lengths = kLengths;
  s.end = end;
  s.last.cls = cls;
  s.last.length = 2;
  s.last.op = cls == InsnClass::kCondJump ? InsnOp::kJcc
              : cls == InsnClass::kReturn ? InsnOp::kRet
              : cls == InsnClass::kCall   ? InsnOp::kCall
                                          : InsnOp::kJmp;
  s.from = ip + 2 * (n - 1);
  s.to = 0x9000;
  s.cycles = cycles;
  s.cycle_marks = marks;
  s.exact_cycles = exact;
  s.tnt_done = true;
  return s;
}

// The branch samples' IPC, as "ip:insns/cycles" ("ip:-" for none).
std::vector<std::string> branch_ipc(const ItraceOptions& o, const std::vector<Step>& steps,
                                    bool every_branch = false) {
  PtConfig cfg;
  Samples out;
  Synthesizer synth(o, cfg, out, every_branch);
  for (const Step& s : steps) synth.on_step(s);
  std::vector<std::string> r;
  for (const auto& g : out.got)
    if (g.kind == SampleKind::kBranches)
      r.push_back(g.cycles ? fmt::format("{:x}:{}/{}", g.ip, g.insns, g.cycles)
                           : fmt::format("{:x}:-", g.ip));
  return r;
}

ItraceOptions branches() {
  ItraceOptions o;
  o.branches = true;
  return o;
}

TEST(IpcSamplesTest, CycCountsGoToTheFirstTimedBranchAfterThem) {
  const std::vector<Step> steps = {
      run(0x1000, 3, InsnClass::kCondJump, RunEnd::kBranch, 10, 1),  // taken: 3 insns, 10 cycles
      run(0x2000, 2, InsnClass::kJump, RunEnd::kBranch, 20, 2),      // direct jump: not timed
      run(0x3000, 2, InsnClass::kIndirectJump, RunEnd::kBranch, 20, 2),  // TIP: new count
      run(0x4000, 1, InsnClass::kReturn, RunEnd::kBranch, 20, 2),        // no CYC since: none
  };
  EXPECT_EQ(branch_ipc(branches(), steps),
            (std::vector<std::string>{"1004:3/10", "2002:-", "3002:4/10", "4000:-"}));
}

TEST(IpcSamplesTest, NotTakenBranchWithoutSampleDropsTheCount) {
  const std::vector<Step> steps = {
      run(0x1000, 3, InsnClass::kCondJump, RunEnd::kBranch, 10, 1),
      run(0x2000, 2, InsnClass::kCondJump, RunEnd::kFallThrough, 20, 2),  // not taken
      run(0x3000, 2, InsnClass::kCondJump, RunEnd::kBranch, 20, 2),
      run(0x4000, 2, InsnClass::kCondJump, RunEnd::kBranch, 25, 3),  // the next CYC: 6 insns
  };
  EXPECT_EQ(branch_ipc(branches(), steps),
            (std::vector<std::string>{"1004:3/10", "3002:-", "4002:6/15"}));
  // Sampled as an instruction, the not-taken branch takes the count itself.
  ItraceOptions o = branches();
  o.instructions = true;
  o.period_type = PeriodType::kInstructions;
  o.period = 1;
  PtConfig cfg;
  Samples out;
  Synthesizer synth(o, cfg, out);
  for (const Step& s : steps) synth.on_step(s);
  std::vector<std::uint64_t> insn_ipc_at;
  for (const auto& g : out.got)
    if (g.kind == SampleKind::kInstructions && g.cycles) insn_ipc_at.push_back(g.ip);
  EXPECT_EQ(insn_ipc_at, (std::vector<std::uint64_t>{0x1004, 0x2002, 0x4002}));
}

TEST(IpcSamplesTest, EstimatedCyclesShowAtAnySample) {
  // Without CYC packets every state may show IPC, with the count taken at
  // the last timed state after an MTC: the direct jump shows what the
  // indirect branch took.
  const std::vector<Step> steps = {
      run(0x1000, 3, InsnClass::kCondJump, RunEnd::kBranch, 10, 1, false),
      run(0x2000, 2, InsnClass::kIndirectJump, RunEnd::kBranch, 30, 2, false),
      run(0x3000, 2, InsnClass::kJump, RunEnd::kBranch, 40, 2, false),
  };
  ItraceOptions o = branches();
  o.calls = true;  // perf counts only the branches c keeps
  std::vector<Step> with_call = steps;
  with_call[2].last.cls = InsnClass::kCall;
  with_call[2].last.op = InsnOp::kCall;
  EXPECT_EQ(branch_ipc(branches(), steps),
            (std::vector<std::string>{"1004:3/10", "2002:2/20", "3002:-"}));
  EXPECT_EQ(branch_ipc(o, with_call), (std::vector<std::string>{"3002:7/30"}));
  // With every branch for a call-following consumer, the others come
  // without IPC and the calls count as before.
  EXPECT_EQ(branch_ipc(o, with_call, true),
            (std::vector<std::string>{"1004:-", "2002:-", "3002:7/30"}));
}

TEST(IpcSamplesTest, ApproximateIpcTakesTheCountAtEachTimeUpdate) {
  std::vector<Step> steps = {
      run(0x1000, 3, InsnClass::kCondJump, RunEnd::kBranch, 10, 1),
      run(0x2000, 2, InsnClass::kCondJump, RunEnd::kBranch, 20, 1),  // no new CYC: still shown
      run(0x3000, 2, InsnClass::kJump, RunEnd::kBranch, 30, 2),      // not timed
  };
  ItraceOptions o = branches();
  o.approx_ipc = true;
  EXPECT_EQ(branch_ipc(o, steps), (std::vector<std::string>{"1004:3/10", "2002:2/10", "3002:-"}));
  // Inside a TNT packet a direct jump updates the time too.
  steps[2].in_tnt = true;
  EXPECT_EQ(branch_ipc(o, steps),
            (std::vector<std::string>{"1004:3/10", "2002:2/10", "3002:2/10"}));
}

}  // namespace
}  // namespace perfkit::intelpt

namespace perfkit::intelpt {
namespace {

// perf's CYC rate, measured between MTC packets that follow CYC packets.
TEST(CycRateTest, MeasuredBetweenMtcPacketsThatFollowCyc) {
  auto timer = [] {
    Timer t(params());
    t.set_reference(0x100000000ULL);
    t.tsc(0x100000000ULL, false);
    t.cbr(20);  // one TSC tick per cycle by the CBR
    t.tma(0x108, 0);
    t.cyc(10);
    t.mtc(0x22, true);  // after a CYC: CYC time counts from here
    return t;
  };
  auto packet = [](PacketType type, std::uint64_t payload) {
    Packet p;
    p.type = type;
    p.payload = payload;
    return p;
  };
  const std::uint64_t at = 0x100000000ULL + 400;
  {
    // 320 cycles up to the next MTC after a CYC, 400 ticks on: 1.25 ticks a cycle.
    Timer t = timer();
    ASSERT_EQ(t.timestamp(), at);
    CycRateProbe probe(t);
    EXPECT_TRUE(probe.next(packet(PacketType::kTnt, 0)));
    EXPECT_TRUE(probe.next(packet(PacketType::kCyc, 320)));
    EXPECT_FALSE(probe.next(packet(PacketType::kMtc, 0x23)));
    probe.apply(t);
    t.cyc(8);
    EXPECT_EQ(t.timestamp(), at + 10);
  }
  {
    // Over 1.25 times the CBR rate: not taken, the CBR rate stays.
    Timer t = timer();
    CycRateProbe probe(t);
    EXPECT_TRUE(probe.next(packet(PacketType::kCyc, 266)));
    EXPECT_FALSE(probe.next(packet(PacketType::kMtc, 0x23)));
    probe.apply(t);
    t.cyc(8);
    EXPECT_EQ(t.timestamp(), at + 8);
  }
  {
    // A TSC ends the look: no rate.
    Timer t = timer();
    CycRateProbe probe(t);
    EXPECT_TRUE(probe.next(packet(PacketType::kCyc, 320)));
    EXPECT_FALSE(probe.next(packet(PacketType::kTsc, 0)));
    probe.apply(t);
    t.cyc(8);
    EXPECT_EQ(t.timestamp(), at + 8);
  }
}

}  // namespace
}  // namespace perfkit::intelpt
