// perf record's last step: the DSOs of the BUILD_ID table copied into the
// build-id cache (~/.debug, buildid.dir, $PERF_BUILDID_DIR), so that the
// recording reads on with the very binaries it sampled. Files go to
// DIR/PATH/ID/elf, the running kernel's symbols to
// DIR/[kernel.kallsyms]/ID/kallsyms, the vDSO to DIR/[vdso]/ID/vdso, each
// with its DIR/.build-id link (symbol::BuildIdCache). perf's "probes"
// (SDT notes) and "debug" (debuginfo) copies are not made.
#pragma once

#include <string>

#include "perfdata/features.h"

namespace perfkit::recorder {

// Adds each entry of `table` to the cache in `dir`; `procfs` holds the
// kallsyms to copy. What cannot be cached (a vanished file, an unreadable
// kallsyms, a read-only cache) is skipped, as perf skips it.
void cache_build_ids(const perfdata::BuildIdTable& table, const std::string& dir,
                     const std::string& procfs);

}  // namespace perfkit::recorder
