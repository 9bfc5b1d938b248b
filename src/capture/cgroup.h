// Cgroups for perf's -G/--cgroup and --for-each-cgroup: events that count
// only while a task of the cgroup runs (perf_event_open with the cgroup's
// directory as the pid and PERF_FLAG_PID_CGROUP, on every cpu).
//
// The directory is found as perf's cgroupfs_find_mountpoint finds it: under
// a cgroup v1 mount with the perf_event controller, else under the first
// cgroup2 mount (/proc/mounts), the cgroup's name appended.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "capture/perf_event.h"
#include "capture/system_paths.h"

namespace perfkit::capture {

// One cgroup, opened: its name as given and its directory's descriptor.
struct Cgroup {
  std::string name;
  EventFd dir;
};

// The mount the perf_event cgroups live under. Errors: none in /proc/mounts.
Expected<std::string> cgroup_mountpoint(const SystemPaths& paths);

// Opens the cgroup `name` (its directory under the mount). Errors: perf's
// "no access to cgroup PATH".
Expected<std::shared_ptr<const Cgroup>> open_cgroup(const SystemPaths& paths,
                                                    const std::string& name);

// Cgroups opened once per name (perf's evlist__findnew_cgroup): events
// given one name share one cgroup.
class CgroupSet {
 public:
  explicit CgroupSet(SystemPaths paths) : paths_(std::move(paths)) {}
  // open_cgroup's, or the one opened before under `name`.
  Expected<std::shared_ptr<const Cgroup>> open(const std::string& name);

 private:
  SystemPaths paths_;
  std::map<std::string, std::shared_ptr<const Cgroup>> opened_;
};

// Whether a --for-each-cgroup list is one of patterns (perf's
// has_pattern_string: any of {}[]()|*+?^$ in it).
bool is_cgroup_pattern(std::string_view list);

// perf's match_cgroups: the cgroups under the mount (the root as "", the
// others by their path below it) that one of the list's comma-separated
// patterns (POSIX basic regular expressions, unanchored) matches, in the
// order a walk of the mount finds them (directories first, then what is in
// them, in directory order, as nftw walks). Errors: no mount; a pattern
// that does not compile; none matched (perf's "no cgroup matched: LIST").
Expected<std::vector<std::string>> match_cgroups(const SystemPaths& paths, std::string_view list);

// perf's -G list: split at commas, empty names kept (an event without a
// cgroup). "a,,b" gives {"a", "", "b"}.
std::vector<std::string> split_cgroup_list(std::string_view list);

}  // namespace perfkit::capture
