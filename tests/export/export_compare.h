// What the export consumer tests compare: perfkit report's self numbers per
// symbol (`--no-children -g none --sort sym -F sample,period,sym`), per
// event, against what a consumer says of the exported file.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace perfkit::test {

struct SymbolTotals {
  std::uint64_t samples = 0, period = 0;
};
// event name -> symbol name -> totals (unresolved "0x..." rows are summed
// under "[unknown]", the name exports give an address without a symbol).
using ReportTotals = std::map<std::string, std::map<std::string, SymbolTotals>>;

// Runs perfkit report on `file` with `extra` options and parses its rows;
// with `binary` "perf", perf's report.
ReportTotals report_totals(const std::string& file, const std::string& extra = "",
                           const std::string& binary = "");

// A pt-synth Intel PT recording of the PT tests' ptflow-static workload,
// written in `dir` (its path; the test fails when pt-synth does).
std::string pt_recording(const std::string& dir);
// The --itrace options the export tests decode it with.
inline constexpr const char* kPtItrace = "--itrace=i1000i";

// The sums over the symbols of one event.
SymbolTotals event_totals(const std::map<std::string, SymbolTotals>& symbols);

}  // namespace perfkit::test
