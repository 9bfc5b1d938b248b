#include "report/report.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "abi/perf_event.h"
#include "abi/registers.h"
#include "base/cursor.h"
#include "perfdata/features.h"
#include "report/report_branch.h"
#include "report/report_fold.h"
#include "report/report_impl.h"
#include "report/report_keys.h"
#include "session/cpu_filter.h"
#include "session/unwind_callchain.h"

namespace perfkit::report {

using namespace perfkit::abi;

namespace {

// The CPU column of a sample; perf's -1 when the samples carry no CPU.
std::uint32_t sample_cpu(const record::Sample& s) {
  return (s.sample_type & kSampleCpu) ? s.cpu : ~0u;
}

// Whether two entries agree on every key but the less common ones.
bool same_but_ext(EntryKey a, EntryKey b) {
  a.ext = b.ext = 0;
  return a == b;
}

}  // namespace

// ---- aggregation ----

Report::Report(const ReportOptions& o) : opts_(o), ext_(std::make_unique<ExtKeys>()) {}
Report::~Report() = default;

const std::string* Report::dso_name(const machine::Dso* d) {
  if (!d) return nullptr;
  if (dso_names_.size() <= d->index) dso_names_.resize(d->index + 1, nullptr);
  const std::string*& p = dso_names_[d->index];
  if (!p) p = session_->machine().intern(opts_.verbose ? d->long_name : d->short_name);
  return p;
}

EntryKey Report::make_key(const session::ResolvedSample& s, const machine::Location& loc,
                          const char* inlined, int lookups, const char* srcline) {
  EntryKey k;
  for (SortKey key : opts_.sort) {
    switch (key) {
      case SortKey::kComm:
        k.comm = s.comm;
        break;
      case SortKey::kPid:
        k.tid = s.thread->tid;
        break;
      case SortKey::kDso:
        k.dso = dso_name(loc.dso);
        break;
      case SortKey::kSym:
      case SortKey::kSymoff:
      case SortKey::kIpcLbr:
      case SortKey::kIpcNull:
        k.has_sym = loc.symbol >= 0;
        if (k.has_sym) {
          const symbol::Symbol& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
          k.sym_start = sym.start;
          k.sym_end = sym.end;
          k.inlined = inlined;
          if (!has_key_[static_cast<int>(SortKey::kDso)]) k.dso = dso_name(loc.dso);
        } else {
          k.sym_start = loc.addr;
        }
        break;
      case SortKey::kCpu:
        k.cpu = sample_cpu(*s.sample);
        break;
      default:
        break;
    }
  }
  if (ext_->active()) k.ext = ext_->key(loc, inlined, lookups, srcline);
  return k;
}

Entry Report::make_entry(const session::ResolvedSample& s, const machine::Location& loc, char level,
                         const EntryKey& key) {
  Entry e;
  e.key = key;
  e.comm = s.comm;
  e.thread = s.thread;
  e.tid = s.thread->tid;
  e.cpu = sample_cpu(*s.sample);
  e.dso_name = dso_name(loc.dso);
  e.level = level;
  e.ip = loc.addr;
  e.dso = loc.map ? loc.dso : nullptr;
  // (a sample's own address is kept as resolved, DSO-relative; the kernel's
  // as it ran)
  e.shown_ip = loc.map && loc.dso && loc.dso->kind == machine::DsoKind::kKernel
                   ? loc.map->unmap_ip(loc.addr)
                   : loc.addr;
  if (loc.symbol >= 0) {
    const symbol::Symbol& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
    e.sym_name = session_->machine().symbol_name(loc);
    e.sym_type = sym.type;
    e.sym_start_abs = loc.map ? loc.map->unmap_ip(sym.start) : sym.start;
    if (key.inlined) e.sym_name = key.inlined, e.inlined = true;
  }
  return e;
}

std::uint32_t Report::live_entry(Hists& h, const EntryKey& key, const session::ResolvedSample& s,
                                 const machine::Location& loc, char level, bool filtered) {
  std::uint32_t first = h.index.find(key, h.entries);
  if (first != EntryIndex::kNone && h.live_on && h.live_seen[first] == h.live_rotations)
    return h.live_found[first];
  auto at = static_cast<std::uint32_t>(h.entries.size());
  h.entries.push_back(make_entry(s, loc, level, key));
  std::uint32_t found = live_find_or_link(*this, h, at);
  if (found != at) {
    h.entries.pop_back();
  } else {
    h.entries.back().filtered = filtered;
    if (use_callchain_) h.entries.back().chain = arena_.new_root();
    h.live_found.resize(h.entries.size());
    h.live_seen.resize(h.entries.size());
    if (first == EntryIndex::kNone) h.index.insert(at, key), first = at;
  }
  if (first != EntryIndex::kNone) {
    h.live_found[first] = found;
    h.live_seen[first] = h.live_rotations;
  }
  return found;
}

std::uint32_t Report::add_entry(Hists& h, const EntryKey& key, const session::ResolvedSample& s,
                                const machine::Location& loc, char level, bool filtered, bool self,
                                std::uint64_t period, std::uint32_t count, std::uint32_t found) {
  std::uint32_t at = EntryIndex::kNone;
  // Inline symbols, symbols compared by DSO name without a DSO key, and
  // unresolved addresses round more than half the address circle make
  // perf's comparison inconsistent: then entries are found as perf's tree
  // search finds them (from the first such entry on).
  if (!key.has_sym) ips_wrap_ |= note_unresolved(loc, loc.addr);
  if (symbol_filter_) filtered |= symbol_filtered(key, loc);
  if (socket_filter_) filtered |= socket_filtered(s);
  if (!indexed(h, key)) {
    at = live_entry(h, key, s, loc, level, filtered);
  } else if (at = found != kNotLooked ? found : h.index.find(key, h.entries);
             at == EntryIndex::kNone) {
    at = static_cast<std::uint32_t>(h.entries.size());
    h.entries.push_back(make_entry(s, loc, level, key));
    h.entries.back().filtered = filtered;
    h.index.insert(at, key);
    if (use_callchain_) h.entries.back().chain = arena_.new_root();
  }
  Entry& x = h.entries[at];
  if (self) {
    x.period += period;
    x.nr_events += count;
    x.add_mode_period(s.cpumode, period);
  }
  if (children_) {
    x.acc_period += period;
    x.acc_nr_events += count;
  }
  return at;
}

// Without PERIOD in the sample perf uses the attr's sample_period.
std::uint64_t Report::period_of(std::size_t event, const record::Sample& smp) const {
  return (smp.sample_type & kSamplePeriod) ? smp.period
                                           : session_->reader().events()[event].attr.sample_period;
}

void Report::decide_fold() {
  fold_decided_ = true;
  if (!settled_) settle_from_events();
  // Keys of the sample itself (time, srcline...) and unwound user stacks
  // make each sample its own.
  if (opts_.fold_max_kept == 0 || ext_->active() || sym_without_dso() || branch_mode_ ||
      mem_mode_ || branch_history_ || line_keys_ || evswitch_.active())
    return;
  // READ samples are split among the events by their counter values; the
  // chains of unwound user stacks and LBR call stacks are not in the key.
  constexpr std::uint64_t kUserStack = kSampleRegsUser | kSampleStackUser;
  // Samples without chains take the chain before them (stale_chain_): the
  // order of samples matters.
  if (mixed_chains_) return;
  for (const auto& d : session_->reader().events().events()) {
    if (d.attr.sample_type & kSampleRead) return;
    if (need_chains_ && ((d.attr.sample_type & kUserStack) == kUserStack ||
                         (d.attr.branch_sample_type & kBranchCallStack)))
      return;
  }
  fold_ = std::make_unique<SampleFold>(has_key_[static_cast<int>(SortKey::kCpu)], need_chains_,
                                       opts_.fold_max_kept,
                                       use_callchain_ ? SampleFold::kLargeFrames
                                       : need_chains_ ? SampleFold::kMediumFrames
                                                      : SampleFold::kSmallFrames);
}

bool Report::take_raw(const session::RawSample& r) {
  if (!fold_decided_) decide_fold();
  if (!fold_) return false;
  if (!accepts(*r.sample, r.event)) return true;
  return fold_->fold(r, period_of(r.event, *r.sample), session_->machine().generation());
}

Status Report::on_sample(const session::ResolvedSample& s) {
  if (fold_) {
    fold_->keep(s, session_->machine().generation());
    // A sample whose chain can make a call-graph level mix frames that perf
    // compares inconsistently is counted alone, in its place: what is kept
    // goes in first, then it (the tree a later repeat searches may miss the
    // node an earlier made). Samples that touch no such level still fold.
    const bool mixes = mixes_chain_kinds(s);
    if (sample_wraps_ips(s)) {
      PK_TRY(drain_fold());
      fold_.reset();
      return ok();
    }
    if (mixes) return drain_fold(false);
    return fold_->full() ? drain_fold() : ok();
  }
  if (!accepts(*s.sample, s.event)) return ok();
  if (s.sample->sample_type & kSampleRead) return add_read_sample(s);
  return add_sample(s, period_of(s.event, *s.sample), 1);
}

Status Report::after_record(const perfdata::ReadRecord& rec) {
  if (!opts_.show_threads || rec.view.type != kRecordRead) return ok();
  const auto& events = session_->reader().events();
  const int idx = rec.attr >= 0 ? rec.attr : events.attr_index(rec.view);
  if (idx < 0) return ok();
  const auto ev = static_cast<std::size_t>(idx);
  PK_ASSIGN(auto r, record::parse_read(rec.view, events[ev].attr.read_format));
  if (r.values.nr == 0) return ok();
  thread_counts_.add(static_cast<std::int32_t>(r.pid), static_cast<std::int32_t>(r.tid), ev,
                     session_->event_name(ev), r.values.at(0).value);
  return ok();
}

// perf delivers a PERF_SAMPLE_READ sample once per value read, to the
// value's event, with the change since that id's last value as the period;
// values of unknown ids and unchanged ones are dropped.
Status Report::add_read_sample(const session::ResolvedSample& s) {
  const record::Sample& smp = *s.sample;
  auto deliver = [&](const record::ReadValues::Value& v) -> Status {
    const int ev = session_->reader().events().index_of_id(v.id);
    if (ev < 0) return ok();
    std::uint64_t& last = read_last_[v.id];
    const std::uint64_t period = v.value - last;
    last = v.value;
    if (!period) return ok();
    session::ResolvedSample one = s;
    one.event = static_cast<std::size_t>(ev);
    return add_sample(one, period, 1);
  };
  if (!(smp.read.read_format & kFormatGroup)) return deliver(smp.read.at(0));
  for (std::uint64_t i = 0; i < smp.read.nr; ++i) PK_TRY(deliver(smp.read.at(i)));
  return ok();
}

Status Report::drain_fold(bool judge) {
  if (!fold_) return ok();
  bool paying = !judge || fold_->paying();
  folded_ += fold_->repeats();
  PK_TRY(fold_->drain(session_->machine(), [&](const session::ResolvedSample& s,
                                               std::uint64_t period, std::uint32_t count) {
    // Kernel frames kept before kallsyms had loaded: a kept sample found
    // mixing only now ends folding (one that made a level mixed, and
    // drained what was kept before it, is no such case).
    const bool mixes = mixes_chain_kinds(s);
    if (judge && mixes) paying = false;
    return add_sample(s, period, count);
  }));
  // Samples that seldom repeat are cheaper one at a time.
  if (!paying) fold_.reset();
  return ok();
}

bool Report::AddressArc::add(std::uint64_t ip) {
  constexpr std::uint64_t kHalf = std::uint64_t{1} << 63;
  if (ip < kHalf) {
    lo_min = lo ? std::min(lo_min, ip) : ip;
    lo_max = lo ? std::max(lo_max, ip) : ip;
    lo = true;
  } else {
    hi_min = hi ? std::min(hi_min, ip) : ip;
    hi_max = hi ? std::max(hi_max, ip) : ip;
    hi = true;
  }
  // Within each half the span is below 2^63; the whole lies within half
  // the circle when one of the two gaps between the halves exceeds it.
  return lo && hi && hi_min - lo_max <= kHalf && lo_min - hi_max <= kHalf;
}

bool Report::note_unresolved(const machine::Location& loc, std::uint64_t ip) {
  return loc.symbol < 0 && unresolved_ips_.add(ip);
}

// Whether the entries of `s` (kept by a fold; kernel symbols may still be
// pending, counted as unresolved) take perf's entry comparison past an
// order: then from `s` on repeats are counted one by one.
bool Report::sample_wraps_ips(const session::ResolvedSample& s) {
  bool wraps = note_unresolved(s.loc, s.loc.addr);
  if (children_)
    for (const session::Frame& f : s.callchain) wraps |= note_unresolved(f.loc, f.ip);
  return wraps;
}

// perf's match_chain compares two resolved frames by symbol start, but a
// resolved frame and an unresolved one of the same DSO by address, and an
// inlined frame by name: where one level of a call graph holds both kinds
// its children's order is inconsistent, and which node a chain lands in
// depends on when it came. Whether `s` makes some DSO's chain frames mixed
// (kernel frames whose symbols are still pending are looked at on drain).
bool Report::mixes_chain_kinds(const session::ResolvedSample& s) {
  if (!use_callchain_) return false;
  for (const session::Frame& f : s.callchain) {
    if (f.inlined) return true;
    if (!f.loc.dso || f.loc.symbol == machine::kSymbolPending) continue;
    const std::size_t i = f.loc.dso->index;
    if (i >= chain_kinds_.size()) chain_kinds_.resize(i + 1, 0);
    chain_kinds_[i] |= f.loc.symbol >= 0 ? 1 : 2;
    if (chain_kinds_[i] == 3) return true;
  }
  return false;
}

// Branch mode: one entry per branch, of period 1, at the branch's target
// (perf's iter_add_next_branch_entry); samples without a stack add none.
void Report::add_branches(Hists& h, const session::ResolvedSample& s) {
  const record::Sample& smp = *s.sample;
  if (!(smp.sample_type & kSampleBranchStack)) return;
  machine::Machine& m = session_->machine();
  block_stack_.clear();
  for (std::uint64_t i = 0; i < smp.branch_stack.nr; ++i) {
    record::BranchEntry be = smp.branch_stack.at(i);
    machine::Location loc;  // the entry's: the branch target
    machine::Location from;
    BranchInfo b = branches_.resolve(m, *s.thread, be.from, be.to, be.flags, loc, &from);
    // perf's map__srcline of each end, once per branch (its compare computes it)
    if (branches_.srcline_from()) b.srcline_from = ext_->branch_srcline(from);
    if (branches_.srcline_to()) b.srcline_to = ext_->branch_srcline(loc);
    if (total_cycles_) block_stack_.push_back({b, from});
    if (ext_->active()) ext_->set_branch(branches_.key(b));
    loc.addr = be.to;  // perf's entry ip: the target as recorded
    bool filtered = is_filtered(s, loc) || excluded_other();
    std::uint32_t idx = add_entry(h, make_key(s, loc), s, loc, s.loc.level, filtered, true, 1, 1);
    if (h.entries[idx].branch == UINT32_MAX) h.entries[idx].branch = branches_.full(b);
    // perf counts the type of the entry's branch (its first one's)
    const BranchInfo& first = branches_.at(h.entries[idx].branch);
    brtype_.count(first.type, first.new_type, first.from.addr, first.to.addr);
    h.nr_samples += 1;
    if (!filtered) h.nr_non_filtered_samples += 1;
  }
  if (total_cycles_) blocks_.account(block_stack_, any_branch_);
}

// -g srcline: a frame's source line (an inline record's own, else perf's
// callchain_srcline) tells it apart; it is named "name line" where known.
void Report::line_frame(const session::Frame& f, ChainEntry& c) {
  c.by_line = true;
  const std::string* known = f.srcline ? nullptr : ext_->chain_line(f.loc);
  c.line = f.srcline ? std::string_view(f.srcline)
           : known   ? std::string_view(*known)
                     : std::string_view();
  if (!c.has_sym) {
    c.key = f.ip;
    return;
  }
  c.key = f.loc.dso->symbols->at(static_cast<std::size_t>(f.loc.symbol)).start;
  machine::Machine& m = session_->machine();
  const std::string_view name = f.inlined ? std::string_view(f.inlined) : m.symbol_name(f.loc);
  if (c.line.data()) {
    c.name = *m.intern(fmt::format("{} {}{}", name, c.line, f.inlined ? " (inlined)" : ""));
  } else {
    c.name = name;
    c.inlined = f.inlined != nullptr;
  }
}

Status Report::add_sample(const session::ResolvedSample& sample, std::uint64_t period,
                          std::uint32_t count) {
  const session::ResolvedSample& s =
      ignore_.active() && !branch_mode_ ? ignore_.apply(sample, session_->machine()) : sample;
  const auto& smp = *s.sample;
  if (s.event >= hists_.size()) hists_.resize(s.event + 1);
  if (!settled_) settle_from_events();
  Hists& h = hists_[s.event];
  if (branch_mode_) {
    if (ext_->active()) ext_->begin_sample(s);
    add_branches(h, s);
    return ok();
  }
  // --hide-unresolved: perf drops a sample in no symbol, and the frames
  // in none from the others' chains.
  std::span<const session::Frame> chain = s.callchain;
  if (opts_.hide_unresolved && s.loc.symbol < 0) return ok();
  if (branch_history_) {
    chain = history_.frames(session_->machine(), s, opts_.caller_order, opts_.max_stack,
                            opts_.hide_unresolved);
    arena_.set_branch_frames(history_.branch_frames());
  } else if (opts_.hide_unresolved) {
    resolved_chain_.clear();
    for (const session::Frame& f : s.callchain)
      if (f.loc.symbol >= 0) resolved_chain_.push_back(f);
    chain = resolved_chain_;
  }
  if (ext_->active()) ext_->begin_sample(s);
  MemInfo mem;
  if (mem_mode_) {
    // perf's iter_add_single_mem_entry: the sample's weight is its period
    // (1 when it has none).
    mem = mems_.resolve(session_->machine(), *s.thread, s.cpumode, smp);
    if (ext_->active()) ext_->set_mem(mems_.key(mem));
    period = smp.perf_weight();
    if (!period) period = 1;
  }
  bool filtered = is_filtered(s, s.loc) || excluded_other();
  if (s.loc.dso) s.loc.dso->hit = true;
  h.nr_samples += count;
  if (!filtered) h.nr_non_filtered_samples += count;

  path_.clear();
  if (use_callchain_) {
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const session::Frame& f = chain[i];
      ChainEntry c;
      c.ip = f.ip;
      c.dso_rank = f.loc.dso ? f.loc.dso->index + 1 : 0;
      c.has_sym = f.loc.symbol >= 0;
      if (address_keys_) {
        // perf's address keys: frames told apart by address, named with
        // their source lines
        c.key = f.ip;
        if (branch_history_) c.branch = history_.branch_of(i);
        if (c.has_sym) c.name = ext_->history_name(f.loc, f.inlined, f.srcline);
      } else if (line_keys_) {
        line_frame(f, c);
      } else if (c.has_sym) {
        c.key = f.loc.dso->symbols->at(static_cast<std::size_t>(f.loc.symbol)).start;
        c.name = f.inlined ? std::string_view(f.inlined) : session_->machine().symbol_name(f.loc);
        c.inlined = f.inlined != nullptr;
      } else {
        c.key = f.ip;
      }
      path_.push_back(arena_.intern(c));
    }
    if (!address_keys_ && !line_keys_) arena_.suffixes(path_, suffixes_);
  }
  std::uint32_t idx =
      add_entry(h, make_key(s, s.loc), s, s.loc, s.loc.level, filtered, true, period, count);
  if (mem_mode_ && h.entries[idx].mem == UINT32_MAX) h.entries[idx].mem = mems_.full(mem);
  // (perf appends the branch history of a sample without a chain too)
  bool has_chain = (smp.sample_type & kSampleCallchain) != 0 || branch_counts_;
  if (use_callchain_ && has_chain) {
    h.callchain_period += period;
    if (!filtered) h.callchain_non_filtered_period += period;
    Entry& x = h.entries[idx];
    arena_.append(x.chain, path_, period, count, suffix_of(0));
    x.max_depth = std::max<std::uint32_t>(x.max_depth, static_cast<std::uint32_t>(path_.size()));
  }
  if (!children_) return ok();
  if (has_chain || !chain.empty()) {
    add_children(h, s, chain, idx, filtered, period, count, use_callchain_);
    if (mixed_chains_) stale_chain_.assign(chain.begin(), chain.end());
  } else if (mixed_chains_) {
    // perf's callchain cursor keeps the last chain resolved: a sample
    // without one adds the entries of the chain before it (no call graph).
    add_children(h, s, stale_chain_, idx, filtered, period, count, false);
  }
  return ok();
}

