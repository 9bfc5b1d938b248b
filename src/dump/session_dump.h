// perfkit report -D: every record as perf report -D prints it (the dump of
// RecordPrinter), with the lines perf report's sample handling adds after
// each sample when it resolves it (" ... thread: COMM:TID" and
// " ...... dso: NAME"), and the "Aggregated stats" at the end.
#pragma once

#include "base/error.h"
#include "base/output.h"
#include "dump/dump_records.h"
#include "session/session.h"

namespace perfkit::dump {

// perf's machine__resolve dump lines for a sample: " ... thread: COMM:TID"
// and " ...... dso: NAME" ("[hypervisor]", "<not found>").
void print_sample_resolution(const session::ResolvedSample& s, FdWriter& out);

// Runs `session` (not run before) and prints its records to `out`.
// Errors: the session's and the output's.
Status run_report_dump(session::Session& session, const RecordPrinterOptions& opts, FdWriter& out);

}  // namespace perfkit::dump
