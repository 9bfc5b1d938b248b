// Comparing perfkit script with perf script: both run on the same file with
// the same arguments; the outputs are compared line by line, in order, and
// the first mismatches are kept for the failure message.
#pragma once

#include <string>

namespace perfkit::test {

struct ScriptDiff {
  bool perf_ok = false;     // perf exited 0 (else there is nothing to compare)
  bool perfkit_ok = false;  // perfkit exited 0
  std::size_t perf_lines = 0, perfkit_lines = 0, same = 0;
  std::string first_mismatches;  // "line N\n  perf:    ...\n  perfkit: ..." (a few)
  std::string perfkit_error;
  std::string perf_error;
  int perf_status = 0;  // perf's exit status (-1: it did not exit normally)

  // Share of perf's lines perfkit printed identically (1 when both are empty).
  double match() const {
    std::size_t n = std::max(perf_lines, perfkit_lines);
    return n == 0 ? 1.0 : static_cast<double>(same) / static_cast<double>(n);
  }
  std::string summary() const;
};

// Runs `perf script -i FILE ARGS` and `perfkit script -i FILE ARGS`. `input`
// replaces "-i FILE" when set (e.g. "-i - < FILE").
ScriptDiff diff_script(const std::string& file, const std::string& args,
                       const std::string& input = "");

}  // namespace perfkit::test
