// perfkit diff (diff.h): each file counted by a Report, the baseline's
// entries paired with the others' as perf's hists__match and hists__link
// pair them, ordered by perf diff's sort list and printed with perf diff's
// columns before the sort keys'.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <thread>
#include <unordered_map>

#include "report/diff.h"
#include "report/diff_keys.h"
#include "report/report_impl.h"
#include "report/report_keys.h"

namespace perfkit::report {

using namespace diff_keys;

namespace {

constexpr std::uint32_t kNoPair = UINT32_MAX;

// perf diff's column kinds (PERF_HPP_DIFF__*) and their headers and widths.
enum class Col : std::uint8_t { kBaseline, kPeriod, kPeriodBaseline, kCompute, kFormula };

const char* compute_header(DiffCompute c) {
  switch (c) {
    case DiffCompute::kDelta:
      return "Delta";
    case DiffCompute::kDeltaAbs:
      return "Delta Abs";
    case DiffCompute::kRatio:
      return "Ratio";
    case DiffCompute::kWdiff:
      return "Weighted diff";
  }
  return "?";
}

int compute_width(DiffCompute c) {
  return c == DiffCompute::kDelta || c == DiffCompute::kDeltaAbs ? 7 : 14;
}

}  // namespace

Status parse_diff_compute(std::string_view arg, DiffOptions& o) {
  std::string_view name = arg, opt;
  const bool has_opt = arg.find(':') != std::string_view::npos;
  if (has_opt) name = arg.substr(0, arg.find(':')), opt = arg.substr(arg.find(':') + 1);
  if (name == "delta")
    o.compute = DiffCompute::kDelta;
  else if (name == "delta-abs")
    o.compute = DiffCompute::kDeltaAbs;
  else if (name == "ratio")
    o.compute = DiffCompute::kRatio;
  else if (name == "wdiff")
    o.compute = DiffCompute::kWdiff;
  else if (name == "cycles")
    o.cycles = true;
  else
    return make_error("Failed: '{}' is not computation method (use 'delta','ratio' or 'wdiff')",
                      arg);
  if (o.cycles || o.compute != DiffCompute::kWdiff) {
    if (has_opt) return make_error("Failed: extra option specified '{}'", opt);
    return ok();
  }
  const std::size_t comma = opt.find(',');
  auto weight = [](std::string_view s) {  // strtol: leading digits, else 0
    std::string t(s);
    return std::strtoll(t.c_str(), nullptr, 10);
  };
  if (!has_opt || comma == std::string_view::npos || comma + 1 == opt.size() ||
      !(o.w1 = weight(opt.substr(0, comma))) || !(o.w2 = weight(opt.substr(comma + 1))))
    return make_error("Failed: wrong weight data, use 'wdiff:w1,w2'");
  return ok();
}

struct Diff::Impl {
  DiffOptions o;
  std::vector<std::unique_ptr<Report>> reports;
  std::vector<session::Session*> sessions;

  // An event's entries in one file after perf diff's collapse: entries
  // of equal keys (symbols by name) merged into the first in perf's input
  // order, which names them; in the collapse tree's order.
  struct Collapsed {
    std::vector<std::uint32_t> kept;                       // the entry that names each
    std::vector<std::uint64_t> period;                     // their periods together
    std::unordered_map<std::string, std::uint32_t> index;  // by match_key
  };
  // A row of one baseline event: an entry of the baseline or a dummy made
  // from another file's entry; its pair in each file (Collapsed indexes).
  struct Row {
    std::uint32_t file = 0, entry = 0;  // where it lives: file, Collapsed index
    bool dummy = false;
    std::vector<std::uint32_t> pair;  // by file; kNoPair
    std::uint32_t ext0 = 0;           // its ExtKey's id in the baseline's report (for printing)
  };
  struct Block {
    std::size_t event = 0;
    std::vector<std::int64_t> hists;  // by file: the matching event's hists, -1 none
    std::vector<Collapsed> files;     // by file
    std::vector<Row> rows;            // in output order
    Hists view;                       // the rows' entries, for printing
    // perf's output sort recounts the baseline's total from the entries it
    // keeps (-b drops some): what the Baseline column and formulas divide by.
    std::uint64_t shown_total = 0;
  };
  std::vector<Block> blocks;

