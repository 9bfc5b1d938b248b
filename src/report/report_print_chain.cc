// perfkit report's call graphs under the entries, laid out as perf report
// --stdio lays them out: graph and fractal (margins, pipes, percentages),
// flat and folded, with --branch-history's branch counts.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "abi/perf_event.h"
#include "report/report_history.h"
#include "report/report_printer.h"

namespace perfkit::report {

std::vector<std::uint32_t> Printer::sorted_children(std::uint32_t node,
                                                    std::uint64_t min_hit) const {
  const ChainNode& n = r_.arena_.at(node);
  if (r_.opts_.chain_mode == ChainMode::kGraphRel)
    min_hit = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(n.children_hit) * (r_.opts_.chain_min_percent / 100.0)));
  std::vector<std::uint32_t> kids;
  for (std::uint32_t c : r_.arena_.ordered_children(node))
    if (r_.arena_.at(c).cumul() >= min_hit) kids.push_back(c);
  std::stable_sort(kids.begin(), kids.end(), [&](std::uint32_t a, std::uint32_t b) {
    return r_.arena_.at(a).cumul() > r_.arena_.at(b).cumul();
  });
  return kids;
}

// perf formats a frame's name in a buffer of kPerfNameBuf bytes: a longer
// one (a C++ template's) is cut there.
std::string_view Printer::entry_name(const ChainEntry& c, char* buf, std::size_t n) const {
  std::string_view name;
  if (c.inlined) {
    inline_name_.assign(c.name);
    inline_name_ += " (inlined)";
    name = inline_name_;
  } else if (c.has_sym) {
    name = c.name;
  } else {
    int k = std::snprintf(buf, n, "%#" PRIx64, c.ip);
    name = std::string_view(buf, static_cast<std::size_t>(std::max(k, 0)));
  }
  return name.substr(0, kPerfNameBuf - 1);
}

void Printer::branch_counts(std::uint32_t node, std::size_t v) {
  if (!r_.arena_.counts_branches()) return;
  char buf[256];
  out_.write(branch_counts_text(r_.arena_.counts(node, v), buf, sizeof buf));
}

void Printer::value(std::uint64_t cumul, std::uint32_t count, std::uint64_t total) {
  switch (r_.opts_.chain_value) {
    case ChainValue::kPeriod:
      outf(out_, "%" PRIu64, cumul);
      break;
    case ChainValue::kCount:
      outf(out_, "%u", count);
      break;
    default: {
      double p = total ? static_cast<double>(cumul) * 100.0 / static_cast<double>(total) : 0.0;
      put_percent(out_, p, "", 0, r_.opts_.color);
    }
  }
}

void Printer::graph(const std::vector<std::uint32_t>& kids, std::uint64_t total, int depth,
                    int depth_mask, int margin) {
  const bool rel = r_.opts_.chain_mode == ChainMode::kGraphRel;
  std::uint64_t remaining = total;
  int new_mask = depth_mask;
  std::uint32_t printed = 0;
  char nb[64];
  for (std::size_t k = 0; k < kids.size(); ++k) {
    const ChainNode& child = r_.arena_.at(kids[k]);
    const auto child_val = r_.arena_.val(kids[k]);
    remaining -= child.cumul();
    if (k + 1 == kids.size() && (!rel || !remaining)) new_mask &= ~(1 << (depth - 1));
    outf(out_, "%*s", 12 + margin, "");
    for (int i = 0; i < depth; ++i)
      out_.write((depth_mask & (1 << i)) ? "|          " : "           ");
    out_.write("\n");
    for (std::size_t v = 0; v < child_val.size(); ++v) {
      outf(out_, "%*s", 12 + margin, "");
      for (int i = 0; i < depth; ++i) {
        out_.write((new_mask & (1 << i)) ? "|" : " ");
        if (v == 0 && i == depth - 1) {
          out_.write("--");
          value(child.cumul(), child.count + child.children_count, total);
          out_.write("--");
        } else {
          out_.write("          ");
        }
      }
      out_.write(entry_name(child_val[v], nb, sizeof nb));
      branch_counts(kids[k], v);
      out_.write("\n");
    }
    std::uint64_t new_total = rel ? child.children_hit : total;
    graph(sorted_children(kids[k], min_hits_), new_total, depth + 1, new_mask | (1 << depth),
          margin);
    if (++printed == r_.opts_.chain_print_limit) break;
  }
  if (rel && remaining && remaining != total) {
    new_mask &= ~(1 << (depth - 1));
    outf(out_, "%*s", 12 + margin, "");
    for (int i = 0; i < depth; ++i) {
      out_.write((new_mask & (1 << i)) ? "|" : " ");
      if (i == depth - 1) {
        out_.write("--");
        value(remaining, 0, total);
        out_.write("--");
      } else {
        out_.write("          ");
      }
    }
    // perf allocates its "[...]" symbol without clearing the inlined flag, so
    // it prints " (inlined)" after it or not, by chance; perfkit does not.
    out_.write("[...]\n");
  }
}

