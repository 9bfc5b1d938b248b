// PMUs as sysfs describes them (/sys/bus/event_source/devices/NAME): the
// perf_event_attr.type to use, the format/ terms that say which config bits a
// term sets ("event" -> config:0-7), and the named events/ with their terms,
// scale and unit. The event-spec parser resolves `pmu/term=value/` and named
// events through this catalog; `perfkit list` prints it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "abi/attr.h"
#include "base/error.h"
#include "capture/system_paths.h"

namespace perfkit::capture {

// One format/ term: the attr word it lives in and its bit ranges, lowest
// value bit first ("config:0-7,32-35" puts value bits 0-7 at 0-7, 8-11 at 32-35).
struct FormatField {
  struct Range {
    unsigned lo = 0, hi = 0;  // inclusive
  };
  std::string name;
  unsigned word = 0;  // 0 config, 1 config1, 2 config2, 3 config3
  std::vector<Range> ranges;

  unsigned width() const;
  // The largest value the field holds (all width() bits set).
  std::uint64_t max_value() const;
};

// One events/ entry: "event=0x3c,umask=0x00" with its optional .scale/.unit.
struct PmuEvent {
  std::string name;
  std::string terms;  // as the file says, trimmed
  std::string unit;
  std::optional<double> scale;
  bool per_pkg = false;
  bool snapshot = false;
};

struct Pmu {
  std::string name;
  std::uint32_t type = 0;
  std::vector<FormatField> formats;
  std::vector<PmuEvent> events;  // sorted by name
  std::string cpumask;           // "0-3" from cpumask or cpus, empty if none

  const FormatField* format(std::string_view term) const;
  // Event lookup is case-insensitive, as perf's.
  const PmuEvent* event(std::string_view name) const;
};

// Parses a format file's text ("config:0-7,21", "config1:0-63"). Errors name
// `what` (the file) and the bad text.
Expected<FormatField> parse_format_field(std::string name, std::string_view text,
                                         std::string_view what);

// Stores `value` in the field's bits of attr (config/config1/config2/config3),
// clearing the field's other bits first. Errors: the value is wider than the
// field ("value 0x1ff too big for format 'event' (config:0-7), maximum is 0xff").
Status apply_format(const FormatField& field, std::uint64_t value, abi::EventAttr& attr);

class PmuCatalog {
 public:
  // Reads every PMU under paths.pmu_dir(). A missing directory gives an empty
  // catalog (a kernel without perf events); unreadable or malformed entries of
  // one PMU are skipped rather than failing the whole catalog, as perf does.
  static PmuCatalog load(const SystemPaths& paths);
  // Builds a catalog from PMUs made in memory (tests).
  static PmuCatalog from(std::vector<Pmu> pmus);

  const Pmu* find(std::string_view name) const;
  const Pmu* find_by_type(std::uint32_t type) const;
  // The core PMU: "cpu", or "cpu_core" on hybrid machines; null on a VM
  // without a hardware PMU.
  const Pmu* core() const;
  std::span<const Pmu> pmus() const { return pmus_; }

 private:
  std::vector<Pmu> pmus_;  // sorted by name
};

// Reads one PMU directory. Errors: no readable `type` file.
Expected<Pmu> load_pmu(const std::string& dir, std::string name);

}  // namespace perfkit::capture
