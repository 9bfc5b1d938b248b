#include "analysis/dump.h"

#include "abi/names.h"
#include "analysis/dump_stats.h"
#include "perfdata/record_stream.h"

namespace perfkit::analysis {

Status run_dump(perfdata::Reader& reader, const DumpOptions& opts, FdWriter& out) {
  RecordStats stats;
  perfdata::RecordStreamOptions so;
  so.ordered = opts.ordered && !opts.stats_only;
  PK_TRY(perfdata::process_records(
      reader, so, [&](const perfdata::ReadRecord& rec, std::uint64_t ts) -> Status {
        stats.count(rec.view.type);
        if (opts.stats_only) return ok();
        const auto& v = rec.view;
        auto name = abi::record_type_name(v.type);
        out.print("\n{:#x} [{:#x}]: event: {} {}\n", v.offset, v.size, v.type, name);
        return out.status();
      }));
  if (!opts.stats_only) out.print("\nAggregated stats:\n");
  stats.print(out, !opts.stats_only);
  return out.flush();
}

}  // namespace perfkit::analysis
