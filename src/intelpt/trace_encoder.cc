#include "intelpt/trace_encoder.h"

#include <deque>

#include "intelpt/packet_encoder.h"

namespace perfkit::intelpt {

namespace {

constexpr std::size_t kReturnStackDepth = 64;

class Writer {
 public:
  Writer(const TraceEncodeOptions& o, EncodedTrace& t)
      : o_(o), t_(t), enc_(t.bytes), tsc_(o.tsc_start), cbr_(o.cbr), last_cyc_tsc_(o.tsc_start) {
    last_mtc_ = mtc_mark(tsc_);
  }

  void run(const Execution& exec);

 private:
  std::uint64_t ctc(std::uint64_t tsc) const {
    return o_.tsc_ctc_ratio_n ? tsc * o_.tsc_ctc_ratio_d / o_.tsc_ctc_ratio_n : 0;
  }
  std::uint64_t mtc_mark(std::uint64_t tsc) const { return ctc(tsc) >> o_.mtc_period; }

  // A CYC packet with the cycles since the last one, before a packet that
  // carries it (CYC is only ever sent along with another packet).
  void cyc() {
    if (!o_.cyc) return;
    std::uint64_t cycles = (tsc_ - last_cyc_tsc_) * cbr_ / o_.max_non_turbo_ratio;
    if (!cycles) return;
    enc_.cyc(cycles);
    last_cyc_tsc_ += cycles * o_.max_non_turbo_ratio / cbr_;
  }
  void flush_tnt() {
    if (!tnt_count_) return;
    cyc();
    enc_.tnt(tnt_bits_, tnt_count_);
    tnt_bits_ = 0;
    tnt_count_ = 0;
  }
  void tnt(bool taken) {
    if (taken) tnt_bits_ |= 1ULL << (63 - tnt_count_);
    if (++tnt_count_ == (o_.long_tnt ? 47u : 6u)) flush_tnt();
  }
  void ip_packet(PacketType t, std::uint64_t ip) {
    flush_tnt();
    cyc();
    enc_.ip_packet(t, ip);
  }
  void timestamp() {
    if (!o_.tsc) return;
    t_.tsc_marks.emplace_back(enc_.size(), tsc_);
    const std::uint64_t tsc = in_guest_ ? tsc_ + o_.vm_tsc_offset : tsc_;
    enc_.tsc(tsc & 0x00ffffffffffffffULL);
    if (o_.mtc) {
      std::uint64_t c = ctc(tsc_);
      std::uint64_t start = o_.tsc_ctc_ratio_d ? c * o_.tsc_ctc_ratio_n / o_.tsc_ctc_ratio_d : 0;
      enc_.tma(static_cast<std::uint16_t>(c & 0xffff), static_cast<std::uint16_t>(tsc_ - start));
      last_mtc_ = mtc_mark(tsc_);
    }
  }
  // The VM's context (PIP with NR set, VMCS), or the host's (PIP, NR clear).
  void vm_context() {
    if (!o_.vm || o_.vm_out_of_context) return;
    enc_.pip(in_guest_ ? kGuestCr3 : kHostCr3, in_guest_);
    if (in_guest_) enc_.vmcs(o_.vmcs);
  }
  void psb_plus(bool with_ip, std::uint64_t ip) {
    flush_tnt();
    enc_.psb();  // also resets the last IP
    enc_.mode_exec(64);
    if (with_ip) enc_.ip_packet(PacketType::kFup, ip);
    timestamp();
    vm_context();
    enc_.cbr(cbr_);
    enc_.psbend();
    stack_.clear();
    psb_at_ = enc_.size();
    ++t_.psbs;
  }
  void enable(std::uint64_t ip) {
    timestamp();
    enc_.mode_exec(64);
    ip_packet(PacketType::kTipPge, ip);
    enabled_ = true;
  }
  void pgd_no_ip() {
    flush_tnt();
    cyc();
    enc_.ip_packet_no_ip(PacketType::kTipPgd);
    enabled_ = false;
  }
  // A VM exit at `ip`: the host runs (a PSB+ of its own in the middle), then
  // the VM enters again.
  void vm_exit(std::uint64_t ip) {
    ip_packet(PacketType::kFup, ip);
    pgd_no_ip();
    in_guest_ = false;
    tsc_ += o_.tsc_per_kernel_entry / 2;
    psb_plus(false, 0);
    tsc_ += o_.tsc_per_kernel_entry - o_.tsc_per_kernel_entry / 2;
    in_guest_ = true;
    vm_context();
  }
  void push_return(std::uint64_t ip) {
    if (stack_.size() == kReturnStackDepth) stack_.pop_front();
    stack_.push_back(ip);
  }
  void maybe_mtc() {
    if (!o_.mtc || !o_.tsc_ctc_ratio_n) return;
    std::uint64_t m = mtc_mark(tsc_);
    if (m == last_mtc_) return;
    flush_tnt();
    cyc();
    enc_.mtc(static_cast<std::uint8_t>(m & 0xff));
    last_mtc_ = m;
  }
  bool execute(const ExecStep& step, const Insn& insn, std::uint64_t next);

