// The BUILD_ID table `perfkit record` writes: a build-id for every DSO that
// got samples (every DSO mapped with --buildid-all), read as perf reads them
// (design: shared/seeds/buildid-patch.txt): ELF files from their
// .note.gnu.build-id, the kernel from /sys/kernel/notes, modules from
// /sys/module/NAME/notes, the vDSO from this process's own copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/dso_hits.h"
#include "perfdata/features.h"

namespace perfkit::recorder {

// Entries for `dsos` (hit ones, or all with `all`), in their order. DSOs
// without a build-id (anonymous maps, deleted files, [vsyscall]) are skipped.
perfdata::BuildIdTable build_id_table(const std::vector<capture::HitDso>& dsos, bool all,
                                      const std::string& sysfs_root);

// The build-id of one DSO name as a map record gives it: "[kernel.kallsyms]",
// "[vdso]", a module ("[name]" or a .ko path) or a file path.
std::optional<std::vector<std::uint8_t>> dso_build_id(const std::string& filename, bool kernel,
                                                      const std::string& sysfs_root);

}  // namespace perfkit::recorder
