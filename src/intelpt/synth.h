// Synthesizer: the bottom of --itrace. It turns the flow decoder's steps into
// the samples perf synthesizes from an Intel PT trace: "instructions" (one
// per period), "branches" (every taken branch, trace begin/end and
// asynchronous branch, with perf's flags; c and r keep only calls or
// returns), "transactions", "ptwrite", power events (cbr, mwait, pwre,
// exstop, pwrx, psb) and errors (perf's codes and messages), optionally with
// call chains (g) and last-branch entries (l) kept on a shadow call stack.
// Samples go to a SampleSink in decode order, each with its TSC and perf time.
//
// Branch and instruction samples carry perf's IPC (shown by perf script
// -F+ipc): the instructions and cycles since the last sample of the same kind
// that had them. perf takes a cycle count only at the states of its decoder
// that update the sample time (a taken conditional branch or compressed
// return, a TIP, a trace begin or end, an asynchronous branch, an event),
// the first after a CYC packet; a not-taken branch that makes no sample
// drops it. Without CYC packets, counts estimated from time (MTC) can be
// taken at any sample; with itrace 'A', the count at the latest time update.
// The instruction count includes the sample's instruction, but for an
// asynchronous branch.
#pragma once

#include <cstdint>
#include <unordered_map>
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
  // Not an event: the call chain a recorded sample gets from the thread
  // stack as of its time (perf's add_callchain, itrace G). ip: the sample's
  // IP; payload: LateChainRequest::ordinal; callchain: in perf's format,
  // context markers included.
  kChain,
  // Not an event: a state of perf's decoder that moved its time on and made
  // no sample (Synthesizer::set_ticks): where perf's decode of one queue
  // among several may stop to let another catch up.
  kTick,
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
  // Where the instruction of insn_len is (0: at ip). perf's samples of
  // events not tied to a FUP, and trace begins, keep the instruction its
  // decoder walked last.
  std::uint64_t insn_ip = 0;
  std::uint64_t payload = 0;       // ptwrite/mwait/pwre/pwrx payload; psb: trace offset
  std::uint32_t aux = 0;           // cbr: ratio; ptwrite/exstop: the IP bit
  std::uint32_t cbr_freq_khz = 0;  // cbr: ratio times the kHz per ratio step
  std::uint32_t cbr_freq_mhz = 0;
  std::uint32_t cbr_percent = 0;
  PtError error = PtError::kNone;  // kError
  const char* error_msg = nullptr;
  std::uint32_t image = 0;   // kError: Step::image
  std::uint64_t offset = 0;  // trace offset of the packet behind the sample
  // IPC: instructions and cycles since the last sample of this kind that had
  // them (branches and instructions only; 0 and 0: none).
  std::uint64_t insn_cnt = 0, cyc_cnt = 0;
  const std::uint64_t* callchain = nullptr;  // g: the sample IP then return addresses
  std::uint32_t callchain_nr = 0;
  const BranchRecord* branch_stack = nullptr;  // l: newest first
  std::uint32_t branch_nr = 0;
};

// Who runs on the traced cpu when, for perf's per-thread call stacks.
class ThreadClock {
 public:
  struct Span {
    std::int32_t tid = -1;       // -1: no thread known (no stack is kept)
    bool migrated = false;       // it ran on another traced cpu before: a stale stack
    std::uint64_t start = 0;     // when it began
    std::uint64_t next = ~0ULL;  // when the thread may change next
  };
  virtual ~ThreadClock() = default;
  virtual Span thread_at(std::uint64_t tsc) = 0;
};

// A recorded sample to give a call chain (kChain) once decoding reaches its
// time: the stack of thread `tid` after every branch before `tsc`.
struct LateChainRequest {
  std::uint64_t tsc = 0, ip = 0;
  std::int32_t tid = -1;
  std::uint32_t ordinal = 0;
};

class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void on_sample(const SynthSample& s) = 0;
  // `n` instruction samples like `s` (same time, flags and period, no IPC or
  // chains), one after the other from s.ip, of lengths[0..n): a sink that
  // can take them in one go overrides this. s.ip and s.insn_len are left
  // unspecified.
  virtual void on_insn_run(SynthSample& s, const std::uint8_t* lengths, std::uint32_t n) {
    std::uint64_t ip = s.ip;
    for (std::uint32_t i = 0; i < n; ++i) {
      s.ip = ip;
      s.insn_len = lengths[i];
      on_sample(s);
      ip += lengths[i];
    }
  }
};

class Synthesizer : public FlowSink {
 public:
  // `every_branch`: with c or r, also the branches they leave out (without
  // IPC and not counted by s), for a consumer that follows calls itself and
  // then applies c and r.
  Synthesizer(const ItraceOptions& opts, const PtConfig& cfg, SampleSink& sink,
              bool every_branch = false);

  void on_step(const Step& step) override;
  // Call stacks per thread, as `clock` says which runs (without one, a
  // single stack). The clock must outlive the synthesizer.
  void set_thread_clock(ThreadClock* clock) { clock_ = clock; }
  // Requests in TSC order; each makes a kChain sample. Call finish() at the
  // end of the trace for those after its last branch.
  void set_late_chains(std::vector<LateChainRequest> requests) { late_ = std::move(requests); }
  // Also kTick samples: for merging several queues in perf's order.
  void set_ticks(bool on) { ticks_ = on; }
  void finish();

