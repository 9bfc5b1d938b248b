// Synthesizer: the bottom of --itrace. It turns the flow decoder's steps into
// the samples perf synthesizes from an Intel PT trace: "instructions" (one
// per period), "branches" (every taken branch, trace begin/end and
// asynchronous branch, with perf's flags; c and r keep only calls or
// returns), "transactions", "ptwrite", power events (cbr, mwait, pwre,
// exstop, pwrx, psb) and errors (perf's codes and messages), optionally with
// call chains (g) and last-branch entries (l) kept on a shadow call stack.
// Samples go to a SampleSink in decode order, each with its TSC and perf time.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "intelpt/config.h"
#include "intelpt/flow_decoder.h"
#include "intelpt/itrace_options.h"

namespace perfkit::intelpt {

// perf's sample flags (PERF_IP_FLAG_*), shown by perf script -F flags as
// "bcrosyiABExghDt".
enum IpFlag : std::uint32_t {
  kFlagBranch = 1u << 0,
  kFlagCall = 1u << 1,
  kFlagReturn = 1u << 2,
  kFlagConditional = 1u << 3,
  kFlagSyscallRet = 1u << 4,
  kFlagAsync = 1u << 5,
  kFlagInterrupt = 1u << 6,
  kFlagTxAbort = 1u << 7,
  kFlagTraceBegin = 1u << 8,
  kFlagTraceEnd = 1u << 9,
  kFlagInTx = 1u << 10,
  kFlagVmEntry = 1u << 11,
  kFlagVmExit = 1u << 12,
  kFlagIntrDisable = 1u << 13,
  kFlagIntrToggle = 1u << 14,
};

// The flags perf gives a branch by the instruction that made it.
std::uint32_t insn_op_flags(InsnOp op);
// perf script's text for sample flags ("call", "tr strt", "tr end  syscall",
// or the flag letters when there is no name), unpadded.
std::string format_ip_flags(std::uint32_t flags);

enum class SampleKind : std::uint8_t {
  kInstructions,
  kBranches,
  kTransactions,
  kPtwrite,
  kCbr,
  kMwait,
  kPwre,
  kExstop,
  kPwrx,
  kPsb,
  kError,
};

// The name of the synthesized event ("instructions", "branches", "cbr", ...).
const char* sample_kind_name(SampleKind k);

struct BranchRecord {
  std::uint64_t from = 0, to = 0;
  std::uint32_t flags = 0;
};

struct SynthSample {
  SampleKind kind = SampleKind::kInstructions;
  std::uint64_t ip = 0;
  std::uint64_t addr = 0;  // branches: the target (0: trace end)
  std::uint64_t tsc = 0;   // TSC ticks
  std::uint64_t time = 0;  // perf time in ns (0 when timeless)
  std::uint64_t period = 1;
  std::uint32_t flags = 0;  // IpFlag bits
  std::uint8_t insn_len = 0;
  std::uint64_t payload = 0;  // ptwrite/mwait/pwre/pwrx payload; psb: trace offset
  std::uint32_t aux = 0;      // cbr: ratio; ptwrite/exstop: the IP bit
  std::uint32_t cbr_freq_mhz = 0;
  std::uint32_t cbr_percent = 0;
  PtError error = PtError::kNone;  // kError
  const char* error_msg = nullptr;
  std::uint64_t offset = 0;                  // trace offset of the packet behind the sample
  std::uint64_t insn_cnt = 0, cyc_cnt = 0;   // IPC since the last sample of this kind
  const std::uint64_t* callchain = nullptr;  // g: the sample IP then return addresses
  std::uint32_t callchain_nr = 0;
  const BranchRecord* branch_stack = nullptr;  // l: newest first
  std::uint32_t branch_nr = 0;
};

class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void on_sample(const SynthSample& s) = 0;
};

class Synthesizer : public FlowSink {
 public:
  Synthesizer(const ItraceOptions& opts, const PtConfig& cfg, SampleSink& sink);

  void on_step(const Step& step) override;

  std::uint64_t instructions() const { return insn_total_; }

 private:
  void run(const Step& s);
  void branch(std::uint64_t from, std::uint64_t to, std::uint32_t flags, std::uint8_t len,
              const Step& s, std::uint64_t tsc);
  void event(const Step& s);
  void error(PtError code, const Step& s);
  void emit(SynthSample& out, std::uint64_t tsc);
  // `last`: the run's last instruction (its branch kind flags the sample).
  void sample_insn(std::uint64_t ip, std::uint8_t len, const Step& s, std::uint64_t tsc, bool last);
  void track_stack(std::uint64_t from, std::uint64_t to, std::uint32_t flags, std::uint8_t len);
  bool skip();
  std::uint64_t perf_time(std::uint64_t tsc) {
    if (tsc != time_tsc_) {
      time_tsc_ = tsc;
      time_ns_ = o_.timeless ? 0 : cfg_.tsc_to_perf_time(tsc);
    }
    return time_ns_;
  }

  ItraceOptions o_;
  const PtConfig& cfg_;
  SampleSink& sink_;
  std::uint32_t branch_filter_ = 0;
  bool every_insn_ = false;         // a sample for every instruction, nothing else on it
  std::uint64_t period_ticks_ = 0;  // ticks/ns periods: a power of two of TSC ticks
  std::uint64_t insn_total_ = 0;
  std::uint64_t insn_since_sample_ = 0;
  std::uint64_t next_tick_ = 0;
  std::uint64_t last_tsc_ = 0, insn_since_tsc_ = 0;
  std::uint64_t events_ = 0;
  bool in_tx_ = false;
  std::vector<std::uint64_t> stack_;  // return addresses (g)
  std::vector<bool> stack_end_;       // pushed by a call that ended the trace
  std::vector<std::uint64_t> chain_;
  std::deque<BranchRecord> last_branches_;  // (l)
  std::vector<BranchRecord> branch_buf_;
  SynthSample insn_;                   // reused for every instruction sample
  std::uint32_t last_insn_flags_ = 0;  // of the last instruction walked
  std::uint8_t last_insn_len_ = 0;
  std::uint64_t time_tsc_ = ~0ULL, time_ns_ = 0;
};

}  // namespace perfkit::intelpt
