// Helpers for the tests that compare `perfkit dump` with `perf report -D`.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace perfkit::test {

// perf report -D's output as perfkit dump --no-header prints it: without the
// "# To display the perf.data header info" preamble and without the thread
// and dso lines perf adds to samples (they need machine state).
inline std::string perf_dump_comparable(const std::string& perf_out) {
  std::istringstream in(perf_out);
  std::string line, out;
  bool skip_hash = false;
  while (std::getline(in, line)) {
    if (line.starts_with("# To display the perf.data header info")) {
      skip_hash = true;
      continue;
    }
    if (skip_hash && line == "#") {
      skip_hash = false;
      continue;
    }
    skip_hash = false;
    if (line.starts_with(" ... thread: ") || line.starts_with(" ...... dso: ")) continue;
    out += line;
    out += '\n';
  }
  return out;
}

// Drops the ". ... raw event" hex dumps (lines starting with '.' that are
// part of a dump) for comparisons across byte orders.
inline std::string without_raw_dumps(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line == "." || line.starts_with(". ... raw event: size ") || line.starts_with(".  "))
      continue;
    out += line;
    out += '\n';
  }
  return out;
}

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) v.push_back(line);
  return v;
}

// "" when equal, else the first differing lines with context.
inline std::string first_mismatch(const std::string& expected, const std::string& actual,
                                  int max_lines = 12) {
  if (expected == actual) return "";
  auto a = split_lines(expected), b = split_lines(actual);
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::ostringstream os;
  os << "first difference at line " << i + 1 << " (perf has " << a.size() << " lines, perfkit "
     << b.size() << ")\n";
  std::size_t from = i >= 3 ? i - 3 : 0;
  for (std::size_t k = from; k < i; ++k) os << "  = " << a[k] << "\n";
  for (std::size_t k = i; k < a.size() && k < i + max_lines; ++k)
    os << "  perf:    " << a[k] << "\n";
  for (std::size_t k = i; k < b.size() && k < i + max_lines; ++k)
    os << "  perfkit: " << b[k] << "\n";
  return os.str();
}

// Runs perf report -D on `path` (stdin from /dev/null: perf reads it otherwise).
inline RunResult perf_report_dump(const std::string& path) {
  return run("perf report -D -i " + sh(path) + " </dev/null");
}

inline RunResult perfkit_dump(const std::string& path) {
  return run(perfkit_bin() + " dump --no-header -i " + sh(path) + " </dev/null");
}

}  // namespace perfkit::test
