// Internal to the header printer: perf's text for each feature section.
#pragma once

#include <cstdint>
#include <set>

#include "base/output.h"
#include "perfdata/event_set.h"
#include "perfdata/features.h"

namespace perfkit::dump {

// Prints features from the parsed `f`, perf's way: what perf's print_*
// functions print from its session state once every section is processed.
// A feature in `failed` did not parse; it prints as perf prints a feature
// whose processing failed (empty values, "(null)" strings).
struct FeaturePrinter {
  const perfdata::EventSet& events;  // the file's attrs, for GROUP_DESC
  const perfdata::Features& f;
  const std::set<std::uint32_t>& failed;
  bool full;
  bool swapped;

  // Prints the feature of `blob` (whose bytes decide what perf reads of a
  // CPU_TOPOLOGY) from `f`.
  void print(const perfdata::FeatureBlob& blob, FdWriter& out) const;

 private:
  void string_line(std::string_view label, const std::optional<std::string>& v, std::uint32_t id,
                   FdWriter& out) const;
  void cmdline(FdWriter& out) const;
  void event_desc(FdWriter& out) const;
  void cpu_topology(const perfdata::FeatureBlob& blob, FdWriter& out) const;
  void numa_topology(FdWriter& out) const;
  void pmu_mappings(FdWriter& out) const;
  void group_desc(FdWriter& out) const;
  void cache(FdWriter& out) const;
  void sample_time(FdWriter& out) const;
  void mem_topology(FdWriter& out) const;
  void clock_data(FdWriter& out) const;
  void bpf_prog_info(FdWriter& out) const;
  void bpf_btf(FdWriter& out) const;
  void pmu_caps(FdWriter& out) const;
};

}  // namespace perfkit::dump