  const Hists& hists(std::size_t file, std::int64_t h) const {
    return reports[file]->hists_[static_cast<std::size_t>(h)];
  }
  const Entry& entry(const Block& b, const Row& r) const {
    return hists(r.file, b.hists[r.file]).entries[b.files[r.file].kept[r.entry]];
  }
  const ExtKey& ext_key(const Block& b, const Row& r) const {
    return reports[r.file]->ext_->at(entry(b, r).key.ext);
  }
  Collapsed collapse(std::size_t file, const Hists& h) const;
  std::string key_text(const Block& b, const Row& r, SortKey k) const;
  std::uint64_t total(std::size_t file, std::int64_t h) const {
    const Hists& hs = hists(file, h);
    return o.report.relative ? hs.total_non_filtered_period : hs.total_period;
  }
  double percent(const Block& b, std::size_t file, std::uint64_t period) const {
    return (static_cast<double>(period) * 100.0) / static_cast<double>(total(file, b.hists[file]));
  }
  double shown_percent(const Block& b, std::uint64_t period) const {
    const std::uint64_t t =
        o.report.relative ? hists(0, b.hists[0]).total_non_filtered_period : b.shown_total;
    return (static_cast<double>(period) * 100.0) / static_cast<double>(t);
  }
  std::uint64_t base_period(const Block& b, const Row& r) const {
    return r.dummy ? 0 : b.files[0].period[r.entry];
  }
  std::uint64_t pair_period(const Block& b, const Row& r, std::size_t f) const {
    return b.files[f].period[r.pair[f]];
  }
  double delta(const Block& b, const Row& r, std::size_t f) const {
    return percent(b, f, pair_period(b, r, f)) - percent(b, 0, base_period(b, r));
  }
  double ratio(const Block& b, const Row& r, std::size_t f) const {
    const std::uint64_t old = base_period(b, r);
    return static_cast<double>(pair_period(b, r, f)) / static_cast<double>(old ? old : 1);
  }
  std::int64_t wdiff(const Block& b, const Row& r, std::size_t f) const {
    return static_cast<std::int64_t>(pair_period(b, r, f)) * o.w2 -
           static_cast<std::int64_t>(base_period(b, r)) * o.w1;
  }

  void pair_block(Block& b);
  void order_block(Block& b);
  int value_cmp(const Block& b, const Row& x, const Row& y, std::size_t f) const;
  int sort_cmp(const Block& b, const Row& x, const Row& y) const;
  void cell(const Block& b, const Row& r, Col c, std::size_t f, std::string& out) const;
  void print_block(Block& b, const std::vector<std::string>& paths, bool first, FdWriter& out);
};

Diff::Diff(const DiffOptions& o) : impl_(std::make_unique<Impl>()) {
  impl_->o = o;
  ReportOptions& r = impl_->o.report;
  r.chain_mode = ChainMode::kNone;
  r.children = 0;
  r.branch_mode = 0;
  r.group = 0;
  r.fields.clear();
  r.fields_given = true;  // the sort keys' columns only: the diff's come first
  r.ipc_column = false;
}

Diff::~Diff() = default;

Status Diff::add_all(const std::vector<session::Session*>& sessions, unsigned jobs,
                     std::size_t& failed) {
  const std::size_t first = impl_->reports.size(), n = sessions.size();
  std::vector<std::unique_ptr<Report>> reports(n);
  std::vector<Status> status(n, ok());
  auto read = [&](std::size_t i) {
    reports[i] = std::make_unique<Report>(impl_->o.report);
    Report& r = *reports[i];
    r.settle(*sessions[i]);
    status[i] = r.setup_status_;
    if (status[i]) status[i] = sessions[i]->run(r);
    if (status[i]) status[i] = r.drain_fold();
    if (status[i]) r.finish();
  };
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) read(i);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::min<std::size_t>(std::max(jobs, 1u), n); ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < n; ++i) {
    if (!status[i]) {
      failed = first + i;
      return status[i];
    }
    impl_->reports.push_back(std::move(reports[i]));
    impl_->sessions.push_back(sessions[i]);
  }
  return ok();
}

