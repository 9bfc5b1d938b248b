// The header of a perf.data file as `perf report --header-only [-I]` prints
// it (perf 6.1's text): the file header, one block per feature section in
// file order, the missing features, between "# ========" lines.
//
// Pipe mode prints perf's variant: the header block with zero offsets, then
// the features in the order their HEADER_FEATURE records arrive.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "abi/attr.h"
#include "base/error.h"
#include "base/output.h"
#include "perfdata/features.h"
#include "perfdata/reader.h"

namespace perfkit::dump {

struct HeaderPrintOptions {
  // -I / --show-info: print CPU_TOPOLOGY, NUMA_TOPOLOGY, CACHE, MEM_TOPOLOGY
  // and HYBRID_TOPOLOGY in full; without it perf prints
  // "# NAME info available, use -I to display" for them.
  bool full = true;
  // "captured on": seconds since the epoch (perf prints the file's mtime in
  // local time). Unset: the mtime of reader.name() (stdin for "<stdin>").
  std::optional<std::int64_t> captured_on;
  // Told about sections that cannot be parsed; perf prints what it can of
  // them (an empty value, "(null)") and goes on, and so does the printer.
  std::function<void(const std::string&)> warn;
};

// Prints the header of `reader`'s file. File mode needs nothing read yet. In
// pipe mode the features come from the HEADER_FEATURE records: those the
// reader has already read, or, when it has read none and the stream is a file
// (mapped), those of a scan of the whole file by a second reader; a real pipe
// not yet read gives the header block alone (see print_pipe_feature).
// Errors: a write error of `out`; a second reader that cannot read the file.
Status print_header_info(const perfdata::Reader& reader, const HeaderPrintOptions& opts,
                         FdWriter& out);

// perf report --header-only: print_header_info, but a pipe-mode stream that
// is a real pipe (not mapped) and not yet read is first read through to its
// end (or first bad record) to collect its features; `reader` is consumed.
// Errors: as print_header_info.
Status print_header_only(perfdata::Reader& reader, const HeaderPrintOptions& opts, FdWriter& out);

// Prints one feature section the way perf does when a pipe-mode stream's
// HEADER_FEATURE record arrives (for readers that print as they stream).
// `seen` holds the features parsed so far and gains this one.
void print_pipe_feature(const perfdata::Reader& reader, const perfdata::FeatureBlob& blob,
                        const HeaderPrintOptions& opts, perfdata::Features& seen, FdWriter& out);

// perf_event_attr's non-zero fields in perf's order and spelling, each given
// to `field` as (name, value): ("size", "128"), ("sample_type", "IP|TID"),
// ("{ sample_period, sample_freq }", "4000"), ...
void for_each_attr_field(const abi::EventAttr& attr,
                         const std::function<void(std::string_view, std::string_view)>& field);

// A cpu list ("0-3,8,5") as perf prints it once read into a cpu map: sorted,
// without duplicates, runs as ranges ("0-3,5,8"); an empty list is "-1".
std::string normalize_cpu_list(std::string_view list);

}  // namespace perfkit::dump