  const TraceEncodeOptions& o_;
  EncodedTrace& t_;
  PacketEncoder enc_;
  std::uint64_t tsc_;
  unsigned cbr_;
  std::uint64_t last_cyc_tsc_;
  std::uint64_t last_mtc_ = 0;
  std::uint64_t tnt_bits_ = 0;
  unsigned tnt_count_ = 0;
  std::deque<std::uint64_t> stack_;
  bool enabled_ = false;
  std::size_t psb_at_ = 0;
  bool in_guest_ = o_.vm;
  static constexpr unsigned kPebsBasicBlock = 4;
  static constexpr std::uint64_t kGuestCr3 = 0x1a2b3c000, kHostCr3 = 0x5f0000;
};

// Writes the packets for one executed instruction whose successor is `next`.
// Returns whether the instruction consumed trace (a TNT bit or an IP packet).
bool Writer::execute(const ExecStep& step, const Insn& insn, std::uint64_t next) {
  const std::uint64_t fall = step.ip + insn.length;
  tsc_ += o_.tsc_per_insn;
  switch (insn.cls) {
    case InsnClass::kCondJump:
      tnt(next != fall);
      return true;
    case InsnClass::kCall:
      if (insn.displacement != 0) push_return(fall);
      return false;
    case InsnClass::kIndirectCall:
      ip_packet(PacketType::kTip, next);
      push_return(fall);
      return true;
    case InsnClass::kIndirectJump:
      ip_packet(PacketType::kTip, next);
      return true;
    case InsnClass::kReturn:
      if (o_.return_compression && !stack_.empty() && stack_.back() == next) {
        stack_.pop_back();
        tnt(true);
      } else {
        stack_.clear();
        ip_packet(PacketType::kTip, next);
      }
      return true;
    case InsnClass::kFarCall:
    case InsnClass::kFarJump:
    case InsnClass::kFarReturn:
      pgd_no_ip();
      tsc_ += o_.tsc_per_kernel_entry;
      return true;
    default:
      return false;
  }
}

void Writer::run(const Execution& exec) {
  const auto& steps = exec.steps;
  t_.step_tsc.resize(steps.size());
  t_.lost.assign(steps.size(), false);
  psb_plus(false, 0);
  std::size_t next_async = 0;
  std::uint64_t next_ovf = o_.ovf_every, ovf_end = 0;
  bool prev_traced = false, lost = false;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ExecStep& step = steps[i];
    const Insn& insn = exec.insns[step.insn];
    const bool async = step.flags & ExecStep::kAsyncBefore;
    const std::uint64_t interrupted = async ? exec.interrupted[next_async++] : 0;
    t_.step_tsc[i] = tsc_;
    if (lost) {
      if (i < ovf_end && !async) {
        t_.lost[i] = true;
        tsc_ += o_.tsc_per_insn;
        if (insn.cls == InsnClass::kFarCall || insn.cls == InsnClass::kFarJump ||
            insn.cls == InsnClass::kFarReturn)
          tsc_ += o_.tsc_per_kernel_entry;
        continue;
      }
      // Tracing resumes: the buffer overflowed in between. OVF, then a FUP
      // where it resumes, or (after an asynchronous entry) a TIP.PGE.
      lost = false;
      stack_.clear();
      enc_.ovf();
      enc_.last_ip().reset();  // the IP after an overflow is not compressed
      if (async) {
        enabled_ = false;
      } else {
        enc_.ip_packet(PacketType::kFup, step.ip);
        enabled_ = true;
      }
      ++t_.overflows;
      t_.step_tsc[i] = tsc_;
    }
    if (async && enabled_) {
      ip_packet(PacketType::kFup, interrupted);
      pgd_no_ip();
      tsc_ += o_.tsc_per_kernel_entry;
    }
    if (o_.vm && o_.vm_exit_every && i && i % o_.vm_exit_every == 0 && enabled_ && !async)
      vm_exit(step.ip);
    if (!enabled_) enable(step.ip);
    if (enc_.size() - psb_at_ >= o_.psb_period) {
      flush_tnt();
      t_.psb_steps.emplace_back(enc_.size(), i);
      psb_plus(true, step.ip);
    }
    maybe_mtc();
    if (o_.cbr_change_every && i && i % o_.cbr_change_every == 0) {
      cbr_ = cbr_ == o_.cbr ? o_.cbr + 4u : o_.cbr;
      flush_tnt();
      cyc();
      enc_.cbr(static_cast<std::uint8_t>(cbr_));
    }
    if (o_.ptwrite_every && i && i % o_.ptwrite_every == 0) {
      flush_tnt();
      cyc();
      enc_.ptwrite(i, 8, o_.fup_on_ptw);
      if (o_.fup_on_ptw) enc_.ip_packet(PacketType::kFup, step.ip);
      ++t_.ptwrites;
    }
    if (o_.pebs_every && i && i % o_.pebs_every == 0) {
      flush_tnt();
      cyc();
      enc_.bbp(false, kPebsBasicBlock);
      enc_.bip(0, step.ip, 8);
      enc_.bip(1, 1, 8);
      enc_.bip(2, in_guest_ ? tsc_ + o_.vm_tsc_offset : tsc_, 8);
      enc_.bep(false);
    }
    // An overflow starts right after an instruction that consumed trace, so
    // that a decoder stands exactly at the first lost instruction.
    if (next_ovf && i >= next_ovf && prev_traced && i + 1 < steps.size()) {
      flush_tnt();
      lost = true;
      ovf_end = i + o_.ovf_length;
      next_ovf = i + o_.ovf_every;
      t_.lost[i] = true;
      tsc_ += o_.tsc_per_insn;
      continue;
    }
    std::uint64_t next = 0;
    if (i + 1 < steps.size())
      next = (steps[i + 1].flags & ExecStep::kAsyncBefore) ? exec.interrupted[next_async]
                                                           : steps[i + 1].ip;
    prev_traced = execute(step, insn, next);
  }
  flush_tnt();
  // A trace that ends inside an overflow just stops.
  if (enabled_ && !lost && !steps.empty()) pgd_no_ip();
  t_.end_tsc = tsc_;
}

}  // namespace

EncodedTrace encode_trace(const Execution& exec, const TraceEncodeOptions& opts) {
  EncodedTrace t;
  Writer w(opts, t);
  w.run(exec);
  return t;
}

}  // namespace perfkit::intelpt
