// The sample filters of perf script, which perfkit's exports share: -C/--cpu,
// --time, -c/--comms, --pid, --tid, --dsos and -S/--symbols, each keeping a
// sample out as perf script does (report keeps filtered entries in its
// totals instead: report/ has its own rules).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/error.h"
#include "machine/machine.h"
#include "perfdata/reader.h"
#include "session/session.h"
#include "session/time_filter.h"

namespace perfkit::session {

struct SampleFilterOptions {
  std::vector<std::string> comms, dsos, symbols;
  std::vector<std::int32_t> pids, tids;
  std::vector<std::int32_t> cpus;
  bool have_cpus = false;  // -C given (an empty list then keeps nothing)
  std::string time;        // --time, as parse_time_ranges takes it
  bool reltime = false;    // --reltime: --time counts from the first sample
  // --addr-range: the -S addresses (entries that read as hex numbers, as
  // perf takes them) keep samples at [address, address + range).
  std::uint64_t addr_range = 0;
};

class SampleFilter {
 public:
  SampleFilter() = default;
  explicit SampleFilter(const SampleFilterOptions& o);

  // Settles --time against `reader`'s first and last sample times
  // (HEADER_SAMPLE_TIME; percent ranges need them). Errors:
  // parse_time_ranges'.
  Status prepare(const perfdata::Reader& reader);

  // A sample at `time` outside every --time range (0: no time, kept).
  bool skip_time(std::uint64_t time) const { return skip_by_time(ranges_, time); }
  // A sample on `cpu` (~0u: none, kept) that -C does not name.
  bool skip_cpu(std::uint32_t cpu) const {
    return have_cpus_ && cpu != ~0u && (cpu >= cpu_set_.size() || !cpu_set_[cpu]);
  }
  // By what the sample resolved to: its thread's comm, pid and tid, its DSO
  // (short, shown or long name), its symbol's name, or its address (a -S
  // entry that reads as a hex number, with --addr-range), as perf script's
  // filters compare them.
  bool skip(const ResolvedSample& s, const machine::Machine& m) const;

  // Whether a DSO or symbol filter is set (they need resolved locations).
  bool by_location() const { return !dsos_.empty() || by_symbol_; }
  // Whether any filter is set.
  bool any() const {
    return have_cpus_ || !ranges_.empty() || !comms_.empty() || !pids_.empty() || !tids_.empty() ||
           by_location();
  }

 private:
  std::string time_;
  bool reltime_ = false;
  std::vector<TimeRange> ranges_;
  bool have_cpus_ = false;
  std::vector<bool> cpu_set_;
  std::unordered_set<std::string> comms_, symbols_, dsos_;
  bool by_symbol_ = false;  // -S given (its entries may all be addresses)
  std::vector<std::uint64_t> addrs_;
  std::uint64_t addr_range_ = 0;
  std::unordered_set<std::int32_t> pids_, tids_;
};

}  // namespace perfkit::session
