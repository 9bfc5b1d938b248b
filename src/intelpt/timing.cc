#include "intelpt/timing.h"

namespace perfkit::intelpt {

namespace {

constexpr std::uint64_t kTopByte = 0xffULL << 56;
constexpr std::uint64_t kHalfway = 1ULL << 55;
// A TSC packet may slip a little behind MTC-based time; less than this is
// treated as the same time rather than a wrap.
constexpr std::uint64_t kTscSlip = 0x10000;

std::uint64_t mul_div(std::uint64_t t, std::uint32_t n, std::uint32_t d) {
  if (!d) return 0;
  return (t / d) * n + ((t % d) * n) / d;
}

// Completes a 7-byte TSC with the top byte of `ref`, choosing the value
// nearest to it.
std::uint64_t extend_tsc(std::uint64_t tsc, std::uint64_t ref) {
  tsc |= ref & kTopByte;
  if (tsc < ref) {
    if (ref - tsc > kHalfway) tsc += 1ULL << 56;
  } else if (tsc - ref > kHalfway) {
    tsc -= 1ULL << 56;
  }
  return tsc;
}

}  // namespace

Timer::Timer(const TimerParams& p) : p_(p) {
  ctc_rem_mask_ = (1u << p_.mtc_period) - 1;
  if (!p_.tsc_ctc_ratio_n) p_.tsc_ctc_ratio_d = 0;
  if (p_.tsc_ctc_ratio_d && p_.tsc_ctc_ratio_n % p_.tsc_ctc_ratio_d == 0)
    tsc_ctc_mult_ = p_.tsc_ctc_ratio_n / p_.tsc_ctc_ratio_d;
}

std::uint64_t Timer::ctc_to_tsc(std::uint64_t ctc) const {
  return tsc_ctc_mult_ ? ctc * tsc_ctc_mult_ : mul_div(ctc, p_.tsc_ctc_ratio_n, p_.tsc_ctc_ratio_d);
}

void Timer::tsc(std::uint64_t payload, bool after_cyc) {
  have_tma_ = false;
  if (ref_timestamp_) {
    std::uint64_t t = extend_tsc(payload, ref_timestamp_);
    tsc_timestamp_ = timestamp_ = t;
    ref_timestamp_ = 0;
  } else if (timestamp_) {
    std::uint64_t t = payload | (timestamp_ & kTopByte);
    tsc_timestamp_ = t;
    if (t < timestamp_ && timestamp_ - t < kTscSlip) t = timestamp_;
    if (t < timestamp_) {
      t += 1ULL << 56;
      tsc_timestamp_ = t;
    }
    timestamp_ = t;
  }
  if (after_cyc) {
    cyc_ref_timestamp_ = timestamp_;
    cycle_cnt_ = 0;
  }
}

void Timer::tma(std::uint32_t ctc, std::uint32_t fc, bool in_psb) {
  if (!p_.tsc_ctc_ratio_d) return;
  if (tracing_ && !in_psb)
    restart_estimate();
  else
    update_estimate();
  std::uint32_t rem = ctc & ctc_rem_mask_;
  last_mtc_ = (ctc >> p_.mtc_period) & 0xff;
  ctc_timestamp_ = tsc_timestamp_ - fc - ctc_to_tsc(rem);
  ctc_delta_ = 0;
  have_tma_ = true;
  fixup_last_mtc_ = true;
}

void Timer::mtc(std::uint32_t payload, bool after_cyc) {
  if (!have_tma_) return;
  std::uint32_t mtc = payload & 0xff;
  if (p_.mtc_period > 8 && fixup_last_mtc_) {
    // TMA gave CTC[15:0] only: take the missing high bits of last_mtc from
    // this MTC, assuming it comes after it.
    fixup_last_mtc_ = false;
    std::uint32_t first_missing = 1u << (16 - p_.mtc_period);
    std::uint32_t mask = ~(first_missing - 1);
    last_mtc_ |= mtc & mask;
    if (last_mtc_ >= mtc) {
      last_mtc_ -= first_missing;
      last_mtc_ &= 0xff;
    }
  }
  std::uint32_t delta = mtc > last_mtc_ ? mtc - last_mtc_ : mtc + 256 - last_mtc_;
  ctc_delta_ += static_cast<std::uint64_t>(delta) << p_.mtc_period;
  std::uint64_t t = ctc_timestamp_ + ctc_to_tsc(ctc_delta_);
  if (t >= timestamp_) timestamp_ = t;
  update_estimate();
  last_mtc_ = mtc;
  if (after_cyc) {
    cyc_ref_timestamp_ = timestamp_;
    cycle_cnt_ = 0;
  }
}

void Timer::cyc(std::uint64_t cycles) {
  have_cyc_ = true;
  if (tracing_) ipc_cycles_ += cycles;
  ++cycle_marks_;
  cycle_cnt_ += cycles;
  total_cycles_ += cycles;
  if (!cyc_ref_timestamp_ || !cbr_) return;
  std::uint64_t t = cyc_ref_timestamp_ +
                    static_cast<std::uint64_t>(static_cast<double>(cycle_cnt_) * cbr_cyc_to_tsc_);
  if (t >= timestamp_) timestamp_ = t;
}

void Timer::cbr(unsigned ratio) {
  ratio &= 0xff;
  if (ratio == cbr_ || !ratio) return;
  cbr_ = ratio;
  cbr_cyc_to_tsc_ = static_cast<double>(p_.max_non_turbo_ratio) / ratio;
  tsc_to_cycles_ = p_.max_non_turbo_ratio ? static_cast<double>(ratio) / p_.max_non_turbo_ratio : 0;
  if (tracing_) restart_estimate();
  // Cycles count from here at the new rate.
  cyc_ref_timestamp_ = timestamp_;
  cycle_cnt_ = 0;
}

void Timer::trace_on(bool restart) {
  tracing_ = true;
  if (restart) restart_estimate();
}

void Timer::restart_estimate() {
  if (have_cyc_) return;
  estimate_from_ = timestamp_;
  estimate_base_ = ipc_cycles_;
}

void Timer::update_estimate() {
  if (have_cyc_) return;
  ++cycle_marks_;
  if (!tracing_ || timestamp_ <= estimate_from_) return;
  // As perf computes it: in double precision, truncated.
  const double est = static_cast<double>(timestamp_ - estimate_from_) * tsc_to_cycles_ +
                     static_cast<double>(estimate_base_);
  if (!(est < 0x1p64)) return;
  const auto cycles = static_cast<std::uint64_t>(est);
  if (cycles > ipc_cycles_) ipc_cycles_ = cycles;
}

}  // namespace perfkit::intelpt
