// perfkit report's --time-quantum, parsed as perf 6.1 parses it. (Its
// --time ranges are script's: script_time.h.)
#include <cstdlib>
#include <string>

#include "report/report.h"

namespace perfkit::report {

namespace {

constexpr std::uint64_t kNsPerSec = 1'000'000'000;

}  // namespace

Expected<std::uint64_t> parse_time_quantum(std::string_view s) {
  std::string str(s);
  char* end = nullptr;
  std::uint64_t q = std::strtoull(str.c_str(), &end, 0);
  if (end == str.c_str()) return make_error("cannot parse time quantum '{}'", s);
  if (q == 0) return make_error("time quantum cannot be 0");
  while (*end == ' ' || *end == '\t') ++end;
  std::string_view unit(end);
  if (unit.empty() || unit == "ns") return q;
  if (unit == "s") return q * kNsPerSec;
  if (unit == "ms") return q * 1'000'000;
  if (unit == "us") return q * 1'000;
  return make_error("cannot parse time quantum '{}'", s);
}

}  // namespace perfkit::report
