// --threads[=SPEC]: which ring buffers each recording thread reads, and the
// cpus it runs on, as perf record's parallel streaming masks: "cpu" (the
// default: a thread per cpu), "core", "package" and "numa" (a thread per
// core, package or node of the cpus recorded, from sysfs), or user masks
// "CPUS/AFFINITY[:CPUS/AFFINITY...]" (cpu lists such as 0-3,6).
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "capture/system_paths.h"

namespace perfkit::capture {

struct ThreadMask {
  std::vector<int> cpus;      // whose buffers the thread reads
  std::vector<int> affinity;  // where it runs
};

// perf's words for a spec that does not parse, and for masks naming no
// cpu of the machine.
inline constexpr const char* kInvalidThreadSpec = "Invalid thread maps or affinity specs";
inline constexpr const char* kBadThreadMask = "Failed to initialize maps thread mask";

// The masks of `spec` for a recording of `recorded` cpus (each mask's cpus
// restricted to them; masks left with none dropped). Errors: one of the two
// texts above.
Expected<std::vector<ThreadMask>> thread_masks(const std::string& spec,
                                               const std::vector<int>& recorded,
                                               const SystemPaths& paths);

}  // namespace perfkit::capture
