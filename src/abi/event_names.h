// perf's names for events: the generic hardware, software and hardware-cache
// tables (shared by the event-spec parser and by readers), and the name perf
// gives an attr that has no stored name ("cycles:u", "cpu-clock:ppp",
// "raw 0x1cd", "mem:0x1000:rw", "L1-dcache-load-misses").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "abi/attr.h"

namespace perfkit::abi {

// PERF_COUNT_HW_* names by config (index), perf's canonical spelling.
std::span<const std::string_view> hardware_event_names();
// PERF_COUNT_SW_* names by config.
std::span<const std::string_view> software_event_names();

// Hardware cache events: config = id | (op << 8) | (result << 16).
std::span<const std::string_view> cache_type_names();  // "L1-dcache", "L1-icache", "LLC", ...
// Each op's spellings: [0] singular ("load"), [1] plural ("loads"), then aliases.
std::span<const std::span<const std::string_view>> cache_op_names();
// Each result's spellings: [0] "refs"/"misses", then aliases.
std::span<const std::span<const std::string_view>> cache_result_names();
// perf lists only the combinations a cache level supports.
bool cache_op_valid(unsigned type, unsigned op);
// "L1-dcache-loads", "L1-dcache-load-misses", ...; empty for an invalid config.
std::string cache_event_name(std::uint64_t config);

// The modifier suffix perf appends (":u", ":ppp", ":HG", or "").
std::string event_modifiers(const EventAttr& attr);

// The name perf shows for an attr without a stored name. Tracepoints need
// their format names, which the caller knows; here they are "unknown tracepoint".
std::string default_event_name(const EventAttr& attr);

}  // namespace perfkit::abi
