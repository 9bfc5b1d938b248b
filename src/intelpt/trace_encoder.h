// TraceEncoder: turns an exact record of executed user-mode instructions
// (an Execution, e.g. from single-stepping a program) into the Intel PT
// packet stream the hardware would have written for `intel_pt//u`:
//
//   - PSB+ (MODE.Exec, FUP, TSC, TMA, CBR) every `psb_period` bytes;
//   - a TNT bit per conditional branch (short or long TNT packets);
//   - a TIP per indirect branch; returns compressed into a taken TNT bit when
//     they go back to the call that the hardware's 64-entry stack remembers
//     (the stack is cleared at PSB, and whenever a return is not compressed);
//   - TIP.PGD (IP suppressed) at each far transfer into the kernel (syscall),
//     TSC/TMA, MODE.Exec and TIP.PGE at the return to user mode;
//   - FUP + TIP.PGD for asynchronous entries (signals), then TIP.PGE;
//   - MTC every 2^mtc_period crystal-clock ticks, CYC before packets, CBR
//     changes, and on request injected PTWRITE (with FUP) and overflows
//     (a stretch of instructions lost, then OVF and FUP where tracing resumes);
//   - optionally, the program as a VM guest's (see TraceEncodeOptions::vm).
//
// The clock is modelled: every instruction takes `tsc_per_insn` TSC ticks and
// every kernel entry `tsc_per_kernel_entry`; the encoder reports the TSC of
// every step so that side-band records can be timed against the trace.
#pragma once

#include <cstdint>
#include <vector>

#include "intelpt/insn.h"

namespace perfkit::intelpt {

struct ExecStep {
  static constexpr std::uint32_t kAsyncBefore = 1;  // entered asynchronously (a signal)
  std::uint64_t ip = 0;
  std::uint32_t insn = 0;  // index into Execution::insns
  std::uint32_t flags = 0;
};

struct Execution {
  std::vector<Insn> insns;      // the distinct decoded instructions
  std::vector<ExecStep> steps;  // in execution order
  // For each step with kAsyncBefore: the IP that was interrupted (the
  // instruction there did not run), in step order.
  std::vector<std::uint64_t> interrupted;
};

struct TraceEncodeOptions {
  std::uint32_t psb_period = 4096;  // bytes of trace between PSB+
  bool return_compression = true;
  bool long_tnt = false;  // pack up to 47 branches per TNT packet
  bool tsc = true;
  bool mtc = false;
  unsigned mtc_period = 3;
  bool cyc = false;
  std::uint32_t tsc_ctc_ratio_n = 100, tsc_ctc_ratio_d = 2;  // TSC ticks per CTC tick: n/d
  std::uint8_t cbr = 20;
  std::uint8_t max_non_turbo_ratio = 20;
  std::uint64_t cbr_change_every = 0;  // steps between CBR changes (0: never)
  std::uint64_t tsc_start = 0x1000000000;
  std::uint32_t tsc_per_insn = 2;
  std::uint32_t tsc_per_kernel_entry = 5000;
  std::uint64_t ovf_every = 0;      // steps between injected overflows (0: none)
  std::uint64_t ovf_length = 200;   // steps lost in each
  std::uint64_t ptwrite_every = 0;  // steps between injected PTWRITE packets
  bool fup_on_ptw = true;
  // Steps between PEBS-via-PT records (a PEBS basic block: IP, applicable
  // counters, TSC; 0: none).
  std::uint64_t pebs_every = 0;
  // The program runs in a VM guest: its TSC packets carry the guest's TSC,
  // the host's plus vm_tsc_offset (7 bytes, as VMX adds the VMCS's offset),
  // while MTC and TMA keep the host's crystal clock; PSB+ has a PIP with NR
  // set and a VMCS packet (none of either when vm_out_of_context: the trace
  // then tells nothing of where it ran). Every vm_exit_every steps the VM
  // exits (FUP, TIP.PGD), the host runs tsc_per_kernel_entry ticks with a
  // PSB+ of host time (PIP NR=0) in the middle, and the VM enters again (PIP
  // NR=1, VMCS, then guest TSC, TMA and TIP.PGE).
  bool vm = false;
  std::uint64_t vm_tsc_offset = 0;
  std::uint64_t vmcs = 0x1bff6a;  // the VMCS packet's payload (address bits 51:12)
  bool vm_out_of_context = false;
  std::uint64_t vm_exit_every = 0;
};

struct EncodedTrace {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint64_t> step_tsc;  // TSC when each step started
  std::vector<bool> lost;               // steps lost in an injected overflow
  std::uint64_t end_tsc = 0;
  std::uint64_t overflows = 0, ptwrites = 0, psbs = 0;
  // Where each PSB+ with a FUP went: its trace offset and the step it
  // precedes (a decoder that syncs there goes on with that step).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> psb_steps;
  // The host TSC at each TSC packet, by trace offset (ascending): when the
  // bytes up to there had been written.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> tsc_marks;
};

EncodedTrace encode_trace(const Execution& exec, const TraceEncodeOptions& opts);

}  // namespace perfkit::intelpt
