// RecordPrinter: every record of a recording printed the way `perf report -D`
// (perf 6.1) prints it: the "<offset>@<file> [<size>]: event: <type>" line,
// the raw hex dump, the timestamp prefix and the decoded fields, with perf's
// quirks (": unhandled!" for records perf report does not handle, pipe-mode
// offsets counted after the 16-byte stream header, "-1 -1 " for records of a
// recording without sample_id_all). Then the "Aggregated stats:" section and
// one "<event> stats:" section per event that had samples.
//
// Not printed: the " ... thread:" and " ...... dso:" lines perf adds after a
// sample (they need the machine state of threads and maps).
//
// Records must be given in perf's delivery order (perfdata::process_records).
// Output streams through the FdWriter; nothing is allocated per record.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"
#include "base/output.h"
#include "perfdata/reader.h"
#include "record/record_view.h"
#include "record/records.h"

namespace perfkit::dump {

// What an AUX area decoder gets to print the packets of one AUXTRACE buffer,
// as perf -D does after each PERF_RECORD_AUXTRACE (Intel PT: ". ... Intel
// Processor Trace data: size N bytes" and one line per packet).
struct AuxtraceDumpRequest {
  std::uint32_t auxtrace_type = 0;  // AUXTRACE_INFO's type (abi::AuxtraceType), 0 if none
  Bytes info_priv;                  // AUXTRACE_INFO's priv u64 array, in the file's byte order
  bool swap = false;                // the file's byte order is not the host's
  const record::RecordView* record = nullptr;  // the AUXTRACE record
  Bytes data;                                  // its trace data
};

// The seam where an AUX decoder plugs in (src/intelpt for Intel PT). It runs
// right after the record's "PERF_RECORD_AUXTRACE size: ..." line; what it
// writes to `out` follows that line. Errors stop the dump.
using AuxtraceDumper = std::function<Status(const AuxtraceDumpRequest&, FdWriter& out)>;

struct RecordPrinterOptions {
  bool raw_dump = true;          // the ". ... raw event: size N bytes" hex dump of each record
  AuxtraceDumper auxtrace_dump;  // empty: nothing after AUXTRACE records
  // Event names from the attrs alone: perf report --stats does not apply a
  // pipe's feature records (EVENT_DESC), so it names events as their attrs say.
  bool attr_names_only = false;
  // Samples counted one by one even where perf report would add an entry
  // per branch (perf report --stats adds no entries at all).
  bool per_sample_counts = false;
  // perf script's tool: it handles THREAD_MAP, CPU_MAP, THROTTLE and
  // UNTHROTTLE (no ": unhandled!").
  bool script_tool = false;
  // perf diff's tool: ID_INDEX, EVENT_UPDATE, AUXTRACE_INFO and AUXTRACE
  // unhandled (no AUX area dump), and no "Aggregated stats" after the
  // records (perf diff -D).
  bool diff_tool = false;
  // Records in file order (perf script --dump-unsorted-raw-trace): perf's
  // FINISHED_ROUND then goes to a stub, ": unhandled!".
  bool unordered = false;
};

class RecordPrinter {
 public:
  // `reader` gives the attrs, features and byte order; it must outlive the printer.
  RecordPrinter(const perfdata::Reader& reader, RecordPrinterOptions opts = {});
  ~RecordPrinter();
  RecordPrinter(const RecordPrinter&) = delete;
  RecordPrinter& operator=(const RecordPrinter&) = delete;

  // The line perf prints first when it reads a file without sample_id_all
  // unordered ("WARNING: No sample_id_all support, ..."), or "".
  static std::string_view ordering_warning(const perfdata::Reader& reader);
  // Whether perf reads this recording in time order (false for a file whose
  // first attr lacks sample_id_all).
  static bool perf_orders(const perfdata::Reader& reader);

  // Prints one record and counts it. Errors: write errors of `out`.
  Status print(const perfdata::ReadRecord& rec, FdWriter& out);
  // Counts a record without printing it (perf does not dump COMPRESSED records).
  void count(const record::RecordView& r);
  // A record as perf report -D delivers it: COMPRESSED ones counted (perf
  // decompresses them without printing them), the rest printed.
  Status deliver(const perfdata::ReadRecord& rec, FdWriter& out);
  // Counts a record, and a sample for its event, without printing it
  // (perf report --stats).
  void tally(const record::RecordView& r);

  // "\nAggregated stats:" with the per-type counts, then the per-event sections.
  void print_stats(FdWriter& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A TEXT_POKE's text as perf_event__fprintf prints it: " ADDR SYMBOL old len
// N new len M" (SYMBOL "name+0xoff" where the kernel's maps know one, else
// empty), then the old and new bytes, 16 a line.
void print_text_poke(const record::TextPokeRecord& t, fmt::memory_buffer& b,
                     std::string_view symbol = {});

}  // namespace perfkit::dump
