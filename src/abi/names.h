// Names of ABI values in perf's words, for dumps, stats and headers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace perfkit::abi {

// "MMAP", "SAMPLE", "FINISHED_ROUND", "ATTR" ... as perf's stats print them;
// empty for an unknown type.
std::string_view record_type_name(std::uint32_t type);

// perf_event__name(): record_type_name(), else "UNKNOWN" for a type inside
// perf's table and "INVALID" past it.
std::string_view perf_record_name(std::uint32_t type);

// "TRACING_DATA", "BUILD_ID" ... as perf's header lists them; empty if unknown.
std::string_view feature_name(std::uint32_t feature);

// "IP", "TID" ... for one sample_type bit index (0..24); empty if unknown.
std::string_view sample_type_bit_name(unsigned bit);
// "TOTAL_TIME_ENABLED", "ID", "GROUP" ... for one read_format bit index.
std::string_view read_format_bit_name(unsigned bit);

// The bits joined with '|' in perf's order: "IP|TID|TIME|PERIOD".
std::string sample_type_string(std::uint64_t sample_type);
std::string read_format_string(std::uint64_t read_format);

}  // namespace perfkit::abi