// Whether one of the entries this sample added (seen_) is, by perf's
// comparison, the entry `key` at `loc` would make.
bool Report::perf_duplicate(Hists& h, const session::ResolvedSample& s,
                            const machine::Location& loc, char level, const EntryKey& key) {
  // With a symbol key, perf's comparison of two symbols is by name where
  // one is inlined, else by start and end: only such entries can match.
  candidates_.clear();
  const bool by_symbol = key.has_sym && sorts_by_symbol();
  if (by_symbol) {
    const std::string_view name =
        key.inlined ? std::string_view(key.inlined) : session_->machine().symbol_name(loc);
    for (std::uint32_t j : seen_) {
      const Entry& e = h.entries[j];
      if (!e.key.has_sym) continue;
      if (key.inlined || e.inlined
              ? e.sym_name == name
              : e.key.sym_start == key.sym_start && e.key.sym_end == key.sym_end)
        candidates_.push_back(j);
    }
    if (candidates_.empty()) return false;
  }
  h.entries.push_back(make_entry(s, loc, level, key));
  const auto tmp = static_cast<std::uint32_t>(h.entries.size() - 1);
  bool dup = false;
  for (std::uint32_t j : by_symbol ? candidates_ : seen_)
    if (perf_same_entry(*this, h, j, tmp)) {
      dup = true;
      break;
    }
  h.entries.pop_back();
  return dup;
}