void Printer::flat_collect(std::uint32_t node, std::uint64_t min_hit,
                           std::vector<std::uint32_t>& out) {
  const ChainNode& n = r_.arena_.at(node);
  for (std::uint32_t c : r_.arena_.ordered_children(node)) {
    parent_[c] = node;
    flat_collect(c, min_hit, out);
  }
  if (n.hit && n.hit >= min_hit) {
    // perf's rb insert: descending hit, ties after.
    auto at =
        std::upper_bound(out.begin(), out.end(), n.hit,
                         [&](std::uint64_t h, std::uint32_t x) { return h > r_.arena_.at(x).hit; });
    out.insert(at, node);
  }
}

void Printer::print_path(std::uint32_t node, bool folded, bool& first) {
  if (node == UINT32_MAX) return;
  print_path(parent_[node], folded, first);
  char nb[64];
  for (const ChainEntry& c : r_.arena_.val(node)) {
    // perf's flat and folded printers skip addresses in the context marker
    // range (an unwound ip of 0 less one); its graph shows them.
    if (c.ip >= abi::kContextMax) continue;
    if (folded) {
      if (!first) out_.write(";");
      first = false;
      out_.write(entry_name(c, nb, sizeof nb));
    } else {
      out_.write("                ");
      out_.write(entry_name(c, nb, sizeof nb));
      out_.write("\n");
    }
  }
}

void Printer::print_chain(const Entry& e) {
  if (e.chain == UINT32_MAX) return;
  r_.arena_.settle();
  const auto mode = r_.opts_.chain_mode;
  std::uint64_t total = h_.total_period;
  std::uint64_t parent_samples = r_.children_ ? e.acc_period : e.period;
  if (mode == ChainMode::kFlat || mode == ChainMode::kFolded) {
    parent_.assign(r_.arena_.size(), UINT32_MAX);
    std::vector<std::uint32_t> nodes;
    parent_[e.chain] = UINT32_MAX;
    flat_collect(e.chain, min_hits_, nodes);
    std::uint32_t printed = 0;
    for (std::uint32_t n : nodes) {
      const ChainNode& cn = r_.arena_.at(n);
      bool first = true;
      if (mode == ChainMode::kFlat) {
        out_.write("           ");
        value(cn.cumul(), cn.count + cn.children_count, total);
        out_.write("\n");
        print_path(n, false, first);
        out_.write("\n");
      } else {
        value(cn.hit, cn.count, total);
        out_.write(" ");
        print_path(n, true, first);
        out_.write("\n");
      }
      if (++printed == r_.opts_.chain_print_limit) break;
    }
    return;
  }
  std::vector<std::uint32_t> root = sorted_children(e.chain, min_hits_);
  bool printed = false;
  int margin = 0;
  std::uint32_t entries = 0;
  if (root.size() == 1 && r_.arena_.at(root[0]).cumul() == parent_samples) {
    const auto c_val = r_.arena_.val(root[0]);
    char nb[64];
    for (std::size_t i = 0; i < c_val.size(); ++i) {
      if (i == 0 && r_.opts_.sort_starts_with_sym) continue;
      if (!printed) {
        outf(out_, "%*s|\n", 12 + margin, "");
        outf(out_, "%*s---", 12 + margin, "");
        margin += 3;
        printed = true;
      } else {
        outf(out_, "%*s", 12 + margin, "");
      }
      out_.write(entry_name(c_val[i], nb, sizeof nb));
      branch_counts(root[0], i);
      out_.write("\n");
      if (++entries == r_.opts_.chain_print_limit) break;
    }
    root = sorted_children(root[0], min_hits_);
  }
  if (mode == ChainMode::kGraphRel) total = parent_samples;
  std::uint64_t before = out_.offset();
  graph(root, total, 1, 1, margin);
  if (printed || out_.offset() != before) out_.write("\n");
}

}  // namespace perfkit::report