Diff::Impl::Collapsed Diff::Impl::collapse(std::size_t file, const Hists& h) const {
  const std::vector<SortKey>& keys = o.report.sort;
  const ExtKeys& ext = *reports[file]->ext_;
  auto x = [&](std::uint32_t i) -> const ExtKey& { return ext.at(h.entries[i].key.ext); };
  Collapsed c;
  for (std::uint32_t i : h.collapsed) {
    auto [it, fresh] = c.index.emplace(match_key(keys, h.entries[i], x(i)), c.kept.size());
    if (fresh) {
      c.kept.push_back(i);
      c.period.push_back(0);
    }
    c.period[it->second] += h.entries[i].period;
  }
  std::vector<std::uint32_t> order(c.kept.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto ext_of = [&](std::uint32_t i) -> const ExtKey& { return x(i); };
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    const std::uint32_t a = c.kept[x], b = c.kept[y];
    return collapse_cmp(keys, h.entries[a], ext_of(a), h.entries[b], ext_of(b)) < 0;
  });
  Collapsed out;
  for (std::uint32_t k : order) {
    const std::uint32_t i = c.kept[k];
    out.index.emplace(match_key(keys, h.entries[i], x(i)), out.kept.size());
    out.kept.push_back(i);
    out.period.push_back(c.period[k]);
  }
  return out;
}

// perf's hists__match then hists__link, file by file: a file's entries
// pair with the baseline's and the dummies earlier files added; the rest
// become dummies, inserted in the collapse order.
void Diff::Impl::pair_block(Block& b) {
  const std::size_t files = reports.size();
  const std::vector<SortKey>& keys = o.report.sort;
  b.files.assign(files, {});
  for (std::size_t f = 0; f < files; ++f)
    if (b.hists[f] >= 0) b.files[f] = collapse(f, hists(f, b.hists[f]));
  std::vector<Row> rows;
  for (std::uint32_t i = 0; i < b.files[0].kept.size(); ++i)
    rows.push_back({0, i, false, std::vector(files, kNoPair)});
  for (std::size_t f = 1; f < files; ++f) {
    if (b.hists[f] < 0) continue;
    const Collapsed& other = b.files[f];
    std::vector<bool> paired(other.kept.size(), false);
    for (Row& r : rows) {
      auto it = other.index.find(match_key(keys, entry(b, r), ext_key(b, r)));
      if (it == other.index.end()) continue;
      r.pair[f] = it->second;
      paired[it->second] = true;
    }
    if (o.baseline_only) continue;
    // Both in collapse order: merged, a dummy after the rows it equals.
    std::vector<Row> dummies;
    for (std::uint32_t i = 0; i < other.kept.size(); ++i) {
      if (paired[i]) continue;
      dummies.push_back({static_cast<std::uint32_t>(f), i, true, std::vector(files, kNoPair)});
      dummies.back().pair[f] = i;
    }
    std::vector<Row> merged;
    merged.reserve(rows.size() + dummies.size());
    std::merge(std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()),
               std::make_move_iterator(dummies.begin()), std::make_move_iterator(dummies.end()),
               std::back_inserter(merged), [&](const Row& x, const Row& y) {
                 return collapse_cmp(keys, entry(b, x), ext_key(b, x), entry(b, y), ext_key(b, y)) <
                        0;
               });
    rows = std::move(merged);
  }
  // -b: only the baseline's entries that some file pairs.
  if (o.baseline_only)
    std::erase_if(rows, [](const Row& r) {
      return std::all_of(r.pair.begin() + 1, r.pair.end(),
                         [](std::uint32_t p) { return p == kNoPair; });
    });
  b.shown_total = 0;
  for (const Row& r : rows) b.shown_total += base_period(b, r);
  b.rows = std::move(rows);
}

