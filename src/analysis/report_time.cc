// perfkit report's --time ranges and --time-quantum, parsed as perf 6.1
// parses them (util/time-utils.c, builtin-report.c): absolute "start,end"
// seconds with up to nine decimals, and percent ranges of the recording's
// first..last sample time ("10%/2": the second 10% slice, "0%-10%", "50%":
// the first half), several separated by commas.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "analysis/report.h"

namespace perfkit::analysis {

namespace {

constexpr std::uint64_t kNsPerSec = 1'000'000'000;

// perf's parse_nsec_time: "SECS[.FRACTION]" with at most nine fraction digits.
bool parse_seconds(std::string_view s, std::uint64_t& out) {
  std::string str(s);
  char* end = nullptr;
  std::uint64_t secs = std::strtoull(str.c_str(), &end, 10);
  std::uint64_t ns = 0;
  if (*end != '.' && *end != '\0') return false;
  if (*end == '.') {
    std::string frac(end + 1);
    if (frac.size() > 9) return false;
    frac.append(9 - frac.size(), '0');
    char* fend = nullptr;
    ns = std::strtoull(frac.c_str(), &fend, 10);
    if (*fend != '\0') return false;
  }
  out = secs * kNsPerSec + ns;
  return true;
}

// perf_time__parse_str: "start,end", either side may be empty.
bool parse_one_absolute(std::string_view s, TimeRange& r) {
  std::size_t comma = s.find(',');
  std::string_view a = s.substr(0, comma);
  std::string_view b = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
  r = {};
  if (!a.empty() && !parse_seconds(a, r.start)) return false;
  if (comma != std::string_view::npos && !b.empty() && !parse_seconds(b, r.end)) return false;
  return !(r.end && r.end < r.start);
}

// perf_time__parse_strs: as many ranges as commas, separated by white space
// ("1.0,1.5 2.0,2.5"), in increasing order without overlap.
bool parse_absolute(std::string_view s, std::vector<TimeRange>& out) {
  std::size_t num = static_cast<std::size_t>(std::count(s.begin(), s.end(), ','));
  if (num == 0) return false;
  std::string_view rest = s;
  for (std::size_t i = 0; i + 1 < num; ++i) {
    std::size_t comma = rest.find(',');
    std::size_t p = comma + 1;
    while (p < rest.size() && std::isspace(static_cast<unsigned char>(rest[p]))) ++p;
    while (p < rest.size() && !std::isspace(static_cast<unsigned char>(rest[p])))
      if (rest[p++] == ',') return false;
    TimeRange r;
    if (!parse_one_absolute(rest.substr(0, p), r)) return false;
    out.push_back(r);
    rest = p < rest.size() ? rest.substr(p + 1) : std::string_view();
  }
  TimeRange r;
  if (!parse_one_absolute(rest, r)) return false;
  out.push_back(r);
  for (std::size_t i = 0; i + 1 < out.size(); ++i)
    if (out[i].end >= out[i + 1].start) return false;
  return true;
}

// perf's parse_percent: "12.5%" -> 0.125; the '%' ends the number.
bool parse_percent(std::string_view s, double& out) {
  std::size_t pct = s.find('%');
  if (pct == std::string_view::npos) return false;
  std::string num(s.substr(0, pct));
  char* end = nullptr;
  double d = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return false;
  out = d / 100.0;
  return true;
}

bool set_percent_time(TimeRange& r, double from, double to, std::uint64_t first,
                      std::uint64_t last) {
  if (from < 0.0 || from > 1.0 || to < 0.0 || to > 1.0) return false;
  const auto total = static_cast<double>(last - first);
  r.start = first + static_cast<std::uint64_t>(std::round(from * total));
  r.end = first + static_cast<std::uint64_t>(std::round(to * total));
  if (r.end > r.start && r.end != last) r.end -= 1;
  return true;
}

// "10%/2": the second slice of 10%.
bool percent_slash(std::string_view s, TimeRange& r, std::uint64_t first, std::uint64_t last) {
  std::size_t slash = s.find('/');
  if (slash == std::string_view::npos) return false;
  double pcnt = 0;
  if (!parse_percent(s.substr(0, slash), pcnt)) return false;
  std::string idx(s.substr(slash + 1));
  char* end = nullptr;
  int i = static_cast<int>(std::strtol(idx.c_str(), &end, 10));
  if (*end) return false;
  if (pcnt <= 0.0) return false;
  return set_percent_time(r, pcnt * (i - 1), pcnt * i, first, last);
}

// "0%-10%".
bool percent_dash(std::string_view s, TimeRange& r, std::uint64_t first, std::uint64_t last) {
  std::size_t dash = s.find('-');
  if (dash == std::string_view::npos) return false;
  double a = 0, b = 0;
  if (!parse_percent(s.substr(0, dash), a) || !parse_percent(s.substr(dash + 1), b)) return false;
  return set_percent_time(r, a, b, first, last);
}

bool parse_percent_ranges(std::string_view s, std::uint64_t first, std::uint64_t last,
                          std::vector<TimeRange>& out) {
  if (s.find('/') == std::string_view::npos && s.find('-') == std::string_view::npos) {
    // "50%" alone means "50%/1"; the '%' must end the string.
    if (s.find('%') + 1 != s.size()) return false;
    TimeRange r;
    if (!percent_slash(std::string(s) + "/1", r, first, last)) return false;
    out.push_back(r);
    return true;
  }
  const bool slash = s.find('/') != std::string_view::npos;
  while (!s.empty()) {
    std::size_t comma = s.find(',');
    std::string_view part = s.substr(0, comma);
    TimeRange r;
    if (!(slash ? percent_slash(part, r, first, last) : percent_dash(part, r, first, last)))
      return false;
    out.push_back(r);
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  return true;
}

}  // namespace

Expected<std::vector<TimeRange>> parse_time_ranges(std::string_view str, std::uint64_t first,
                                                   std::uint64_t last) {
  std::vector<TimeRange> out;
  if (str.find('%') != std::string_view::npos) {
    if (first == 0 && last == 0)
      return make_error(
          "--time {}: no first/last sample time in the recording (HEADER_SAMPLE_TIME); percent "
          "ranges need one",
          str);
    if (!parse_percent_ranges(str, first, last, out))
      return make_error("--time {}: invalid time string", str);
    return out;
  }
  if (!parse_absolute(str, out)) return make_error("--time {}: invalid time string", str);
  return out;
}

bool time_skipped(const std::vector<TimeRange>& ranges, std::uint64_t t) {
  if (ranges.empty() || t == 0) return false;
  if (ranges.size() == 1)
    return (ranges[0].start && t < ranges[0].start) || (ranges[0].end && t > ranges[0].end);
  for (const TimeRange& r : ranges)
    if (t >= r.start && (t <= r.end || !r.end)) return false;
  return true;
}

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

}  // namespace perfkit::analysis