bool Report::sorts_by_symbol() const {
  for (SortKey k : opts_.sort)
    if (k == SortKey::kSym || k == SortKey::kSymoff || k == SortKey::kIpcLbr ||
        k == SortKey::kIpcNull)
      return true;
  return false;
}

// perf's duplicate check of a chain frame's entry against those the sample
// made so far (seen_), for keys that make it more than an index lookup.
bool Report::duplicate(Hists& h, const session::ResolvedSample& s, const EntryKey& key,
                       const machine::Location& loc, char level) {
  // perf's duplicate check compares a template without time and socket:
  // with those keys a frame is (almost) never a duplicate.
  EntryKey probe = key;
  if (ext_->dedup_differs()) probe.ext = ext_->dedup_key(key.ext);
  // (The check compares up to the srcline key where the others agree:
  // perf then knows those entries' source lines.)
  for (std::uint32_t j : seen_) {
    Entry& seen = h.entries[j];
    if (seen.key == probe) {
      seen.srcline_known = true;
      return true;
    }
    seen.srcline_known |= same_but_ext(seen.key, probe);
  }
  // Where perf's comparison is not key equality (inline symbols match by
  // name where ranges overlap, ...), its duplicate check is that comparison:
  // a recursion through inlined copies in adjacent functions counts once.
  if (h.live_on || key.inlined || sym_without_dso() || ips_wrap_)
    return perf_duplicate(h, s, loc, level, probe);
  return false;
}

