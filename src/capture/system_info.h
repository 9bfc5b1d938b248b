// This machine's values for perf.data's header features, read the way perf
// reads them: uname, /proc/cpuinfo and cpuid, /proc/meminfo, sysfs cpu, cache,
// node and memory topology, the PMU list. Each reader takes SystemPaths so a
// test can point it at a fake tree. Features that depend on the recording
// (EVENT_DESC, GROUP_DESC, SAMPLE_TIME, BUILD_ID, COMPRESSED) are filled by
// the record session.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "capture/system_paths.h"
#include "perfdata/features.h"

namespace perfkit::capture {

// Fills hostname, osrelease, arch, nrcpus, cpudesc, cpuid, total_mem,
// cpu_topology, numa_topology, pmu_mappings, cache, mem_topology, and the
// (here empty) bpf_prog_info, bpf_btf and pmu_caps sections perf always
// writes. A value that cannot be read leaves its feature out, as perf drops
// a feature it fails to write. `version` is the VERSION string ("perfkit 0.1.0").
void collect_system_info(const SystemPaths& paths, const std::string& version,
                         perfdata::Features& f);

// The pieces, for tests and for `perfkit stat` later.
// nrcpus: available = highest present cpu + 1, online = online cpus.
std::optional<perfdata::NrCpus> read_nrcpus(const SystemPaths& paths);
// "AMD EPYC": the first "model name" of /proc/cpuinfo, spaces squeezed.
std::optional<std::string> read_cpudesc(const SystemPaths& paths);
// perf's x86 CPUID string "GenuineIntel,6,85,4" (vendor,family,model,stepping).
std::optional<std::string> read_cpuid();
std::optional<std::uint64_t> read_total_mem_kb(const SystemPaths& paths);
std::optional<perfdata::CpuTopology> read_cpu_topology(const SystemPaths& paths,
                                                       std::uint32_t nr_cpus);
std::optional<std::vector<perfdata::NumaNode>> read_numa_topology(const SystemPaths& paths);
// PMU types in directory order, as perf lists them ("software = 1, ...").
std::vector<perfdata::PmuMapping> read_pmu_mappings(const SystemPaths& paths);
std::optional<perfdata::CacheInfo> read_caches(const SystemPaths& paths, std::uint32_t nr_cpus);
std::optional<perfdata::MemTopology> read_mem_topology(const SystemPaths& paths);
// The online cpus (sysfs cpu/online), or 0..nproc-1.
std::vector<int> online_cpus(const SystemPaths& paths);

}  // namespace perfkit::capture
