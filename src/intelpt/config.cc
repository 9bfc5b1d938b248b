#include "intelpt/config.h"

#include <bit>
#include <cstring>

#include "abi/perf_event.h"

namespace perfkit::intelpt {

unsigned PtConfig::mtc_period() const {
  if (!mtc_freq_bits || !(config & mtc_freq_bits)) return 0;
  return static_cast<unsigned>((config & mtc_freq_bits) >> std::countr_zero(mtc_freq_bits));
}

std::uint64_t PtConfig::tsc_to_perf_time(std::uint64_t tsc) const {
  if (!time_mult && !time_shift) return tsc;
  std::uint64_t quot = tsc >> time_shift;
  std::uint64_t rem = tsc & ((1ULL << time_shift) - 1);
  return time_zero + quot * time_mult + ((rem * time_mult) >> time_shift);
}

std::uint64_t PtConfig::perf_time_to_tsc(std::uint64_t ns) const {
  if (!time_mult) return ns;
  std::uint64_t t = ns - time_zero;
  std::uint64_t quot = t / time_mult;
  std::uint64_t rem = t % time_mult;
  return (quot << time_shift) + (rem << time_shift) / time_mult;
}

Expected<PtConfig> parse_auxtrace_info(const record::AuxtraceInfoRecord& info) {
  if (info.type != abi::kAuxtraceIntelPt)
    return make_error("AUXTRACE_INFO is of type {}, not intel_pt (1)", info.type);
  const auto& p = info.priv;
  if (p.size() < kPrivFieldsMin)
    return make_error("intel_pt AUXTRACE_INFO has {} priv fields, needs at least {}", p.size(),
                      kPrivFieldsMin);
  PtConfig c;
  c.pmu_type = static_cast<std::uint32_t>(p[0]);
  c.time_shift = static_cast<std::uint16_t>(p[1]);
  c.time_mult = static_cast<std::uint32_t>(p[2]);
  c.time_zero = p[3];
  c.cap_user_time_zero = p[4];
  c.tsc_bit = p[5];
  c.noretcomp_bit = p[6];
  c.have_sched_switch = static_cast<std::uint32_t>(p[7]);
  c.snapshot_mode = p[8];
  c.per_cpu_mmaps = p[9];
  if (p.size() > 14) {
    c.mtc_bit = p[10];
    c.mtc_freq_bits = p[11];
    c.tsc_ctc_ratio_n = static_cast<std::uint32_t>(p[12]);
    c.tsc_ctc_ratio_d = static_cast<std::uint32_t>(p[13]);
    c.cyc_bit = p[14];
  } else {
    c.mtc_bit = c.mtc_freq_bits = c.cyc_bit = 0;
  }
  if (p.size() > 15) c.max_non_turbo_ratio = static_cast<std::uint32_t>(p[15]);
  if (p.size() > 16) {
    std::uint64_t len = p[16];
    std::uint64_t room = (p.size() - kPrivFields) * 8;
    if (len > room)
      return make_error(
          "intel_pt AUXTRACE_INFO filter string of {} bytes runs past the record "
          "({} bytes left)",
          len, room);
    Bytes rest = p.bytes().subspan(kPrivFields * 8, static_cast<std::size_t>(len));
    c.filter = std::string(c_string(rest));
  }
  return c;
}

std::vector<std::uint64_t> encode_auxtrace_priv(const PtConfig& c) {
  std::vector<std::uint64_t> p = {
      c.pmu_type,           c.time_shift,      c.time_mult,     c.time_zero,
      c.cap_user_time_zero, c.tsc_bit,         c.noretcomp_bit, c.have_sched_switch,
      c.snapshot_mode,      c.per_cpu_mmaps,   c.mtc_bit,       c.mtc_freq_bits,
      c.tsc_ctc_ratio_n,    c.tsc_ctc_ratio_d, c.cyc_bit,       c.max_non_turbo_ratio,
      c.filter.size()};
  if (!c.filter.empty()) {
    std::size_t words = (c.filter.size() + 1 + 7) / 8;
    std::size_t at = p.size();
    p.resize(at + words, 0);
    std::memcpy(p.data() + at, c.filter.data(), c.filter.size());
  }
  return p;
}

}  // namespace perfkit::intelpt