// The computation's order of rows `x` and `y` in file `f` (both paired
// there): the larger value first.
int Diff::Impl::value_cmp(const Block& b, const Row& x, const Row& y, std::size_t f) const {
  switch (o.compute) {
    case DiffCompute::kDelta:
      return -cmp3(delta(b, x, f), delta(b, y, f));
    case DiffCompute::kDeltaAbs:
      return -cmp3(std::fabs(delta(b, x, f)), std::fabs(delta(b, y, f)));
    case DiffCompute::kRatio:
      return -cmp3(ratio(b, x, f), ratio(b, y, f));
    case DiffCompute::kWdiff:
      return -cmp3(wdiff(b, x, f), wdiff(b, y, f));
  }
  return 0;
}

// perf diff's sort list: the -o file's computation (rows paired there
// first; for ratio and wdiff, dummies last), the baseline period, each
// file's computation (rows with pairs first), then the sort keys.
int Diff::Impl::sort_cmp(const Block& b, const Row& x, const Row& y) const {
  auto paired = [](const Row& r, std::size_t f) { return r.pair[f] != kNoPair; };
  auto any = [](const Row& r) {
    return std::any_of(r.pair.begin(), r.pair.end(), [](std::uint32_t p) { return p != kNoPair; });
  };
  if (const std::size_t f = o.order; f > 0) {
    if (paired(x, f) != paired(y, f)) return paired(x, f) ? -1 : 1;
    if (paired(x, f)) {
      const bool by_delta = o.compute == DiffCompute::kDelta || o.compute == DiffCompute::kDeltaAbs;
      if (!by_delta && x.dummy != y.dummy) return x.dummy ? 1 : -1;
      if (by_delta || !x.dummy)
        if (int c = value_cmp(b, x, y, f)) return c;
    }
  }
  if (int c = -cmp3(base_period(b, x), base_period(b, y))) return c;
  for (std::size_t f = 1; f < reports.size(); ++f) {
    if (any(x) != any(y)) return any(x) ? -1 : 1;
    if (!any(x)) continue;
    if (paired(x, f) != paired(y, f)) return paired(x, f) ? -1 : 1;
    if (!paired(x, f)) continue;
    if (int c = value_cmp(b, x, y, f)) return c;
  }
  // (compared as the baseline's report prints them: their keys there)
  Entry ex = entry(b, x), ey = entry(b, y);
  ex.key.ext = x.ext0;
  ey.key.ext = y.ext0;
  return compare_keys(*reports[0], o.report.sort, ex, ey);
}

