// Comparing `perf report --stdio` and `perfkit report --stdio` text, shared
// by the report differential tests.
#pragma once

#include <string>
#include <vector>

namespace perfkit::test {

// The report's lines without perf's random "Tip:" line, trailing blanks, and
// the " (inlined)" that perf's "[...]" node shows at random.
std::vector<std::string> normalized_report_lines(const std::string& text);

// Empty when both reports are the same, else their first mismatches.
std::string report_mismatches(const std::string& perf, const std::string& perfkit);

}  // namespace perfkit::test