// perf's --children: each callchain frame's entry, once per sample.
void Report::add_children(Hists& h, const session::ResolvedSample& s,
                          std::span<const session::Frame> chain, std::uint32_t self, bool filtered,
                          std::uint64_t period, std::uint32_t count, bool graph) {
  seen_.clear();
  seen_.push_back(self);
  char level = s.loc.level;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const session::Frame& f = chain[i];
    // perf keeps the previous frame's level for a frame without a map.
    if (f.loc.map) level = f.loc.kernel_maps ? machine::kLevelKernel : machine::kLevelUser;
    machine::Location loc = f.loc;
    loc.addr = f.ip;  // perf's children entries carry the raw address
    // perf resolves a callchain entry's source line twice: for its
    // duplicate check and for its insertion.
    // (--branch-history: the frame's source line, perf's callchain_srcline)
    const std::string* history = f.srcline       ? nullptr
                                 : address_keys_ ? ext_->history_srcline(f.loc)
                                 : line_keys_    ? ext_->chain_line(f.loc)
                                                 : nullptr;
    EntryKey key = make_key(s, loc, f.inlined, 2, history ? history->c_str() : f.srcline);
    // Without the less common keys, a frame is a duplicate when its entry
    // is one of those seen: one lookup, which adding then uses too.
    std::uint32_t found = kNotLooked;
    if (!ext_->active() && indexed(h, key)) {
      found = h.index.find(key, h.entries);
      if (found != EntryIndex::kNone &&
          std::find(seen_.begin(), seen_.end(), found) != seen_.end()) {
        h.entries[found].srcline_known = true;
        continue;
      }
    } else if (duplicate(h, s, key, loc, level)) {
      continue;
    }
    const bool found_line = ext_->active() && ext_->last_found();
    const std::size_t before = h.entries.size();
    std::uint32_t k = add_entry(h, key, s, loc, level, filtered, false, period, count, found);
    h.entries[k].srcline_known |= found_line;
    // An entry a frame makes keeps the frame's address as recorded (-v).
    if (h.entries.size() > before && k + 1 == h.entries.size()) h.entries[k].shown_ip = f.ip;
    seen_.push_back(k);
    if (!use_callchain_) continue;
    Entry& x = h.entries[k];
    // (Without a graph, perf still orders the entry by its chain's depth.)
    if (graph)
      arena_.append(x.chain, std::span<const FrameId>(path_).subspan(i), period, count,
                    suffix_of(i));
    x.max_depth =
        std::max<std::uint32_t>(x.max_depth, static_cast<std::uint32_t>(chain.size() - i));
  }
}

