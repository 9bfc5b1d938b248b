#include "analysis/report.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <unordered_map>

#include "abi/perf_event.h"
#include "analysis/dump_records_impl.h"
#include "analysis/report_impl.h"
#include "analysis/unwind_callchain.h"
#include "base/cursor.h"
#include "perfdata/features.h"

namespace perfkit::analysis {

using namespace perfkit::abi;

// ---- options ----

Expected<std::vector<SortKey>> parse_sort_keys(std::string_view list) {
  std::vector<SortKey> keys;
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    std::string_view k = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (k.empty()) continue;
    if (k == "comm")
      keys.push_back(SortKey::kComm);
    else if (k == "pid" || k == "tid")
      keys.push_back(SortKey::kPid);
    else if (k == "dso")
      keys.push_back(SortKey::kDso);
    else if (k == "sym" || k == "symbol")
      keys.push_back(SortKey::kSym);
    else if (k == "cpu")
      keys.push_back(SortKey::kCpu);
    else if (k == "overhead" || k == "overhead_children")
      continue;
    else if (k == "srcline" || k == "srcfile")
      return make_error("sort key '{}' needs source lines, which perfkit does not read yet", k);
    else
      return make_error("unknown or unsupported sort key '{}'", k);
  }
  if (keys.empty()) return make_error("no sort keys given");
  return keys;
}

Status parse_callchain_arg(std::string_view arg, ReportOptions& o) {
  int numbers = 0;
  o.chain_mode_given = true;
  while (!arg.empty()) {
    std::size_t comma = arg.find(',');
    std::string_view t = arg.substr(0, comma);
    arg = comma == std::string_view::npos ? std::string_view() : arg.substr(comma + 1);
    if (t.empty()) continue;
    if (t == "graph")
      o.chain_mode = ChainMode::kGraphAbs;
    else if (t == "fractal")
      o.chain_mode = ChainMode::kGraphRel;
    else if (t == "flat")
      o.chain_mode = ChainMode::kFlat;
    else if (t == "folded")
      o.chain_mode = ChainMode::kFolded;
    else if (t == "none")
      o.chain_mode = ChainMode::kNone;
    else if (t == "caller")
      o.caller_order = true, o.order_given = true;
    else if (t == "callee")
      o.caller_order = false, o.order_given = true;
    else if (t == "function" || t == "address" || t == "branch")
      continue;
    else if (t == "percent")
      o.chain_value = ChainValue::kPercent;
    else if (t == "period")
      o.chain_value = ChainValue::kPeriod;
    else if (t == "count")
      o.chain_value = ChainValue::kCount;
    else {
      std::string s(t);
      char* end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (end == s.c_str() || *end) return make_error("-g: unknown callchain option '{}'", t);
      if (numbers++ == 0)
        o.chain_min_percent = v;
      else
        o.chain_print_limit = static_cast<std::uint32_t>(v);
    }
  }
  return ok();
}

// ---- aggregation ----

const std::string* Report::dso_name(const machine::Dso* d) {
  if (!d) return nullptr;
  if (dso_names_.size() <= d->index) dso_names_.resize(d->index + 1, nullptr);
  const std::string*& p = dso_names_[d->index];
  if (!p) p = session_->machine().intern(d->short_name);
  return p;
}

bool Report::is_filtered(const ResolvedSample& s, const machine::Location& loc) const {
  const auto& o = opts_;
  if (!o.comms.empty() &&
      std::find(o.comms.begin(), o.comms.end(), *s.thread->comm) == o.comms.end())
    return true;
  if (!o.pids.empty() && std::find(o.pids.begin(), o.pids.end(), s.thread->pid) == o.pids.end())
    return true;
  if (!o.tids.empty() && std::find(o.tids.begin(), o.tids.end(), s.thread->tid) == o.tids.end())
    return true;
  if (!o.dsos.empty() && loc.dso) {
    bool hit = std::find(o.dsos.begin(), o.dsos.end(), loc.dso->short_name) != o.dsos.end() ||
               std::find(o.dsos.begin(), o.dsos.end(), loc.dso->long_name) != o.dsos.end();
    if (!hit) return true;
  }
  if (!o.symbols.empty()) {
    std::string_view n = session_->machine().symbol_name(loc);
    if (n.empty() || std::find(o.symbols.begin(), o.symbols.end(), n) == o.symbols.end())
      return true;
  }
  return false;
}

