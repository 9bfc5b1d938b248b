// Timer: the trace's clock, from its timing packets, in TSC ticks.
//
//   TSC  the low 7 bytes of the TSC; the top byte comes from the previous
//        timestamp or, at the start of a buffer, from the buffer's reference
//        TSC (AUXTRACE record), and a 56-bit wrap is taken into account.
//   TMA  relates the crystal clock (CTC) to the TSC of the TSC packet before
//        it: CTC[15:0] and the fast counter (TSC ticks since the last CTC tick).
//   MTC  CTC bits [mtc_period+7 : mtc_period]; the TSC follows as the CTC
//        delta since TMA times the TSC:CTC ratio (CPUID.15H).
//   CYC  core cycles since the last CYC; ticks = cycles * the rate perf measured
//        between MTC packets that follow CYC packets (CycRateProbe), else
//        max non-turbo ratio / CBR.
//   CBR  the core:bus ratio (core frequency in 100 MHz units).
//
// The arithmetic follows perf's decoder so that synthesized samples carry the
// same timestamps as perf's: a timestamp never goes backwards (MTC and CYC
// estimates that would are ignored), MTC deltas of 0 count as a full wrap of
// the 8-bit field, CYC counts from a TSC or MTC that follows a CYC, or from a
// CBR change.
#pragma once

#include <cstdint>
#include <optional>

#include "intelpt/packet.h"

namespace perfkit::intelpt {

struct TimerParams {
  unsigned mtc_period = 0;  // MTC every 2^mtc_period CTC ticks
  std::uint32_t tsc_ctc_ratio_n = 0, tsc_ctc_ratio_d = 0;
  std::uint32_t max_non_turbo_ratio = 0;
};

class CycRateProbe;

// Completes a 7-byte TSC with the top byte of `ref`, choosing the value
// nearest to it (a wrap of the 56 bits either way).
std::uint64_t extend_tsc(std::uint64_t tsc, std::uint64_t ref);

class Timer {
 public:
  explicit Timer(const TimerParams& p = {});

  // Starts a new buffer whose first TSC takes its top byte from `ref_tsc`.
  void set_reference(std::uint64_t ref_tsc) { ref_timestamp_ = ref_tsc; }
  // A new buffer that does not follow on from the last (perf's reposition):
  // no time until its first TSC, whose top byte comes from `ref_tsc`.
  void reposition(std::uint64_t ref_tsc) {
    timestamp_ = 0;
    have_tma_ = false;
    ref_timestamp_ = ref_tsc;
  }
  // The reference TSC of the buffer being read (0: unknown). When set, a TSC
  // that goes back further than a slip is a wrap of the 56-bit counter only
  // if the wrapped value stays below it, else it is bad and ignored (perf's
  // "Suppressing bad timestamp"). Never set, every such TSC is a wrap.
  void set_buffer_timestamp(std::uint64_t ref_tsc) { buf_timestamp_ = ref_tsc; }
  // The time is at least 1 from here (perf's decoder, synchronized for VM
  // time correlation).
  void start() {
    if (!timestamp_) timestamp_ = 1;
  }
  // Forgets the CTC relation (after a gap or an error).
  void lose_tma() { have_tma_ = false; }

  // What a TSC packet did to the time.
  enum class TscResult : std::uint8_t {
    kNoTime,     // no time yet and no reference: ignored
    kReference,  // the first TSC of a buffer, completed from its reference
    kSet,        // the time is now this TSC (or stays, for a slip)
    kBad,        // a bad backwards TSC (set_buffer_timestamp): the time stays
  };
  // `after_cyc`: the packet right before this one was a CYC.
  TscResult tsc(std::uint64_t payload, bool after_cyc);
  // `in_psb`: the TMA is part of PSB+ (it does not restart the estimate).
  void tma(std::uint32_t ctc, std::uint32_t fc, bool in_psb = false);
  void mtc(std::uint32_t payload, bool after_cyc);
  void cyc(std::uint64_t cycles);
  void cbr(unsigned ratio);