// Applies perf's in-place renames of ":TID" commands and merges the entries
// that then have equal keys.
void Report::apply_comm_renames(Hists& h) {
  const auto& m = session_->machine();
  bool any = false;
  for (Entry& e : h.entries) {
    const std::string* c = m.canonical_comm(e.comm);
    if (c == e.comm) continue;
    any = true;
    e.comm = c;
    if (e.key.comm) e.key.comm = c;
  }
  if (!any) return;
  EntryStore kept;
  h.index.clear();
  for (Entry& e : h.entries) {
    std::uint32_t at = h.index.find(e.key, kept);
    if (at == EntryIndex::kNone) {
      kept.push_back(std::move(e));
      h.index.insert(static_cast<std::uint32_t>(kept.size() - 1), kept.back().key);
      continue;
    }
    Entry& k = kept[at];
    k.add_counts(e);
    k.max_depth = std::max(k.max_depth, e.max_depth);
  }
  h.entries = std::move(kept);
}

void Report::collapse_merge(Hists& h, std::uint32_t kept, std::uint32_t merged) {
  Entry& k = h.entries[kept];
  const Entry& m = h.entries[merged];
  k.add_counts(m);
  k.srcline_known |= m.srcline_known;
  if (k.chain != UINT32_MAX && m.chain != UINT32_MAX) arena_.merge(k.chain, m.chain);
}

