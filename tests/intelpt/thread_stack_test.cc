// The Synthesizer's thread stacks (perf's thread_stack) as perf report's
// add_callchain reads them: the call chain a recorded sample gets as of its
// time (thread_stack__sample_late), and one stack per thread on a per-cpu
// trace. Whole reports against perf are in pt_script_test.cc.
#include <gtest/gtest.h>

#include <vector>

#include "abi/perf_event.h"
#include "intelpt/synth.h"

namespace perfkit::intelpt {
namespace {

constexpr std::uint64_t kUser = abi::kContextUser, kKernel = abi::kContextKernel;
constexpr std::uint64_t kK = 0xffffffff81000000ULL;  // a kernel address

const std::uint8_t kLengths[1] = {5};

// One instruction at `from` that branches to `to` at `tsc`: a call, a
// return or a jump.
Step branch(std::uint64_t from, std::uint64_t to, InsnOp op, std::uint64_t tsc) {
  Step s;
  s.kind = StepKind::kRun;
  s.ip = s.from = from;
  s.to = to;
  s.ninsn = 1;
  s.lengths = kLengths;
  s.end = RunEnd::kBranch;
  s.last.op = op;
  s.last.cls = op == InsnOp::kCall  ? InsnClass::kCall
               : op == InsnOp::kRet ? InsnClass::kReturn
                                    : InsnClass::kJump;
  s.last.length = 5;
  s.timestamp = s.last_timestamp = tsc;
  s.tnt_done = true;
  return s;
}

struct Chains : SampleSink {
  std::vector<std::vector<std::uint64_t>> got;
  std::vector<std::uint64_t> ordinals;
  void on_sample(const SynthSample& s) override {
    if (s.kind != SampleKind::kChain) return;
    got.emplace_back(s.callchain, s.callchain + s.callchain_nr);
    ordinals.push_back(s.payload);
  }
};

ItraceOptions add_callchain(std::uint32_t size = 16) {
  ItraceOptions o;
  o.add_callchain = true;
  o.callchain_sz = size;
  return o;
}

using Chain = std::vector<std::uint64_t>;

TEST(ThreadStackTest, ChainsHoldTheReturnAddressesBeforeTheSampleTime) {
  PtConfig cfg;
  Chains out;
  Synthesizer synth(add_callchain(), cfg, out);
  synth.set_late_chains({{5, 0x1000, 1, 0},     // before any branch
                         {20, 0x3000, 1, 1},    // after two calls
                         {30, 0x2100, 1, 2},    // at the return's time: before it
                         {40, 0x2200, 1, 3}});  // after the end of the trace
  synth.on_step(branch(0x1000, 0x2000, InsnOp::kCall, 10));
  synth.on_step(branch(0x2010, 0x3000, InsnOp::kCall, 15));
  synth.on_step(branch(0x3020, 0x2015, InsnOp::kRet, 30));
  synth.finish();
  ASSERT_EQ(out.got.size(), 4u);
  EXPECT_EQ(out.got[0], (Chain{kUser, 0x1000}));  // nothing on the stack
  EXPECT_EQ(out.got[1], (Chain{kUser, 0x2015, 0x1005}));
  EXPECT_EQ(out.got[2], (Chain{kUser, 0x2015, 0x1005}));
  EXPECT_EQ(out.got[3], (Chain{kUser, 0x1005}));
  EXPECT_EQ(out.ordinals, (std::vector<std::uint64_t>{0, 1, 2, 3}));
}

TEST(ThreadStackTest, KernelFramesAboveTheUserOnesAreSkipped) {
  PtConfig cfg;
  Chains out;
  Synthesizer synth(add_callchain(), cfg, out);
  synth.on_step(branch(0x1000, 0x2000, InsnOp::kCall, 10));
  synth.on_step(branch(0x2010, kK, InsnOp::kSyscall, 11));  // into the kernel
  synth.on_step(branch(kK + 0x10, kK + 0x100, InsnOp::kCall, 12));
  // A user sample: the kernel's frames at the top are not its callers.
  synth.set_late_chains({{20, 0x2010, 1, 0}, {20, kK + 0x105, 1, 1}, {20, kK + 0x15, 1, 2}});
  synth.finish();
  ASSERT_EQ(out.got.size(), 3u);
  EXPECT_EQ(out.got[0], (Chain{kUser, 0x2015, 0x1005}));
  EXPECT_EQ(out.got[1], (Chain{kUser, 0x2015, 0x1005}));
  // A kernel sample at the kernel's return address keeps it, each mode
  // after its context marker.
  EXPECT_EQ(out.got[2], (Chain{kKernel, kK + 0x15, kUser, 0x2015, 0x1005}));
}

TEST(ThreadStackTest, KernelSampleAtAStackAddressKeepsTheKernelFrames) {
  PtConfig cfg;
  Chains out;
  Synthesizer synth(add_callchain(), cfg, out);
  synth.on_step(branch(0x1000, 0x2000, InsnOp::kCall, 10));
  synth.on_step(branch(kK, kK + 0x100, InsnOp::kCall, 11));
  synth.set_late_chains({{20, kK + 5, 1, 0}});
  synth.finish();
  ASSERT_EQ(out.got.size(), 1u);
  EXPECT_EQ(out.got[0], (Chain{kKernel, kK + 5, kUser, 0x1005}));
}

TEST(ThreadStackTest, ChainsAreCutToTheCallChainSize) {
  PtConfig cfg;
  Chains out;
  Synthesizer synth(add_callchain(2), cfg, out);  // 3 words: a marker and two addresses
  for (std::uint64_t i = 0; i < 5; ++i)
    synth.on_step(branch(0x1000 + 0x100 * i, 0x1100 + 0x100 * i, InsnOp::kCall, 10 + i));
  synth.set_late_chains({{20, 0x1500, 1, 0}});
  synth.finish();
  ASSERT_EQ(out.got.size(), 1u);
  EXPECT_EQ(out.got[0], (Chain{kUser, 0x1405, 0x1305}));
}

// Two threads take turns on one cpu; the second comes from another cpu the
// second time, so its stack starts afresh (perf flushes a thread stack when
// its branches come from another trace).
struct TwoThreads : ThreadClock {
  Span thread_at(std::uint64_t tsc) override {
    if (tsc < 100) return {1, false, 0, 100};
    if (tsc < 200) return {2, false, 100, 200};
    if (tsc < 300) return {1, false, 200, 300};
    return {2, true, 300, ~0ULL};
  }
};

TEST(ThreadStackTest, EachThreadHasItsOwnStack) {
  PtConfig cfg;
  Chains out;
  ItraceOptions o = add_callchain();
  o.callchain = true;  // the synthesized samples use the same stacks
  Synthesizer synth(o, cfg, out);
  TwoThreads clock;
  synth.set_thread_clock(&clock);
  synth.set_late_chains({{150, 0x7000, 1, 0},
                         {150, 0x7000, 2, 1},
                         {250, 0x7000, 1, 2},
                         {250, 0x7000, 2, 3},
                         {350, 0x7000, 2, 4},
                         {350, 0x7000, 3, 5}});
  synth.on_step(branch(0x1000, 0x2000, InsnOp::kCall, 50));   // thread 1
  synth.on_step(branch(0x5000, 0x6000, InsnOp::kCall, 120));  // thread 2
  synth.on_step(branch(0x2000, 0x2100, InsnOp::kJmp, 220));   // thread 1
  synth.on_step(branch(0x6000, 0x6100, InsnOp::kJmp, 320));   // thread 2, migrated
  synth.finish();
  ASSERT_EQ(out.got.size(), 6u);
  EXPECT_EQ(out.got[0], (Chain{kUser, 0x1005}));
  EXPECT_EQ(out.got[1], (Chain{kUser, 0x5005}));
  EXPECT_EQ(out.got[2], (Chain{kUser, 0x1005}));
  EXPECT_EQ(out.got[3], (Chain{kUser, 0x5005}));
  EXPECT_EQ(out.got[4], (Chain{kUser, 0x7000}));  // flushed
  EXPECT_EQ(out.got[5], (Chain{kUser, 0x7000}));  // a thread with no stack
}

}  // namespace
}  // namespace perfkit::intelpt