EntryKey Report::make_key(const ResolvedSample& s, const machine::Location& loc,
                          const char* inlined) {
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
        k.has_sym = loc.symbol >= 0;
        if (k.has_sym) {
          const symbol::Symbol& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
          k.sym_start = sym.start;
          k.sym_end = sym.end;
          k.inlined = inlined;
          if (!has_key_[static_cast<int>(SortKey::kDso)]) k.dso = dso_name(loc.dso);
        } else {
          k.ip = loc.addr;
        }
        break;
      case SortKey::kCpu:
        k.cpu = s.sample->cpu;
        break;
      default:
        break;
    }
  }
  return k;
}

Entry Report::make_entry(const ResolvedSample& s, const machine::Location& loc, char level,
                         const EntryKey& key) {
  Entry e;
  e.key = key;
  e.comm = s.comm;
  e.thread = s.thread;
  e.tid = s.thread->tid;
  e.cpu = s.sample->cpu;
  e.dso_name = dso_name(loc.dso);
  e.level = level;
  e.ip = loc.addr;
  if (loc.symbol >= 0) {
    const symbol::Symbol& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
    e.sym_name = session_->machine().symbol_name(loc);
    e.sym_type = sym.type;
    e.sym_start_abs = loc.map ? loc.map->unmap_ip(sym.start) : sym.start;
    if (key.inlined) e.sym_name = key.inlined, e.inlined = true;
  }
  return e;
}

std::uint32_t Report::add_entry(Hists& h, const EntryKey& key, const ResolvedSample& s,
                                const machine::Location& loc, char level, bool filtered, bool self,
                                std::uint64_t period) {
  std::uint32_t at = h.index.find(key, h.entries);
  if (at == EntryIndex::kNone) {
    at = static_cast<std::uint32_t>(h.entries.size());
    h.entries.push_back(make_entry(s, loc, level, key));
    h.entries.back().filtered = filtered;
    h.index.insert(at, key);
    if (use_callchain_) h.entries.back().chain = arena_.new_root();
  }
  Entry& x = h.entries[at];
  if (self) {
    x.period += period;
    x.nr_events += 1;
  }
  if (children_) {
    x.acc_period += period;
    x.acc_nr_events += 1;
  }
  return at;
}

Status Report::on_sample(const ResolvedSample& s) {
  const auto& smp = *s.sample;
  if (opts_.time_start && smp.time < opts_.time_start) return ok();
  if (opts_.time_end && smp.time > opts_.time_end) return ok();
  if (opts_.have_cpus &&
      std::find(opts_.cpus.begin(), opts_.cpus.end(), smp.cpu) == opts_.cpus.end())
    return ok();
  if (s.event >= hists_.size()) hists_.resize(s.event + 1);
  if (!settled_) settle_from_events();
  Hists& h = hists_[s.event];
  bool filtered = is_filtered(s, s.loc);
  if (s.loc.dso) s.loc.dso->hit = true;
  // Without PERIOD in the sample perf uses the attr's sample_period.
  std::uint64_t period = (smp.sample_type & kSamplePeriod)
                             ? smp.period
                             : session_->reader().events()[s.event].attr.sample_period;
  h.nr_samples++;
  if (!filtered) h.nr_non_filtered_samples++;

  path_.clear();
  if (use_callchain_) {
    for (const Frame& f : s.callchain) {
      ChainEntry c;
      c.ip = f.ip;
      c.dso_rank = f.loc.dso ? f.loc.dso->index + 1 : 0;
      c.has_sym = f.loc.symbol >= 0;
      if (c.has_sym) {
        c.key = f.loc.dso->symbols->at(static_cast<std::size_t>(f.loc.symbol)).start;
        c.name = f.inlined ? std::string_view(f.inlined) : session_->machine().symbol_name(f.loc);
        c.inlined = f.inlined != nullptr;
      } else {
        c.key = f.ip;
      }
      path_.push_back(c);
    }
  }
  std::uint32_t idx =
      add_entry(h, make_key(s, s.loc), s, s.loc, s.loc.level, filtered, true, period);
  bool has_chain = (smp.sample_type & kSampleCallchain) != 0;
  if (use_callchain_ && has_chain) {
    h.callchain_period += period;
    if (!filtered) h.callchain_non_filtered_period += period;
    Entry& x = h.entries[idx];
    arena_.append(x.chain, path_, period);
    x.max_depth = std::max<std::uint32_t>(x.max_depth, static_cast<std::uint32_t>(path_.size()));
  }
  if (!children_) return ok();

  seen_.clear();
  seen_.push_back(idx);
  char level = s.loc.level;
  for (std::size_t i = 0; i < s.callchain.size(); ++i) {
    const Frame& f = s.callchain[i];
    // perf keeps the previous frame's level for a frame without a map.
    if (f.loc.map) level = f.loc.kernel_maps ? machine::kLevelKernel : machine::kLevelUser;
    machine::Location loc = f.loc;
    loc.addr = f.ip;  // perf's children entries carry the raw address
    EntryKey key = make_key(s, loc, f.inlined);
    bool dup = false;
    for (std::uint32_t j : seen_)
      if (h.entries[j].key == key) {
        dup = true;
        break;
      }
    if (dup) continue;
    std::uint32_t k = add_entry(h, key, s, loc, level, filtered, false, period);
    seen_.push_back(k);
    if (use_callchain_) {
      Entry& x = h.entries[k];
      arena_.append(x.chain, std::span<const ChainEntry>(path_).subspan(i), period);
      x.max_depth =
          std::max<std::uint32_t>(x.max_depth, static_cast<std::uint32_t>(path_.size() - i));
    }
  }
  return ok();
}