// A signature of the values entry `e` has for the sort keys before the
// first srcline or srcfile key (what perf compares before reaching it).
std::uint64_t Report::prefix_signature(const Entry& e) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  const ExtKey& x = ext_->at(e.key.ext);
  auto add = [&h](std::uint64_t v) { h = mix64(h ^ v); };
  for (SortKey k : opts_.sort) {
    if (k == SortKey::kSrcline || k == SortKey::kSrcfile) break;
    switch (k) {
      case SortKey::kComm:
        add(reinterpret_cast<std::uintptr_t>(e.comm));
        break;
      case SortKey::kPid:
        add(static_cast<std::uint32_t>(e.tid));
        break;
      case SortKey::kDso:
        add(reinterpret_cast<std::uintptr_t>(e.key.dso));
        break;
      case SortKey::kSym:
      case SortKey::kSymoff:
      case SortKey::kIpcLbr:
      case SortKey::kIpcNull:
        add(reinterpret_cast<std::uintptr_t>(e.key.dso));
        add(e.key.has_sym ? e.key.sym_start : e.ip);
        add(e.key.sym_end ^ reinterpret_cast<std::uintptr_t>(e.key.inlined));
        if (k == SortKey::kSymoff) add(x.symoff_ip);
        break;
      case SortKey::kCpu:
        add(e.cpu);
        break;
      case SortKey::kTime:
        add(x.time);
        break;
      case SortKey::kSocket:
        add(static_cast<std::uint32_t>(x.socket));
        break;
      case SortKey::kParent:
        add(reinterpret_cast<std::uintptr_t>(x.parent));
        break;
      case SortKey::kTrace:
        add(reinterpret_cast<std::uintptr_t>(x.trace));
        break;
      default:
        break;
    }
  }
  return h;
}

