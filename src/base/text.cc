#include "base/text.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace perfkit {

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

std::vector<std::string> split_list(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (std::string_view piece : split(s, sep))
    if (!piece.empty()) out.emplace_back(piece);
  return out;
}

namespace {

// One piece of a number list: "N" or, with ranges, "A-B" (a '-' at the
// start is N's sign). False when it is neither.
bool parse_piece(std::string_view piece, bool ranges, std::int64_t& lo, std::int64_t& hi) {
  const std::size_t dash = ranges ? piece.find('-', 1) : std::string_view::npos;
  if (!parse_i64(trim(piece.substr(0, dash)), lo)) return false;
  hi = lo;
  if (dash == std::string_view::npos) return true;
  return parse_i64(trim(piece.substr(dash + 1)), hi) && lo <= hi;
}

}  // namespace

IntListRules IntListRules::pids(std::string_view what) {
  IntListRules r;
  r.what = what;
  r.min = 1;
  r.max = 0x7fffffff;
  r.ranges = false;
  r.skip_empty = false;
  return r;
}

Expected<std::vector<std::int64_t>> parse_int_list(std::string_view text,
                                                   const IntListRules& rules) {
  std::vector<std::int64_t> out;
  text = trim(text);
  if (text.empty()) return out;
  for (std::string_view piece : split(text, ',')) {
    if (trim(piece).empty() && rules.skip_empty) continue;
    std::int64_t lo = 0, hi = 0;
    if (!parse_piece(piece, rules.ranges, lo, hi) || lo < rules.min || hi > rules.max)
      return make_error("invalid {} '{}' in '{}'", rules.what, piece, text);
    for (std::int64_t v = lo;; ++v) {
      out.push_back(v);
      if (v == hi) break;
    }
  }
  if (rules.sort_unique) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

Expected<std::vector<int>> parse_cpu_list(std::string_view s) {
  IntListRules rules;
  rules.what = "cpu list";
  rules.min = 0;
  rules.max = 65535;
  rules.skip_empty = false;
  rules.sort_unique = true;
  PK_ASSIGN(auto list, parse_int_list(s, rules));
  return std::vector<int>(list.begin(), list.end());
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

}  // namespace perfkit
