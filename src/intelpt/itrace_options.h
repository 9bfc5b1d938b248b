// ItraceOptions: what to synthesize from an instruction trace, parsed from
// perf's --itrace string (perf-intel-pt(1), "New --itrace option"):
//
//   i[N[i|t|ns|us|ms]]  instructions, one sample per period (default 100us;
//                       N without a unit at the end of the string is in ns;
//                       0 means every instruction)
//   b  branches         c  calls only     r  returns only
//   x  transactions     w  ptwrite        p  power events (and PSB)
//   o  other (PEBS via PT)                I  Event Trace events
//   e[+|-flag...]  errors (flags: o overflow, l data lost)
//   d[+|-flag...]  debug log (flags: a all perf events)
//   g[N]  call chains on the synthesized samples (default 16, max 1024)
//   G[N]  call chains on existing samples
//   l[N]  last branch entries (default 64, max 1024)    L[N] on existing samples
//   s[N]  skip the first N events    q  quicker decoding (qq: PSB+ only)
//   A  approximate IPC (from the cycle count at each timestamp)
//   Z  timeless decoding (ignore timestamps)
//
// Spaces and commas between letters are ignored. A bad string gives the
// error perf prints: "Bad Instruction Tracing options 'STR'".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"

namespace perfkit::intelpt {

enum class PeriodType : std::uint8_t { kInstructions, kTicks, kNanosecs };

struct ItraceOptions {
  bool set = false;
  bool dont_decode = false;  // --no-itrace
  bool instructions = false;
  bool branches = false;
  bool transactions = false;
  bool ptwrites = false;
  bool pwr_events = false;
  bool other_events = false;
  bool intr_events = false;
  bool calls = false;
  bool returns = false;
  bool errors = false;
  bool log = false;
  bool callchain = false;
  bool add_callchain = false;
  bool last_branch = false;
  bool add_last_branch = false;
  bool timeless = false;
  bool approx_ipc = false;
  int quick = 0;
  PeriodType period_type = PeriodType::kNanosecs;
  std::uint64_t period = 100000;  // 100us
  std::uint32_t callchain_sz = 16;
  std::uint32_t last_branch_sz = 64;
  std::uint64_t initial_skip = 0;
  // Bits 'a'..'z' of the +flags and -flags after e and d.
  std::uint32_t error_plus_flags = 0, error_minus_flags = 0;
  std::uint32_t log_plus_flags = 0, log_minus_flags = 0;

  static constexpr std::uint32_t flag(char c) { return 1u << (c - 'a'); }
  // Errors of this kind are reported (e-o drops overflows, e-l lost data).
  bool report_overflow() const { return errors && !(error_minus_flags & flag('o')); }
  bool report_lost() const { return errors && !(error_minus_flags & flag('l')); }
};

// perf's defaults when --itrace has no letters: everything but instructions,
// with branches limited to calls, for perf script (`no_sample`: "cepwx");
// instructions every 100us and everything else for perf report.
ItraceOptions itrace_defaults(bool no_sample);

// Parses an --itrace string into `opts` (which may hold an earlier --itrace:
// options add up, as in perf). An empty string gives the defaults.
// Errors: an unknown letter, a period without a valid unit, a call chain or
// last branch size out of 1..1024, a flag that is not a lower-case letter.
Status parse_itrace(std::string_view str, bool no_sample, ItraceOptions& opts);

// The options as an --itrace string (for messages and round-trip tests).
std::string format_itrace(const ItraceOptions& opts);

}  // namespace perfkit::intelpt
