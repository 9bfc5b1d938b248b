// perfkit report's output order: perf's input and collapse trees (Linux
// rbtrees, simulated because perf's entry comparison is not a consistent
// order), then perf's output sort, over compact rows of the entries.
#include <algorithm>
#include <unordered_map>

#include "base/rbtree.h"
#include "report/report_impl.h"
#include "report/report_keys.h"

namespace perfkit::report {
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

int cmp_text(const std::string* a, const std::string* b) {
  if (a == b) return 0;
  int c = a->compare(*b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// perf's se_cmp of the weight keys (left - right: the weights' local and
// global keys compare the sample's value).
std::int64_t weight_se_cmp(SortKey k, const ExtKey& l, const ExtKey& r) {
  if (k == SortKey::kLocalWeight || k == SortKey::kWeight)
    return static_cast<std::int64_t>(l.weight - r.weight);
  return static_cast<std::int64_t>(l.ins_lat) - r.ins_lat;
}

// perf's se_cmp of the other sample keys (symbol_size, dso_size, addr,
// code_page_size, transaction, cgroup, cgroup_id), left and right as perf's.
std::int64_t sample_key_se_cmp(SortKey k, const ExtKey& l, const ExtKey& r) {
  auto three_way = [](std::uint64_t a, std::uint64_t b) -> std::int64_t {
    return a < b ? -1 : a == b ? 0 : 1;
  };
  switch (k) {
    case SortKey::kSymSize:  // (perf compares right's size with left's)
      return three_way(r.has_sym ? r.sym_size : 0, l.has_sym ? l.sym_size : 0);
    case SortKey::kDsoSize:
      return three_way(r.has_map ? r.dso_size : 0, l.has_map ? l.dso_size : 0);
    case SortKey::kAddr:
      return static_cast<std::int64_t>(r.addr - l.addr);
    case SortKey::kCodePageSize:
      return static_cast<std::int64_t>(r.code_page_size - l.code_page_size);
    case SortKey::kTransaction:
      return static_cast<std::int64_t>(l.transaction - r.transaction);
    case SortKey::kCgroup:
      return static_cast<std::int64_t>(r.cgroup - l.cgroup);
    case SortKey::kCgroupId:  // (perf swaps left and right twice)
      if (l.cgroup_dev != r.cgroup_dev)
        return static_cast<std::int64_t>(l.cgroup_dev - r.cgroup_dev);
      return static_cast<std::int64_t>(l.cgroup_ino - r.cgroup_ino);
    default:
      return 0;
  }
}

bool is_sample_key(SortKey k) { return k >= SortKey::kSymSize && k <= SortKey::kCgroupId; }

// perf's output order of the less common keys (se_sort, else se_cmp, with
// perf's signs): ascending values, "[other]" parents last, symoff's
// offsets descending. 0 for the keys handled elsewhere.
int ext_output_cmp(const Report& r, SortKey k, std::uint32_t xa, std::uint32_t xb) {
  if (xa == xb) return 0;
  const ExtKey& a = r.ext_->at(xa);
  const ExtKey& b = r.ext_->at(xb);
  switch (k) {
    case SortKey::kTime:
      return cmp_num(a.time, b.time);
    case SortKey::kSocket:
      return cmp_num(a.socket, b.socket);
    case SortKey::kParent:
      if (!a.parent || !b.parent) return a.parent == b.parent ? 0 : (!a.parent ? 1 : -1);
      return cmp_text(a.parent, b.parent);
    case SortKey::kSrcline:
      return cmp_text(a.srcline, b.srcline);
    case SortKey::kSrcfile:
      return cmp_text(a.srcfile, b.srcfile);
    case SortKey::kTrace:
      // perf compares no trace output of other events
      return a.trace && b.trace ? cmp_text(a.trace, b.trace) : 0;
    case SortKey::kSymoff:
      return cmp_num(b.symoff_ip, a.symoff_ip);
    default: {
      // no se_sort: first where perf's se_cmp(a, b) is positive
      std::int64_t c = 0;
      if (is_branch_key(k))
        c = branch_se_cmp(k, r.branches_.at(a.branch), r.branches_.at(b.branch));
      else if (is_weight_key(k))
        c = weight_se_cmp(k, a, b);
      else if (is_sample_key(k))
        c = sample_key_se_cmp(k, a, b);
      else if (is_mem_key(k))
        c = mem_se_cmp(k, r.mems_.at(a.mem), r.mems_.at(b.mem));
      return c > 0 ? -1 : (c < 0 ? 1 : 0);
    }
  }
}

// perf's output order of its IPC column with branch stacks (ipc_lbr, whose
// se_cmp is sym's sort__sym_cmp): unresolved entries by address first,
// then by DSO name (`dso`: the DSO comparison, no DSO last) when there is
// no DSO key, resolved symbols by address, unresolved last.
template <class Row>
int ipc_output_cmp(const Report& r, const Row& a, const Row& b, int dso) {
  if (!a.has_sym && !b.has_sym) return cmp_num(a.ip, b.ip);
  if (!r.has_key_[static_cast<int>(SortKey::kDso)] && dso) return dso;
  if (!a.has_sym || !b.has_sym) return !a.has_sym ? 1 : -1;
  if (a.sym_start != b.sym_start) return cmp_num(a.sym_start, b.sym_start);
  return cmp_num(a.sym_end, b.sym_end);
}

// The symbol part of perf's output comparison (sort__sym_sort): by name,
// entries without a symbol last.
int sym_output_cmp(bool a_sym, bool b_sym, std::string_view a, std::string_view b) {
  if (!a_sym || !b_sym) return a_sym == b_sym ? 0 : (!a_sym ? 1 : -1);
  int s = a.compare(b);
  return s < 0 ? -1 : (s > 0 ? 1 : 0);
}

}  // namespace

namespace {

// The in-order sequence of a Linux rbtree built by inserting `order` one by
// one, going left when go_left_of(node entry, new entry).
// Nodes carry their links (left, right, parent, red) so that a descent
// reads one node per level.
// `inserted(z)` runs after node z is linked.
template <class Node, class GoLeft, class Inserted>
std::vector<std::uint32_t> rbtree_order(std::vector<Node>& nodes, GoLeft go_left_of,
                                        Inserted inserted) {
  std::uint32_t root = base::kRbNil;
  for (std::uint32_t z = 0; z < nodes.size(); ++z) {
    base::rb_insert(nodes, root, z, go_left_of);
    inserted(z);
  }
  std::vector<std::uint32_t> out;
  out.reserve(nodes.size());
  base::rb_in_order(nodes, root, [&out](std::uint32_t i) { out.push_back(i); });
  return out;
}

template <class Node, class GoLeft>
std::vector<std::uint32_t> rbtree_order(std::vector<Node>& nodes, GoLeft go_left_of) {
  return rbtree_order(nodes, go_left_of, [](std::uint32_t) {});
}

}  // namespace

// perf's Children tie-break: within one thread, by callchain depth (callers
// first); none across threads.
int depth_cmp(const Report& r, std::int32_t ta, std::int32_t tb, std::uint32_t da,
              std::uint32_t db) {
  if (!r.use_callchain_ || ta != tb || da == db) return 0;
  bool a_first = r.opts_.caller_order ? da > db : da < db;
  return a_first ? -1 : 1;
}

std::uint64_t hpp_value(const Entry& e, SortKey k) {
  switch (k) {
    case SortKey::kOverhead:
    case SortKey::kPeriod:
      return e.period;
    case SortKey::kOverheadChildren:
      return e.acc_period;
    case SortKey::kSample:
      return e.nr_events;
    case SortKey::kOverheadSys:
    case SortKey::kOverheadUs:
    case SortKey::kOverheadGuestSys:
    case SortKey::kOverheadGuestUs:
      return e.mode_period[static_cast<int>(k) - static_cast<int>(SortKey::kOverheadSys)];
    default:
      return 0;
  }
}

std::span<const std::uint64_t> hpp_members(const Hists& h, const Entry& e, SortKey k) {
  switch (k) {
    case SortKey::kOverheadChildren:
      return h.group_acc(e);
    case SortKey::kSample:
      return h.group_events(e);
    case SortKey::kOverheadSys:
    case SortKey::kOverheadUs:
    case SortKey::kOverheadGuestSys:
    case SortKey::kOverheadGuestUs:
      return h.group_mode(e, static_cast<int>(k) - static_cast<int>(SortKey::kOverheadSys));
    default:
      return h.group_period(e);
  }
}

// perf's output sort of hpp column `k` (__hpp__sort): the larger value
// first, then each group member's; accumulated periods then put callers
// above callees within a thread.
static int hpp_output_cmp(const Report& r, const Hists& h, const Entry& a, const Entry& b,
                          SortKey k) {
  if (k == SortKey::kOverheadChildren && !r.children_) return 0;
  const std::uint64_t va = hpp_value(a, k), vb = hpp_value(b, k);
  if (r.opts_.group_sort_idx && h.members.size() > 1) {
    // perf 6.1's __hpp__group_sort_idx: that member, then the other
    // members (the leader's value not at all); out of range, the leader's
    // alone
    const auto idx = static_cast<std::size_t>(r.opts_.group_sort_idx);
    if (idx < 1 || idx >= h.members.size()) return va == vb ? 0 : va > vb ? -1 : 1;
    auto ga = hpp_members(h, a, k), gb = hpp_members(h, b, k);
    if (ga[idx] != gb[idx]) return ga[idx] > gb[idx] ? -1 : 1;
    for (std::size_t m = 1; m < h.members.size(); ++m)
      if (m != idx && ga[m] != gb[m]) return ga[m] > gb[m] ? -1 : 1;
    return 0;
  }
  if (va != vb) return va > vb ? -1 : 1;
  if (h.members.size() > 1) {
    auto ga = hpp_members(h, a, k), gb = hpp_members(h, b, k);
    for (std::size_t m = 1; m < h.members.size(); ++m)
      if (ga[m] != gb[m]) return ga[m] > gb[m] ? -1 : 1;
  }
  if (k == SortKey::kOverheadChildren) return depth_cmp(r, a.tid, b.tid, a.max_depth, b.max_depth);
  return 0;
}

int compare_output(const Report& r, const Hists& h, const Entry& a, const Entry& b) {
  for (SortKey k : r.output_sort_) {
    if (!is_hpp_key(k)) {
      if (int c = compare_keys(r, std::span<const SortKey>(&k, 1), a, b)) return c;
      continue;
    }
    if (int hc = hpp_output_cmp(r, h, a, b, k)) return hc;
  }
  return 0;
}

int compare_keys(const Report& r, std::span<const SortKey> keys, const Entry& a, const Entry& b) {
  for (SortKey k : keys) {
    int c = 0;
    if (is_hpp_key(k)) continue;
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
        c = sym_output_cmp(a.key.has_sym, b.key.has_sym, a.sym_name, b.sym_name);
        break;
      case SortKey::kSymoff:
        c = sym_output_cmp(a.key.has_sym, b.key.has_sym, a.sym_name, b.sym_name);
        if (!c) c = ext_output_cmp(r, k, a.key.ext, b.key.ext);
        break;
      case SortKey::kCpu:
        c = cmp_num(a.cpu, b.cpu);
        break;
      case SortKey::kIpcLbr:
      case SortKey::kIpcNull: {
        struct View {
          bool has_sym;
          std::uint64_t ip, sym_start, sym_end;
        };
        View va{a.key.has_sym, a.ip, a.key.sym_start, a.key.sym_end};
        View vb{b.key.has_sym, b.ip, b.key.sym_start, b.key.sym_end};
        c = ipc_output_cmp(r, va, vb, cmp_str(a.dso_name, b.dso_name));
        break;
      }
      default:
        c = ext_output_cmp(r, k, a.key.ext, b.key.ext);
        break;
    }
    if (c) return c;
  }
  return 0;
}

namespace {

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

// What perf's entry comparison reads of an entry, with interned names as
// ranks in string order, and the tree links: one cache line, so that the
// tree walks of 100k+ entries read one line per level, not the entries.
struct alignas(64) TreeRow {
  std::uint32_t left = 0, right = 0, parent = 0;  // rbtree_order's links
  std::uint32_t comm = 0, key_dso = 0, dso_name = 0, cpu = 0, idx = 0;
  std::int32_t tid = 0;
  bool has_sym = false, inlined = false, red = false;
  std::uint64_t ip = 0, sym_start = 0, sym_end = 0;
};
static_assert(sizeof(TreeRow) == 64);

// What the output sort reads (no event group).
struct SortRow {
  std::uint32_t left = 0, right = 0, parent = 0;  // rbtree_order's links
  bool red = false;
  std::uint64_t acc = 0, period = 0;
  const Entry* entry = nullptr;  // the other hpp values
  std::string_view sym_name;
  std::uint32_t max_depth = 0, comm = 0, key_dso = 0, cpu = 0, idx = 0, ext = 0;
  std::uint32_t dso_name = 0;
  std::int32_t tid = 0;
  bool has_sym = false;
  std::uint64_t ip = 0, sym_start = 0, sym_end = 0;  // the IPC column's order
};

struct Ranks {
  NameRanks comms, dsos;
  explicit Ranks(const EntryStore& entries) {
    for (const Entry& e : entries) {
      comms.add(e.comm);
      dsos.add(e.key.dso);
      dsos.add(e.dso_name);
    }
    comms.build();
    dsos.build();
  }
};

// The fields of perf's entry comparison other than names (TreeRow, LiveRow).
template <class Row>
void fill_row(Row& r, const Entry& e, std::uint32_t idx) {
  r.cpu = e.cpu;
  r.idx = idx;
  r.tid = e.tid;
  r.has_sym = e.key.has_sym;
  r.inlined = e.inlined;
  r.ip = e.ip;
  r.sym_start = e.key.sym_start;
  r.sym_end = e.key.sym_end;
}

std::vector<TreeRow> tree_rows(const EntryStore& entries, const Ranks& ranks) {
  std::vector<TreeRow> rows(entries.size());
  std::uint32_t i = 0;
  for (const Entry& e : entries) {
    TreeRow& r = rows[i];
    fill_row(r, e, i++);
    r.comm = ranks.comms.rank(e.comm);
    r.key_dso = ranks.dsos.rank(e.key.dso);
    r.dso_name = ranks.dsos.rank(e.dso_name);
  }
  return rows;
}

SortRow sort_row(const Entry& e, std::uint32_t idx, const Ranks& ranks) {
  SortRow r;
  r.acc = e.acc_period;
  r.period = e.period;
  r.entry = &e;
  r.sym_name = e.sym_name;
  r.max_depth = e.max_depth;
  r.comm = ranks.comms.rank(e.comm);
  r.key_dso = ranks.dsos.rank(e.key.dso);
  r.cpu = e.cpu;
  r.idx = idx;
  r.tid = e.tid;
  r.has_sym = e.key.has_sym;
  r.ext = e.key.ext;
  r.dso_name = ranks.dsos.rank(e.dso_name);
  r.ip = e.ip;
  r.sym_start = e.key.sym_start;
  r.sym_end = e.key.sym_end;
  return r;
}

// An entry index with rbtree_order's links.
struct IndexNode {
  std::uint32_t left = 0, right = 0, parent = 0, idx = 0;
  bool red = false;
};

template <class T>
std::int64_t sign_of(T n, T l) {
  return n < l ? -1 : (n > l ? 1 : 0);
}

std::int64_t text_sign(const std::string* n, const std::string* l) {
  if (n == l) return 0;
  int c = n->compare(*l);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// perf's se_cmp(left = existing `xl`, right = incoming `xn`) of the less
// common keys.
std::int64_t ext_perf_cmp(const Report& r, SortKey k, std::uint32_t xl, std::uint32_t xn) {
  if (xl == xn) return 0;
  const ExtKey& l = r.ext_->at(xl);
  const ExtKey& n = r.ext_->at(xn);
  switch (k) {
    case SortKey::kTime:
      return static_cast<std::int64_t>(n.time - l.time);
    case SortKey::kSocket:
      return static_cast<std::int64_t>(n.socket) - l.socket;
    case SortKey::kParent:
      if (!l.parent || !n.parent) return l.parent == n.parent ? 0 : (!l.parent ? -1 : 1);
      return text_sign(n.parent, l.parent);
    case SortKey::kSrcline:
      return text_sign(n.srcline, l.srcline);
    case SortKey::kSrcfile:
      return text_sign(n.srcfile, l.srcfile);
    case SortKey::kTrace:
      return l.trace && n.trace ? text_sign(n.trace, l.trace) : 0;
    default:
      if (is_branch_key(k))
        return branch_se_cmp(k, r.branches_.at(l.branch), r.branches_.at(n.branch));
      if (is_weight_key(k)) return weight_se_cmp(k, l, n);
      if (is_sample_key(k)) return sample_key_se_cmp(k, l, n);
      if (is_mem_key(k)) return mem_se_cmp(k, r.mems_.at(l.mem), r.mems_.at(n.mem));
      return 0;
  }
}

// Marks entries `a` and `b` (by index) as having their trace output
// formatted, as perf's trace comparison does for tracepoint entries.
void mark_traced(const Report& r, std::uint32_t xa, std::uint32_t xb, std::uint32_t a,
                 std::uint32_t b, std::vector<char>& traced) {
  if (r.ext_->at(xa).trace && r.ext_->at(xb).trace) traced[a] = traced[b] = 1;
}

// perf's hist_entry__cmp(existing, incoming) with perf's signs: the incoming
// entry goes left of `l` when this is negative. Not a consistent order when
// resolved and unresolved symbols mix (DSO first, then null last), which is
// why the tree perf builds is simulated rather than sorted. Name ranks order
// as their strings do; inline symbols' names are read from the entries.
// `traced` (by entry) marks the entries whose trace output the comparison
// formats: both sides, when it reaches a trace key of tracepoint entries.
// Rows name their comm and DSOs by rank (TreeRow) or by string (LiveRow).
std::int64_t name_sign(std::uint32_t n, std::uint32_t l) { return sign_of(n, l); }
std::int64_t name_sign(const std::string* n, const std::string* l) { return text_sign(n, l); }
// perf's DSO comparison: no DSO first.
std::int64_t dso_cmp(std::uint32_t ld, std::uint32_t nd) {
  if (ld == nd) return 0;
  if (ld == kNoName || nd == kNoName) return ld == kNoName ? -1 : 1;
  return sign_of(nd, ld);
}
std::int64_t dso_cmp(const std::string* ld, const std::string* nd) {
  if (ld == nd) return 0;
  if (!ld || !nd) return !ld ? -1 : 1;
  return text_sign(nd, ld);
}

template <class Row>
std::int64_t row_perf_cmp(const Report& r, const EntryStore& entries, const Row& l, const Row& n,
                          std::vector<char>* traced) {
  for (SortKey k : r.opts_.sort) {
    std::int64_t c = 0;
    switch (k) {
      case SortKey::kComm:
        c = name_sign(n.comm, l.comm);
        break;
      case SortKey::kPid:
        c = static_cast<std::int64_t>(n.tid) - l.tid;
        break;
      case SortKey::kDso:
        c = dso_cmp(l.key_dso, n.key_dso);
        break;
      case SortKey::kSym:
      case SortKey::kSymoff:
      case SortKey::kIpcLbr:
      case SortKey::kIpcNull:  // perf compares it as sym
        if (!l.has_sym && !n.has_sym) {
          c = static_cast<std::int64_t>(n.ip - l.ip);
          if (!c && k == SortKey::kSymoff)
            c = static_cast<std::int64_t>(r.ext_->at(entries[l.idx].key.ext).symoff_ip -
                                          r.ext_->at(entries[n.idx].key.ext).symoff_ip);
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
          const std::string_view ln = entries[l.idx].sym_name, nn = entries[n.idx].sym_name;
          // (interned names: the same text at the same place)
          int s = ln.data() == nn.data() && ln.size() == nn.size() ? 0 : ln.compare(nn);
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
        // symoff: then perf's left->ip - right->ip.
        if (!c && k == SortKey::kSymoff)
          c = static_cast<std::int64_t>(r.ext_->at(entries[l.idx].key.ext).symoff_ip -
                                        r.ext_->at(entries[n.idx].key.ext).symoff_ip);
        break;
      case SortKey::kCpu:
        c = static_cast<std::int64_t>(n.cpu) - l.cpu;
        break;
      default:
        if (k == SortKey::kTrace && traced)
          mark_traced(r, entries[l.idx].key.ext, entries[n.idx].key.ext, l.idx, n.idx, *traced);
        c = ext_perf_cmp(r, k, entries[l.idx].key.ext, entries[n.idx].key.ext);
        break;
    }
    if (c) return c;
  }
  return 0;
}

LiveRow live_row(const Entry& e, std::uint32_t idx) {
  LiveRow r;
  fill_row(r, e, idx);
  r.comm = e.comm;
  r.key_dso = e.key.dso;
  r.dso_name = e.dso_name;
  return r;
}

}  // namespace

std::uint32_t live_find_or_link(const Report& r, Hists& h, std::uint32_t idx) {
  auto cmp = [&](const LiveRow& node, const LiveRow& in) {
    return row_perf_cmp(r, h.entries, node, in, nullptr);
  };
  if (!h.live_on) {
    // Until now perf's comparison was a consistent order: every entry is
    // where its tree holds it.
    h.live_on = true;
    h.live.clear();
    h.live_root = base::kRbNil;
    for (std::uint32_t i = 0; i < idx; ++i) {
      h.live.push_back(live_row(h.entries[i], i));
      base::rb_insert(h.live, h.live_root, i,
                      [&](const LiveRow& node, const LiveRow& in) { return cmp(node, in) < 0; });
    }
    h.live_found.assign(idx, 0);
    h.live_seen.assign(idx, UINT32_MAX);
    ++h.live_rotations;
  }
  h.live.push_back(live_row(h.entries[idx], idx));
  bool rotated = false;
  std::uint32_t found = base::rb_find_or_link(
      h.live, h.live_root, idx, [&](const LiveRow& node) { return cmp(node, h.live[idx]); },
      &rotated);
  if (found != idx) h.live.pop_back();
  if (rotated) ++h.live_rotations;
  return found;
}

bool perf_same_entry(const Report& r, const Hists& h, std::uint32_t a, std::uint32_t b) {
  return row_perf_cmp(r, h.entries, live_row(h.entries[a], a), live_row(h.entries[b], b),
                      nullptr) == 0;
}

namespace {

// compare_output over rows (no event group).
int row_output_cmp(const Report& r, const SortRow& a, const SortRow& b, std::vector<char>& traced) {
  for (SortKey k : r.output_sort_) {
    int c = 0;
    if (is_hpp_key(k)) {
      if (k == SortKey::kOverheadChildren && !r.children_) continue;
      std::uint64_t va = a.acc, vb = b.acc;
      if (k == SortKey::kOverhead || k == SortKey::kPeriod) {
        va = a.period;
        vb = b.period;
      } else if (k != SortKey::kOverheadChildren) {
        va = hpp_value(*a.entry, k);
        vb = hpp_value(*b.entry, k);
      }
      if (va != vb) return va > vb ? -1 : 1;
      if (k == SortKey::kOverheadChildren)
        if (int d = depth_cmp(r, a.tid, b.tid, a.max_depth, b.max_depth)) return d;
      continue;
    }
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
        c = sym_output_cmp(a.has_sym, b.has_sym, a.sym_name, b.sym_name);
        break;
      case SortKey::kSymoff:
        c = sym_output_cmp(a.has_sym, b.has_sym, a.sym_name, b.sym_name);
        if (!c) c = ext_output_cmp(r, k, a.ext, b.ext);
        break;
      case SortKey::kCpu:
        c = cmp_num(a.cpu, b.cpu);
        break;
      case SortKey::kIpcLbr:
      case SortKey::kIpcNull:
        c = ipc_output_cmp(r, a, b, cmp_num(a.dso_name, b.dso_name));
        break;
      default:
        if (k == SortKey::kTrace) mark_traced(r, a.ext, b.ext, a.idx, b.idx, traced);
        c = ext_output_cmp(r, k, a.ext, b.ext);
        break;
    }
    if (c) return c;
  }
  return 0;
}

// Reorders rows in place so that rows[k] becomes the old rows[order[k]].
template <class Row>
void permute(std::vector<Row>& rows, std::vector<std::uint32_t>& order) {
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    Row tmp = rows[i];
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

// perf's input tree, then (with a comm key) its collapse tree: the entry
// indexes in the order the last tree holds them. Where the input tree kept
// two entries perf's collapse finds equal, the later one is merged into
// the earlier: `merges` gets (kept, merged) and only the kept is in order.
std::vector<std::uint32_t> tree_order(
    const Report& r, const Hists& h, const Ranks& ranks, std::vector<char>& traced,
    std::vector<std::pair<std::uint32_t, std::uint32_t>>& merges) {
  std::vector<TreeRow> rows = tree_rows(h.entries, ranks);
  auto cmp = [&](const TreeRow& node, const TreeRow& incoming) {
    return row_perf_cmp(r, h.entries, node, incoming, &traced);
  };
  auto go_left = [&](const TreeRow& node, const TreeRow& in) { return cmp(node, in) < 0; };
  std::vector<std::uint32_t> order = rbtree_order(rows, go_left);
  if (r.has_key_[static_cast<int>(SortKey::kComm)]) {
    permute(rows, order);
    if (h.live_on) {
      std::uint32_t root = base::kRbNil;
      for (std::uint32_t z = 0; z < rows.size(); ++z) {
        std::uint32_t f = base::rb_find_or_link(
            rows, root, z, [&](const TreeRow& node) { return cmp(node, rows[z]); });
        if (f != z) merges.emplace_back(rows[f].idx, rows[z].idx);
      }
      order.clear();
      base::rb_in_order(rows, root, [&order](std::uint32_t i) { order.push_back(i); });
    } else {
      order = rbtree_order(rows, go_left);
    }
  }
  for (std::uint32_t& o : order) o = rows[o].idx;
  return order;
}

// perf's output sort over `order` (the last input tree's order). With
// children and call graphs its comparison is not a consistent order
// (callchain depth only between entries of one thread), and with a trace
// key what it compares decides which entries widen the column: then its
// output tree is simulated, else a stable sort gives the same order.
void output_order(const Report& r, Hists& h, std::vector<std::uint32_t>& order, const Ranks& ranks,
                  std::vector<char>& traced) {
  const bool simulate = (r.acc_sorted_ && r.use_callchain_) ||
                        r.has_key_[static_cast<int>(SortKey::kTrace)] || r.flag_keys();
  // perf sizes the columns from each entry as it joins the output tree.
  auto joined = [&](std::uint32_t idx) { h.entries[idx].trace_formatted = traced[idx] != 0; };
  if (h.members.size() > 1) {
    auto cmp = [&](std::uint32_t x, std::uint32_t y) {
      return compare_output(r, h, h.entries[x], h.entries[y]);
    };
    if (simulate) {
      std::vector<IndexNode> nodes(order.size());
      for (std::size_t i = 0; i < order.size(); ++i) nodes[i].idx = order[i];
      std::vector<std::uint32_t> in = rbtree_order(
          nodes,
          [&](const IndexNode& node, const IndexNode& n) { return cmp(n.idx, node.idx) < 0; },
          [&](std::uint32_t z) { joined(nodes[z].idx); });
      for (std::size_t i = 0; i < in.size(); ++i) order[i] = nodes[in[i]].idx;
    } else {
      std::stable_sort(order.begin(), order.end(),
                       [&](std::uint32_t x, std::uint32_t y) { return cmp(x, y) < 0; });
    }
    return;
  }
  std::vector<SortRow> rows(order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    rows[i] = sort_row(h.entries[order[i]], order[i], ranks);
  if (simulate) {
    std::vector<std::uint32_t> in = rbtree_order(
        rows,
        [&](const SortRow& node, const SortRow& n) {
          return row_output_cmp(r, n, node, traced) < 0;
        },
        [&](std::uint32_t z) { joined(rows[z].idx); });
    for (std::size_t i = 0; i < in.size(); ++i) order[i] = rows[in[i]].idx;
  } else {
    std::stable_sort(rows.begin(), rows.end(), [&](const SortRow& x, const SortRow& y) {
      return row_output_cmp(r, x, y, traced) < 0;
    });
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = rows[i].idx;
  }
}

}  // namespace

void Report::finish() {
  // The call graphs grown meanwhile on their own thread: the entries'
  // roots become their nodes.
  if (arena_.deferred()) {
    arena_.finish_deferred();
    for (Hists& h : hists_)
      for (Entry& e : h.entries)
        if (e.chain != UINT32_MAX) e.chain = arena_.root_node(e.chain);
  }
  // perf's output sort skips the keys whose column is elided.
  output_sort_.clear();
  for (SortKey k : sort_list_)
    if (!elided(k)) output_sort_.push_back(k);
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
    const Ranks ranks(h.entries);
    // Entries found again on insertion were compared whole; with children
    // each sample's entries are compared with one another.
    std::vector<char> traced(h.entries.size(), 0);
    for (std::size_t i = 0; i < h.entries.size(); ++i)
      traced[i] = children_ || h.entries[i].nr_events >= 2;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> merges;
    std::vector<std::uint32_t> order = tree_order(*this, h, ranks, traced, merges);
    for (auto [kept, merged] : merges) collapse_merge(h, kept, merged);
    h.collapsed = order;
    output_order(*this, h, order, ranks, traced);
    h.sorted.clear();
    for (std::uint32_t i : order)
      if (!h.entries[i].filtered) h.sorted.push_back(i);
  }
  arena_.settle();
}

}  // namespace perfkit::report
