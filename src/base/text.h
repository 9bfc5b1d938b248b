// Small text helpers for the kernel's text files and perf's option syntax:
// trimming, splitting, case-insensitive compares, numbers in perf's bases,
// number lists ("0-3,8": cpus, pids, tids; the one list parser) and the edit
// distance behind "did you mean" hints.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace perfkit {

std::string_view trim(std::string_view s);
// Splits on `sep`; empty pieces are kept ("a,,b" gives 3).
std::vector<std::string_view> split(std::string_view s, char sep);
bool iequals(std::string_view a, std::string_view b);

// Parses an unsigned number. base 0 accepts perf's forms: decimal, 0x hex,
// leading-0 octal. False on empty input, junk, or overflow.
bool parse_u64(std::string_view s, std::uint64_t& out, int base = 0);
bool parse_i64(std::string_view s, std::int64_t& out);

// Splits a comma list into its pieces, leaving out the empty ones
// ("a,,b" gives 2): perf's string lists (--comms, --dsos, --symbols).
std::vector<std::string> split_list(std::string_view s, char sep = ',');

// What one of perf's number lists accepts.
struct IntListRules {
  std::string_view what = "list";  // names the list in errors: "pid", "cpu list"
  std::int64_t min = INT64_MIN;
  std::int64_t max = INT64_MAX;
  bool ranges = true;        // "A-B" pieces (A <= B)
  bool skip_empty = true;    // "1,,2" reads as "1,2"; otherwise an error
  bool sort_unique = false;  // sorted, each number once

  // perf record's and stat's -p/-t: positive ids, no ranges, no empty piece.
  static IntListRules pids(std::string_view what);
};

// Parses a number list such as "1,3-5,8": decimal numbers (a leading '-'
// for a negative one) and ranges, separated by commas, blanks around a piece
// ignored. Errors: "invalid WHAT 'PIECE' in 'TEXT'" for a piece that is no
// number or range, or that lies outside [min, max].
Expected<std::vector<std::int64_t>> parse_int_list(std::string_view text,
                                                   const IntListRules& rules = {});

// Parses a cpu list ("0-3,8,10-11") into sorted, unique cpu numbers
// (0-65535). Errors: parse_int_list's, as "invalid cpu list".
Expected<std::vector<int>> parse_cpu_list(std::string_view s);
// The compact form of a sorted cpu list, "0-3,8".
std::string format_cpu_list(const std::vector<int>& cpus);

// Levenshtein distance, case-insensitive (for suggestions).
std::size_t edit_distance(std::string_view a, std::string_view b);

// Shell-style glob match with * ? and [...] (tracepoint names).
bool glob_match(std::string_view pattern, std::string_view text);
bool has_glob(std::string_view s);

}  // namespace perfkit
