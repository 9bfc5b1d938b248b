// perfkit report's --stdio output, laid out as perf report --stdio lays it
// out: header comments, column headers sized to the widest value, one line
// per entry, and the call graph under each entry (graph, fractal, flat,
// folded) with perf's margins, pipes and percentages.
#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "report/report_cells.h"
#include "report/report_hierarchy.h"
#include "report/report_impl.h"
#include "report/report_keys.h"
#include "report/report_printer.h"

namespace perfkit::report {

void Printer::compute_widths(const std::vector<std::uint32_t>& entries) {
  // -w gives widths to perf's list of columns in order, elided ones too
  // (not to --hierarchy's, which perf copies from the list before -w).
  const std::vector<int> user =
      r_.opts_.hierarchy ? std::vector<int>{} : parse_column_widths(r_.opts_.column_widths);
  for (std::size_t i = 0; i < r_.columns_.size(); ++i) {
    const SortKey k = r_.columns_[i];
    // (perf's hierarchy keeps the column of a key one filter value names)
    if (r_.elided(k) && !r_.opts_.hierarchy) continue;
    const int u = i < user.size() ? user[i] : 0;
    // perf's hpp__width_fn: its width (-w's, else one event's), at least the
    // width of one event times the group members and the header's.
    const std::size_t header = std::strlen(column_name(k));
    std::size_t w = header;
    if (is_hpp_key(k)) {
      w = std::max(w, hpp_len(k) * std::max<std::size_t>(1, h_.members.size()));
      // (perf's event group mode: --group, or a file's groups shown)
      const bool group_mode = r_.opts_.group == 1 || h_.members.size() > 1;
      if (u)
        w = std::max({header, static_cast<std::size_t>(std::max(u, 0)),
                      group_mode ? hpp_len(k) * std::max<std::size_t>(1, h_.members.size()) : 0});
      cols_.push_back({k, w, u});
    } else if (u > 0) {
      // A key's -w width is its width: header and values cut to it. (A
      // negative one, which perf takes as a dotted line of ~2^32 dots, is
      // taken as none.)
      cols_.push_back({k, static_cast<std::size_t>(u), u});
    } else {
      cols_.push_back({k, w});
    }
  }
  std::size_t comm_len = 0;
  for (std::uint32_t i : entries) {
    const Entry& e = h_.entries[i];
    for (Column& c : cols_) {
      if (c.user) continue;
      switch (c.key) {
        case SortKey::kComm:
          // perf's thread__comm_len: the command the thread ends with.
          c.width = std::max(c.width, e.thread->comm->size());
          break;
        case SortKey::kPid:
          // Also from the thread's last command (perf's HISTC_THREAD).
          if (e.thread->comm->size() > comm_len)
            comm_len = e.thread->comm->size(), c.width = std::max(c.width, comm_len + 8);
          break;
        case SortKey::kDso:
          if (e.dso_name) c.width = std::max(c.width, e.dso_name->size());
          if (e.sym_name.empty() && !e.key.has_sym && r_.opts_.dsos.empty())
            c.width = std::max<std::size_t>(c.width, 16);
          break;
        case SortKey::kSym:
          // (-v: the address and origin before a resolved symbol's name)
          c.width = std::max(c.width, e.sym_name.empty()
                                          ? std::size_t{22}
                                          : e.sym_name.size() + 4 + (r_.opts_.verbose ? 21 : 0));
          break;
        case SortKey::kTime:
          c.width = std::max<std::size_t>(c.width, r_.opts_.nanosecs ? 16 : 12);
          break;
        case SortKey::kAddr:
          c.width = std::max<std::size_t>(c.width, 16 + 2);
          break;
        case SortKey::kCodePageSize:
          c.width = std::max<std::size_t>(c.width, 6);
          break;
        case SortKey::kTransaction:
          if (r_.ext_->at(e.key.ext).transaction)
            c.width = std::max(c.width, transaction_text_len());
          break;
        case SortKey::kCgroup:
          if (std::uint64_t id = r_.ext_->at(e.key.ext).cgroup)
            c.width = std::max(c.width, r_.ext_->cgroup_name(id).size());
          break;
        case SortKey::kParent:
          if (const std::string* p = r_.ext_->at(e.key.ext).parent)
            c.width = std::max(c.width, p->size());
          break;
        case SortKey::kSrcline:
          if (r_.srcline_sized(h_, e))
            c.width = std::max(c.width, r_.ext_->at(e.key.ext).srcline->size());
          break;
        case SortKey::kSrcfile:
          if (r_.srcline_sized(h_, e))
            c.width = std::max(c.width, r_.ext_->at(e.key.ext).srcfile->size());
          break;
        case SortKey::kTrace:
          // perf formats an entry's trace output when a comparison first
          // reaches it; entries it never formatted keep the header's width.
          if (const std::string* t = r_.ext_->at(e.key.ext).trace; t && e.trace_formatted)
            c.width = std::max(c.width, t->size());
          break;
        default:
          break;
      }
    }
    branch_widths(e);
    mem_widths(e);
    // An unresolved symbol widens the DSO column even when sym is not a key.
    if (e.sym_name.empty() && r_.opts_.dsos.empty())
      for (Column& c : cols_)
        if (c.key == SortKey::kDso && !c.user) c.width = std::max<std::size_t>(c.width, 16);
  }
}

// The column's header: perf's, but "Self" for the overhead beside Children.
const char* Printer::column_name(SortKey k) const {
  if (k == SortKey::kOverhead && r_.children_ && !r_.opts_.fields_given) return "Self";
  return header_of(k);
}

void Printer::print_headers() {
  out_.write("# ");
  std::string dots = "# ";
  bool first = true;
  const std::string_view gap = sep_.empty() ? std::string_view("  ") : sep_;
  for (std::size_t i = 0; lead_ && i < lead_->headers.size(); ++i) {
    if (!first) out_.write(gap), dots += "  ";
    first = false;
    out_.write(lead_->headers[i]);
    dots.append(lead_->widths[i], '.');
  }
  for (const Column& c : cols_) {
    if (!first) out_.write(gap), dots += "  ";
    first = false;
    const int w = static_cast<int>(c.width);
    // perf's hpp columns are right-aligned, sort keys left-aligned; perf
    // formats each header in a buffer of kPerfNameBuf bytes (a column as
    // wide as a long C++ name has its header cut there).
    const char* name = column_name(c.key);
    const int cut = static_cast<int>(kPerfNameBuf - 1);
    if (is_hpp_key(c.key))
      outf(out_, "%*.*s", std::min(w, cut), cut, name);
    else
      outf(out_, "%-*.*s", std::min(w, cut), w, name);
    dots.append(c.width, '.');
  }
  out_.write("\n");
  if (!sep_.empty()) return;  // perf prints no dotted line with a separator
  out_.write(dots);
  out_.write("\n#\n");
}

// The columns of the less common keys, as perf's se_snprintf prints them.
int Printer::ext_column(const Entry& e, SortKey k, int w, char* buf, std::size_t cap) const {
  const ExtKey& x = r_.ext_->at(e.key.ext);
  auto text = [&](std::string_view s) {  // "%-.*s": cut at the column width
    auto len = std::min({s.size(), static_cast<std::size_t>(std::max(w, 0)), cap - 1});
    std::memcpy(buf, s.data(), len);
    return static_cast<int>(len);
  };
  switch (k) {
    case SortKey::kSymoff:
      if (!e.key.has_sym)
        return std::snprintf(buf, cap, "[%c] %-#.*" PRIx64, e.level, std::max(w - 4, 0), e.ip);
      return std::snprintf(buf, cap, "[%c] %.*s+0x%" PRIx64, e.level,
                           static_cast<int>(e.sym_name.size()), e.sym_name.data(),
                           x.symoff_ip - e.key.sym_start);
    case SortKey::kSocket:
      return std::snprintf(buf, cap, "%*.*d", w, w - 3, x.socket);
    case SortKey::kParent:
      return std::snprintf(buf, cap, "%-*.*s", w, w, x.parent ? x.parent->c_str() : "[other]");
    case SortKey::kTime: {
      char t[64];
      if (r_.opts_.nanosecs)
        std::snprintf(t, sizeof t, "%" PRIu64 ".%09" PRIu64, x.time / 1'000'000'000,
                      x.time % 1'000'000'000);
      else
        std::snprintf(t, sizeof t, "%" PRIu64 ".%06" PRIu64, x.time / 1'000'000'000,
                      x.time % 1'000'000'000 / 1000);
      return text(t);
    }
    case SortKey::kSrcline:
      return text(*x.srcline);
    case SortKey::kSrcfile:
      return text(*x.srcfile);
    case SortKey::kTrace:
      // perf's "%-.*s" in the header's width: cut, never padded
      return std::snprintf(buf, cap, "%-.*s", w, x.trace ? x.trace->c_str() : "N/A");
    case SortKey::kSymSize:
    case SortKey::kDsoSize:
      if (!(k == SortKey::kSymSize ? x.has_sym : x.has_map))
        return std::snprintf(buf, cap, "%*s", w, "unknown");
      return std::snprintf(buf, cap, "%*d", w,
                           static_cast<int>(k == SortKey::kSymSize ? x.sym_size : x.dso_size));
    case SortKey::kAddr:
      return std::snprintf(buf, cap, "%-#*" PRIx64, w, x.addr);
    case SortKey::kCodePageSize:
      return std::snprintf(buf, cap, "%-*s", w, page_size_name(x.code_page_size).c_str());
    case SortKey::kTransaction:
      return std::snprintf(buf, cap, "%-*s", w, transaction_text(x.transaction).c_str());
    case SortKey::kCgroup: {
      std::string_view name = x.cgroup ? r_.ext_->cgroup_name(x.cgroup) : "N/A";
      return std::snprintf(buf, cap, "%.*s", static_cast<int>(name.size()), name.data());
    }
    case SortKey::kCgroupId:
      return std::snprintf(buf, cap, "%" PRIu64 "/0x%" PRIx64, x.cgroup_dev, x.cgroup_ino);
    default:
      return 0;
  }
}

// perf's branch columns: the source's or target's DSO and symbol (at its
// map-relative address and resolution level), and the cycles ("-": none).
int Printer::branch_cell(const Entry& e, SortKey k, int w, char* buf, std::size_t cap) const {
  const BranchInfo& b = r_.branches_.at(e.branch);
  const BranchEnd& end = k == SortKey::kDsoFrom || k == SortKey::kSymFrom ? b.from : b.to;
  switch (k) {
    case SortKey::kDsoFrom:
    case SortKey::kDsoTo:
      return put_left(buf, cap, end.dso ? std::string_view(*end.dso) : "[unknown]", w);
    case SortKey::kSymFrom:
    case SortKey::kSymTo:
      return sym_cell(buf, cap, end.level, end.sym_name, end.sym_type, false, end.al_addr,
                      end.sym_start_abs, w);
    case SortKey::kAddrFrom:
    case SortKey::kAddrTo: {
      const BranchEnd& at = k == SortKey::kAddrFrom ? b.from : b.to;
      return addr_cell(buf, cap, e.level, at, w);
    }
    case SortKey::kMispredict:
      return std::snprintf(buf, cap, "%-*.*s", w, w, r_.flag_text(k, b.flags));
    case SortKey::kSrclineFrom:
    case SortKey::kSrclineTo: {
      const std::string* s = k == SortKey::kSrclineFrom ? b.srcline_from : b.srcline_to;
      return std::snprintf(buf, cap, "%-*.*s", w, w, s ? s->c_str() : "(null)");
    }
    case SortKey::kInTx:
    case SortKey::kAbort:
      return std::snprintf(buf, cap, "%-*s", w, r_.flag_text(k, b.flags));
    default:
      if (b.cycles == 0) return std::snprintf(buf, cap, "%-*s", w, "-");
      return std::snprintf(buf, cap, "%-*hd", w, static_cast<short>(b.cycles));
  }
}

// perf's hists__calc_col_len for an entry's branch: a resolved end widens
// its symbol and DSO columns by its name, an unresolved one its symbol
// column to an address and its DSO column to 16.
void Printer::branch_widths(const Entry& e) {
  if (e.branch == UINT32_MAX) return;
  const BranchInfo& b = r_.branches_.at(e.branch);
  for (Column& c : cols_) {
    if (!is_branch_key(c.key) || c.user) continue;
    if (c.key == SortKey::kSrclineFrom || c.key == SortKey::kSrclineTo) {
      const std::string* s = c.key == SortKey::kSrclineFrom ? b.srcline_from : b.srcline_to;
      if (s) c.width = std::max(c.width, s->size());
      continue;
    }
    if (c.key == SortKey::kAddrFrom || c.key == SortKey::kAddrTo) {
      // (an unresolved end widens it to an address; a resolved one not)
      const BranchEnd& end = c.key == SortKey::kAddrFrom ? b.from : b.to;
      if (!end.has_sym) c.width = std::max<std::size_t>(c.width, 22);
      continue;
    }
    if (c.key > SortKey::kSymTo) continue;
    const bool from = c.key == SortKey::kDsoFrom || c.key == SortKey::kSymFrom;
    const BranchEnd& end = from ? b.from : b.to;
    const bool dso = c.key == SortKey::kDsoFrom || c.key == SortKey::kDsoTo;
    if (end.has_sym)
      c.width = std::max(c.width, dso ? (end.dso ? end.dso->size() : 0) : end.sym_name.size() + 4);
    else if (dso && r_.opts_.dsos.empty())
      c.width = std::max<std::size_t>(c.width, 16);
    else if (!dso)
      c.width = std::max<std::size_t>(c.width, 22);
  }
}

// perf's hists__calc_col_len for the memory and weight keys.
void Printer::mem_widths(const Entry& e) {
  const MemInfo* mi = e.mem == UINT32_MAX ? nullptr : &r_.mems_.at(e.mem);
  for (Column& c : cols_)
    if (!c.user && (is_mem_key(c.key) || is_weight_key(c.key)))
      mem_width(c.key, mi, !r_.opts_.dsos.empty(), c.width);
}

// Each value of hpp column `k` for entry `e` (the group members' with a
// group), with its percentage of its event's total.
template <class F>
void Printer::hpp_values(const Entry& e, SortKey k, F&& f) const {
  const bool grouped = h_.members.size() > 1;
  std::uint64_t own = hpp_value(e, k);
  std::span<const std::uint64_t> vals(&own, 1);
  if (grouped) vals = hpp_members(h_, e, k);
  for (std::size_t m = 0; m < vals.size(); ++m) {
    const std::uint64_t total = grouped ? member_totals_[m] : total_;
    f(vals[m], total ? 100.0 * static_cast<double>(vals[m]) / static_cast<double>(total) : 0.0);
  }
}

// perf's hpp cell of column `c`: "  ", then per group member " %*.2f%%"
// (a percentage of the member's total) or " %*lu", in the event's width
// (-w's, else perf's) less the space (and the '%'); then, but in the last
// column, spaces to the column's width (hist_entry__snprintf_alignment).
void Printer::hpp_cell(const Entry& e, const Column& c, bool first, bool last) {
  const SortKey k = c.key;
  if (!sep_.empty()) return hpp_cell_separated(e, k, c.width, first, last);
  out_.write("  ");
  const int len = c.user ? c.user : static_cast<int>(hpp_len(k));
  std::size_t printed = 0;
  char buf[64];
  auto put = [&](int n) {
    n = std::clamp(n, 0, static_cast<int>(sizeof buf) - 1);
    out_.write(std::string_view(buf, static_cast<std::size_t>(n)));
    printed += static_cast<std::size_t>(n);
  };
  if (k == SortKey::kOverheadChildren && !r_.children_) {
    put(std::snprintf(buf, sizeof buf, " %*s", len - 1, "N/A"));  // perf's hpp__fmt_acc
  } else {
    hpp_values(e, k, [&](std::uint64_t v, double p) {
      if (is_percent(k))
        printed += put_percent(out_, p, " ", len - 2, r_.opts_.color);
      else
        put(std::snprintf(buf, sizeof buf, " %*" PRIu64, len - 1, v));
    });
  }
  if (!last && printed < c.width) out_.write(std::string(c.width - printed, ' '));
}

// With -t: each value as " %.2f%%" or " %lu" (no width), the cell padded
// after to the column's width (perf's hist_entry__snprintf_alignment).
void Printer::hpp_cell_separated(const Entry& e, SortKey k, std::size_t width, bool first,
                                 bool last) {
  if (!first) out_.write(sep_);
  std::string cell;
  char buf[64];
  if (k == SortKey::kOverheadChildren && !r_.children_) {
    cell = " N/A";
  } else {
    hpp_values(e, k, [&](std::uint64_t v, double p) {
      if (is_percent(k))
        std::snprintf(buf, sizeof buf, " %.2f%%", p);
      else
        std::snprintf(buf, sizeof buf, " %" PRIu64, v);
      cell += buf;
    });
  }
  if (!last && cell.size() < width) cell.append(width - cell.size(), ' ');
  out_.write(cell);
}

// The cell of sort key column `c` for entry `e`, as perf's se_snprintf
// writes it into `buf` (at most cap - 1 bytes); returns its length as
// snprintf does.
int Printer::key_cell(const Entry& e, const Column& c, char* buf, std::size_t cap) const {
  const int w = static_cast<int>(c.width);
  int n = 0;
  switch (c.key) {
    case SortKey::kComm:
      n = put_left(buf, cap, *e.comm, w);
      break;
    case SortKey::kPid: {
      int cw = std::max(7, w) - 8;
      n = std::snprintf(buf, cap, "%7d:%-*.*s", e.tid, cw, cw, e.thread->comm->c_str());
      break;
    }
    case SortKey::kDso:
      n = put_left(buf, cap, e.dso_name ? std::string_view(*e.dso_name) : "[unknown]", w);
      break;
    case SortKey::kCpu:
      n = std::snprintf(buf, cap, "%*.*d", w, w, static_cast<int>(e.cpu));
      break;
    case SortKey::kSymoff:
    case SortKey::kSocket:
    case SortKey::kParent:
    case SortKey::kTime:
    case SortKey::kSrcline:
    case SortKey::kSrcfile:
    case SortKey::kTrace:
    case SortKey::kSymSize:
    case SortKey::kDsoSize:
    case SortKey::kAddr:
    case SortKey::kCodePageSize:
    case SortKey::kTransaction:
    case SortKey::kCgroup:
    case SortKey::kCgroupId:
      n = ext_column(e, c.key, w, buf, cap);
      break;
    case SortKey::kSym: {
      int v = 0;
      if (r_.opts_.verbose)  // perf's "%-#*llx %c " of the address and origin
        v = std::snprintf(buf, cap, "%-#*" PRIx64 " %c ", 18, e.shown_ip,
                          e.dso ? e.dso->origin : '!');
      n = v + sym_cell(buf + v, cap - v, e.level, e.sym_name, e.sym_type, e.inlined, e.ip,
                       e.sym_start_abs, w - v);
      break;
    }
    case SortKey::kDsoFrom:
    case SortKey::kDsoTo:
    case SortKey::kSymFrom:
    case SortKey::kSymTo:
    case SortKey::kCycles:
    case SortKey::kMispredict:
    case SortKey::kInTx:
    case SortKey::kAbort:
    case SortKey::kAddrFrom:
    case SortKey::kAddrTo:
    case SortKey::kSrclineFrom:
    case SortKey::kSrclineTo:
      n = branch_cell(e, c.key, w, buf, cap);
      break;
    case SortKey::kIpcNull:
      n = std::snprintf(buf, cap, "%-*s", w, "-      -");
      break;
    case SortKey::kLocalWeight:
    case SortKey::kWeight:
    case SortKey::kLocalInsLat:
    case SortKey::kInsLat:
    case SortKey::kSymDaddr:
    case SortKey::kSymIaddr:
    case SortKey::kDsoDaddr:
    case SortKey::kLocked:
    case SortKey::kTlb:
    case SortKey::kMem:
    case SortKey::kSnoop:
    case SortKey::kBlocked:
    case SortKey::kPhysDaddr:
    case SortKey::kDcacheline:
    case SortKey::kDataPageSize: {
      const ExtKey& x = r_.ext_->at(e.key.ext);
      n = mem_cell(buf, cap, c.key, e.mem == UINT32_MAX ? nullptr : &r_.mems_.at(e.mem), x.weight,
                   x.ins_lat, e.nr_events, e.level, w);
      break;
    }
    case SortKey::kIpcLbr:
      // perf's annotation IPC, never computed by its stdio report: 0
      n = std::snprintf(buf, cap, "%-*s", w, e.sym_name.empty() ? "-" : "0.00  [  0.0%]");
      break;
    default:
      break;
  }
  return n;
}

void Printer::print_entry(const Entry& e) {
  const std::string_view gap = sep_.empty() ? std::string_view("  ") : sep_;
  for (std::size_t i = 0; lead_ && i < lead_->headers.size(); ++i) {
    lead_cell_.clear();
    lead_->cell(row_, i, lead_cell_);
    if (i || sep_.empty()) out_.write(gap);
    out_.write(lead_cell_);
  }
  for (std::size_t i = 0; i < cols_.size(); ++i) {
    const Column& c = cols_[i];
    bool last = i + 1 == cols_.size();
    if (is_hpp_key(c.key)) {
      hpp_cell(e, c, i == 0 && !lead_, last);
      continue;
    }
    int w = static_cast<int>(c.width);
    // (with a separator, none before the line's first column)
    if (sep_.empty() || i > 0 || lead_) out_.write(gap);
    // perf sizes its line from the columns' widths: a cell is never cut
    // short of its width (long C++ names).
    const std::size_t cap = std::max<std::size_t>(1024, static_cast<std::size_t>(w) + 64);
    if (cell_.size() < cap) cell_.resize(cap);
    char* buf = cell_.data();
    int n = key_cell(e, c, buf, cap);
    n = std::min<int>(n, static_cast<int>(cap) - 1);
    if (!sep_.empty()) std::replace(buf, buf + n, sep_[0], '.');  // perf's repsep_snprintf
    out_.write(std::string_view(buf, static_cast<std::size_t>(n)));
    for (int pad = last ? 0 : w - n; pad > 0; pad -= 32)
      out_.write(std::string_view("                                ", std::min(pad, 32)));
  }
  out_.write("\n");
}

void Printer::print_block() {
  if (!r_.opts_.hierarchy) compute_widths(h_.sorted);
  total_ = r_.opts_.relative ? h_.total_non_filtered_period : h_.total_period;
  std::uint64_t cc_total =
      r_.opts_.relative ? h_.callchain_non_filtered_period : h_.callchain_period;
  min_hits_ = static_cast<std::uint64_t>(static_cast<double>(cc_total) *
                                         (r_.opts_.chain_min_percent / 100.0));
  if (r_.opts_.hierarchy) return print_hierarchy();
  if (!r_.opts_.quiet) print_headers();
  for (std::uint32_t i : h_.sorted) {
    const Entry& e = h_.entries[i];
    if (r_.opts_.percent_limit > 0) {
      std::uint64_t v = r_.children_ ? e.acc_period : e.period;
      double p = total_ ? 100.0 * static_cast<double>(v) / static_cast<double>(total_) : 0.0;
      if (p < r_.opts_.percent_limit) continue;
    }
    print_entry(e);
    if (r_.use_callchain_) print_chain(e);
  }
}

// --hierarchy: perf's hists__fprintf_hierarchy_headers. The overhead
// headers after room for the deepest indent, the keys' headers joined by
// " / ", and dots as wide as the widest level (its indent and width).
void Printer::print_hierarchy_headers(const Hierarchy& t) {
  // (no indent with -t's separator, which replaces the blanks between)
  const std::size_t indent = sep_.empty() ? (t.levels.size() - 1) * 3 : 0;
  const std::string_view gap = sep_.empty() ? std::string_view("  ") : sep_;
  std::string names, dots = "# " + std::string(indent, '.');
  out_.write("# ");
  out_.write(std::string(indent, ' '));
  bool first = true;
  std::size_t widest = 0, depth = 0;
  for (const Column& c : cols_) {
    if (is_hpp_key(c.key)) {
      outf(out_, "%*s", static_cast<int>(c.width), header_of(c.key));
      out_.write(gap);
      if (!first) dots += sep_.empty() ? std::string_view("..") : sep_;
      dots.append(c.width, '.');
      first = false;
      continue;
    }
    std::string_view name = header_of(c.key);
    // (perf's strim: "Transaction" loses its padding)
    name.remove_prefix(std::min(name.find_first_not_of(' '), name.size()));
    name = name.substr(0, name.find_last_not_of(' ') + 1);
    if (!names.empty()) names += " / ";
    names += name;
    widest = std::max(widest, depth++ * 3 + c.width);
  }
  out_.write(names);
  out_.write("\n");
  out_.write(dots);
  out_.write(gap);
  out_.write(std::string(std::max(widest, names.size()), '.'));
  out_.write("\n#\n");
}

// One node's line (its indent, the overhead cells, room for the deepest
// indent, its key's value without leading blanks), then its children, or
// a leaf's call graph.
bool Printer::node_shown(const HierarchyNode& node) const {
  if (node.hidden) return false;
  const double p =
      total_ ? 100.0 * static_cast<double>(node.sum.period) / static_cast<double>(total_) : 0.0;
  return r_.opts_.percent_limit <= 0 || p >= r_.opts_.percent_limit;
}

void Printer::print_node(const Hierarchy& t, std::uint32_t n) {
  const HierarchyNode& node = t.nodes[n];
  const Entry& e = node.sum;
  if (!node_shown(node)) return;
  out_.write(std::string(node.depth * 3, ' '));
  const Column* key = nullptr;
  std::uint32_t depth = 0;
  bool first = true;
  for (const Column& c : cols_) {
    if (is_hpp_key(c.key))
      hpp_cell(e, c, first, false), first = false;
    else if (depth++ == node.depth)
      key = &c;
  }
  if (sep_.empty()) {
    out_.write(std::string((t.levels.size() - 1) * 3, ' '));
    out_.write("  ");
  } else {
    out_.write(sep_);
  }
  const std::size_t cap = std::max<std::size_t>(1024, key->width + 64);
  if (cell_.size() < cap) cell_.resize(cap);
  int len = std::min<int>(key_cell(e, *key, cell_.data(), cap), static_cast<int>(cap) - 1);
  std::string_view cell(cell_.data(), static_cast<std::size_t>(std::max(len, 0)));
  cell.remove_prefix(std::min(cell.find_first_not_of(' '), cell.size()));
  out_.write(cell);
  out_.write("\n");
  if (node.children.empty()) {
    if (r_.use_callchain_) print_chain(h_.entries[node.entry]);
    return;
  }
  bool any = false;
  for (std::uint32_t c : node.children) {
    any = any || node_shown(t.nodes[c]);
    print_node(t, c);
  }
  if (!any && sep_.empty()) {
    // perf's line where the children would be, when the limit left none
    std::size_t at = (node.depth + 1) * 3 + (t.levels.size() - 1) * 3 + 2;
    for (const Column& c : cols_)
      if (is_hpp_key(c.key)) at += 2 + c.width;
    out_.write(std::string(at, ' '));
    outf(out_, "no entry >= %.2f%%\n", r_.opts_.percent_limit);
  }
}

void Printer::print_hierarchy() {
  const Hierarchy t = build_hierarchy(r_, h_);
  // perf sizes every column from each shown node's first entry.
  std::vector<std::uint32_t> shown;
  for (const HierarchyNode& n : t.nodes)
    if (!n.hidden) shown.push_back(n.entry);
  compute_widths(shown);
  if (t.levels.empty()) return;
  if (!r_.opts_.quiet) print_hierarchy_headers(t);
  for (std::uint32_t n : t.roots) print_node(t, n);
}

void Printer::print_lead_rows(const LeadColumns& lead, bool headers) {
  lead_ = &lead;
  if (!lead.field_sep.empty()) sep_ = lead.field_sep;
  compute_widths(h_.sorted);
  if (headers) print_headers();
  for (row_ = 0; row_ < h_.sorted.size(); ++row_) print_entry(h_.entries[h_.sorted[row_]]);
}

void print_rows(Report& r, Hists& h, const LeadColumns& lead, FdWriter& out, bool headers) {
  Printer(r, h, out).print_lead_rows(lead, headers);
}

// A key whose filter names one value (--comm, --dsos, --symbols): perf
// elides its column and names the value in the header instead.
bool Report::single_filter(SortKey k) const {
  auto one = [](const std::vector<std::string>& l) { return l.size() == 1; };
  return (k == SortKey::kComm && one(opts_.comms)) || (k == SortKey::kDso && one(opts_.dsos)) ||
         (k == SortKey::kSym && one(opts_.symbols));
}

bool Report::elided(SortKey k) const {
  if (!single_filter(k)) return false;
  // Eliding every column makes no sense: perf shows them all then.
  for (SortKey o : opts_.sort)
    if (!single_filter(o)) return true;
  return false;
}

// perf names the value as it decides to elide (even when it then shows
// every column again), in the order of the columns.
void Report::print_elided(FdWriter& out) const {
  for (SortKey k : columns_) {
    if (!single_filter(k)) continue;
    if (k == SortKey::kSym) outf(out, "# symbol: %s\n", opts_.symbols[0].c_str());
    if (k == SortKey::kDso) outf(out, "# dso: %s\n", opts_.dsos[0].c_str());
    if (k == SortKey::kComm) outf(out, "# comm: %s\n", opts_.comms[0].c_str());
  }
}

void ReportBuilder::print_elided(FdWriter& out) const { impl_->print_elided(out); }

std::size_t ReportBuilder::entries() const {
  std::size_t n = 0;
  for (const Hists& h : impl_->hists_) n += h.entries.size();
  return n;
}

void Report::print(session::Session& session, FdWriter& out) {
  const bool quiet = opts_.quiet;
  if (!quiet)
    outf(out, "#\n# Total Lost Samples: %" PRIu64 "\n#\n", session.stats().total_lost_samples);
  if (!opts_.skip_empty) hists_.resize(std::max(hists_.size(), session.reader().events().size()));
  for (std::size_t i = 0; i < hists_.size(); ++i) {
    Hists& h = hists_[i];
    if (h.group_member) continue;
    if (!h.nr_samples && opts_.skip_empty) continue;
    std::uint64_t nr = 0, events = 0;
    std::vector<std::uint64_t> totals;
    std::vector<std::size_t> members = h.members;
    if (members.empty()) members.push_back(i);
    for (std::size_t m : members) {
      const Hists& mh = hists_[m];
      nr += opts_.relative ? mh.nr_non_filtered_samples : mh.nr_samples;
      std::uint64_t t = opts_.relative ? mh.total_non_filtered_period : mh.total_period;
      events += t;
      totals.push_back(t);
    }
    char unit = ' ';
    for (char u : {'K', 'M', 'G'})
      if (nr > 1000) nr /= 1000, unit = u;
    std::string name = h.members.size() > 1 ? h.group_name : event_label(session, i);
    if (!quiet) {
      outf(out, "# Samples: %" PRIu64 "%c of event%s '%s'", nr, unit, h.group_leader ? "s" : "",
           name.c_str());
      if (!opts_.time_str.empty()) outf(out, " (time slices: %s)", opts_.time_str.c_str());
      out.write("\n");
      if (mem_mode_)
        outf(out, "# Total weight : %" PRIu64 "\n# Sort order   : %s\n", events,
             opts_.sort_text.empty() ? kDefaultMemSortText : opts_.sort_text.c_str());
      else
        outf(out, "# Event count (approx.): %" PRIu64 "\n", events);
      if (opts_.socket_filter >= 0) outf(out, "# Processor Socket: %d\n", opts_.socket_filter);
      out.write("#\n");
    }
    if (total_cycles_) {
      print_blocks(h, out);
      continue;
    }
    Printer p(*this, h, out);
    p.member_totals_ = totals;
    p.print_block();
    out.write("\n\n");
  }
  if (!quiet) outf(out, "#\n# (%s)\n#\n", opts_.tip.c_str());
  if (opts_.show_threads) thread_counts_.print(out, opts_.raw_thread_counts);
  if (branch_mode_) out.write(branch_type_statistics(brtype_));
}

const char* Report::flag_text(SortKey k, std::uint8_t flags) const {
  switch (k) {
    case SortKey::kMispredict:
      if (flags & 0x2)
        mispredict_out_ = "N";
      else if (flags & 0x1)
        mispredict_out_ = "Y";
      return mispredict_out_;
    case SortKey::kInTx:
      return (flags & 0x4) ? "T" : ".";
    default:
      return (flags & 0x8) ? "A" : ".";
  }
}

// --total-cycles: perf's block table for the entries of `h` (its headers
// whatever -q says).
void Report::print_blocks(Hists& h, FdWriter& out) {
  outf(out, "# %15s  %14s  %11s  %10s  %70s  %20s\n", "Sampled Cycles%", "Sampled Cycles",
       "Avg Cycles%", "Avg Cycles", "[Program Block Range]", "Shared Object");
  out.write("# ");
  for (int w : {15, 14, 11, 10, 70})
    out.write(std::string(static_cast<std::size_t>(w), '.') + "  ");
  out.write(std::string(20, '.') + "\n#\n");
  if (opts_.percent_limit > 0) return;  // (perf's blocks have no period: none reaches it)
  std::vector<const BranchEnd*> ends;
  for (std::uint32_t i : h.sorted)
    if (h.entries[i].branch != UINT32_MAX) ends.push_back(&branches_.at(h.entries[i].branch).to);
  blocks_.print(ends, *ext_, out);
}

// A tracepoint event the file does not name (a pipe without event
// descriptions) takes "sys:name" from the tracing data's format, as perf's
// tracing-data handler names it.
std::string Report::event_label(session::Session& session, std::size_t i) {
  std::string name = session.event_name(i);
  const auto& d = session.reader().events()[i];
  if (d.attr.type != 2 || !(d.name.empty() || d.name == "unknown tracepoint")) return name;
  if (!tp_names_tried_) {
    tp_names_tried_ = true;
    tp_names_ = session::session_tracepoint_formatter(session, [](const std::string&) {});
  }
  if (tp_names_)
    if (std::string tp = tp_names_->event_name(d.attr.config); !tp.empty()) name = tp;
  return name;
}

}  // namespace perfkit::report