void Report::settle_from_events() {
  settled_ = true;
  bool has_cg = false;
  for (const auto& d : session_->reader().events().events())
    has_cg |= (d.attr.sample_type & kSampleCallchain) != 0;
  // perf decides --children before a stream's attrs are known: off for pipes.
  children_ = has_cg && opts_.children != 0 && !session_->reader().is_pipe();
  use_callchain_ = has_cg && opts_.chain_mode != ChainMode::kNone;
  no_callchains_for_g_ = !has_cg && opts_.chain_mode_given &&
                         opts_.chain_mode != ChainMode::kNone && !session_->reader().is_pipe();
}

void Report::settle(Session& session) {
  session_ = &session;
  const auto& ev = session.reader().events();
  hists_.assign(ev.size(), Hists{});
  for (SortKey k : opts_.sort) has_key_[static_cast<int>(k)] = true;
  // A stream's attrs come with its records: settle at the first sample then.
  if (!session.reader().is_pipe()) settle_from_events();
  bool caller = opts_.caller_order;
  if (opts_.children != 0 && !opts_.order_given) caller = true;
  opts_.caller_order = caller;
  bool need_chains = session.reader().is_pipe() || use_callchain_ || children_;
  session.set_callchains(need_chains, caller, opts_.max_stack);
  // Samples with user stack copies (--call-graph dwarf) are unwound as
  // perf's libunwind post-unwinder does; none for other architectures.
  if (need_chains) {
    perfdata::Reader& reader = session.reader();
    perfdata::Features feats;
    if (auto blob = reader.feature(kFeatArch))
      (void)perfdata::parse_feature(kFeatArch, blob->data, reader.swapped(), blob->offset, feats);
    std::string arch = dump_detail::normalize_arch(feats.arch.value_or(""));
    UnwindOptions uo;
    uo.unwind_arch = arch.empty() || arch == "x86";
    session.set_unwinder(make_dwarf_unwinder(session.symbolizer(), uo));
  }
}

// ---- ordering ----

