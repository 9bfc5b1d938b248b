#include "intelpt/synth.h"

#include <fmt/format.h>

#include <bit>

#include "abi/perf_event.h"

namespace perfkit::intelpt {

namespace {

constexpr std::uint32_t kMaxStack = 1 << 16;

// The flag combinations perf names (perf script -F flags).
struct FlagName {
  std::uint32_t flags;
  const char* name;
};
constexpr FlagName kFlagNames[] = {
    {kFlagBranch | kFlagCall, "call"},
    {kFlagBranch | kFlagReturn, "return"},
    {kFlagBranch | kFlagConditional, "jcc"},
    {kFlagBranch, "jmp"},
    {kFlagBranch | kFlagCall | kFlagInterrupt, "int"},
    {kFlagBranch | kFlagReturn | kFlagInterrupt, "iret"},
    {kFlagBranch | kFlagCall | kFlagSyscallRet, "syscall"},
    {kFlagBranch | kFlagReturn | kFlagSyscallRet, "sysret"},
    {kFlagBranch | kFlagAsync, "async"},
    {kFlagBranch | kFlagCall | kFlagAsync | kFlagInterrupt, "hw int"},
    {kFlagBranch | kFlagTxAbort, "tx abrt"},
    {kFlagBranch | kFlagTraceBegin, "tr strt"},
    {kFlagBranch | kFlagTraceEnd, "tr end"},
    {kFlagBranch | kFlagCall | kFlagVmEntry, "vmentry"},
    {kFlagBranch | kFlagCall | kFlagVmExit, "vmexit"},
};

const char* flag_name(std::uint32_t flags) {
  for (const auto& f : kFlagNames)
    if (f.flags == flags) return f.name;
  return nullptr;
}

}  // namespace

std::uint32_t insn_op_flags(InsnOp op) {
  switch (op) {
    case InsnOp::kCall:
      return kFlagBranch | kFlagCall;
    case InsnOp::kRet:
      return kFlagBranch | kFlagReturn;
    case InsnOp::kJcc:
    case InsnOp::kLoop:
      return kFlagBranch | kFlagConditional;
    case InsnOp::kJmp:
      return kFlagBranch;
    case InsnOp::kIret:
      return kFlagBranch | kFlagReturn | kFlagInterrupt;
    case InsnOp::kInt:
      return kFlagBranch | kFlagCall | kFlagInterrupt;
    case InsnOp::kSyscall:
      return kFlagBranch | kFlagCall | kFlagSyscallRet;
    case InsnOp::kSysret:
      return kFlagBranch | kFlagReturn | kFlagSyscallRet;
    case InsnOp::kVmentry:
      return kFlagBranch | kFlagCall | kFlagVmEntry;
    default:
      return 0;
  }
}

std::string format_ip_flags(std::uint32_t flags) {
  const std::uint32_t xf = kFlagInTx | kFlagIntrDisable | kFlagIntrToggle;
  std::string xs;
  if (flags & xf) {
    xs = "(";
    if (flags & kFlagInTx) xs += 'x';
    if (flags & kFlagIntrDisable) xs += 'D';
    if (flags & kFlagIntrToggle) xs += 't';
    xs += ')';
  }
  if (const char* n = flag_name(flags & ~xf)) return fmt::format("{:<15}{:>6}", n, xs);
  if (flags & kFlagTraceBegin)
    if (const char* n = flag_name(flags & ~(xf | kFlagTraceBegin)))
      return fmt::format("tr strt {:<7}{:>6}", n, xs);
  if (flags & kFlagTraceEnd)
    if (const char* n = flag_name(flags & ~(xf | kFlagTraceEnd)))
      return fmt::format("tr end  {:<7}{:>6}", n, xs);
  static constexpr char kChars[] = "bcrosyiABExghDt";
  std::string s;
  for (unsigned i = 0; i < 32; ++i)
    if (flags & (1u << i)) s += i < sizeof(kChars) - 1 ? kChars[i] : '?';
  return s;
}

const char* sample_kind_name(SampleKind k) {
  switch (k) {
    case SampleKind::kInstructions:
      return "instructions";
    case SampleKind::kBranches:
      return "branches";
    case SampleKind::kTransactions:
      return "transactions";
    case SampleKind::kPtwrite:
      return "ptwrite";
    case SampleKind::kCbr:
      return "cbr";
    case SampleKind::kMwait:
      return "mwait";
    case SampleKind::kPwre:
      return "pwre";
    case SampleKind::kExstop:
      return "exstop";
    case SampleKind::kPwrx:
      return "pwrx";
    case SampleKind::kPsb:
      return "psb";
    case SampleKind::kError:
      return "error";
    case SampleKind::kChain:
      return "chain";
    case SampleKind::kTick:
      return "tick";
  }
  return "?";
}

Synthesizer::Synthesizer(const ItraceOptions& opts, const PtConfig& cfg, SampleSink& sink,
                         bool every_branch)
    : o_(opts), cfg_(cfg), sink_(sink), every_branch_(every_branch) {
  if (o_.calls) branch_filter_ |= kFlagCall | kFlagAsync | kFlagTraceEnd;
  if (o_.returns) branch_filter_ |= kFlagReturn | kFlagTraceBegin;
  // Periods in time are in TSC ticks, rounded down to a power of two (as
  // perf does); a zero period means every instruction.
  if (o_.period_type != PeriodType::kInstructions) {
    std::uint64_t ticks = o_.period_type == PeriodType::kTicks
                              ? o_.period
                              : cfg_.perf_time_to_tsc(cfg_.time_zero + o_.period);
    if (ticks) {
      period_ticks_ = std::bit_floor(ticks);
    } else {
      o_.period_type = PeriodType::kInstructions;
      o_.period = 1;
    }
  }
  if (o_.period_type == PeriodType::kInstructions && !o_.period) o_.period = 1;
  every_insn_ = o_.period_type == PeriodType::kInstructions && o_.period == 1 && !o_.initial_skip &&
                !o_.callchain && !o_.add_callchain && !o_.last_branch;
}

// perf's intel_pt_next_period: the instructions to walk before the
// estimated time (walk time plus one tick per instruction) reaches the next
// multiple of the period; the first walk only finds where it is.
std::uint64_t Synthesizer::next_period() {
  const std::uint64_t mask = ~(period_ticks_ - 1);
  std::uint64_t ts = walk_tsc_ + insn_since_tsc_;
  std::uint64_t masked = ts & mask;
  if (continuous_period_) {
    if (masked > last_masked_) return 1;
  } else {
    ++ts;
    masked = ts & mask;
    if (masked > last_masked_) {
      last_masked_ = masked;
      continuous_period_ = true;
    }
  }
  if (masked < last_masked_) return period_ticks_;
  return period_ticks_ - (ts - masked);
}

// perf's intel_pt_sample_insn for tick periods.
// How many of the next `most` instructions take no sample (each counted as
// the loop in run() counts it), counted here.
std::uint32_t Synthesizer::unsampled(std::uint32_t most) {
  std::uint64_t k = 0;
  if (period_ticks_)
    k = walk_left_ > 1 ? std::min<std::uint64_t>(walk_left_ - 1, most) : 0;
  else if (o_.period > insn_since_sample_ + 1)
    k = std::min<std::uint64_t>(o_.period - insn_since_sample_ - 1, most);
  if (!k) return 0;
  if (period_ticks_) {
    walk_left_ -= k;
    insn_since_tsc_ += k;
  }
  insn_since_sample_ += k;
  return static_cast<std::uint32_t>(k);
}

void Synthesizer::tick_sampled() {
  const std::uint64_t masked = (walk_tsc_ + insn_since_tsc_) & ~(period_ticks_ - 1);
  if (masked > last_masked_)
    last_masked_ = masked;
  else
    last_masked_ += period_ticks_;
}

bool Synthesizer::skip() { return o_.initial_skip && events_++ < o_.initial_skip; }

void Synthesizer::state_time(std::uint64_t tsc) {
  if (!ticks_ || tsc <= shown_tsc_) return;
  shown_tsc_ = tsc;
  SynthSample out;
  out.kind = SampleKind::kTick;
  out.tsc = tsc;
  sink_.on_sample(out);
}

void Synthesizer::emit(SynthSample& out, std::uint64_t tsc) {
  out.tsc = tsc;
  out.time = perf_time(tsc);
  if (out.kind != SampleKind::kError && tsc > shown_tsc_) shown_tsc_ = tsc;
  // perf adds call chains and last branches to every synthesized event but
  // branches (intel_pt_prep_sample).
  const bool stacked = out.kind != SampleKind::kBranches && out.kind != SampleKind::kError;
  if (stacked && (o_.callchain || o_.last_branch)) select_thread(tsc);  // the running thread's
  if (o_.callchain && stacked) {
    chain_.clear();
    chain_.push_back(out.ip);
    if (stack_)
      for (auto it = stack_->ret.rbegin();
           it != stack_->ret.rend() && chain_.size() < o_.callchain_sz; ++it)
        chain_.push_back(*it);
    out.callchain = chain_.data();
    out.callchain_nr = static_cast<std::uint32_t>(chain_.size());
  }
  if (o_.last_branch && stacked) {
    copy_branches(stack_);
    out.branch_stack = branch_buf_.data();
    out.branch_nr = static_cast<std::uint32_t>(branch_buf_.size());
  }
  sink_.on_sample(out);
}

// perf's thread_stack__update_br_stack: a ring of last_branch_sz entries
// filled from the top down, so the newest is first when read from br_pos.
void Synthesizer::push_branch(ThreadStack& st, std::uint64_t from, std::uint64_t to,
                              std::uint32_t flags) {
  const std::size_t sz = o_.last_branch_sz;
  if (!sz) return;
  if (st.br.size() != sz) st.br.resize(sz);
  st.br_pos = (st.br_pos ? st.br_pos : sz) - 1;
  st.br[st.br_pos] = {from, to, flags};
  if (st.br_nr < sz) ++st.br_nr;
}

// perf's thread_stack__br_sample: the thread's last branches, newest first.
void Synthesizer::copy_branches(const ThreadStack* st) {
  branch_buf_.clear();
  if (!st || !st->br_nr) return;
  const std::size_t sz = st->br.size();
  for (std::size_t i = 0; i < st->br_nr; ++i) branch_buf_.push_back(st->br[(st->br_pos + i) % sz]);
}

// The flags perf gives the sample of a run's last instruction: its branch
// kind, and trace end when tracing stopped there.
static std::uint32_t last_flags(const Step& s) {
  std::uint32_t f = insn_op_flags(s.last.op);
  if (s.end == RunEnd::kDisabled) f |= kFlagBranch | kFlagTraceEnd;
  return f;
}

Synthesizer::IpcPoint Synthesizer::run_end(const Step& s) {
  switch (s.end) {
    case RunEnd::kBranch:
      // perf walks jumps and calls that need no trace as part of the packet
      // it reads next, or of the TNT packet it is in (kPlain).
      return s.last.needs_trace() ? IpcPoint::kTimed : IpcPoint::kPlain;
    case RunEnd::kDisabled:
      return IpcPoint::kTimed;
    case RunEnd::kFallThrough:
      return s.last.cls == InsnClass::kCondJump ? IpcPoint::kNotTaken : IpcPoint::kPlain;
    default:
      return IpcPoint::kPlain;
  }
}

void Synthesizer::ipc_state(const Step& s, bool timed) {
  ipc_flag_ = false;
  if (timed) {
    ipc_approx_ = s.cycles;
    if (s.cycle_marks > ipc_used_marks_) {
      ipc_snap_ = s.cycles;
      ipc_used_marks_ = s.cycle_marks;
      ipc_flag_ = true;
    }
  }
  // Cycles estimated from time may be shown at any state.
  if (!s.exact_cycles) ipc_flag_ = true;
}

void Synthesizer::ipc_run_end(const Step& s, IpcPoint end, bool sampled) {
  if (end == IpcPoint::kNotTaken && !sampled) {
    // No state: the cycle count waits for the next CYC packet; the time
    // moves on if that was the TNT packet's last bit.
    ipc_used_marks_ = s.cycle_marks;
    if (s.tnt_done) ipc_approx_ = s.cycles;
    ipc_flag_ = !s.exact_cycles;
    return;
  }
  ipc_state(s, end == IpcPoint::kPlain ? s.in_tnt : true);
}

void Synthesizer::set_ipc(SynthSample& out, int kind, std::uint64_t insns) {
  out.insn_cnt = out.cyc_cnt = 0;
  if (!o_.approx_ipc && !ipc_flag_) return;
  const std::uint64_t cycles = o_.approx_ipc ? ipc_approx_ : ipc_snap_;
  IpcCounts& last = ipc_last_[kind];
  if (cycles == last.cycles) return;
  out.cyc_cnt = cycles - last.cycles;
  out.insn_cnt = insns - last.insns;
  last = {insns, cycles};
}

void Synthesizer::sample_insn(std::uint64_t ip, std::uint8_t len, const Step& s, std::uint64_t tsc,
                              bool last, std::uint64_t insns) {
  insn_since_sample_ = 0;
  // A skipped sample (s) is not synthesized: the next one's period covers
  // its instructions too, as perf counts it.
  if (o_.initial_skip && skip()) return;
  SynthSample& out = insn_;
  out.kind = SampleKind::kInstructions;
  out.ip = ip;
  out.insn_len = len;
  out.period = insns - insns_sampled_;
  insns_sampled_ = insns;
  // perf flags an instruction sample with the instruction's branch kind.
  out.flags = (in_tx_ ? static_cast<std::uint32_t>(kFlagInTx) : 0u) | (last ? last_flags(s) : 0u);
  out.offset = s.offset;
  set_ipc(out, 1, insns);
  emit(out, tsc);
}

void Synthesizer::track_stack(std::uint64_t from, std::uint64_t to, std::uint32_t flags,
                              std::uint8_t len, std::uint64_t tsc) {
  const bool chains = o_.callchain || o_.add_callchain;
  if (!chains && !o_.last_branch) return;
  // Recorded samples before this branch see the stacks without it.
  if (chains && late_pos_ < late_.size()) late_chains_before(tsc);
  select_thread(tsc);
  if (!stack_) return;
  auto& st = *stack_;
  if (o_.last_branch) push_branch(st, from, to, flags);
  if (!chains) return;
  // perf's thread stack: a call made as tracing stops (a syscall with
  // user-only tracing) is not expected to return; trace begins pop it.
  auto pop_to = [&](std::uint64_t ret) {
    for (std::size_t i = st.ret.size(); i-- > 0;)
      if (st.ret[i] == ret) {
        st.ret.resize(i);
        st.end.resize(i);
        break;
      }
  };
  if (flags & kFlagCall) {
    const std::uint64_t ret = (flags & kFlagAsync) ? from : from + len;
    if (!to || ret == to) return;  // zero-length calls are not calls
    if (st.ret.size() >= kMaxStack) {
      st.ret.erase(st.ret.begin(), st.ret.begin() + kMaxStack / 2);
      st.end.erase(st.end.begin(), st.end.begin() + kMaxStack / 2);
    }
    st.ret.push_back(ret);
    st.end.push_back((flags & kFlagTraceEnd) != 0);
  } else if (flags & kFlagTraceBegin) {
    pop_to(to);
    while (!st.end.empty() && st.end.back()) {
      st.ret.pop_back();
      st.end.pop_back();
    }
  } else if ((flags & kFlagReturn) && from) {
    pop_to(to);
  }
}

// The running thread's stack. A thread that ran on another traced cpu since
// it last ran here starts afresh: perf flushes a thread stack when the
// trace its branches come from changes.
void Synthesizer::select_thread(std::uint64_t tsc) {
  if (!clock_ || (tsc >= span_start_ && tsc < span_next_)) return;
  const ThreadClock::Span sp = clock_->thread_at(tsc);
  const bool entered = sp.start != span_start_;
  span_start_ = sp.start;
  span_next_ = sp.next;
  if (sp.tid < 0) {
    stack_ = nullptr;
    return;
  }
  stack_ = &stacks_[sp.tid];
  if (entered && sp.migrated) stack_->clear();
}

void Synthesizer::late_chains_before(std::uint64_t tsc) {
  while (late_pos_ < late_.size() && late_[late_pos_].tsc <= tsc) late_chain(late_[late_pos_++]);
}

void Synthesizer::finish() {
  while (late_pos_ < late_.size()) late_chain(late_[late_pos_++]);
}

// perf's thread_stack__sample_late: the thread's return addresses from the
// top, less the kernel ones above the first user one (or the sample's own
// IP), each run of one mode after its context marker; with none, the
// sample's context and IP.
void Synthesizer::late_chain(const LateChainRequest& r) {
  constexpr std::uint64_t kKernelStart = 1ULL << 63;
  constexpr std::uint64_t kUser = abi::kContextUser, kKernel = abi::kContextKernel;
  auto context = [](std::uint64_t ip) { return ip < kKernelStart ? kUser : kKernel; };
  const std::size_t sz = o_.callchain_sz + 1;
  chain_.clear();
  const ThreadStack* st = nullptr;
  if (!clock_) {
    st = &solo_;
  } else if (auto it = stacks_.find(r.tid); it != stacks_.end()) {
    st = &it->second;
  }
  const std::uint64_t sample_context = context(r.ip);
  if (st && sz >= 2) {
    const std::size_t cnt = st->ret.size();
    std::size_t j = 1;
    for (; j <= cnt; ++j) {
      const std::uint64_t ip = st->ret[cnt - j];
      const std::uint64_t c = context(ip);
      if (c == kUser || (c == sample_context && ip == r.ip)) break;
    }
    std::uint64_t last = r.ip;  // no context: the first address gets a marker
    for (; chain_.size() < sz && j <= cnt; ++j) {
      const std::uint64_t ip = st->ret[cnt - j];
      const std::uint64_t c = context(ip);
      if (c != last) {
        if (chain_.size() >= sz - 1) break;
        chain_.push_back(last = c);
      }
      chain_.push_back(ip);
    }
  }
  if (chain_.empty() && sz >= 2) chain_ = {sample_context, r.ip};
  SynthSample out;
  out.kind = SampleKind::kChain;
  out.ip = r.ip;
  out.tsc = r.tsc;
  out.payload = r.ordinal;
  out.callchain = chain_.data();
  out.callchain_nr = static_cast<std::uint32_t>(chain_.size());
  sink_.on_sample(out);
}

void Synthesizer::branch(std::uint64_t from, std::uint64_t to, std::uint32_t flags,
                         std::uint8_t len, const Step& s, std::uint64_t tsc, std::uint64_t insns) {
  if (in_tx_) flags |= kFlagInTx;
  track_stack(from, to, flags, len, tsc);
  if (!o_.branches) return;
  // perf synthesizes (and counts for s and IPC) only what c and r keep.
  const bool kept = !branch_filter_ || (branch_filter_ & flags);
  if (!kept && !every_branch_) return;
  if (kept && skip()) return;
  SynthSample out;
  if (kept) set_ipc(out, 0, insns);
  out.kind = SampleKind::kBranches;
  out.ip = from;
  out.addr = to;
  out.flags = flags;
  out.insn_len = len;
  if (!from) {  // a trace begin shows the instruction walked last
    out.insn_len = last_insn_len_;
    out.insn_ip = last_insn_ip_;
  }
  out.offset = s.offset;
  emit(out, tsc);
}

void Synthesizer::run(const Step& s) {
  const IpcPoint end = run_end(s);
  bool end_done = false;  // the state at the last instruction is settled
  if (o_.instructions && every_insn_) {
    // Every instruction a sample (i0ns, i1i): only the IP changes. The IPC
    // can differ from none only at the first instruction and at the last.
    SynthSample& out = insn_;
    out.kind = SampleKind::kInstructions;
    out.period = 1;
    out.flags = in_tx_ ? static_cast<std::uint32_t>(kFlagInTx) : 0u;
    out.offset = s.offset;
    out.tsc = s.timestamp;
    out.time = perf_time(s.timestamp);
    std::uint64_t ip = s.ip;
    auto one = [&](std::uint32_t i) {
      out.ip = ip;
      out.insn_len = s.lengths[i];
      sink_.on_sample(out);
      ip += s.lengths[i];
    };
    if (s.ninsn > 1) {
      ipc_state(s, s.in_tnt);
      set_ipc(out, 1, insn_total_ + 1);
      // The ones before the last in one go, from the first when it shows no
      // IPC (else from the second).
      std::uint32_t from = 0;
      if (out.insn_cnt || out.cyc_cnt) {
        one(0);
        out.insn_cnt = out.cyc_cnt = 0;
        from = 1;
      }
      if (s.ninsn - 1 > from) {
        out.ip = ip;
        sink_.on_insn_run(out, s.lengths + from, s.ninsn - 1 - from);
        for (std::uint32_t i = from; i + 1 < s.ninsn; ++i) ip += s.lengths[i];
      }
    }
    if (s.ninsn) {
      out.tsc = s.last_timestamp;
      out.time = perf_time(s.last_timestamp);
      out.flags |= last_flags(s);
      ipc_run_end(s, end, true);
      end_done = true;
      set_ipc(out, 1, insn_total_ + s.ninsn);
      one(s.ninsn - 1);
      if (s.last_timestamp > shown_tsc_) shown_tsc_ = s.last_timestamp;
    }
  } else if (o_.instructions) {
    std::uint64_t ip = s.ip;
    if (period_ticks_) {
      // A walk starts. perf's decoder has read the packets up to the one
      // it walks toward (Step::walk_timestamp), and timing packets among
      // them restart its count of instructions since the time.
      if (s.walk_time_updates != walk_updates_) {
        walk_tsc_ = s.walk_timestamp;
        walk_updates_ = s.walk_time_updates;
        insn_since_tsc_ = 0;
      }
      walk_left_ = 0;
    }
    for (std::uint32_t i = 0; i < s.ninsn; ++i) {
      // The instructions before the last that take no sample, at once.
      if (const std::uint32_t k = unsampled(s.ninsn - 1 - i)) {
        for (std::uint32_t j = 0; j < k; ++j) ip += s.lengths[i + j];
        i += k;
      }
      const bool last = i + 1 == s.ninsn;
      const std::uint64_t tsc = last ? s.last_timestamp : s.timestamp;
      ++insn_since_sample_;
      bool take = false;
      if (period_ticks_) {
        if (!walk_left_) walk_left_ = next_period();
        ++insn_since_tsc_;
        if (--walk_left_ == 0) {
          take = true;
          tick_sampled();
        }
      } else {
        take = insn_since_sample_ >= o_.period;
      }
      if (last) {
        ipc_run_end(s, end, take);
        end_done = true;
      } else if (take) {
        ipc_state(s, s.in_tnt);
      }
      if (take) sample_insn(ip, s.lengths[i], s, tsc, last, insn_total_ + i + 1);
      ip += s.lengths[i];
    }
  }
  if (!end_done) ipc_run_end(s, end, false);
  insn_total_ += s.ninsn;
  if (s.ninsn) {
    last_insn_flags_ = insn_op_flags(s.last.op);
    last_insn_len_ = s.last.length;
    last_insn_ip_ = s.from;
  }
  if (s.end == RunEnd::kBranch) {
    branch(s.from, s.to, insn_op_flags(s.last.op), s.last.length, s, s.last_timestamp, insn_total_);
  } else if (s.end == RunEnd::kDisabled) {
    continuous_period_ = false;  // perf's TIP.PGD
    branch(s.from, s.to, insn_op_flags(s.last.op) | kFlagBranch | kFlagTraceEnd, s.last.length, s,
           s.last_timestamp, insn_total_);
  }
  // A taken branch or a trace end is a state of perf's decoder.
  if (s.end == RunEnd::kBranch || s.end == RunEnd::kDisabled) state_time(s.last_timestamp);
}

void Synthesizer::error(PtError code, const Step& s) {
  last_insn_len_ = 0;  // perf's decoder starts over: no instruction walked
  if (!o_.errors) return;
  if (code == PtError::kOverflow && !o_.report_overflow()) return;
  if (code == PtError::kLost && !o_.report_lost()) return;
  SynthSample out;
  out.kind = SampleKind::kError;
  out.ip = s.from;
  out.image = s.image;
  out.error = code;
  out.error_msg = pt_error_message(code);
  out.offset = s.offset;
  emit(out, s.timestamp);
}

void Synthesizer::event(const Step& s) {
  // The events that are states of perf's decoder (an overflow is an error;
  // a transaction abort's state is the asynchronous branch that follows).
  switch (s.event) {
    case EventKind::kOverflow:
      ipc_error(s);
      break;
    case EventKind::kTsx:
      if (!(s.aux & 2)) ipc_state(s, true);
      break;
    case EventKind::kPsb:
    case EventKind::kCbr:
    case EventKind::kPtwrite:
    case EventKind::kExstop:
    case EventKind::kMwait:
    case EventKind::kPwre:
    case EventKind::kPwrx:
    case EventKind::kCfe:
    case EventKind::kBlockEnd:
      ipc_state(s, true);
      break;
    default:
      break;
  }
  SynthSample out;
  out.ip = s.has_ip ? s.from : 0;
  out.offset = s.offset;
  out.payload = s.payload;
  // perf's decoder forgets the instruction it walked at an event bound to a
  // FUP (the sample shows the one at its IP); the others keep it.
  const bool at_fup =
      s.event == EventKind::kTsx || s.event == EventKind::kMwait || s.event == EventKind::kPwre ||
      ((s.event == EventKind::kPtwrite || s.event == EventKind::kExstop) && s.has_ip);
  if (at_fup) last_insn_len_ = 0;
  out.insn_len = last_insn_len_;
  out.insn_ip = last_insn_ip_;
  switch (s.event) {
    case EventKind::kOverflow:
      error(PtError::kOverflow, s);
      return;
    case EventKind::kTsx:
      // InTX without abort starts or continues a transaction; no InTX ends it.
      in_tx_ = s.aux & 1;
      if (!o_.transactions || (s.aux & 0x100)) return;
      out.kind = SampleKind::kTransactions;
      out.flags = (s.aux & 2) ? kFlagBranch | kFlagTxAbort : (s.aux & 1) ? kFlagInTx : 0u;
      break;
    case EventKind::kPtwrite:
      if (!o_.ptwrites) return;
      out.kind = SampleKind::kPtwrite;
      out.aux = s.has_ip;
      break;
    case EventKind::kCbr: {
      // perf reports the change where decoding stands, with the flags of the
      // last instruction it walked (the state it makes has no branch of its own).
      if (!o_.pwr_events) return;
      out.kind = SampleKind::kCbr;
      out.flags = out.ip ? last_insn_flags_ : 0;
      out.aux = s.aux;
      std::uint64_t tsc_hz = cfg_.perf_time_to_tsc(cfg_.time_zero + 1000000000ULL);
      std::uint32_t mnt = cfg_.max_non_turbo_ratio ? cfg_.max_non_turbo_ratio : 1;
      std::uint64_t khz_per_cbr = tsc_hz / mnt / 1000;
      out.cbr_freq_khz = static_cast<std::uint32_t>(s.aux * khz_per_cbr);
      out.cbr_freq_mhz = (out.cbr_freq_khz + 500) / 1000;
      // perf rounds the percentage of the max non-turbo ratio to the nearest.
      out.cbr_percent = (5 + 1000 * s.aux / mnt) / 10;
      emit(out, s.timestamp);
      return;
    }
    case EventKind::kMwait:
      if (!o_.pwr_events) return;
      out.kind = SampleKind::kMwait;
      break;
    case EventKind::kPwre:
      if (!o_.pwr_events) return;
      out.kind = SampleKind::kPwre;
      break;
    case EventKind::kExstop:
      if (!o_.pwr_events) return;
      out.kind = SampleKind::kExstop;
      out.aux = s.has_ip;
      break;
    case EventKind::kPwrx:
      if (!o_.pwr_events) return;
      out.kind = SampleKind::kPwrx;
      break;
    case EventKind::kPsb:
      if (!o_.pwr_events) return;
      out.kind = SampleKind::kPsb;
      out.payload = s.offset;
      out.addr = s.to;  // with IP 0: where decoding goes on (its cpumode)
      break;
    default:
      return;
  }
  if (out.kind != SampleKind::kCbr && skip()) return;
  emit(out, s.timestamp);
}

void Synthesizer::on_step(const Step& s) {
  switch (s.kind) {
    case StepKind::kRun:
      run(s);  // its state_time at its end
      return;
    case StepKind::kBegin:
      // A begin at a PSB is part of the PSB's state (the event that follows);
      // perf's sync there restarts tick periods.
      if (s.from_psb) {
        continuous_period_ = false;
        return;
      }
      ipc_state(s, true);
      {
        // perf's trace begin carries no transaction flag.
        const bool tx = in_tx_;
        in_tx_ = false;
        branch(0, s.to, kFlagBranch | kFlagTraceBegin, 0, s, s.timestamp, insn_total_);
        in_tx_ = tx;
      }
      state_time(s.timestamp);
      return;
    case StepKind::kAsync:
      ipc_state(s, true);
      if (s.end == RunEnd::kDisabled) {
        // perf's TIP.PGD after a FUP: an asynchronous trace end (an
        // interrupt when it names where to).
        continuous_period_ = false;
        const std::uint32_t how = s.to ? kFlagCall | kFlagInterrupt : 0u;
        branch(s.from, s.to, kFlagBranch | kFlagAsync | kFlagTraceEnd | how, 0, s, s.timestamp,
               insn_total_);
      } else {
        branch(s.from, s.to, kFlagBranch | kFlagCall | kFlagAsync | kFlagInterrupt, 0, s,
               s.timestamp, insn_total_);
      }
      state_time(s.timestamp);
      return;
    case StepKind::kEvent:
      event(s);
      if (s.event != EventKind::kOverflow) state_time(s.timestamp);
      return;
    case StepKind::kError:
      ipc_error(s);
      error(s.code, s);
      return;
  }
}

}  // namespace perfkit::intelpt
