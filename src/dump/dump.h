// perfkit dump: the header features (like perf report --header-only) and
// every record with its decoded fields (like perf report -D).
#pragma once

#include "base/error.h"
#include "base/output.h"
#include "dump/dump_records.h"
#include "perfdata/reader.h"

namespace perfkit::dump {

struct DumpOptions {
  bool stats_only = false;       // only per-type counts
  bool report_stats = false;     // perf report --stats: its "Aggregated stats" only
  bool header = true;            // print the header features first
  bool ordered = true;           // perf's delivery order (false: file order)
  RecordPrinterOptions records;  // how records print (raw hex dumps, AUX decoders)
};

Status run_dump(perfdata::Reader& reader, const DumpOptions& opts, FdWriter& out);

}  // namespace perfkit::dump
