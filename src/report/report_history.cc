#include "report/report_history.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "abi/perf_event.h"
#include "report/report_branch.h"

namespace perfkit::report {

namespace {

// perf's PERF_MAX_BRANCH_DEPTH: a longer stack is corrupt.
constexpr std::uint64_t kMaxBranchDepth = 127;

// The kernel's hash_64(v, 7).
std::uint32_t hash7(std::uint64_t v) {
  return static_cast<std::uint32_t>((v * 0x61C8864680B583EBULL) >> (64 - 7));
}

}  // namespace

// perf's remove_loops: a run of sources that repeats the run before it is
// a loop iteration; the repeat goes, its first entry counts the iteration
// (and the cycles of the run). No collision handling, as perf.
template <class Iter>
static std::size_t remove_loops(std::vector<record::BranchEntry>& l, std::size_t nr,
                                std::vector<Iter>& iter) {
  constexpr unsigned char kNone = 0xff;
  unsigned char chash[127];
  std::memset(chash, kNone, sizeof chash);
  for (std::size_t i = 0; i < nr; ++i) {
    const std::uint32_t h = hash7(l[i].from) % 127;
    if (chash[h] == kNone) {
      chash[h] = static_cast<unsigned char>(i);
      continue;
    }
    if (l[chash[h]].from != l[i].from) continue;
    bool is_loop = true;
    std::size_t off = 0;
    for (std::size_t j = chash[h]; j < i && i + off < nr; ++j, ++off)
      if (l[j].from != l[i + off].from) {
        is_loop = false;
        break;
      }
    if (!is_loop) continue;
    if (nr > i + off) {
      Iter& it = iter[i + off];
      ++it.nr_loop_iter;
      it.cycles = 0;
      for (std::size_t k = 0; k < off; ++k) it.cycles += (l[i + k].flags >> 4) & 0xffff;
      std::move(iter.begin() + static_cast<std::ptrdiff_t>(i + off),
                iter.begin() + static_cast<std::ptrdiff_t>(nr),
                iter.begin() + static_cast<std::ptrdiff_t>(i));
      std::move(l.begin() + static_cast<std::ptrdiff_t>(i + off),
                l.begin() + static_cast<std::ptrdiff_t>(nr),
                l.begin() + static_cast<std::ptrdiff_t>(i));
    }
    nr -= off;
  }
  return nr;
}

std::string_view branch_counts_text(const BranchCounts& c, char* buf, std::size_t cap) {
  int n = 0;
  auto put = [&](const char* fmt, auto... v) {
    if (n >= 0 && static_cast<std::size_t>(n) < cap)
      n += std::snprintf(buf + n, cap - static_cast<std::size_t>(n), fmt, v...);
  };
  if (c.branch_count == 0) {
    put(" (calltrace)");
  } else if (c.branch_to) {
    n = branch_type_text(c.types, buf, cap);
    int parts = n > 0;
    const double total = static_cast<double>(c.branch_count);
    if (c.predicted_count < c.branch_count)
      put(parts++ ? " predicted:%.1f%%" : " (predicted:%.1f%%",
          static_cast<double>(c.predicted_count) * 100.0 / total);
    if (c.abort_count)
      put(parts++ ? " abort:%.1f%%" : " (abort:%.1f%%",
          static_cast<double>(c.abort_count) * 100.0 / total);
    if (parts) put(")");
  } else {
    int parts = 0;
    auto count = [&](const char* name, std::uint64_t v) {
      put("%s%s:%llu", parts++ ? " " : " (", name, static_cast<unsigned long long>(v));
    };
    if (const std::uint64_t cycles = c.cycles_count / c.branch_count) count("cycles", cycles);
    if (c.iter_count && c.from_count)
      if (const std::uint64_t v = c.iter_count / c.from_count) {
        count("iter", v);
        count("avg_cycles", c.iter_cycles / c.iter_count);
      }
    if (parts) put(")");
  }
  n = std::clamp(n, 0, static_cast<int>(cap) - 1);
  return std::string_view(buf, static_cast<std::size_t>(n));
}

void BranchHistory::add_branches(machine::Machine& m, machine::Thread& t, bool hide_unresolved) {
  auto add = [&](std::uint64_t ip, const BranchFrame& info) {
    session::Frame f;
    f.ip = ip;
    // perf's thread__find_cpumode_addr_location: user maps, then the kernel's
    (void)resolve_branch_end(m, t, ip, f.loc);
    if (hide_unresolved && f.loc.symbol < 0) return;
    frames_.push_back(f);
    infos_.push_back(info);
  };
  for (std::size_t i = 0; i < be_.size(); ++i) {
    const std::uint64_t flags = be_[i].flags;
    BranchFrame to;
    to.to = be_[i].from != 0;  // perf's branch_from
    to.predicted = (flags >> 1) & 1;
    to.abort = (flags >> 3) & 1;
    to.type = static_cast<std::uint8_t>((flags >> 20) & 0xf);
    to.new_type = static_cast<std::uint8_t>((flags >> 26) & 0xf);
    to.from = be_[i].from;
    BranchFrame from;
    from.cycles = static_cast<std::uint16_t>(flags >> 4);
    from.nr_loop_iter = iter_[i].nr_loop_iter;
    from.iter_cycles = iter_[i].cycles;
    add(be_[i].to, to);
    add(be_[i].from, from);
  }
}

void BranchHistory::add_recorded(const session::ResolvedSample& s, std::size_t lo, std::size_t hi,
                                 bool reverse, int max_stack, bool hide_unresolved) {
  // s.callchain holds the chain's non-marker entries, callee first (reversed
  // in caller order): raw_index_ says which chain index each one had.
  const std::size_t n = s.callchain.size();
  const std::size_t total = raw_index_.size();
  std::size_t taken = 0;
  const std::size_t ub = s.unwound_begin, ue = s.unwound_end;
  for (std::size_t k = 0; k < n; ++k) {
    // (DWARF-unwound user frames follow the recorded chain, in any case)
    if (k >= ub && k < ue) {
      if (!hide_unresolved || s.callchain[k].loc.symbol >= 0) frames_.push_back(s.callchain[k]);
      continue;
    }
    if (taken >= static_cast<std::size_t>(std::max(max_stack, 0))) continue;
    const std::size_t r = reverse && k >= ue ? k - (ue - ub) : k;
    const std::size_t callee_pos = reverse ? total - 1 - r : r;
    if (callee_pos >= total) continue;
    const std::size_t raw = raw_index_[callee_pos];
    if (raw < lo || raw >= hi) continue;
    ++taken;
    if (hide_unresolved && s.callchain[k].loc.symbol < 0) continue;
    frames_.push_back(s.callchain[k]);
  }
}

std::span<const session::Frame> BranchHistory::frames(machine::Machine& m,
                                                      const session::ResolvedSample& s,
                                                      bool caller_order, int max_stack,
                                                      bool hide_unresolved) {
  frames_.clear();
  infos_.clear();
  const record::Sample& smp = *s.sample;
  const bool has_chain = smp.sample_type & abi::kSampleCallchain;
  const auto& chain = smp.callchain;
  std::size_t chain_nr = has_chain ? chain.size() : 0;
  raw_index_.clear();
  for (std::size_t i = 0; i < chain_nr; ++i)
    if (chain[i] < abi::kContextMax) raw_index_.push_back(i);
  std::size_t first_call = 0;
  const record::BranchStack& bs = smp.branch_stack;
  if ((smp.sample_type & abi::kSampleBranchStack) && bs.nr && bs.nr <= kMaxBranchDepth) {
    std::size_t nr = std::min<std::size_t>(static_cast<std::size_t>(std::max(max_stack, 0)), bs.nr);
    be_.resize(nr);
    for (std::size_t i = 0; i < nr; ++i) {
      if (caller_order) {
        be_[i] = bs.at(bs.nr - i - 1);
        continue;
      }
      be_[i] = bs.at(i);
      if (!has_chain) continue;
      // the chain's entries the branches overlap: a return address is one
      // past its call, taken as at most 8 bytes long
      const std::uint64_t ip = first_call < chain.size() ? chain[first_call] : 0;
      if (ip >= abi::kContextMax || (be_[i].from < ip && be_[i].from + 8 >= ip)) ++first_call;
    }
    iter_.assign(nr, {});
    nr = remove_loops(be_, nr, iter_);
    be_.resize(nr);
    add_branches(m, *s.thread, hide_unresolved);
    if (chain_nr == 0) return frames_;
    chain_nr -= std::min(chain_nr, nr);
  }
  if (caller_order)
    add_recorded(s, chain.size() - chain_nr, chain.size() - first_call, true, max_stack,
                 hide_unresolved);
  else
    add_recorded(s, first_call, chain_nr, false, max_stack, hide_unresolved);
  return frames_;
}

}  // namespace perfkit::report
