// Internals of RecordPrinter shared by its source files (dump_records.cc,
// dump_sample.cc, dump_user_records.cc). Not part of the analysis API.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/alt_hex.h"
#include "dump/dump_records.h"
#include "dump/dump_stats.h"
#include "perfdata/event_set.h"
#include "record/sample.h"

namespace perfkit::dump::detail {

using Buf = fmt::memory_buffer;

inline void put(Buf& b, std::string_view s) { b.append(s.data(), s.data() + s.size()); }

// perf's print_binary() with its trace_event printer: ". ... raw event: size N
// bytes" and 16 bytes a line with their ASCII column, then a blank line.
void raw_event_dump(Buf& b, Bytes record);

// cpu_map__snprint(): "0-3,5,7-8".
template <class ForEach>
void cpu_list(Buf& b, ForEach&& for_each_cpu);

struct PrinterState {
  PrinterState(const perfdata::Reader& r, RecordPrinterOptions o);

  const perfdata::Reader& reader;
  const perfdata::EventSet& events;
  RecordPrinterOptions opts;
  bool pipe = false;
  std::string file_path;  // what perf prints after '@': the path, or "pipe"
  RecordStats stats;
  // Attrs perf's evlist holds when a record is printed: pipe mode learns them
  // from HEADER_ATTR records as they are processed.
  std::size_t attrs_known = 0;
  // Samples each event's hists counted (perf report's "<event> stats:").
  std::vector<std::uint64_t> event_samples;
  std::vector<std::uint64_t> event_lost;  // --stats: LOST_SAMPLES' counts per event
  // Last READ value per sample id (perf delivers group reads as deltas).
  std::unordered_map<std::uint64_t, std::uint64_t> read_last;
  bool branch_mode = false;  // perf report sorts by branch: counts branch entries
  std::string arch;          // for register names; resolved on first use
  bool arch_resolved = false;
  std::uint32_t auxtrace_type = 0;
  std::vector<std::uint8_t> auxtrace_priv;
  std::vector<std::uint8_t> scratch;  // a cross-endian record in host order
  record::Sample sample;

  std::size_t known_attrs() const { return pipe ? attrs_known : events.size(); }
  std::uint64_t combined_sample_type() const;
  bool sample_id_all() const;
  const std::string& regs_arch();
  std::string event_name(std::size_t index) const;
};

// The decoded part of a SAMPLE after "PERF_RECORD_SAMPLE" (perf's dump_sample).
void print_sample(PrinterState& st, const record::RecordView& r, const perfdata::EventDesc& ev,
                  const record::Sample& s, Buf& b);
// Counts the sample in its event's hists the way perf report does.
void count_sample(PrinterState& st, int attr_index, const record::Sample& s);

// The tail of a user record's line (type >= 64) and what perf prints after it.
Status print_user_record(PrinterState& st, const record::RecordView& r, Buf& b, FdWriter& out);

// AUXTRACE_INFO of Intel PT: perf's intel_pt_print_info() table.
void print_intel_pt_info(Buf& b, Bytes priv, bool swap);

}  // namespace perfkit::dump::detail

namespace perfkit::dump::detail {

template <class ForEach>
void cpu_list(Buf& b, ForEach&& for_each_cpu) {
  // Runs of consecutive cpus print as "a-b", others alone, comma separated.
  bool first = true, open = false;
  std::int64_t start = 0, prev = 0;
  auto flush = [&]() {
    if (!open) return;
    if (!first) b.push_back(',');
    if (start == prev)
      fmt::format_to(std::back_inserter(b), "{}", start);
    else
      fmt::format_to(std::back_inserter(b), "{}-{}", start, prev);
    first = false;
  };
  for_each_cpu([&](std::int32_t cpu) {
    if (open && cpu == prev + 1) {
      prev = cpu;
      return;
    }
    flush();
    start = prev = cpu;
    open = true;
  });
  flush();
}

}  // namespace perfkit::dump::detail
