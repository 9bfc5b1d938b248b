#include "cli/script_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "support/test_support.h"

namespace perfkit::test {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(std::move(line));
  return out;
}

}  // namespace

std::string ScriptDiff::summary() const {
  return fmt::format("perf {} lines, perfkit {} lines, {} identical ({:.4f}%)\n{}{}", perf_lines,
                     perfkit_lines, same, 100.0 * match(), first_mismatches,
                     perfkit_error.empty() ? "" : "perfkit stderr: " + perfkit_error + "\n");
}

ScriptDiff diff_script(const std::string& file, const std::string& args, const std::string& input) {
  ScriptDiff d;
  const std::string in = input.empty() ? "-i " + sh(file) : input;
  auto p = run("perf script " + in + " " + args);
  auto k = run(perfkit_bin() + " script " + in + " " + args);
  // perf 6.1 sometimes dies of SIGPIPE (status 141) when an addr2line child
  // it feeds exits; what it printed until then is still its answer.
  d.perf_ok = p.status == 0 || (p.status == 141 && !p.out.empty());
  d.perfkit_ok = k.status == 0;
  d.perfkit_error = k.err.substr(0, 400);
  d.perf_error = p.err.substr(0, 400);
  d.perf_status = p.status;
  auto a = lines_of(p.out), b = lines_of(k.out);
  d.perf_lines = a.size();
  d.perfkit_lines = b.size();
  // In order: line i of one against line i of the other.
  int shown = 0;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string& x = i < a.size() ? a[i] : std::string("<none>");
    const std::string& y = i < b.size() ? b[i] : std::string("<none>");
    if (i < a.size() && i < b.size() && x == y) {
      ++d.same;
    } else if (shown++ < 6) {
      d.first_mismatches += fmt::format("line {}\n  perf:    {}\n  perfkit: {}\n", i + 1, x, y);
    }
  }
  return d;
}

}  // namespace perfkit::test