  std::uint64_t instructions() const { return insn_total_; }

 private:
  void run(const Step& s);
  // `insns`: instructions so far, for the IPC.
  void branch(std::uint64_t from, std::uint64_t to, std::uint32_t flags, std::uint8_t len,
              const Step& s, std::uint64_t tsc, std::uint64_t insns);
  void event(const Step& s);
  void error(PtError code, const Step& s);
  void emit(SynthSample& out, std::uint64_t tsc);
  // A decoder state at `tsc`: a kTick where its time is new and no sample showed it.
  void state_time(std::uint64_t tsc);
  // `last`: the run's last instruction (its branch kind flags the sample).
  void sample_insn(std::uint64_t ip, std::uint8_t len, const Step& s, std::uint64_t tsc, bool last,
                   std::uint64_t insns);

  // perf's IPC bookkeeping (see the top). What perf's decoder state is at
  // the last instruction of a run: no time update of its own (one inside a
  // TNT packet, Step::in_tnt), a time update, or a not-taken conditional
  // branch (a time update only if it is sampled; else it drops the count).
  enum class IpcPoint : std::uint8_t { kPlain, kTimed, kNotTaken };
  static IpcPoint run_end(const Step& s);
  // A decoder state: `timed` if it updates the sample time.
  void ipc_state(const Step& s, bool timed);
  void ipc_run_end(const Step& s, IpcPoint end, bool sampled);
  void ipc_error(const Step& s) { ipc_snap_ = ipc_approx_ = s.cycles; }
  // Sets out.insn_cnt/cyc_cnt for a sample of `kind` (0 branches, 1
  // instructions) at `insns` instructions.
  void set_ipc(SynthSample& out, int kind, std::uint64_t insns);
  void track_stack(std::uint64_t from, std::uint64_t to, std::uint32_t flags, std::uint8_t len,
                   std::uint64_t tsc);
  // perf's thread stack: return addresses, and whether the call ended the
  // trace (not expected to return).
  // perf's thread stack: return addresses, and (l) the last branches as a
  // ring whose newest entry is at br_pos.
  struct ThreadStack {
    std::vector<std::uint64_t> ret;
    std::vector<bool> end;
    std::vector<BranchRecord> br;
    std::size_t br_pos = 0, br_nr = 0;
    void clear() {
      ret.clear();
      end.clear();
      br_pos = br_nr = 0;
    }
  };
  void push_branch(ThreadStack& st, std::uint64_t from, std::uint64_t to, std::uint32_t flags);
  void copy_branches(const ThreadStack* st);
  void select_thread(std::uint64_t tsc);
  void late_chains_before(std::uint64_t tsc);
  void late_chain(const LateChainRequest& r);
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
  std::uint64_t insn_since_sample_ = 0;  // since the last period ended
  std::uint64_t insns_sampled_ = 0;      // insn_total_ at the last instruction sample
  // Tick periods, as perf's decoder counts them: every instruction adds a
  // tick to the time of its walk (a run), samples fall where that estimate
  // crosses a multiple of the period (last_masked_), and the instructions
  // left before the next one are fixed when a walk starts.
  std::uint64_t walk_tsc_ = 0, insn_since_tsc_ = 0;
  std::uint32_t walk_updates_ = ~0u;
  std::uint64_t last_masked_ = 0, walk_left_ = 0;
  bool continuous_period_ = false;
  std::uint64_t next_period();
  void tick_sampled();
  std::uint32_t unsampled(std::uint32_t most);
  std::uint64_t events_ = 0;
  bool in_tx_ = false;
  ThreadStack solo_;             // without a clock
  ThreadStack* stack_ = &solo_;  // the running thread's (nullptr: none known)
  std::unordered_map<std::int32_t, ThreadStack> stacks_;  // by tid, with a clock
  ThreadClock* clock_ = nullptr;
  std::uint64_t span_start_ = ~0ULL, span_next_ = 0;
  std::vector<LateChainRequest> late_;
  std::size_t late_pos_ = 0;
  std::vector<std::uint64_t> chain_;
  std::vector<BranchRecord> branch_buf_;
  SynthSample insn_;                   // reused for every instruction sample
  std::uint32_t last_insn_flags_ = 0;  // of the last instruction walked
  std::uint8_t last_insn_len_ = 0;     // 0 after an event at a FUP, as perf's decoder
  std::uint64_t last_insn_ip_ = 0;
  std::uint64_t time_tsc_ = ~0ULL, time_ns_ = 0;
  bool every_branch_ = false;
  bool ticks_ = false;
  std::uint64_t shown_tsc_ = 0;  // the latest time a sample or tick showed
  // perf's sample_tot_cyc_cnt, the cycle marks it took or dropped, its
  // state's cycles (for 'A'), whether the current state may show IPC
  // (INTEL_PT_SAMPLE_IPC), and per kind the counts of the last IPC shown.
  std::uint64_t ipc_snap_ = 0, ipc_used_marks_ = 0, ipc_approx_ = 0;
  bool ipc_flag_ = false;
  struct IpcCounts {
    std::uint64_t insns = 0, cycles = 0;
  } ipc_last_[2];
};

}  // namespace perfkit::intelpt
