#include "report/report_blocks.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "report/report_cells.h"
#include "report/report_keys.h"

namespace perfkit::report {

namespace {

// perf's cycles_string: "1.2M", "3.4K" or the count.
std::string cycles_text(std::uint64_t cycles) {
  char buf[32];
  if (cycles >= 1000000)
    std::snprintf(buf, sizeof buf, "%.1fM", static_cast<double>(cycles) / 1000000.0);
  else if (cycles >= 1000)
    std::snprintf(buf, sizeof buf, "%.1fK", static_cast<double>(cycles) / 1000.0);
  else
    std::snprintf(buf, sizeof buf, "%1d", static_cast<int>(cycles));
  return buf;
}

bool same_symbol(const BranchEnd& a, const BranchEnd& b) {
  if (a.has_sym != b.has_sym) return false;
  return !a.has_sym || (a.dso == b.dso && a.sym_start == b.sym_start);
}

}  // namespace

CycleBlocks::SymbolHist* CycleBlocks::symbol_hist(const BranchEnd& e,
                                                  const machine::Location& loc) {
  // (a histogram per byte: a "symbol" larger than any function, the last
  // one of a table stretched to its end, gets none)
  constexpr std::uint64_t kMaxSymbolSize = 1 << 22;
  if (e.sym_end - e.sym_start > kMaxSymbolSize) return nullptr;
  const SymKey k{e.dso, e.sym_start};
  std::uint32_t at = index_.find(k);
  if (at == FlatMap<SymKey, SymKeyHash>::kNone) {
    SymbolHist h;
    h.loc = loc;
    h.name = e.sym_name;
    h.dso = e.dso;
    h.start = e.sym_start;
    h.hist.resize(static_cast<std::size_t>(e.sym_end - e.sym_start));
    syms_.push_back(std::move(h));
    at = static_cast<std::uint32_t>(syms_.size() - 1);
    index_.insert(k, at);
  }
  return &syms_[at];
}

// perf's addr_map_symbol__account_cycles, symbol__account_cycles and
// __symbol__account_cycles: every block's cycles count whole (aggr); of
// the blocks ending at one offset the longest one (the earliest start) is
// the one kept.
void CycleBlocks::account_one(const BranchEnd& ams, const machine::Location& loc,
                              const BranchEnd* start, std::uint16_t cycles) {
  if (!cycles || !ams.has_sym) return;
  std::uint64_t saddr = 0;
  if (start && (same_symbol(*start, ams) || start->addr == ams.sym_start_abs))
    saddr = start->al_addr;
  SymbolHist* sh = symbol_hist(ams, loc);
  const std::uint64_t addr = ams.al_addr;
  if (!sh) return;
  if (addr < ams.sym_start || addr >= ams.sym_end) return;
  if (saddr) {
    if (saddr < ams.sym_start || saddr >= ams.sym_end) return;
    if (saddr >= addr) saddr = 0;
  }
  CycHist& ch = sh->hist[static_cast<std::size_t>(addr - ams.sym_start)];
  const std::uint64_t rel = saddr ? saddr - ams.sym_start : 0;
  const std::uint32_t have_start = saddr != 0;
  ch.num_aggr++;
  ch.cycles_aggr += cycles;
  ch.cycles_max = std::max<std::uint64_t>(ch.cycles_max, cycles);
  if (!ch.cycles_min || (cycles && cycles < ch.cycles_min)) ch.cycles_min = cycles;
  if (!have_start && ch.have_start) return;
  if (ch.num) {
    if (have_start && (!ch.have_start || ch.start > rel)) {
      ch.have_start = 0, ch.cycles = 0, ch.num = 0;
      if (ch.reset < 0xffff) ++ch.reset;
    } else if (have_start && ch.start < rel) {
      return;
    }
  }
  ch.have_start = have_start;
  ch.start = rel;
  ch.cycles += cycles;
  ch.num++;
}

void CycleBlocks::account(const std::vector<Branch>& stack, bool any_branch) {
  if (stack.empty() || !stack[0].info.cycles) return;
  // oldest first: each block runs from the previous branch's target
  const BranchEnd* prev = nullptr;
  for (std::size_t i = stack.size(); i-- > 0;) {
    const Branch& b = stack[i];
    account_one(b.info.from, b.from, any_branch ? prev : nullptr, b.info.cycles);
    prev = &b.info.to;
    total_cycles_ += b.info.cycles;
  }
}

void CycleBlocks::print(const std::vector<const BranchEnd*>& ends, ExtKeys& lines,
                        FdWriter& out) const {
  struct Block {
    const SymbolHist* sym;
    std::uint64_t start, end, cycles_aggr, num_aggr;
  };
  std::vector<Block> blocks;
  std::uint64_t block_cycles = 0;  // the sum of the averages, as perf sums them
  for (const BranchEnd* e : ends) {
    if (!e->has_sym) continue;
    const std::uint32_t at = index_.find(SymKey{e->dso, e->sym_start});
    if (at == FlatMap<SymKey, SymKeyHash>::kNone) continue;
    const SymbolHist& sh = syms_[at];
    for (std::size_t i = 0; i < sh.hist.size(); ++i) {
      const CycHist& ch = sh.hist[i];
      if (!ch.num_aggr) continue;
      block_cycles += ch.cycles_aggr / ch.num_aggr;
      // (perf's block entries: one per symbol name, start and end)
      const bool seen = std::any_of(blocks.begin(), blocks.end(), [&](const Block& b) {
        return b.sym->name == sh.name && b.start == ch.start && b.end == i;
      });
      if (!seen) blocks.push_back({&sh, ch.start, i, ch.cycles_aggr, ch.num_aggr});
    }
  }
  // perf's entry tree: names descending, then starts and ends ascending;
  // then its output sort, by the share of all cycles (in 1/1000 %)
  std::sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) {
    if (a.sym->name != b.sym->name) return a.sym->name > b.sym->name;
    if (a.start != b.start) return a.start < b.start;
    return a.end < b.end;
  });
  auto share = [&](const Block& b) {
    if (!total_cycles_) return std::int64_t{0};
    return static_cast<std::int64_t>(static_cast<double>(b.cycles_aggr) /
                                     static_cast<double>(total_cycles_) * 100000.0);
  };
  std::stable_sort(blocks.begin(), blocks.end(),
                   [&](const Block& a, const Block& b) { return share(a) > share(b); });
  for (const Block& b : blocks) {
    const double pct = total_cycles_ ? 100.0 * static_cast<double>(b.cycles_aggr) /
                                           static_cast<double>(total_cycles_)
                                     : 0.0;
    const std::uint64_t avg = b.cycles_aggr / b.num_aggr;
    const double avg_pct =
        block_cycles ? 100.0 * static_cast<double>(avg) / static_cast<double>(block_cycles) : 0.0;
    std::string range = lines.block_range(b.sym->loc, b.sym->start, b.start, b.end);
    outf(out, "  %14.2f%%  %14s  %10.2f%%  %10s  %70s  %20s\n", pct,
         cycles_text(b.cycles_aggr).c_str(), avg_pct, cycles_text(avg).c_str(), range.c_str(),
         b.sym->dso ? b.sym->dso->c_str() : "[unknown]");
  }
}

}  // namespace perfkit::report
