// speedscope's file format (https://www.speedscope.app/file-format-schema.json):
// the profile's functions as the shared frames (name, and the DSO or the
// source file as `file`), and one "sampled" profile per thread and event,
// in thread order, its samples in recording order (consecutive samples of
// one stack merged into one, their weights summed) weighed by the period:
// nanoseconds for the clock events (cpu-clock, task-clock), else "none".
#pragma once

#include <string>

#include "base/error.h"
#include "base/output.h"
#include "profile/profile.h"

namespace perfkit::exports {

struct SpeedscopeOptions {
  std::string name;  // the file's name (speedscope's title); "" for "perf.data"
  std::string exporter = "perfkit";
};

// Errors: the output's.
Status write_speedscope(const profile::Profile& p, const SpeedscopeOptions& o, FdWriter& out);

// Whether `event` counts nanoseconds (cpu-clock, task-clock, with modifiers).
bool clock_event(std::string_view event);

}  // namespace perfkit::exports
