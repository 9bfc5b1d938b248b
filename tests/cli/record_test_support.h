// Helpers of the `perfkit record` CLI tests: run perfkit record and
// /usr/bin/perf record side by side, read the results back with perf report,
// perf script and perf evlist, and with perfkit's own reader.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_support.h"

namespace perfkit::test {

// The closing line's sample and lost counts.
struct Closing {
  bool found = false;
  std::uint64_t samples = 0, lost = 0;
};
Closing parse_closing(const std::string& err);

// SAMPLE records as perfkit's reader counts them (inner records of COMPRESSED
// included), or -1 when the file cannot be read.
long count_samples(const std::string& path);

// "SAMPLE events: N" of perf report --stats (the total, its first line).
long perf_sample_count(const std::string& path);

// stderr of perf report --stdio and of perf script on `path` ("-" reads the
// file as a pipe on stdin), which must be free of warnings.
std::string perf_report_errors(const std::string& path);
std::string perf_script_errors(const std::string& path);

// perf report --stdio --no-children --sort SORT -g none on `path` by `tool`
// (perf or perfkit), without the comment lines that differ (tips).
std::string sorted_report(const std::string& tool, const std::string& path,
                          const std::string& sort = "sym");

// `perf evlist -v` of a recording.
std::string evlist(const std::string& path);

// The record kinds of a perf.data file in file order, runs collapsed
// ("SAMPLE x12"), up to and including FINISHED_INIT.
std::vector<std::string> record_kinds_until_init(const std::string& path);

std::string watched_workload();  // tests/workloads/watched (non-PIE)
// The address of a global symbol of an executable (nm), 0 if not found.
std::uint64_t symbol_address(const std::string& exe, const std::string& symbol);

}  // namespace perfkit::test
