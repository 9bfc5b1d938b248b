// perfkit report's set-up from the options and the recording, as perf's
// cmd_report and setup_sorting decide it: the columns and output sort,
// children and call graphs from the events, branch, memory and branch
// history modes, the default sorts, the filters' and keys' preparation;
// and the event groups (HEADER_GROUP_DESC, --group) with their members'
// values side by side.
#include <algorithm>

#include "abi/perf_event.h"
#include "abi/registers.h"
#include "base/cursor.h"
#include "perfdata/features.h"
#include "report/report_impl.h"
#include "report/report_keys.h"
#include "session/cpu_filter.h"
#include "session/unwind_callchain.h"

namespace perfkit::report {

using namespace perfkit::abi;

// perf's output fields and output sort (setup_sorting): without a strict
// -F the default percentage columns, then the -F ones, then the sort
// keys; the output sort is the sort list, behind the Children and
// Overhead percentages it lacks when -F is not strict, then the columns
// it lacks.
void Report::settle_columns() {
  columns_.clear();
  if (!opts_.fields_given) {
    if (children_) columns_.push_back(SortKey::kOverheadChildren);
    add_once(columns_, SortKey::kOverhead);
    if (opts_.show_cpu_utilization) {
      add_once(columns_, SortKey::kOverheadSys);
      add_once(columns_, SortKey::kOverheadUs);
    }
    if (opts_.show_nr_samples) add_once(columns_, SortKey::kSample);
    if (opts_.show_period) add_once(columns_, SortKey::kPeriod);
  }
  for (SortKey k : opts_.fields) add_once(columns_, k);
  for (SortKey k : sort_keys_) add_once(columns_, k);
  auto has = [](const std::vector<SortKey>& v, SortKey k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  sort_list_.clear();
  if (!opts_.fields_given) {
    if (children_ && !has(sort_keys_, SortKey::kOverheadChildren))
      sort_list_.push_back(SortKey::kOverheadChildren);
    if (!has(sort_keys_, SortKey::kOverhead)) sort_list_.push_back(SortKey::kOverhead);
  }
  for (SortKey k : sort_keys_) add_once(sort_list_, k);
  for (SortKey k : columns_) add_once(sort_list_, k);
  acc_sorted_ = has(sort_list_, SortKey::kOverheadChildren) && children_;
}

void Report::settle_from_events() {
  settled_ = true;
  bool has_cg = opts_.assume_callchains, without_cg = false;
  for (const auto& d : session_->reader().events().events()) {
    has_cg |= (d.attr.sample_type & kSampleCallchain) != 0;
    // (perf's dummy events carry no samples)
    const bool dummy = d.attr.type == kTypeSoftware && d.attr.config == 9;
    without_cg |= !dummy && !(d.attr.sample_type & kSampleCallchain);
  }
  // perf decides --children before a stream's attrs are known: off for pipes.
  // perf's branch mode accumulates nothing and appends no callchains.
  children_ = has_cg && !branch_mode_ && !mem_mode_ && opts_.children != 0 &&
              !session_->reader().is_pipe() && !opts_.hierarchy;
  mixed_chains_ = children_ && has_cg && without_cg;
  settle_columns();
  use_callchain_ =
      (has_cg || branch_history_) && !branch_mode_ && opts_.chain_mode != ChainMode::kNone;
  // --jobs: the call graphs grow on a thread of their own (not with
  // branch counts, which the arena keeps per frame as it goes).
  if (use_callchain_ && opts_.chain_threads && !branch_counts_) arena_.defer(opts_.chain_threads);
  no_callchains_for_parent_ = !has_cg && has_key_[static_cast<int>(SortKey::kParent)] &&
                              opts_.parent_refused_without_callchains &&
                              !session_->reader().is_pipe();
  // (with --branch-history a branch stack serves, perf's show_branchflag_count)
  no_callchains_for_g_ =
      !has_cg && !session_->reader().is_pipe() && !branch_counts_ &&
      ((opts_.chain_mode_given && opts_.chain_mode != ChainMode::kNone) || branch_history_);
}

// perf's branch mode: on by default when the header says samples carry
// branch stacks (unless they carry user stacks too), never for a pipe.
Status Report::settle_branch_mode(session::Session& session) {
  perfdata::Reader& reader = session.reader();
  bool user_stacks = false;
  for (const auto& d : reader.events().events())
    user_stacks |= (d.attr.sample_type & kSampleStackUser) != 0;
  const bool has_br =
      (!reader.is_pipe() && reader.feature(kFeatBranchStack).has_value() && !user_stacks) ||
      opts_.itrace_branch_stacks;
  if (opts_.branch_mode == 1 && opts_.mem_mode)
    return make_error("branch and mem mode incompatible");
  if (opts_.branch_mode == 1 && !has_br)
    return make_error("Selected -b but no branch data. Did you call perf record without -b?");
  has_br_ = has_br;
  // perf's branch call mode (--branch-history) keeps sample entries.
  branch_history_ = opts_.branch_history;
  address_keys_ = branch_history_ || opts_.chain_key == ChainKey::kAddress;
  line_keys_ = !address_keys_ && opts_.chain_key == ChainKey::kSrcline;
  branch_counts_ = branch_history_ && has_br;
  if (branch_counts_) arena_.count_branches();
  branch_mode_ =
      !branch_history_ && (opts_.branch_mode == 1 || (opts_.branch_mode == -1 && has_br));
  // perf's --total-cycles: only in branch mode, which it sorts as by default
  total_cycles_ = opts_.total_cycles && branch_mode_;
  for (const auto& d : reader.events().events())
    any_branch_ |= (d.attr.branch_sample_type & kBranchAny) != 0;
  if (!branch_mode_)
    for (SortKey k : opts_.sort)
      if (is_branch_key(k)) return make_error("Invalid --sort key: `{}'", branch_key_name(k));
  if (!branch_mode_)
    for (SortKey k : opts_.fields)
      if (is_branch_key(k)) return make_error("Invalid --fields key: `{}'", branch_key_name(k));
  return ok();
}

// perf's memory mode: refused with branch mode and for a file whose
// samples carry no DATA_SRC; its keys are refused outside it.
Status Report::settle_mem_mode() {
  mem_mode_ = opts_.mem_mode;
  if (mem_mode_ && branch_mode_) return make_error("branch and mem mode incompatible");
  if (mem_mode_ && !session_->reader().is_pipe()) {
    bool data_src = false;
    for (const auto& d : session_->reader().events().events())
      data_src |= (d.attr.sample_type & kSampleDataSrc) != 0;
    if (!data_src)
      return make_error(
          "Selected --mem-mode but no mem data. Did you call perf record without -d?");
  }
  if (mem_mode_) return ok();
  for (SortKey k : opts_.sort)
    if (is_mem_key(k)) return make_error("Invalid --sort key: `{}'", mem_key_name(k));
  for (SortKey k : opts_.fields)
    if (is_mem_key(k)) return make_error("Invalid --fields key: `{}'", mem_key_name(k));
  return ok();
}

// -v changes the DSO and symbol columns of the entry table; the tables
// whose symbols and DSOs are printed otherwise (branch and memory modes,
// the hierarchy, symbol offsets, IPC) are refused rather than shown
// unchanged.
Status Report::verbose_refusal() const {
  const char* what = branch_mode_      ? "branch mode"
                     : mem_mode_       ? "--mem-mode"
                     : opts_.hierarchy ? "--hierarchy"
                     : branch_history_ ? "--branch-history"
                                       : nullptr;
  for (SortKey k : {SortKey::kSymoff, SortKey::kIpcLbr, SortKey::kIpcNull})
    if (!what && has_key_[static_cast<int>(k)]) what = "this --sort key";
  if (!what) return ok();
  return make_error(
      "-v: the verbose columns (DSO paths, symbol addresses and origins) are not "
      "supported with {}",
      what);
}

void Report::settle(session::Session& session) {
  session_ = &session;
  const auto& ev = session.reader().events();
  hists_.assign(ev.size(), Hists{});
  setup_status_ = settle_branch_mode(session);
  if (setup_status_) setup_status_ = settle_mem_mode();
  // perf's default sort when every event is a tracepoint (known before the
  // records only in file mode): the formatted payload.
  const bool defaults = !opts_.sort_given && !opts_.fields_given;
  if (defaults && !session.reader().is_pipe() && ev.size() > 0 &&
      std::all_of(ev.events().begin(), ev.events().end(),
                  [](const auto& d) { return d.attr.type == kTypeTracepoint; }))
    opts_.sort = {SortKey::kTrace};
  else if (branch_mode_ && (defaults || total_cycles_))
    opts_.sort = {SortKey::kComm, SortKey::kDsoFrom, SortKey::kSymFrom, SortKey::kSymTo,
                  SortKey::kCycles};
  else if (mem_mode_ && defaults)
    opts_.sort = default_mem_sort();
  else if (branch_history_ && defaults)
    opts_.sort = {SortKey::kSrcline, SortKey::kSym, SortKey::kDso}, opts_.ipc_column = true;
  if (opts_.ipc_column) opts_.sort.push_back(branch_mode_ ? SortKey::kIpcLbr : SortKey::kIpcNull);
  // perf's sort list: the --sort keys (each once), then the -F keys not
  // among them. Entries are told apart by the sort keys that are not hpp
  // columns, in that order.
  sort_keys_.clear();
  for (SortKey k : opts_.sort) add_once(sort_keys_, k);
  std::vector<SortKey> all = sort_keys_;
  for (SortKey k : opts_.fields) add_once(all, k);
  opts_.sort.clear();
  for (SortKey k : all)
    if (!is_hpp_key(k)) opts_.sort.push_back(k);
  for (SortKey k : opts_.sort) has_key_[static_cast<int>(k)] = true;
  branches_.setup(opts_.sort);
  mems_.setup(opts_.sort);
  // A stream's attrs come with its records: settle at the first sample then.
  if (!session.reader().is_pipe()) settle_from_events();
  symbol::SourceLineOptions line_opts;
  line_opts.full_path = opts_.full_source_path;
  auto lines = std::make_shared<symbol::SourceLines>(session.symbolizer(), line_opts);
  if (setup_status_) setup_status_ = ext_->setup(session, opts_, lines);
  if (setup_status_) setup_status_ = ignore_.setup(opts_.ignore_callees);
  if (setup_status_) setup_status_ = evswitch_.setup(opts_.evswitch, session);
  if (setup_status_ && opts_.verbose) setup_status_ = verbose_refusal();
  // perf applies its entry filters as it collapses entries, which it does
  // only when a --sort key needs it (comm): otherwise --symbol-filter is moot.
  const bool collapses =
      !(opts_.fields_given && !opts_.sort_given) &&
      std::find(opts_.sort.begin(), opts_.sort.end(), SortKey::kComm) != opts_.sort.end();
  symbol_filter_ = !opts_.symbol_filter.empty() && collapses;
  socket_filter_ = opts_.socket_filter >= 0 && collapses;
  if (socket_filter_) sockets_ = cpu_sockets(session.reader());
  if (setup_status_ && !opts_.time_str.empty()) {
    // Percent ranges are of the first..last sample time perf record wrote.
    std::uint64_t first = 0, last = 0;
    perfdata::Reader& reader = session.reader();
    perfdata::Features feats;
    if (auto blob = reader.feature(kFeatSampleTime))
      (void)perfdata::parse_feature(kFeatSampleTime, blob->data, reader.swapped(), blob->offset,
                                    feats);
    if (feats.sample_time) first = feats.sample_time->first_ns, last = feats.sample_time->last_ns;
    auto ranges = session::parse_time_ranges(opts_.time_str, first, last, false);
    if (ranges)
      time_ranges_ = std::move(*ranges);
    else
      setup_status_ = ranges.error();
  }
  if (setup_status_ && opts_.have_cpus)
    setup_status_ = session::check_cpu_filter(
        session.reader(), *std::max_element(opts_.cpus.begin(), opts_.cpus.end()));
  bool caller = opts_.caller_order;
  if (opts_.children != 0 && !opts_.order_given) caller = true;
  opts_.caller_order = caller;
  // The parent key reads the callchain even when no call graph is shown.
  const bool parent_key = has_key_[static_cast<int>(SortKey::kParent)];
  need_chains_ = session.reader().is_pipe() || use_callchain_ || children_ || parent_key;
  session.set_callchains(need_chains_, caller, opts_.max_stack);
  // Samples with user stack copies (--call-graph dwarf) are unwound as
  // perf's libunwind post-unwinder does; none for other architectures.
  if (need_chains_) {
    perfdata::Reader& reader = session.reader();
    perfdata::Features feats;
    if (auto blob = reader.feature(kFeatArch))
      (void)perfdata::parse_feature(kFeatArch, blob->data, reader.swapped(), blob->offset, feats);
    std::string arch = abi::normalize_arch(feats.arch.value_or(""));
    session::UnwindOptions uo;
    uo.unwind_arch = arch.empty() || arch == "x86";
    uo.lines = lines;
    uo.inline_frames = opts_.inline_frames;
    uo.full_source_path = opts_.full_source_path;
    session.set_unwinder(session::make_dwarf_unwinder(session.symbolizer(), uo));
  }
}

void Report::setup_groups() {
  auto feat = session_->reader().feature(kFeatGroupDesc);
  std::size_t n = hists_.size();
  struct G {
    std::string name;
    std::uint32_t leader = 0, nr = 0;
  };
  std::vector<G> groups;
  if (feat) {
    Cursor c(feat->data, session_->reader().swapped());
    std::uint32_t nr = c.u32();
    for (std::uint32_t i = 0; i < nr && c.ok(); ++i) {
      G g;
      std::uint32_t len = c.u32();
      g.name = std::string(c.fixed_string(len));
      g.leader = c.u32();
      g.nr = c.u32();
      if (c.ok()) groups.push_back(g);
    }
  }
  bool forced = false;
  if (groups.empty() && opts_.group != -1 && n > 1) {
    groups.push_back({"", 0, static_cast<std::uint32_t>(n)});
    // perf's forced leader (--group or --no-group given): no braces.
    forced = true;
  }
  for (const G& g : groups) {
    if (g.nr < 2 || g.leader + g.nr > n) continue;
    Hists& leader = hists_[g.leader];
    // --no-group: each event has its block; a leader's still says "events".
    leader.group_leader = true;
    if (opts_.group == 0) continue;
    std::string desc = g.name.empty() || g.name == "{anon_group}" ? "anon group" : g.name;
    desc = forced ? "" : desc + " { ";
    for (std::uint32_t m = 0; m < g.nr; ++m) {
      if (m) desc += ", ";
      desc += session_->event_name(g.leader + m);
      leader.members.push_back(g.leader + m);
      if (m) hists_[g.leader + m].group_member = true;
    }
    leader.group_name = forced ? desc : desc + " }";
  }
}

void Report::merge_group(Hists& leader) {
  const std::size_t nm = leader.members.size();
  const std::size_t stride = Hists::kGroupSets * nm;
  std::vector<std::uint64_t>& v = leader.group_values;
  v.assign(leader.entries.size() * stride, 0);
  auto put = [&](std::uint32_t row, std::size_t m, const Entry& e) {
    v[row * stride + m] = e.period;
    v[row * stride + nm + m] = e.acc_period;
    v[row * stride + 2 * nm + m] = e.nr_events;
    for (std::size_t i = 0; i < 4; ++i) v[row * stride + (3 + i) * nm + m] = e.mode_period[i];
  };
  std::uint32_t row = 0;
  for (Entry& e : leader.entries) {
    e.group_row = row++;
    put(e.group_row, 0, e);
  }
  for (std::size_t m = 1; m < nm; ++m) {
    Hists& mh = hists_[leader.members[m]];
    for (const Entry& me : mh.entries) {
      std::uint32_t at = leader.index.find(me.key, leader.entries);
      if (at == EntryIndex::kNone) {
        at = static_cast<std::uint32_t>(leader.entries.size());
        Entry d = me;
        d.period = d.acc_period = d.nr_events = d.acc_nr_events = 0;
        d.chain = UINT32_MAX;
        d.group_row = row++;
        v.resize(v.size() + stride, 0);
        leader.entries.push_back(d);
        leader.index.insert(at, me.key);
      }
      put(leader.entries[at].group_row, m, me);
    }
  }
}

}  // namespace perfkit::report