void Diff::Impl::order_block(Block& b) {
  for (Row& r : b.rows)
    r.ext0 = r.file == 0 ? entry(b, r).key.ext : reports[0]->ext_->adopt(ext_key(b, r));
  std::stable_sort(b.rows.begin(), b.rows.end(),
                   [&](const Row& x, const Row& y) { return sort_cmp(b, x, y) < 0; });
  // perf makes an entry's source line when a comparison reaches that key:
  // matching a file's entry with the baseline's compares it with those that
  // agree on the keys before (the prefix), in any file.
  const std::vector<SortKey>& keys = o.report.sort;
  std::vector<SortKey> prefix;
  for (SortKey k : keys) {
    if (k == SortKey::kSrcline || k == SortKey::kSrcfile) break;
    prefix.push_back(k);
  }
  std::unordered_map<std::string, std::uint64_t> files_of;  // prefix -> files (bits)
  std::vector<std::string> prefix_of(b.rows.size());
  if (prefix.size() < keys.size()) {
    for (std::size_t i = 0; i < b.rows.size(); ++i) {
      prefix_of[i] = match_key(prefix, entry(b, b.rows[i]), ext_key(b, b.rows[i]));
      files_of[prefix_of[i]] |= std::uint64_t{1} << std::min<std::size_t>(b.rows[i].file, 63);
    }
  }
  b.view = Hists{};
  std::size_t at = 0;
  for (const Row& r : b.rows) {
    const std::size_t i = at++;
    Entry e = entry(b, r);
    e.period = base_period(b, r);
    if (e.filtered) continue;
    e.key.ext = r.ext0;
    // (an entry matched with another file's was compared whole; so were
    // those of a prefix that two files have)
    const std::size_t pairs = static_cast<std::size_t>(
        std::count_if(r.pair.begin(), r.pair.end(), [](std::uint32_t p) { return p != kNoPair; }));
    if (pairs >= (r.dummy ? 2u : 1u)) e.srcline_known = true;
    if (!prefix_of[i].empty() && std::popcount(files_of[prefix_of[i]]) >= 2) e.srcline_known = true;
    b.view.sorted.push_back(static_cast<std::uint32_t>(b.view.entries.size()));
    b.view.entries.push_back(e);
  }
  std::erase_if(b.rows, [&](const Row& r) { return entry(b, r).filtered; });
}

void Diff::compare() {
  Impl& d = *impl_;
  d.blocks.clear();
  if (d.reports.empty()) return;
  const auto& base_events = d.sessions[0]->reader().events();
  for (std::size_t ev = 0; ev < d.reports[0]->hists_.size(); ++ev) {
    Impl::Block b;
    b.event = ev;
    b.hists.assign(d.reports.size(), -1);
    b.hists[0] = static_cast<std::int64_t>(ev);
    const abi::EventAttr& a = base_events[ev].attr;
    for (std::size_t f = 1; f < d.reports.size(); ++f) {
      const auto& evs = d.sessions[f]->reader().events();
      for (std::size_t j = 0; j < evs.size() && j < d.reports[f]->hists_.size(); ++j)
        if (evs[j].attr.type == a.type && evs[j].attr.config == a.config) {
          b.hists[f] = static_cast<std::int64_t>(j);
          break;
        }
    }
    d.pair_block(b);
    d.order_block(b);
    d.blocks.push_back(std::move(b));
  }
}

// A cell as perf diff writes it (its colour functions for the baseline and
// the computation, hpp__entry_global for the rest): " " where it has
// nothing to say. Right-aligned in the column by the caller, unless it
// fills it already.
void Diff::Impl::cell(const Block& b, const Row& r, Col c, std::size_t f, std::string& out) const {
  const bool pair = f > 0 && r.pair[f] != kNoPair;
  switch (c) {
    case Col::kBaseline:
      if (!r.dummy)
        appendf(out, o.field_sep.empty() ? "%6.2f%%" : "%.2f", shown_percent(b, base_period(b, r)));
      break;
    case Col::kPeriodBaseline:
      appendf(out, "%" PRIu64, base_period(b, r));
      break;
    case Col::kPeriod:
      if (pair) appendf(out, "%" PRIu64, pair_period(b, r, f));
      break;
    case Col::kCompute:
      if (!pair) break;
      if (o.compute == DiffCompute::kDelta || o.compute == DiffCompute::kDeltaAbs) {
        appendf(out, "%+4.2F%%", delta(b, r, f));
      } else if (r.dummy) {
        out += "N/A";
      } else if (!o.field_sep.empty()) {
        // perf's plain cells (its colour functions are not used with -t)
        if (o.compute == DiffCompute::kRatio) {
          if (double v = ratio(b, r, f); v > 0.0) appendf(out, "%14.6F", v);
        } else if (std::int64_t w = wdiff(b, r, f); w != 0) {
          appendf(out, "%14" PRId64, w);
        }
      } else if (o.compute == DiffCompute::kRatio) {
        appendf(out, "%14.6F", ratio(b, r, f));
      } else {
        // perf prints this cell with its colour function: 14 wide
        // whatever the column, padded after.
        appendf(out, "%14" PRId64, wdiff(b, r, f));
        return;
      }
      break;
    case Col::kFormula: {
      if (!pair) break;
      const std::uint64_t old = base_period(b, r), now = pair_period(b, r, f);
      char buf[70];
      if (o.compute == DiffCompute::kRatio) {
        std::snprintf(buf, sizeof buf, "%.0F / %.0F", static_cast<double>(now),
                      static_cast<double>(old));
      } else if (o.compute == DiffCompute::kWdiff) {
        std::snprintf(buf, sizeof buf, "(%" PRIu64 " * %" PRId64 ") - (%" PRIu64 " * %" PRId64 ")",
                      now, o.w2, old, o.w1);
      } else {
        const Hists& hb = hists(0, b.hists[0]);
        const Hists& hp = hists(f, b.hists[f]);
        std::snprintf(buf, sizeof buf,
                      "(%" PRIu64 " * 100 / %" PRIu64 ") - (%" PRIu64 " * 100 / %" PRIu64 ")", now,
                      o.report.relative ? hp.total_non_filtered_period : hp.total_period, old,
                      o.report.relative ? hb.total_non_filtered_period : b.shown_total);
      }
      out += buf;
      break;
    }
  }
  if (out.empty()) out = " ";
}

