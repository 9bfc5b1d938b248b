// inject -b: what perf inject --build-ids adds to a recording. Records go
// through observe() in file order; the first sample that lands in a DSO
// makes a HEADER_BUILD_ID record for it (its build-id read from the file on
// disk), which the caller writes just before that sample. At the end,
// feature_table() is the HEADER_BUILD_ID feature section of the DSOs hit.
// With `all` (--buildid-all) every DSO a map record names gets its record
// before that map record instead, hit by samples or not.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/error.h"
#include "inject/inject.h"
#include "machine/machine.h"
#include "perfdata/reader.h"
#include "symbol/symbolizer.h"

namespace perfkit::inject {

class BuildIdInjector {
 public:
  explicit BuildIdInjector(const perfdata::Reader& in, bool all = false, KnownBuildIds known = {});
  ~BuildIdInjector();

  // Follows `r`; returns a HEADER_BUILD_ID record to write before it, or
  // an empty vector. Errors: a sample or side-band record that does not decode.
  Expected<std::vector<std::uint8_t>> observe(const record::RecordView& r, bool swap_output);
  // The HEADER_BUILD_ID feature: one entry per DSO hit that has a build-id.
  std::vector<std::uint8_t> feature_table(bool swap_output) const;

 private:
  Expected<std::vector<std::uint8_t>> observe_map(const record::RecordView& r, bool swap_output);
  // The HEADER_BUILD_ID record of DSO `d` (found now when the file does not
  // have it), or nothing for a kernel or a DSO without one.
  std::vector<std::uint8_t> record_for(machine::Dso& d, std::uint16_t misc, bool swap_output);

  const perfdata::Reader& in_;
  bool all_ = false;
  KnownBuildIds known_;
  std::unique_ptr<symbol::Symbolizer> symbolizer_;
  std::unique_ptr<machine::Machine> machine_;
  record::Sample sample_;
};

// One HEADER_BUILD_ID entry as perf writes it (name padded to 64 bytes);
// `sized`: with the build-id's size and misc's BUILD_ID_SIZE bit (perf's
// --buildid-all records have neither).
void encode_build_id_entry(std::vector<std::uint8_t>& out, std::uint32_t type, std::uint16_t misc,
                           std::int32_t pid, const elf::BuildId& id, std::string_view name,
                           bool swap, bool sized = true);

}  // namespace perfkit::inject
