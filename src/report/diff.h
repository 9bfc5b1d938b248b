// perfkit diff: perf diff's comparison of a baseline recording with one or
// more others, and the figures the CI gate and the differential exports
// read from it.
//
// Each file's samples are counted as perf report -g none --no-children
// counts them (entries by the sort keys, dso,sym by default; self periods).
// The baseline's entries of each event are paired with the other files'
// entries of the event with the same type and config (by the sort keys:
// DSO name, symbol start or unresolved address, command, thread, cpu);
// entries found only in another file join the baseline as empty "dummy"
// entries. Rows are ordered as perf orders them: by the computation of the
// file -o names (entries with a value first), the baseline period, each
// file's computation, then the sort keys.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/output.h"
#include "report/report.h"
#include "session/session.h"

namespace perfkit::report {

enum class DiffCompute : std::uint8_t { kDelta, kDeltaAbs, kRatio, kWdiff };

struct DiffOptions {
  // The sort keys (comm, pid, dso, sym, cpu), the filters and --percentage;
  // call graphs, children and branch mode are off whatever it says.
  ReportOptions report;
  DiffCompute compute = DiffCompute::kDeltaAbs;  // perf 6.1's default
  std::int64_t w1 = 0, w2 = 0;                   // wdiff:w1,w2
  bool show_period = false;                      // -p
  bool show_formula = false;                     // -F
  bool baseline_only = false;                    // -b
  bool quiet = false;                            // -q: no headers
  unsigned order = 1;                            // -o: the file whose computation sorts first
  std::string field_sep;                         // -t: between columns, as perf diff -t
  // -c cycles (basic-block cycles of branch stacks): parsed, not computed.
  bool cycles = false;
};

// Whether perfkit diff pairs and orders entries by sort key `k`.
bool diff_sorts_by(SortKey k);

// Parses -c's argument ("delta", "delta-abs", "ratio", "wdiff:w1,w2") into
// `o`. Errors: perf's texts.
Status parse_diff_compute(std::string_view arg, DiffOptions& o);

// One entry of an event compared across the files: what it is, and its
// period in each file (0 where the file has none).
struct DiffRow {
  // "" (0) where not a sort key; symbol: its name, or its address in hex
  std::string comm, dso, symbol;
  std::int32_t pid = 0;
  // The other sort keys' values (cpu, srcline, srcfile, parent,
  // symbol_size, dso_size, socket, time, trace, addr, weight, ...) as
  // "key=value", space-separated.
  std::string keys;
  std::vector<std::uint64_t> period;  // by file
  std::vector<bool> present;          // by file
};

struct DiffEvent {
  std::string name;
  std::vector<std::uint64_t> total;  // each file's total period of the event (perf's percent base)
  std::vector<bool> present;         // whether the file has the event
  std::vector<DiffRow> rows;         // in perf diff's order
};

class Diff {
 public:
  explicit Diff(const DiffOptions& o);
  ~Diff();
  Diff(const Diff&) = delete;
  Diff& operator=(const Diff&) = delete;

  // Reads every sample of each session's file, in order (the first added
  // is the baseline), up to `jobs` files at a time on threads of their own
  // (the files are independent). The sessions must outlive the Diff.
  // Errors: the first file's that failed (the session's, a bad --time),
  // with its index in `failed`.
  Status add_all(const std::vector<session::Session*>& sessions, unsigned jobs,
                 std::size_t& failed);
  // Pairs the files' entries and orders the rows; after the last add.
  void compare();
  // perf diff's text; `paths` name the files as given.
  void print(const std::vector<std::string>& paths, FdWriter& out);
  // The baseline's events with their rows (filtered ones left out).
  std::vector<DiffEvent> events() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfkit::report
