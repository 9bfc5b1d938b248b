// `perfkit stat report`: reads a perf.data written by `perf stat record` (or
// `perfkit stat record`) and prints it as `perf stat report` does: the
// counts of every FINAL round with the elapsed time it records, or one block
// per INTERVAL round, in the default layout (CSV and JSON too, which perf
// stat report does not offer).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/error.h"
#include "perfdata/reader.h"
#include "stat/stat.h"
#include "stat/stat_print.h"

namespace perfkit::stat {

struct StatReportOptions {
  // -A/--per-core/--per-socket/--per-die/--per-node; unset: the file's mode.
  std::optional<AggrMode> aggr;
  StatPrintOptions print;  // format, separators; target and runs come from the file
};

// Prints the file's rounds through `out`. Errors: not a stat file (no
// STAT_CONFIG or THREAD_MAP/CPU_MAP before the counts), a STAT whose id
// belongs to no event, a cpu or thread outside the maps, a record too short.
Status stat_report(perfdata::Reader& reader, const StatReportOptions& opts,
                   const std::function<void(const std::string&)>& out);

}  // namespace perfkit::stat
