// SystemPaths: where the capture module reads the kernel's view of the
// machine. Every reader of sysfs, procfs and tracefs takes one, so tests can
// point them at a fake tree (a fake cpu PMU with format/ and events/, a fake
// intel_pt PMU, a fake tracefs) and exercise paths this machine lacks.
#pragma once

#include <string>

namespace perfkit::capture {

struct SystemPaths {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
  // The tracefs mount. Empty: /sys/kernel/tracing, then /sys/kernel/debug/tracing
  // (under `sysfs`), the first that has events/.
  std::string tracefs;

  // The PMU directory: <sysfs>/bus/event_source/devices.
  std::string pmu_dir() const { return sysfs + "/bus/event_source/devices"; }
};

}  // namespace perfkit::capture
