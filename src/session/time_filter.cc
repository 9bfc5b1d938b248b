#include "session/time_filter.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace perfkit::session {

namespace {

Error invalid() { return Error("Invalid time string"); }

// "SEC[.FRACTION]" with at most 9 fraction digits, in nanoseconds.
bool parse_nsec(const std::string& s, std::uint64_t& out) {
  char* end = nullptr;
  std::uint64_t sec = std::strtoull(s.c_str(), &end, 10);
  if (*end != '.' && *end != '\0') return false;
  std::uint64_t nsec = 0;
  if (*end == '.') {
    std::string frac(end + 1);
    if (frac.size() > 9) return false;
    frac.resize(9, '0');
    char* fend = nullptr;
    nsec = std::strtoull(frac.c_str(), &fend, 10);
    if (*fend != '\0') return false;
  }
  out = sec * 1000000000ULL + nsec;
  return true;
}

// "start,stop", either side possibly empty.
bool parse_range(std::string_view s, TimeRange& r) {
  r = {};
  auto comma = s.find(',');
  std::string a(s.substr(0, comma));
  std::string b =
      comma == std::string_view::npos ? std::string() : std::string(s.substr(comma + 1));
  if (!a.empty() && !parse_nsec(a, r.start)) return false;
  if (!b.empty() && !parse_nsec(b, r.end)) return false;
  return !(r.end && r.end < r.start);
}

bool parse_percent(std::string_view s, double& pcnt) {
  auto pct = s.find('%');
  if (pct == std::string_view::npos) return false;
  std::string num(s.substr(0, pct));
  char* end = nullptr;
  double d = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return false;
  pcnt = d / 100.0;
  return true;
}

bool set_percent(TimeRange& r, double a, double b, std::uint64_t first, std::uint64_t last) {
  if (a < 0.0 || a > 1.0 || b < 0.0 || b > 1.0) return false;
  const double total = static_cast<double>(last - first);
  r.start = first + static_cast<std::uint64_t>(std::round(a * total));
  r.end = first + static_cast<std::uint64_t>(std::round(b * total));
  if (r.end > r.start && r.end != last) r.end -= 1;
  return true;
}

// "10%/2": the second 10% slice.
bool percent_slash(std::string_view s, TimeRange& r, std::uint64_t first, std::uint64_t last) {
  auto slash = s.find('/');
  if (slash == std::string_view::npos) return false;
  double pcnt;
  if (!parse_percent(s.substr(0, slash), pcnt)) return false;
  std::string idx(s.substr(slash + 1));
  char* end = nullptr;
  long i = std::strtol(idx.c_str(), &end, 10);
  if (*end || pcnt <= 0.0) return false;
  return set_percent(r, pcnt * static_cast<double>(i - 1), pcnt * static_cast<double>(i), first,
                     last);
}

// "0%-10%".
bool percent_dash(std::string_view s, TimeRange& r, std::uint64_t first, std::uint64_t last) {
  auto dash = s.find('-');
  if (dash == std::string_view::npos) return false;
  double a, b;
  if (!parse_percent(s.substr(0, dash), a) || !parse_percent(s.substr(dash + 1), b)) return false;
  return set_percent(r, a, b, first, last);
}

template <class Split>
Expected<std::vector<TimeRange>> percent_list(std::string_view s, std::size_t max, Split split,
                                              std::uint64_t first, std::uint64_t last) {
  std::vector<TimeRange> out;
  std::size_t at = 0;
  while (at < s.size()) {
    if (out.size() >= max) return invalid();
    auto comma = s.find(',', at);
    std::string_view piece = s.substr(at, comma == std::string_view::npos ? comma : comma - at);
    TimeRange r;
    if (!split(piece, r, first, last)) return invalid();
    out.push_back(r);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return out;
}

// Several "start,stop" ranges separated by white space; they must not overlap.
Expected<std::vector<TimeRange>> absolute_list(std::string_view s) {
  std::size_t commas = 0;
  for (char c : s) commas += c == ',';
  if (commas == 0) return invalid();
  std::vector<TimeRange> out;
  std::size_t p = 0;
  for (std::size_t i = 0; i + 1 < commas; ++i) {
    std::size_t arg = p;
    p = s.find(',', p) + 1;
    while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
    while (p < s.size() && !std::isspace(static_cast<unsigned char>(s[p]))) {
      if (s[p++] == ',') return invalid();
    }
    std::size_t stop = p;
    if (p < s.size()) ++p;
    TimeRange r;
    if (!parse_range(s.substr(arg, stop - arg), r)) return invalid();
    out.push_back(r);
  }
  TimeRange r;
  if (!parse_range(s.substr(p), r)) return invalid();
  out.push_back(r);
  for (std::size_t i = 0; i + 1 < out.size(); ++i)
    if (out[i].end >= out[i + 1].start) return invalid();
  return out;
}

}  // namespace

Expected<std::vector<TimeRange>> parse_time_ranges(std::string_view spec, std::uint64_t first,
                                                   std::uint64_t last, bool reltime) {
  const bool percent = spec.find('%') != std::string_view::npos;
  std::size_t size = 1;
  for (char c : spec) size += c == ',';
  if ((percent || reltime) && first == 0 && last == 0)
    return make_error(
        "HINT: no first/last sample time found in perf data.\nPlease use latest perf binary to "
        "execute 'perf record'\n(if '--buildid-all' is enabled, please set "
        "'--timestamp-boundary').");
  Expected<std::vector<TimeRange>> ranges = std::vector<TimeRange>{};
  if (percent) {
    if (spec.find('/') != std::string_view::npos) {
      ranges = percent_list(spec, size, percent_slash, first, last);
    } else if (spec.find('-') != std::string_view::npos) {
      ranges = percent_list(spec, size, percent_dash, first, last);
    } else {
      // "50%": the first 50% slice; '%' must end the string.
      if (spec.back() != '%') return invalid();
      std::string one = std::string(spec) + "/1";
      TimeRange r;
      if (!percent_slash(one, r, first, last)) return invalid();
      ranges = std::vector<TimeRange>{r};
    }
  } else {
    ranges = absolute_list(spec);
  }
  if (!ranges) return ranges;
  if (reltime) {
    for (auto& r : *ranges) {
      r.start += first;
      r.end += first;
    }
  }
  return ranges;
}

bool skip_by_time(const std::vector<TimeRange>& ranges, std::uint64_t t) {
  if (ranges.empty() || t == 0) return false;
  if (ranges.size() == 1) {
    const TimeRange& r = ranges[0];
    return (r.start && t < r.start) || (r.end && t > r.end);
  }
  for (const TimeRange& r : ranges)
    if (t >= r.start && (t <= r.end || !r.end)) return false;
  return true;
}

}  // namespace perfkit::session