void Diff::Impl::print_block(Block& b, const std::vector<std::string>& paths, bool first,
                             FdWriter& out) {
  const std::size_t files = reports.size();
  if (!o.quiet) {
    out.write(first ? "" : "\n");
    out.write("# Event '" + reports[0]->event_label(*sessions[0], b.event) + "'\n#\n");
    if (files > 2 || o.report.verbose) {
      out.write("# Data files:\n");
      for (std::size_t f = 0; f < files; ++f)
        out.write(fmt::format("#  [{}] {} {}\n", f, paths[f], f ? "" : "(Baseline)"));
      out.write("#\n");
    }
  }
  // The columns of ui_init, file by file.
  struct Spec {
    Col col;
    std::size_t file;
  };
  std::vector<Spec> specs;
  LeadColumns lead;
  lead.field_sep = o.field_sep;
  auto add = [&](Col c, std::size_t f, const char* name, int width) {
    std::string title = files > 2 ? fmt::format("{}/{}", name, f) : std::string(name);
    const int w = std::max(width, static_cast<int>(title.size()));
    specs.push_back({c, f});
    lead.headers.push_back(fmt::format("{:>{}}", title, w));
    lead.widths.push_back(static_cast<std::size_t>(w));
  };
  for (std::size_t f = 0; f < files; ++f) {
    if (f == 0)
      add(Col::kBaseline, 0, "Baseline", 0);
    else
      add(Col::kCompute, f, compute_header(o.compute), compute_width(o.compute));
    if (f && o.show_formula) add(Col::kFormula, f, "Formula", 70);
    if (o.show_period)
      add(f ? Col::kPeriod : Col::kPeriodBaseline, f, f ? "Period" : "Base period", 14);
  }
  lead.cell = [&](std::size_t row, std::size_t col, std::string& s) {
    cell(b, b.rows[row], specs[col].col, specs[col].file, s);
    const std::size_t w = lead.widths[col];
    if (s.size() >= w) return;
    if (!o.field_sep.empty()) {  // the cell as it is, padded after to the width
      s.append(w - s.size(), ' ');
      return;
    }
    // perf pads a weighted diff after it (hist_entry__snprintf_alignment).
    const bool after =
        specs[col].col == Col::kCompute && o.compute == DiffCompute::kWdiff && s.size() == 14;
    s.insert(after ? s.size() : 0, w - s.size(), ' ');
  };
  print_rows(*reports[0], b.view, lead, out, !o.quiet);
}

