// perf archive: the parts of the build-id cache a recording needs on another
// machine.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "session/session.h"
#include "symbol/buildid_cache.h"

namespace perfkit::buildid {

// perf archive's manifest: for each build-id the recording's samples hit,
// the cache link and the directory it names, relative to the cache. A DSO
// missing from the cache that is on disk with the same build-id is added
// first. Runs `session` (not run before). Errors: the session's.
Expected<std::vector<std::string>> archive_manifest(symbol::BuildIdCache& cache,
                                                    session::Session& session);

}  // namespace perfkit::buildid
