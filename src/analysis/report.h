// perfkit report: histograms of samples keyed by sort keys (perf's hists),
// with perf's Children/Self accounting and call graphs, printed exactly as
// `perf report --stdio` prints them.
//
// Aggregation follows perf: each sample adds a "self" entry; with
// --children each callchain frame also adds (once per sample) a
// "children" entry, and each entry keeps the callchains seen from it, in a
// prefix tree merged by function (perf's callchain_node radix tree).
// Output order is perf's: Children, Self, then each sort key's own order,
// ties left in the order perf's collapse tree holds them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/session.h"
#include "base/error.h"
#include "base/output.h"

namespace perfkit::analysis {

enum class SortKey : std::uint8_t {
  kComm,
  kPid,
  kDso,
  kSym,
  kCpu,
  kParent,
  kTime,
  kSrcline,
  kSrcfile
};
enum class ChainMode : std::uint8_t { kNone, kGraphAbs, kGraphRel, kFlat, kFolded };
enum class ChainValue : std::uint8_t { kPercent, kPeriod, kCount };

struct ReportOptions {
  std::vector<SortKey> sort = {SortKey::kComm, SortKey::kDso, SortKey::kSym};
  bool sort_given = false;  // --sort was given (affects the "sym" first-line elision)
  bool sort_starts_with_sym = false;
  int children = -1;  // -1: perf's default (on with callchains)
  ChainMode chain_mode = ChainMode::kGraphAbs;
  bool chain_mode_given = false;
  bool caller_order = false;  // -G / "caller"
  bool order_given = false;
  double chain_min_percent = 0.5;
  std::uint32_t chain_print_limit = 0;  // 0: no limit
  ChainValue chain_value = ChainValue::kPercent;
  int max_stack = 127;
  double percent_limit = 0;
  // --percentage relative: percentages of what the filters keep. perf's
  // default is absolute (of every sample).
  bool relative = false;
  bool show_nr_samples = false;
  bool show_period = false;
  bool group = false;
  std::vector<std::string> comms, dsos, symbols;
  std::vector<std::int32_t> pids, tids;
  std::vector<std::uint32_t> cpus;
  bool have_cpus = false;
  // --time: absolute [start, end] in ns (0 = open); percent ranges resolved by the caller.
  std::uint64_t time_start = 0, time_end = 0;
  std::string tip = "Tip: perfkit report --sort dso,sym shows where the time went per library";
};

// Parses a --sort / -F key list. Errors: an unknown key, naming it.
Expected<std::vector<SortKey>> parse_sort_keys(std::string_view list);
// Parses -g's argument ("graph,0.5,caller,function,percent"). Errors name the bad token.
Status parse_callchain_arg(std::string_view arg, ReportOptions& o);

class Report;

// Builds the histograms from a session and prints them.
class ReportBuilder {
 public:
  explicit ReportBuilder(const ReportOptions& opts);
  ~ReportBuilder();
  // Settles options that depend on the recording (children and callchains
  // are on only when samples carry callchains), then reads every sample.
  Status build(Session& session);
  // perf's "# comm: X" lines for single-entry --comm/--dso/--symbols lists,
  // whose columns are then left out.
  void print_elided(FdWriter& out) const;
  // Prints every event's block, perf report --stdio style.
  void print(Session& session, FdWriter& out);

 private:
  std::unique_ptr<Report> impl_;
};

}  // namespace perfkit::analysis
