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

#include "base/error.h"
#include "base/output.h"
#include "session/event_switch.h"
#include "session/session.h"
#include "session/time_filter.h"

namespace perfkit::report {

enum class SortKey : std::uint8_t {
  kComm,
  kPid,
  kDso,
  kSym,
  kCpu,
  kParent,
  kTime,
  kSrcline,
  kSrcfile,
  kSymoff,  // sym plus the sample's offset in it (perf 6.8's "symoff")
  kSocket,
  kTrace,   // a tracepoint's formatted payload (perf's "trace")
  kPeriod,  // a "Period" column; no part of an entry's identity
  // branch-stack mode (report_branch.h)
  kDsoFrom,
  kDsoTo,
  kSymFrom,
  kSymTo,
  kCycles,
  kMispredict,  // the branch's prediction: "N" predicted, "Y" mispredicted
  kInTx,        // in a transaction: "T"
  kAbort,       // a transaction's abort: "A"
  kAddrFrom,    // the source's DSO and address: "[.] sym+0xOFF"
  kAddrTo,
  kSrclineFrom,  // the source's and target's source lines
  kSrclineTo,
  // perf's "IPC   [IPC Coverage]" column, appended to a --sort naming
  // "symbol" ("symbol_size" too): compared as sym, in branch mode
  // (ipc_lbr) and out of it (ipc_null).
  kIpcLbr,
  kIpcNull,
  // The sample's weights (perf's common keys): local_weight, weight (times
  // the entry's samples), local_ins_lat, ins_lat (WEIGHT_STRUCT's var2).
  kLocalWeight,
  kWeight,
  kLocalInsLat,
  kInsLat,
  // perf's other common keys of a sample (report_keys.h): its symbol's
  // size, its map's, its address, its code page size, its transaction, its
  // cgroup and cgroup namespace.
  kSymSize,
  kDsoSize,
  kAddr,
  kCodePageSize,
  kTransaction,
  kCgroup,    // the sample's cgroup (PERF_SAMPLE_CGROUP), named by CGROUP records
  kCgroupId,  // the thread's cgroup namespace (dev/inode) from NAMESPACES records
  // --mem-mode's keys (report_mem.h): the data address's symbol and DSO,
  // the sampled ip's symbol, and PERF_SAMPLE_DATA_SRC's parts.
  kSymDaddr,
  kSymIaddr,
  kDsoDaddr,
  kLocked,
  kTlb,
  kMem,
  kSnoop,
  kBlocked,
  kPhysDaddr,
  kDcacheline,  // the data address's cache line (perf c2c's key)
  kDataPageSize,
  // perf's hpp columns other than Period: percentages of the period (self,
  // accumulated, by cpumode) and the sample count. No part of an entry's
  // identity; named in --sort or -F they place a column and an output
  // sort of their own.
  kOverhead,
  kOverheadChildren,
  kOverheadSys,
  kOverheadUs,
  kOverheadGuestSys,
  kOverheadGuestUs,
  kSample,
};
// Whether `k` is one of perf's hpp columns (kPeriod, kOverhead...kSample).
constexpr bool is_hpp_key(SortKey k) {
  return k == SortKey::kPeriod || (k >= SortKey::kOverhead && k <= SortKey::kSample);
}
enum class ChainMode : std::uint8_t { kNone, kGraphAbs, kGraphRel, kFlat, kFolded };
enum class ChainValue : std::uint8_t { kPercent, kPeriod, kCount };
// What tells call-graph frames apart (perf's callchain_param.key): the
// function, the address (frames named with their source lines), or the
// source line (where both frames have one; else the function).
enum class ChainKey : std::uint8_t { kFunction, kAddress, kSrcline };

struct ReportOptions {
  // --sort, or the default: entries are told apart by its keys (and those
  // of -F), ordered by them after the percentages (perf's setup_sorting).
  std::vector<SortKey> sort = {SortKey::kComm, SortKey::kDso, SortKey::kSym};
  // -F: the columns in order. With fields_given (a list not starting with
  // '+') they replace perf's default columns and sort: the --sort keys
  // are appended, then entries are ordered by --sort, then by -F.
  // Otherwise ("+key,...") they follow the default columns.
  std::vector<SortKey> fields;
  bool fields_given = false;
  bool sort_given = false;  // --sort was given (affects the "sym" first-line elision)
  bool sort_starts_with_sym = false;
  int children = -1;  // -1: perf's default (on with callchains)
  // The samples count as having call chains whatever their attrs say: perf's
  // rule for an Intel PT recording decoded with g or G, or by default.
  bool assume_callchains = false;
  ChainMode chain_mode = ChainMode::kGraphAbs;
  bool chain_mode_given = false;
  bool caller_order = false;  // -G / "caller"
  bool order_given = false;
  double chain_min_percent = 0.5;
  std::uint32_t chain_print_limit = 0;  // 0: no limit
  ChainValue chain_value = ChainValue::kPercent;
  ChainKey chain_key = ChainKey::kFunction;  // -g's function/address/srcline
  int max_stack = 127;
  double percent_limit = 0;
  // --percentage relative: percentages of what the filters keep. perf's
  // default is absolute (of every sample).
  bool relative = false;
  bool show_nr_samples = false;
  // --hierarchy: entries grouped by each sort key in turn (no children,
  // no event groups), as perf's hierarchy mode.
  bool hierarchy = false;
  bool show_period = false;
  bool show_cpu_utilization = false;  // sys and usr columns after Overhead
  bool inline_frames = true;          // --inline (the default) / --no-inline
  int group = -1;                     // --group 1, --no-group 0, default -1: the file's groups
  // --group-sort-idx: a group's entries by that member's value first (the
  // leader's when out of range).
  int group_sort_idx = 0;
  // Branch-stack mode: -1 perf's default (on when the file says its
  // samples carry branch stacks), 1 -b/--branch-stack, 0 --no-branch-stack.
  int branch_mode = -1;
  // --total-cycles: branch mode's blocks by their cycles (report_blocks.h).
  bool total_cycles = false;
  // --branch-history: branch stacks go into the call chains (report_history.h).
  bool branch_history = false;
  // --mem-mode: perf's memory mode (report_mem.h).
  bool mem_mode = false;
  // --sort as given, for memory mode's "# Sort order" line ("": the default).
  std::string sort_text;
  // The Intel PT samples carry branch stacks (itrace l): branch mode, as
  // the header's BRANCH_STACK feature would.
  bool itrace_branch_stacks = false;
  bool ipc_column = false;  // --sort named "symbol" (SortKey::kIpcLbr / kIpcNull)
  std::vector<std::string> comms, dsos, symbols;
  std::vector<std::int32_t> pids, tids;
  std::vector<std::uint32_t> cpus;
  bool have_cpus = false;
  // --time as given: "start,end" in seconds, or percent ranges ("10%/2",
  // "0%-10%,50%-60%") of the recording's first..last sample time, resolved
  // when the recording is opened (ReportBuilder::build).
  std::string time_str;
  // --time-quantum: the bins of the "time" sort key, in ns (perf's 100ms).
  std::uint64_t time_quantum = 100'000'000;
  // -p/--parent: POSIX extended regex of the "parent" sort key.
  std::string parent_regex = "^sys_|^do_page_fault";
  // perf refuses --sort parent (and -p) without callchains, not -F parent.
  bool parent_refused_without_callchains = true;
  // Repeats of a sample are counted together before they are resolved
  // (report_fold.h), at most this many distinct ones at a time; 0: each
  // sample on its own. The output is the same either way.
  std::size_t fold_max_kept = 1 << 14;
  // Grow the call graphs on this many threads of their own (--jobs above
  // 1; 0: on the aggregating thread); the output is the same.
  unsigned chain_threads = 0;
  // -v: DSOs by their recorded path (shown and compared), symbols after
  // the entry's address and where its DSO's symbols came from.
  bool verbose = false;
  // --hide-unresolved: samples in no symbol left out, and the frames in
  // none from call chains (perf's symbol_conf.hide_unresolved).
  bool hide_unresolved = false;
  // -x/--exclude-other: the samples whose chain has no parent (the
  // "parent" key's [other]; every sample without that key) are filtered.
  bool exclude_other = false;
  // --stdio-color: percentages coloured as perf colours them (red from 5%,
  // green above 0.5%).
  bool color = false;
  // --skip-empty (perf's default) / --no-skip-empty: events without a
  // sample get no block.
  bool skip_empty = true;
  // --socket-filter: entries of samples on other sockets' CPUs are
  // filtered (as --symbol-filter, where perf applies it); -1 none.
  int socket_filter = -1;
  // --full-source-path: source lines name their file with its path.
  bool full_source_path = false;
  // -T/--threads: the per-thread counts of READ records after the report,
  // in perf's raw listing with --pretty raw (raw_thread_counts).
  bool show_threads = false;
  // -q/--quiet: the rows alone, without perf's comment lines (lost
  // samples, each event's sample count, column headers, the tip).
  bool quiet = false;
  bool raw_thread_counts = false;
  // --raw-trace: the trace key shows the tracepoint's fields, not its
  // print format.
  bool raw_trace = false;
  // --symbol-filter: entries whose symbol does not contain this text (and
  // those in no symbol) are filtered, each entry by its own symbol.
  std::string symbol_filter;
  // --switch-on, --switch-off, --show-on-off-events (session/event_switch.h)
  session::EventSwitchOptions evswitch;
  // --ignore-callees: a POSIX extended regex (report_callees.h); "" none.
  std::string ignore_callees;
  // --ns: the time key in nanoseconds (perf's symbol_conf.nanosecs).
  bool nanosecs = false;
  // -t/--field-separator: between columns instead of spaces ("" none).
  std::string field_sep;
  // -w/--column-widths: fixed widths of the columns in order, as perf's
  // perf_hpp__set_user_width reads them (0: sized to the values).
  std::string column_widths;
  std::string tip = "Tip: perfkit report --sort dso,sym shows where the time went per library";
};

// Parses a --sort / -F key list (`option`: "sort" or "fields", for the
// error). Errors: perf's "Unknown --sort key: `k'".
Expected<std::vector<SortKey>> parse_sort_keys(std::string_view list,
                                               std::string_view option = "sort");
// --time-quantum: "100ms", "1s", "500us", "10ns". Errors: no or a bad unit.
Expected<std::uint64_t> parse_time_quantum(std::string_view s);

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
  Status build(session::Session& session);
  // perf's "# comm: X" lines for single-entry --comm/--dso/--symbols lists,
  // whose columns are then left out.
  void print_elided(FdWriter& out) const;
  // Prints every event's block, perf report --stdio style.
  void print(session::Session& session, FdWriter& out);
  // Entries made, filtered ones included (perf's nr_entries after collapsing).
  std::size_t entries() const;
  // Samples counted with an earlier one like them without being resolved.
  std::uint64_t folded_samples() const;

 private:
  std::unique_ptr<Report> impl_;
};

}  // namespace perfkit::report
