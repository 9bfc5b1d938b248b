#include "capture/text_util.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace perfkit::capture {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    auto at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? s.npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

bool parse_u64(std::string_view s, std::uint64_t& out, int base) {
  if (s.empty()) return false;
  if (base == 0) {
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      base = 16;
      s.remove_prefix(2);
    } else if (s.size() > 1 && s[0] == '0') {
      base = 8;
      s.remove_prefix(1);
    } else {
      base = 10;
    }
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_i64(std::string_view s, std::int64_t& out) {
  bool neg = !s.empty() && s[0] == '-';
  std::uint64_t u = 0;
  if (!parse_u64(neg ? s.substr(1) : s, u, 10)) return false;
  if (u > static_cast<std::uint64_t>(INT64_MAX)) return false;
  out = neg ? -static_cast<std::int64_t>(u) : static_cast<std::int64_t>(u);
  return true;
}

Expected<std::vector<int>> parse_cpu_list(std::string_view s) {
  std::vector<int> cpus;
  s = trim(s);
  if (s.empty()) return cpus;
  for (auto part : split(s, ',')) {
    auto dash = part.find('-');
    std::uint64_t lo = 0, hi = 0;
    if (!parse_u64(part.substr(0, dash), lo, 10)) return make_error("invalid cpu list '{}'", s);
    hi = lo;
    if (dash != std::string_view::npos && !parse_u64(part.substr(dash + 1), hi, 10))
      return make_error("invalid cpu list '{}'", s);
    if (lo > hi || hi > 65535) return make_error("invalid cpu range '{}' in '{}'", part, s);
    for (auto c = lo; c <= hi; ++c) cpus.push_back(static_cast<int>(c));
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool glob_match(std::string_view pattern, std::string_view text) {
  return fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

bool has_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

}  // namespace perfkit::capture