  std::uint64_t timestamp() const { return timestamp_; }
  // How many times the time was set (even to the same value): perf restarts
  // its count of instructions since the time at each (timestamp_insn_cnt).
  std::uint32_t updates() const { return updates_; }
  // An overflow: perf restarts that count there too.
  void overflow() { ++updates_; }
  std::uint64_t tsc_timestamp() const { return tsc_timestamp_; }
  // The TSC at the CTC tick of the last TMA, the CTC ticks counted by MTC
  // packets since, and that tick's CTC (TMA's CTC less the ticks below the
  // MTC period).
  std::uint64_t ctc_timestamp() const { return ctc_timestamp_; }
  std::uint64_t ctc_delta() const { return ctc_delta_; }
  std::uint64_t last_ctc() const { return last_ctc_; }
  // CTC ticks in TSC ticks.
  std::uint64_t ctc_to_tsc(std::uint64_t ctc) const;
  unsigned cbr() const { return cbr_; }
  bool have_tma() const { return have_tma_; }
  // Total cycles counted by CYC packets.
  std::uint64_t cycles() const { return total_cycles_; }

  // Tracing starts (TIP.PGE: `restart` the time-based estimate from here) or
  // goes on (a FUP in PSB+); or stops (TIP.PGD, TraceStop).
  void trace_on(bool restart);
  void trace_off() { tracing_ = false; }
  // perf's IPC cycle count, the points at which it may be sampled, and
  // whether it comes from CYC packets (else it is estimated from time).
  std::uint64_t ipc_cycles() const { return ipc_cycles_; }
  std::uint64_t cycle_marks() const { return cycle_marks_; }
  bool have_cyc() const { return have_cyc_; }

  // The measured TSC ticks per cycle for CYC timing, until the next TSC or
  // MTC that follows a CYC (see CycRateProbe).
  void set_cyc_rate(double ticks_per_cycle) {
    cyc_rate_ = ticks_per_cycle;
    have_cyc_rate_ = true;
  }

 private:
  // The time-based estimate restarts here (perf's intel_pt_mtc_cyc_cnt_pge).
  void restart_estimate();
  // MTC or TMA: the estimate moves on (perf's intel_pt_mtc_cyc_cnt_upd).
  void update_estimate();

  TimerParams p_;
  std::uint32_t ctc_rem_mask_ = 0;
  std::uint32_t tsc_ctc_mult_ = 0;  // n/d when it divides exactly
  std::uint64_t timestamp_ = 0;
  std::uint64_t tsc_timestamp_ = 0;
  std::uint64_t ref_timestamp_ = 0;
  std::uint64_t buf_timestamp_ = 0;
  std::uint32_t updates_ = 0;
  std::uint64_t ctc_timestamp_ = 0;
  std::uint64_t ctc_delta_ = 0;
  std::uint64_t last_ctc_ = 0;
  std::uint32_t last_mtc_ = 0;
  bool have_tma_ = false;
  bool fixup_last_mtc_ = false;
  unsigned cbr_ = 0;
  double cbr_cyc_to_tsc_ = 0;
  std::uint64_t cyc_ref_timestamp_ = 0;
  std::uint64_t cycle_cnt_ = 0;
  std::uint64_t total_cycles_ = 0;
  double cyc_rate_ = 0;
  bool have_cyc_rate_ = false;

  bool tracing_ = false;
  bool have_cyc_ = false;
  std::uint64_t ipc_cycles_ = 0;
  std::uint64_t cycle_marks_ = 0;
  std::uint64_t estimate_base_ = 0;  // ipc_cycles_ when the estimate restarted
  std::uint64_t estimate_from_ = 0;  // the timestamp it restarted at
  double tsc_to_cycles_ = 0;         // CBR / max non-turbo ratio

  friend class CycRateProbe;
};

// perf's measured rate of TSC ticks per CYC cycle (intel_pt_calc_cyc_to_tsc):
// at an MTC that follows a CYC, the packets after it are looked at up to the
// next MTC that follows a CYC, whose time against the cycles counted on the
// way gives the rate. A TSC, TMA, TIP.PGD, OVF, power event, a second core:bus
// ratio, an MTC that would go back in time, or the end of the trace buffer
// ends the look without a rate; so does a rate over 1.25 times the CBR one.
// Construct it right after the MTC is applied to `t`, feed next() the
// packets that follow (PAD left out) while it returns true, then apply().
class CycRateProbe {
 public:
  explicit CycRateProbe(const Timer& t);
  bool next(const Packet& pkt);
  void apply(Timer& t) const {
    if (rate_) t.set_cyc_rate(*rate_);
  }

 private:
  bool measure(std::uint64_t timestamp);

  const Timer& t_;
  std::uint64_t cycles_ = 0;
  unsigned cbr_ = 0;
  double cbr_rate_ = 0;
  std::uint32_t last_mtc_;
  std::uint64_t ctc_delta_, timestamp_;
  bool fixup_last_mtc_;
  PacketType last_type_ = PacketType::kCyc;  // the packet before the MTC
  std::optional<double> rate_;
};

}  // namespace perfkit::intelpt
