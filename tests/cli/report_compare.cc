#include "report_compare.h"

#include <algorithm>
#include <sstream>

namespace perfkit::test {

std::vector<std::string> normalized_report_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("# (Tip:") || line.starts_with("# (Cannot load tips")) continue;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    // perf's "[...]" node reads an uninitialized "inlined" flag: its
    // " (inlined)" suffix comes and goes from run to run.
    if (line.ends_with("[...] (inlined)")) line.resize(line.size() - 10);
    out.push_back(line);
  }
  return out;
}

std::string report_mismatches(const std::string& perf, const std::string& perfkit) {
  auto x = normalized_report_lines(perf), y = normalized_report_lines(perfkit);
  std::string msg;
  int shown = 0;
  for (std::size_t i = 0; i < std::max(x.size(), y.size()) && shown < 8; ++i) {
    std::string l = i < x.size() ? x[i] : "<none>", r = i < y.size() ? y[i] : "<none>";
    if (l == r) continue;
    msg += "line " + std::to_string(i + 1) + "\n  perf:    " + l + "\n  perfkit: " + r + "\n";
    ++shown;
  }
  return msg;
}

}  // namespace perfkit::test
