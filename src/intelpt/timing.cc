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

}  // namespace

std::uint64_t extend_tsc(std::uint64_t tsc, std::uint64_t ref) {
  tsc |= ref & kTopByte;
  if (tsc < ref) {
    if (ref - tsc > kHalfway) tsc += 1ULL << 56;
  } else if (tsc - ref > kHalfway) {
    tsc -= 1ULL << 56;
  }
  return tsc;
}

Timer::Timer(const TimerParams& p) : p_(p) {
  ctc_rem_mask_ = (1u << p_.mtc_period) - 1;
  if (!p_.tsc_ctc_ratio_n) p_.tsc_ctc_ratio_d = 0;
  if (p_.tsc_ctc_ratio_d && p_.tsc_ctc_ratio_n % p_.tsc_ctc_ratio_d == 0)
    tsc_ctc_mult_ = p_.tsc_ctc_ratio_n / p_.tsc_ctc_ratio_d;
}

std::uint64_t Timer::ctc_to_tsc(std::uint64_t ctc) const {
  return tsc_ctc_mult_ ? ctc * tsc_ctc_mult_ : mul_div(ctc, p_.tsc_ctc_ratio_n, p_.tsc_ctc_ratio_d);
}

Timer::TscResult Timer::tsc(std::uint64_t payload, bool after_cyc) {
  have_tma_ = false;
  TscResult result = TscResult::kNoTime;
  if (ref_timestamp_) {
    std::uint64_t t = extend_tsc(payload, ref_timestamp_);
    tsc_timestamp_ = timestamp_ = t;
    ref_timestamp_ = 0;
    ++updates_;
    result = TscResult::kReference;
  } else if (timestamp_) {
    std::uint64_t t = payload | (timestamp_ & kTopByte);
    tsc_timestamp_ = t;
    if (t < timestamp_ && timestamp_ - t < kTscSlip) t = timestamp_;
    result = TscResult::kSet;
    if (t < timestamp_) {
      if (!buf_timestamp_ || t + (1ULL << 56) < buf_timestamp_) {
        t += 1ULL << 56;
        tsc_timestamp_ = t;
      } else {
        t = timestamp_;
        result = TscResult::kBad;
      }
    }
    timestamp_ = t;
    ++updates_;
  }
  if (after_cyc) {
    cyc_ref_timestamp_ = timestamp_;
    cycle_cnt_ = 0;
    have_cyc_rate_ = false;
  }
  return result;
}

void Timer::tma(std::uint32_t ctc, std::uint32_t fc, bool in_psb) {
  if (!p_.tsc_ctc_ratio_d) return;
  if (tracing_ && !in_psb)
    restart_estimate();
  else
    update_estimate();
  std::uint32_t rem = ctc & ctc_rem_mask_;
  last_mtc_ = (ctc >> p_.mtc_period) & 0xff;
  last_ctc_ = ctc - rem;
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
  ++updates_;
  update_estimate();
  last_mtc_ = mtc;
  if (after_cyc) {
    cyc_ref_timestamp_ = timestamp_;
    cycle_cnt_ = 0;
    have_cyc_rate_ = false;
  }
}

void Timer::cyc(std::uint64_t cycles) {
  have_cyc_ = true;
  if (tracing_) ipc_cycles_ += cycles;
  ++cycle_marks_;
  cycle_cnt_ += cycles;
  total_cycles_ += cycles;
  if (!cyc_ref_timestamp_) return;
  double rate;
  if (have_cyc_rate_)
    rate = cyc_rate_;
  else if (cbr_)
    rate = cbr_cyc_to_tsc_;
  else
    return;
  // As perf sums it: in double precision, truncated.
  const double est =
      static_cast<double>(cyc_ref_timestamp_) + static_cast<double>(cycle_cnt_) * rate;
  if (!(est < 0x1p64)) return;
  const auto t = static_cast<std::uint64_t>(est);
  if (t >= timestamp_) timestamp_ = t;
  ++updates_;
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

CycRateProbe::CycRateProbe(const Timer& t)
    : t_(t),
      last_mtc_(t.last_mtc_),
      ctc_delta_(t.ctc_delta_),
      timestamp_(t.timestamp_),
      fixup_last_mtc_(t.fixup_last_mtc_) {}

bool CycRateProbe::next(const Packet& pkt) {
  const PacketType type = pkt.type;
  const PacketType before = last_type_;
  last_type_ = type;
  switch (type) {
    case PacketType::kMtc: {
      if (!t_.have_tma_) return true;
      const auto mtc = static_cast<std::uint32_t>(pkt.payload & 0xff);
      const unsigned shift = t_.p_.mtc_period;
      if (shift > 8 && fixup_last_mtc_) {
        fixup_last_mtc_ = false;
        const std::uint32_t first_missing = 1u << (16 - shift);
        last_mtc_ |= mtc & ~(first_missing - 1);
        if (last_mtc_ >= mtc) {
          last_mtc_ -= first_missing;
          last_mtc_ &= 0xff;
        }
      }
      const std::uint32_t delta = mtc > last_mtc_ ? mtc - last_mtc_ : mtc + 256 - last_mtc_;
      ctc_delta_ += static_cast<std::uint64_t>(delta) << shift;
      last_mtc_ = mtc;
      const std::uint64_t ts = t_.ctc_timestamp_ + t_.ctc_to_tsc(ctc_delta_);
      if (ts < timestamp_) return false;
      if (before != PacketType::kCyc) {
        timestamp_ = ts;
        return true;
      }
      return measure(ts);
    }
    case PacketType::kCyc:
      cycles_ += pkt.payload;
      return true;
    case PacketType::kCbr: {
      const auto cbr = static_cast<unsigned>(pkt.payload & 0xff);
      if (cbr_ && cbr_ != cbr) return false;
      cbr_ = cbr;
      cbr_rate_ = cbr ? static_cast<double>(t_.p_.max_non_turbo_ratio) / cbr : 0;
      return true;
    }
    case PacketType::kTnt:
    case PacketType::kTipPge:
    case PacketType::kTip:
    case PacketType::kFup:
    case PacketType::kPsb:
    case PacketType::kPip:
    case PacketType::kModeExec:
    case PacketType::kModeTsx:
    case PacketType::kPsbEnd:
    case PacketType::kPad:
    case PacketType::kVmcs:
    case PacketType::kMnt:
    case PacketType::kPtwrite:
    case PacketType::kBbp:
    case PacketType::kBip:
    case PacketType::kBep:
      return true;
    default:  // TSC, TMA (time may have stopped), TIP.PGD, OVF, power events ...
      return false;
  }
}

bool CycRateProbe::measure(std::uint64_t timestamp) {
  unsigned cbr = cbr_;
  double cbr_rate = cbr_rate_;
  if (!cbr && t_.cbr_) {
    cbr = t_.cbr_;
    cbr_rate = t_.cbr_cyc_to_tsc_;
  }
  if (!cycles_) return false;
  const double rate = static_cast<double>(timestamp - t_.timestamp_) / static_cast<double>(cycles_);
  if (cbr && rate > cbr_rate && rate / cbr_rate > 1.25) return false;
  rate_ = rate;
  return false;
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
