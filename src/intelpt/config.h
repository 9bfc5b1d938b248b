// PtConfig: the parameters the decoder needs, from the AUXTRACE_INFO record
// of type intel_pt (its priv array, laid out as perf writes it) and the
// intel_pt event's attr.config.
//
//   priv[0]  PMU type            priv[9]  per-cpu mmaps
//   priv[1]  time_shift          priv[10] MTC bit in config
//   priv[2]  time_mult           priv[11] MTC period bits in config
//   priv[3]  time_zero           priv[12] TSC:CTC numerator (CPUID.15H EBX)
//   priv[4]  cap_user_time_zero  priv[13] TSC:CTC denominator (CPUID.15H EAX)
//   priv[5]  TSC bit in config   priv[14] CYC bit in config
//   priv[6]  noretcomp bit       priv[15] max non-turbo ratio
//   priv[7]  have sched_switch   priv[16] filter string length; the string follows
//   priv[8]  snapshot mode
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "record/records.h"

namespace perfkit::intelpt {

inline constexpr std::size_t kPrivFieldsMin = 10;  // up to per-cpu mmaps (perf 4.1)
inline constexpr std::size_t kPrivFields = 17;     // up to the filter string length

struct PtConfig {
  std::uint32_t pmu_type = 0;
  // perf time = time_zero + (tsc * time_mult) >> time_shift (split to avoid overflow)
  std::uint16_t time_shift = 0;
  std::uint32_t time_mult = 0;
  std::uint64_t time_zero = 0;
  bool cap_user_time_zero = false;
  std::uint64_t tsc_bit = 0x400, noretcomp_bit = 0x800, mtc_bit = 0x200, mtc_freq_bits = 0x3c000,
                cyc_bit = 0x2;
  std::uint32_t have_sched_switch = 0;
  bool snapshot_mode = false;
  bool per_cpu_mmaps = false;
  std::uint32_t tsc_ctc_ratio_n = 0, tsc_ctc_ratio_d = 0;
  std::uint32_t max_non_turbo_ratio = 0;
  std::string filter;

  // From the intel_pt event's attr.config.
  std::uint64_t config = 0;
  bool have_config = false;

  bool tsc() const { return !have_config || (config & tsc_bit); }
  bool return_compression() const { return !have_config || !(config & noretcomp_bit); }
  bool mtc() const { return have_config && (config & mtc_bit); }
  bool cyc() const { return have_config && (config & cyc_bit); }
  // The MTC period: MTC packets every 2^period CTC ticks.
  unsigned mtc_period() const;
  // Branch tracing is off when the config has the pass-through bit (0) but
  // not the branch enable bit (13).
  bool branch_enable() const { return !have_config || !(config & 1) || (config & 0x2000); }

  // TSC ticks to perf time (nanoseconds), the way perf converts them.
  std::uint64_t tsc_to_perf_time(std::uint64_t tsc) const;
  // perf time to TSC ticks.
  std::uint64_t perf_time_to_tsc(std::uint64_t ns) const;
};

// Reads the priv fields of an AUXTRACE_INFO record. Errors: the record is not
// of type intel_pt (1), or has fewer than 10 priv fields, or its filter
// string runs past the record.
Expected<PtConfig> parse_auxtrace_info(const record::AuxtraceInfoRecord& info);

// The priv array for an AUXTRACE_INFO record (17 fields and the filter
// string, padded to 8 bytes), as perf record writes it.
std::vector<std::uint64_t> encode_auxtrace_priv(const PtConfig& cfg);

}  // namespace perfkit::intelpt
