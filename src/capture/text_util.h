// Small text helpers for the kernel's text files and perf's option syntax:
// trimming, splitting, case-insensitive compares, numbers in perf's bases,
// cpu lists ("0-3,8") and the edit distance behind "did you mean" hints.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace perfkit::capture {

std::string_view trim(std::string_view s);
// Splits on `sep`; empty pieces are kept ("a,,b" gives 3).
std::vector<std::string_view> split(std::string_view s, char sep);
bool iequals(std::string_view a, std::string_view b);

// Parses an unsigned number. base 0 accepts perf's forms: decimal, 0x hex,
// leading-0 octal. False on empty input, junk, or overflow.
bool parse_u64(std::string_view s, std::uint64_t& out, int base = 0);
bool parse_i64(std::string_view s, std::int64_t& out);

// Parses a cpu list ("0-3,8,10-11") into sorted, unique cpu numbers.
// Errors name the text.
Expected<std::vector<int>> parse_cpu_list(std::string_view s);
// The compact form of a sorted cpu list, "0-3,8".
std::string format_cpu_list(const std::vector<int>& cpus);

// Levenshtein distance, case-insensitive (for suggestions).
std::size_t edit_distance(std::string_view a, std::string_view b);

// Shell-style glob match with * ? and [...] (tracepoint names).
bool glob_match(std::string_view pattern, std::string_view text);
bool has_glob(std::string_view s);

}  // namespace perfkit::capture