namespace {

int cmp_str(const std::string* a, const std::string* b) {
  if (a == b) return 0;
  if (!a || !b) return !a ? 1 : -1;  // no DSO sorts last
  int c = a->compare(*b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

template <class T>
int cmp_num(T a, T b) {
  return a < b ? -1 : (a > b ? 1 : 0);
}

}  // namespace

namespace {

// The in-order sequence of a Linux rbtree built by inserting `order` one by
// one, going left when go_left_of(node entry, new entry).
// Nodes carry their links (left, right, parent, red) so that a descent
// reads one node per level.
template <class Node, class GoLeft>
std::vector<std::uint32_t> rbtree_order(std::vector<Node>& nodes, GoLeft go_left_of) {
  const std::uint32_t nil = UINT32_MAX;
  std::size_t n = nodes.size();
  for (Node& x : nodes) x.left = x.right = x.parent = nil, x.red = false;
  auto left = [&](std::uint32_t i) -> std::uint32_t& { return nodes[i].left; };
  auto right = [&](std::uint32_t i) -> std::uint32_t& { return nodes[i].right; };
  auto parent = [&](std::uint32_t i) -> std::uint32_t& { return nodes[i].parent; };
  auto red = [&](std::uint32_t i) -> bool& { return nodes[i].red; };
  std::uint32_t root = nil;
  auto rotate_left = [&](std::uint32_t x) {
    std::uint32_t y = right(x);
    right(x) = left(y);
    if (left(y) != nil) parent(left(y)) = x;
    parent(y) = parent(x);
    if (parent(x) == nil)
      root = y;
    else if (x == left(parent(x)))
      left(parent(x)) = y;
    else
      right(parent(x)) = y;
    left(y) = x;
    parent(x) = y;
  };
  auto rotate_right = [&](std::uint32_t x) {
    std::uint32_t y = left(x);
    left(x) = right(y);
    if (right(y) != nil) parent(right(y)) = x;
    parent(y) = parent(x);
    if (parent(x) == nil)
      root = y;
    else if (x == right(parent(x)))
      right(parent(x)) = y;
    else
      left(parent(x)) = y;
    right(y) = x;
    parent(x) = y;
  };
  for (std::uint32_t z = 0; z < n; ++z) {
    std::uint32_t y = nil, x = root;
    bool go_left = false;
    while (x != nil) {
      y = x;
      go_left = go_left_of(nodes[x], nodes[z]);
      x = go_left ? left(x) : right(x);
    }
    parent(z) = y;
    if (y == nil)
      root = z;
    else if (go_left)
      left(y) = z;
    else
      right(y) = z;
    red(z) = true;
    std::uint32_t k = z;
    while (parent(k) != nil && red(parent(k))) {
      std::uint32_t p = parent(k), g = parent(p);
      if (p == left(g)) {
        std::uint32_t u = right(g);
        if (u != nil && red(u)) {
          red(p) = red(u) = false;
          red(g) = true;
          k = g;
        } else {
          if (k == right(p)) {
            k = p;
            rotate_left(k);
            p = parent(k);
            g = parent(p);
          }
          red(p) = false;
          red(g) = true;
          rotate_right(g);
        }
      } else {
        std::uint32_t u = left(g);
        if (u != nil && red(u)) {
          red(p) = red(u) = false;
          red(g) = true;
          k = g;
        } else {
          if (k == left(p)) {
            k = p;
            rotate_right(k);
            p = parent(k);
            g = parent(p);
          }
          red(p) = false;
          red(g) = true;
          rotate_left(g);
        }
      }
    }
    red(root) = false;
  }
  std::vector<std::uint32_t> out;
  out.reserve(n);
  std::vector<std::uint32_t> stack;
  std::uint32_t cur = root;
  while (cur != nil || !stack.empty()) {
    while (cur != nil) {
      stack.push_back(cur);
      cur = left(cur);
    }
    cur = stack.back();
    stack.pop_back();
    out.push_back(cur);
    cur = right(cur);
  }
  return out;
}

}  // namespace

int compare_output(const Report& r, const Hists& h, const Entry& a, const Entry& b) {
  const bool group = h.members.size() > 1;
  if (r.children_) {
    if (a.acc_period != b.acc_period) return a.acc_period > b.acc_period ? -1 : 1;
    if (group)
      for (std::size_t m = 1; m < h.members.size(); ++m)
        if (a.group_acc[m] != b.group_acc[m]) return a.group_acc[m] > b.group_acc[m] ? -1 : 1;
    if (r.use_callchain_ && a.tid == b.tid && a.max_depth != b.max_depth) {
      bool a_first = r.opts_.caller_order ? a.max_depth > b.max_depth : a.max_depth < b.max_depth;
      return a_first ? -1 : 1;
    }
  }
  if (a.period != b.period) return a.period > b.period ? -1 : 1;
  if (group)
    for (std::size_t m = 1; m < h.members.size(); ++m)
      if (a.group_period[m] != b.group_period[m])
        return a.group_period[m] > b.group_period[m] ? -1 : 1;
  for (SortKey k : r.opts_.sort) {
    int c = 0;
    switch (k) {
      case SortKey::kComm:
        c = cmp_str(a.comm, b.comm);
        break;
      case SortKey::kPid:
        c = cmp_num(a.tid, b.tid);
        break;
      case SortKey::kDso:
        c = cmp_str(a.key.dso, b.key.dso);
        break;
      case SortKey::kSym:
        if (!a.key.has_sym || !b.key.has_sym) {
          c = a.key.has_sym == b.key.has_sym ? 0 : (!a.key.has_sym ? 1 : -1);
        } else {
          int s = a.sym_name.compare(b.sym_name);
          c = s < 0 ? -1 : (s > 0 ? 1 : 0);
        }
        break;
      case SortKey::kCpu:
        c = cmp_num(a.cpu, b.cpu);
        break;
      default:
        break;
    }
    if (c) return c;
  }
  return 0;
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
  if (groups.empty() && opts_.group && n > 1) {
    groups.push_back({"", 0, static_cast<std::uint32_t>(n)});
    forced = true;  // perf's forced leader: the description has no braces
  }
  for (const G& g : groups) {
    if (g.nr < 2 || g.leader + g.nr > n) continue;
    Hists& leader = hists_[g.leader];
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
  for (Entry& e : leader.entries) {
    e.group_period.assign(nm, 0);
    e.group_acc.assign(nm, 0);
    e.group_period[0] = e.period;
    e.group_acc[0] = e.acc_period;
  }
  for (std::size_t m = 1; m < nm; ++m) {
    Hists& mh = hists_[leader.members[m]];
    for (const Entry& me : mh.entries) {
      std::uint32_t at = leader.index.find(me.key, leader.entries);
      bool fresh = at == EntryIndex::kNone;
      if (fresh) {
        at = static_cast<std::uint32_t>(leader.entries.size());
        Entry d = me;
        d.period = d.acc_period = d.nr_events = d.acc_nr_events = 0;
        d.chain = UINT32_MAX;
        d.group_period.assign(nm, 0);
        d.group_acc.assign(nm, 0);
        leader.entries.push_back(std::move(d));
        leader.index.insert(at, me.key);
      }
      Entry& le = leader.entries[at];
      le.group_period[m] = me.period;
      le.group_acc[m] = me.acc_period;
    }
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
  std::deque<Entry> kept;
  h.index.clear();
  for (Entry& e : h.entries) {
    std::uint32_t at = h.index.find(e.key, kept);
    if (at == EntryIndex::kNone) {
      kept.push_back(std::move(e));
      h.index.insert(static_cast<std::uint32_t>(kept.size() - 1), kept.back().key);
      continue;
    }
    Entry& k = kept[at];
    k.period += e.period;
    k.nr_events += e.nr_events;
    k.acc_period += e.acc_period;
    k.acc_nr_events += e.acc_nr_events;
    k.max_depth = std::max(k.max_depth, e.max_depth);
  }
  h.entries = std::move(kept);
}

namespace {

// What perf's two orderings (the input/collapse trees and the output sort)
// read of an entry, packed, with interned names as ranks in string order:
// ordering 100k+ entries then walks one compact array, not the entries.
struct alignas(64) OrderRow {
  // First cache line: what perf_cmp reads, and the tree links.
  std::uint32_t left = 0, right = 0, parent = 0;  // rbtree_order's links
  std::uint32_t comm = 0, key_dso = 0, dso_name = 0, cpu = 0;
  std::int32_t tid = 0;
  bool has_sym = false, filtered = false;
  bool red = false, inlined = false;
  std::uint64_t ip = 0, sym_start = 0, sym_end = 0;
  // Second: what only the output sort reads.
  std::uint64_t acc = 0, period = 0;
  std::string_view sym_name;
  std::uint32_t max_depth = 0, idx = 0;
};
static_assert(sizeof(OrderRow) == 128);
constexpr std::uint32_t kNoName = UINT32_MAX;  // nullptr: after every name

// Ranks of interned strings in string order; equal strings rank equal.
class NameRanks {
 public:
  void add(const std::string* s) {
    if (s && s != last_) seen_.emplace(s, 0), last_ = s;
  }
  void build() {
    std::vector<const std::string*> v;
    v.reserve(seen_.size());
    for (const auto& kv : seen_) v.push_back(kv.first);
    std::sort(v.begin(), v.end(), [](const auto* a, const auto* b) { return *a < *b; });
    std::uint32_t r = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i && *v[i] != *v[i - 1]) ++r;
      seen_[v[i]] = r;
    }
    last_ = nullptr;
  }
  std::uint32_t rank(const std::string* s) const {
    if (!s) return kNoName;
    return seen_.find(s)->second;
  }

 private:
  std::unordered_map<const std::string*, std::uint32_t> seen_;
  const std::string* last_ = nullptr;
};

std::vector<OrderRow> order_rows(const std::deque<Entry>& entries) {
  NameRanks comms, dsos;
  for (const Entry& e : entries) {
    comms.add(e.comm);
    dsos.add(e.key.dso);
    dsos.add(e.dso_name);
  }
  comms.build();
  dsos.build();
  std::vector<OrderRow> rows(entries.size());
  std::uint32_t i = 0;
  for (const Entry& e : entries) {
    OrderRow& r = rows[i];
    r.acc = e.acc_period;
    r.period = e.period;
    r.ip = e.ip;
    r.sym_start = e.key.sym_start;
    r.sym_end = e.key.sym_end;
    r.sym_name = e.sym_name;
    r.max_depth = e.max_depth;
    r.comm = comms.rank(e.comm);
    r.key_dso = dsos.rank(e.key.dso);
    r.dso_name = dsos.rank(e.dso_name);
    r.cpu = e.cpu;
    r.idx = i++;
    r.tid = e.tid;
    r.has_sym = e.key.has_sym;
    r.filtered = e.filtered;
    r.inlined = e.inlined;
  }
  return rows;
}

template <class T>
std::int64_t sign_of(T n, T l) {
  return n < l ? -1 : (n > l ? 1 : 0);
}

// perf's hist_entry__cmp(existing, incoming) with perf's signs: the incoming
// entry goes left of `l` when this is negative. Not a consistent order when
// resolved and unresolved symbols mix (DSO first, then null last), which is
// why the tree perf builds is simulated rather than sorted. Name ranks order
// as their strings do.
std::int64_t row_perf_cmp(const Report& r, const OrderRow& l, const OrderRow& n) {
  auto dso_cmp = [](std::uint32_t ld, std::uint32_t nd) -> std::int64_t {
    if (ld == nd) return 0;
    if (ld == kNoName || nd == kNoName) return ld == kNoName ? -1 : 1;
    return sign_of(nd, ld);
  };
  for (SortKey k : r.opts_.sort) {
    std::int64_t c = 0;
    switch (k) {
      case SortKey::kComm:
        c = sign_of(n.comm, l.comm);
        break;
      case SortKey::kPid:
        c = static_cast<std::int64_t>(n.tid) - l.tid;
        break;
      case SortKey::kDso:
        c = dso_cmp(l.key_dso, n.key_dso);
        break;
      case SortKey::kSym:
        if (!l.has_sym && !n.has_sym) {
          c = static_cast<std::int64_t>(n.ip - l.ip);
          break;
        }
        if (!r.has_key_[static_cast<int>(SortKey::kDso)]) {
          c = dso_cmp(l.dso_name, n.dso_name);
          if (c) break;
        }
        if (!l.has_sym || !n.has_sym) {
          c = !l.has_sym ? -1 : 1;
          break;
        }
        // perf's inline symbols: by name, one entry where ranges overlap.
        if (l.inlined || n.inlined) {
          int s = l.sym_name.compare(n.sym_name);
          if (s) {
            c = s < 0 ? -1 : 1;
            break;
          }
          if (l.sym_start <= n.sym_end && l.sym_end >= n.sym_start) break;
        }
        if (l.sym_start != n.sym_start)
          c = static_cast<std::int64_t>(n.sym_start - l.sym_start);
        else
          c = static_cast<std::int64_t>(n.sym_end - l.sym_end);
        break;
      case SortKey::kCpu:
        c = static_cast<std::int64_t>(n.cpu) - l.cpu;
        break;
      default:
        break;
    }
    if (c) return c;
  }
  return 0;
}

// compare_output over rows (no event group).
int row_output_cmp(const Report& r, const OrderRow& a, const OrderRow& b) {
  if (r.children_) {
    if (a.acc != b.acc) return a.acc > b.acc ? -1 : 1;
    if (r.use_callchain_ && a.tid == b.tid && a.max_depth != b.max_depth) {
      bool a_first = r.opts_.caller_order ? a.max_depth > b.max_depth : a.max_depth < b.max_depth;
      return a_first ? -1 : 1;
    }
  }
  if (a.period != b.period) return a.period > b.period ? -1 : 1;
  for (SortKey k : r.opts_.sort) {
    int c = 0;
    switch (k) {
      case SortKey::kComm:
        c = cmp_num(a.comm, b.comm);
        break;
      case SortKey::kPid:
        c = cmp_num(a.tid, b.tid);
        break;
      case SortKey::kDso:
        c = cmp_num(a.key_dso, b.key_dso);
        break;
      case SortKey::kSym:
        if (!a.has_sym || !b.has_sym) {
          c = a.has_sym == b.has_sym ? 0 : (!a.has_sym ? 1 : -1);
        } else {
          int s = a.sym_name.compare(b.sym_name);
          c = s < 0 ? -1 : (s > 0 ? 1 : 0);
        }
        break;
      case SortKey::kCpu:
        c = cmp_num(a.cpu, b.cpu);
        break;
      default:
        break;
    }
    if (c) return c;
  }
  return 0;
}

// Reorders rows in place so that rows[k] becomes the old rows[order[k]].
void permute(std::vector<OrderRow>& rows, std::vector<std::uint32_t>& order) {
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    OrderRow tmp = rows[i];
    std::uint32_t j = i;
    while (order[j] != i) {
      std::uint32_t next = order[j];
      rows[j] = rows[next];
      order[j] = j;
      j = next;
    }
    rows[j] = tmp;
    order[j] = j;
  }
}

}  // namespace

void Report::finish() {
  for (Hists& h : hists_) apply_comm_renames(h);
  setup_groups();
  for (Hists& h : hists_) {
    for (const Entry& e : h.entries) {
      h.total_period += e.period;
      if (!e.filtered) h.total_non_filtered_period += e.period;
    }
  }
  for (Hists& h : hists_)
    if (h.members.size() > 1) merge_group(h);
  for (Hists& h : hists_) {
    std::vector<OrderRow> rows = order_rows(h.entries);
    // perf's input tree, then (with a comm key) its collapse tree, then the
    // output sort on top of that order.
    auto go_left = [&](const OrderRow& node, const OrderRow& incoming) {
      return row_perf_cmp(*this, node, incoming) < 0;
    };
    std::vector<std::uint32_t> order = rbtree_order(rows, go_left);
    permute(rows, order);
    if (has_key_[static_cast<int>(SortKey::kComm)]) {
      order = rbtree_order(rows, go_left);
      permute(rows, order);
    }
    if (h.members.size() > 1) {
      std::stable_sort(rows.begin(), rows.end(), [&](const OrderRow& x, const OrderRow& y) {
        return compare_output(*this, h, h.entries[x.idx], h.entries[y.idx]) < 0;
      });
    } else {
      std::stable_sort(rows.begin(), rows.end(), [&](const OrderRow& x, const OrderRow& y) {
        return row_output_cmp(*this, x, y) < 0;
      });
    }
    h.sorted.clear();
    for (const OrderRow& r : rows)
      if (!r.filtered) h.sorted.push_back(r.idx);
  }
}

// ---- builder ----

ReportBuilder::ReportBuilder(const ReportOptions& opts) : impl_(std::make_unique<Report>(opts)) {}
ReportBuilder::~ReportBuilder() = default;

Status ReportBuilder::build(Session& session) {
  impl_->settle(session);
  if (impl_->no_callchains_for_g_)
    return make_error(
        "Selected -g or --branch-history, but no callchain or branch data. Did you call "
        "'perf record' without -g or -b?");
  PK_TRY(session.run(*impl_));
  impl_->finish();
  return ok();
}

void ReportBuilder::print(Session& session, FdWriter& out) { impl_->print(session, out); }

}  // namespace perfkit::analysis
