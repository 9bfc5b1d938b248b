#include "dump/dump.h"

#include "dump/dump_records.h"
#include "dump/dump_stats.h"
#include "dump/header_print.h"
#include "perfdata/record_stream.h"

namespace perfkit::dump {

namespace {

Status print_counts(perfdata::Reader& reader, FdWriter& out) {
  RecordStats stats;
  perfdata::RecordStreamOptions so;
  so.ordered = false;
  PK_TRY(perfdata::process_records(reader, so,
                                   [&](const perfdata::ReadRecord& rec, std::uint64_t) -> Status {
                                     stats.count(rec.view.type);
                                     return ok();
                                   }));
  stats.print(out, false);
  return out.flush();
}

}  // namespace

Status run_dump(perfdata::Reader& reader, const DumpOptions& opts, FdWriter& out) {
  if (opts.stats_only) return print_counts(reader, out);
  if (opts.report_stats) {
    RecordPrinterOptions ro = opts.records;
    ro.attr_names_only = reader.is_pipe();
    ro.per_sample_counts = true;
    RecordPrinter tally(reader, ro);
    perfdata::RecordStreamOptions so;
    so.ordered = opts.ordered && RecordPrinter::perf_orders(reader);
    PK_TRY(perfdata::process_records(reader, so,
                                     [&](const perfdata::ReadRecord& rec, std::uint64_t) -> Status {
                                       tally.tally(rec.view);
                                       return ok();
                                     }));
    tally.print_stats(out);
    return out.flush();
  }
  // The header first, as perf report --header-only -I prints it.
  if (opts.header) PK_TRY(print_header_info(reader, HeaderPrintOptions{}, out));

  // Every record as perf report -D prints it, in perf's delivery order.
  RecordPrinter printer(reader, opts.records);
  out.write(RecordPrinter::ordering_warning(reader));
  perfdata::RecordStreamOptions so;
  so.ordered = opts.ordered && RecordPrinter::perf_orders(reader);
  PK_TRY(perfdata::process_records(reader, so,
                                   [&](const perfdata::ReadRecord& rec, std::uint64_t) -> Status {
                                     return printer.deliver(rec, out);
                                   }));
  printer.print_stats(out);
  return out.flush();
}

}  // namespace perfkit::dump