// perf computes an entry's source line when a comparison reaches its
// srcline (or srcfile) key: when another entry agrees on every key before
// it, or when the entry is looked up again. Only those entries size the
// column; the others print cut to its width.
bool Report::srcline_sized(const Hists& h, const Entry& e) const {
  std::uint64_t hits = children_ ? e.acc_nr_events : e.nr_events;
  if (hits >= 2 || e.srcline_known) return true;
  // An event group's members are matched with the leader's entries (perf's
  // hists__match): an entry of the leader that a member has too was found,
  // so compared.
  if (h.members.size() > 1 && !h.group_values.empty()) {
    const auto events = h.group_events(e);
    for (std::size_t i = 1; i < events.size() && events[0]; ++i)
      if (events[i]) return true;
  }
  if (sized_for_ != &h) {
    sized_for_ = &h;
    prefix_counts_.clear();
    for (const Entry& x : h.entries) ++prefix_counts_[prefix_signature(x)];
  }
  return prefix_counts_[prefix_signature(e)] >= 2;
}

// ---- builder ----

ReportBuilder::ReportBuilder(const ReportOptions& opts) : impl_(std::make_unique<Report>(opts)) {}
ReportBuilder::~ReportBuilder() = default;

Status ReportBuilder::build(session::Session& session) {
  impl_->settle(session);
  PK_TRY(impl_->setup_status_);
  if (impl_->no_callchains_for_parent_)
    return make_error(
        "Selected --sort parent, but no callchain data. Did you call 'perf record' without -g?");
  if (impl_->no_callchains_for_g_)
    return make_error(
        "Selected -g or --branch-history, but no callchain or branch data. Did you call "
        "'perf record' without -g or -b?");
  PK_TRY(session.run(*impl_));
  // What the fold still holds makes its entries' trees now: on every lane.
  impl_->arena_.spread_roots();
  PK_TRY(impl_->drain_fold());
  impl_->finish();
  return ok();
}

void ReportBuilder::print(session::Session& session, FdWriter& out) { impl_->print(session, out); }

std::uint64_t ReportBuilder::folded_samples() const { return impl_->folded_; }

}  // namespace perfkit::report
