// Tracefs: the kernel's tracepoints as the tracing filesystem lists them
// (events/SYSTEM/NAME/{id,format}). The event-spec parser takes tracepoint
// ids from here; the recorder takes the formats for the TRACING_DATA feature.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "capture/system_paths.h"

namespace perfkit::capture {

struct Tracepoint {
  std::string system;
  std::string name;
  std::string full() const { return system + ":" + name; }
  bool operator==(const Tracepoint&) const = default;
};

class Tracefs {
 public:
  // Finds the mount: paths.tracefs when set, else <sysfs>/kernel/tracing, else
  // <sysfs>/kernel/debug/tracing, the first with an events/ directory.
  // Errors: none of them has events/ (tracefs not mounted, or no permission).
  static Expected<Tracefs> locate(const SystemPaths& paths);
  // A tracefs at `root` as is (tests).
  static Tracefs at(std::string root);

  const std::string& root() const { return root_; }

  // The id of SYSTEM:NAME. Errors name the missing file, as perf does:
  // "File /sys/kernel/tracing/events/sched/nosuch not found".
  Expected<std::uint64_t> event_id(std::string_view system, std::string_view name) const;
  // The text of events/SYSTEM/NAME/format.
  Expected<std::string> event_format(std::string_view system, std::string_view name) const;
  // The text of a file relative to the root ("events/header_page").
  Expected<std::string> read(std::string_view relative) const;

  // Every tracepoint, sorted by system then name.
  std::vector<Tracepoint> list() const;
  // Tracepoints whose system and name match the glob patterns, sorted.
  std::vector<Tracepoint> match(std::string_view system_glob, std::string_view name_glob) const;
  // Every system name, sorted.
  std::vector<std::string> systems() const;

 private:
  explicit Tracefs(std::string root) : root_(std::move(root)) {}
  std::string root_;
};

}  // namespace perfkit::capture