void Diff::print(const std::vector<std::string>& paths, FdWriter& out) {
  bool first = true;
  for (Impl::Block& b : impl_->blocks) {
    impl_->print_block(b, paths, first, out);
    first = false;
  }
}

// "key=value" for the sort keys a DiffRow has no field of; "" for the rest.
std::string Diff::Impl::key_text(const Block& b, const Row& r, SortKey k) const {
  const ExtKey& x = ext_key(b, r);
  auto name = [](const std::string* s, const char* none) { return s ? *s : std::string(none); };
  switch (k) {
    case SortKey::kCpu:
      return fmt::format("cpu={}", entry(b, r).key.cpu);
    case SortKey::kSrcline:
      return "srcline=" + name(x.srcline, "??:0");
    case SortKey::kSrcfile:
      return "srcfile=" + name(x.srcfile, "");
    case SortKey::kParent:
      return "parent=" + name(x.parent, "[other]");
    case SortKey::kSymSize:
      return x.has_sym ? fmt::format("symbol_size={}", x.sym_size) : "symbol_size=unknown";
    case SortKey::kDsoSize:
      return x.has_map ? fmt::format("dso_size={}", x.dso_size) : "dso_size=unknown";
    case SortKey::kSocket:
      return fmt::format("socket={}", x.socket);
    case SortKey::kTrace:
      return "trace=" + name(x.trace, "N/A");
    case SortKey::kAddr:
      return fmt::format("addr={:#x}", x.addr);
    case SortKey::kTime:
      return fmt::format("time={}.{:06}", x.time / 1'000'000'000, x.time % 1'000'000'000 / 1000);
    case SortKey::kWeight:
    case SortKey::kLocalWeight:
    case SortKey::kInsLat:
    case SortKey::kLocalInsLat:
    case SortKey::kTransaction:
    case SortKey::kCodePageSize:
    case SortKey::kCgroup:
      return fmt::format("{}={}", value_key_name(k), ext_values(k, x)->first);
    case SortKey::kCgroupId:
      return fmt::format("cgroup_id={}/{:#x}", x.cgroup_dev, x.cgroup_ino);
    default:
      return "";
  }
}

std::vector<DiffEvent> Diff::events() const {
  const Impl& d = *impl_;
  std::vector<DiffEvent> out;
  for (const Impl::Block& b : d.blocks) {
    DiffEvent ev;
    ev.name = d.reports[0]->event_label(*d.sessions[0], b.event);
    for (std::size_t f = 0; f < d.reports.size(); ++f) {
      ev.present.push_back(b.hists[f] >= 0);
      ev.total.push_back(b.hists[f] >= 0 ? d.total(f, b.hists[f]) : 0);
    }
    for (const Impl::Row& r : b.rows) {
      const Entry& e = d.entry(b, r);
      DiffRow row;
      for (SortKey k : d.o.report.sort) {
        if (k == SortKey::kComm) row.comm = e.comm ? *e.comm : "";
        if (k == SortKey::kDso) row.dso = e.dso_name ? *e.dso_name : "[unknown]";
        if (k == SortKey::kSym)
          row.symbol = e.sym_name.empty() ? fmt::format("{:#018x}", e.ip) : std::string(e.sym_name);
        if (k == SortKey::kPid) row.pid = e.tid;
        if (std::string v = d.key_text(b, r, k); !v.empty())
          row.keys += (row.keys.empty() ? "" : " ") + v;
      }
      row.period.push_back(d.base_period(b, r));
      row.present.push_back(!r.dummy);
      for (std::size_t f = 1; f < d.reports.size(); ++f) {
        const bool p = r.pair[f] != kNoPair;
        row.period.push_back(p ? d.pair_period(b, r, f) : 0);
        row.present.push_back(p);
      }
      ev.rows.push_back(std::move(row));
    }
    out.push_back(std::move(ev));
  }
  return out;
}

}  // namespace perfkit::report
