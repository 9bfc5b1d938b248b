// perfkit buildid-list: the build-ids a recording names, in perf's format
// ("%-40s %s": build-id, then the DSO's long name), in the order perf's DSO
// list holds them (the HEADER_BUILD_ID table first, then DSOs met in the
// records). With hits (or when the file has no build-id table, or is a
// stream), the records are read and only DSOs a sample ip landed in are kept.
#pragma once

#include "base/output.h"
#include "session/session.h"

namespace perfkit::buildid {

Status list_build_ids(session::Session& session, bool with_hits, FdWriter& out);

}  // namespace perfkit::buildid
