#include "report/report_branch.h"

#include "abi/perf_event.h"

namespace perfkit::report {

bool is_branch_key(SortKey k) { return k >= SortKey::kDsoFrom && k <= SortKey::kSrclineTo; }

const char* branch_key_name(SortKey k) {
  switch (k) {
    case SortKey::kDsoFrom:
      return "dso_from";
    case SortKey::kDsoTo:
      return "dso_to";
    case SortKey::kSymFrom:
      return "symbol_from";
    case SortKey::kSymTo:
      return "symbol_to";
    case SortKey::kCycles:
      return "cycles";
    case SortKey::kMispredict:
      return "mispredict";
    case SortKey::kInTx:
      return "in_tx";
    case SortKey::kAbort:
      return "abort";
    case SortKey::kAddrFrom:
      return "addr_from";
    case SortKey::kAddrTo:
      return "addr_to";
    case SortKey::kSrclineFrom:
      return "srcline_from";
    case SortKey::kSrclineTo:
      return "srcline_to";
    default:
      return "?";
  }
}

void BranchTable::setup(const std::vector<SortKey>& sort) {
  for (SortKey k : sort) {
    dso_from_ |= k == SortKey::kDsoFrom;
    dso_to_ |= k == SortKey::kDsoTo;
    sym_from_ |= k == SortKey::kSymFrom;
    sym_to_ |= k == SortKey::kSymTo;
    cycles_ |= k == SortKey::kCycles;
    addr_from_ |= k == SortKey::kAddrFrom;
    addr_to_ |= k == SortKey::kAddrTo;
    srcline_from_ |= k == SortKey::kSrclineFrom;
    srcline_to_ |= k == SortKey::kSrclineTo;
    if (k == SortKey::kMispredict) flag_mask_ |= 0x3;
    if (k == SortKey::kInTx) flag_mask_ |= 0x4;
    if (k == SortKey::kAbort) flag_mask_ |= 0x8;
  }
}

// The user maps first, then the kernel's; guest modes find nothing on a
// host and leave level 'H'.
BranchEnd resolve_branch_end(machine::Machine& m, machine::Thread& thread, std::uint64_t addr,
                             machine::Location& loc) {
  BranchEnd e;
  e.addr = e.al_addr = addr;
  for (std::uint8_t mode : {abi::kMiscUser, abi::kMiscKernel}) {
    loc = m.resolve(thread, mode, addr);
    if (!loc.map) continue;
    e.level = mode == abi::kMiscKernel ? 'k' : '.';
    fill_branch_end(m, loc, e);
    break;
  }
  return e;
}

void fill_branch_end(machine::Machine& m, const machine::Location& loc, BranchEnd& e) {
  if (!loc.map) return;
  e.al_addr = loc.addr;
  e.dso = loc.dso ? m.intern(loc.dso->short_name) : nullptr;
  if (loc.symbol < 0 || !loc.dso) return;
  const symbol::Symbol& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
  e.has_sym = true;
  e.sym_start = sym.start;
  e.sym_end = sym.end;
  e.sym_start_abs = loc.map->unmap_ip(sym.start);
  e.sym_type = sym.type;
  e.sym_name = m.symbol_name(loc);
}

BranchInfo BranchTable::resolve(machine::Machine& m, machine::Thread& thread, std::uint64_t from,
                                std::uint64_t to, std::uint64_t flags, machine::Location& to_loc,
                                machine::Location* from_loc) {
  BranchInfo b;
  machine::Location source;
  b.from = resolve_branch_end(m, thread, from, from_loc ? *from_loc : source);
  b.to = resolve_branch_end(m, thread, to, to_loc);
  // perf_branch_entry: 4 flag bits, cycles, type, spec, new_type
  b.cycles = static_cast<std::uint16_t>(flags >> 4);
  b.type = static_cast<std::uint8_t>((flags >> 20) & 0xf);
  b.new_type = static_cast<std::uint8_t>((flags >> 26) & 0xf);
  b.flags = static_cast<std::uint8_t>(flags & 0xf);
  return b;
}

std::uint32_t BranchTable::key(const BranchInfo& b) {
  // What perf's comparisons of the active keys read, the rest left out.
  auto reduce = [](const BranchEnd& e, bool dso, bool sym, bool addr) {
    BranchEnd r;
    r.level = 0;
    if (dso || addr) r.dso = e.dso;
    if (addr) r.addr = e.addr;
    if (sym) {
      r.has_sym = e.has_sym;
      if (e.has_sym)
        r.sym_start = e.sym_start, r.sym_end = e.sym_end;
      else
        r.addr = e.addr;
    }
    return r;
  };
  BranchInfo k;
  k.from = reduce(b.from, dso_from_, sym_from_, addr_from_);
  k.to = reduce(b.to, dso_to_, sym_to_, addr_to_);
  k.flags = b.flags & flag_mask_;
  if (srcline_from_) k.srcline_from = b.srcline_from;
  if (srcline_to_) k.srcline_to = b.srcline_to;
  if (cycles_) k.cycles = b.cycles;
  return infos_.intern(k);
}

namespace {

int sign_of_cmp(int c) { return c < 0 ? -1 : (c > 0 ? 1 : 0); }

}  // namespace

std::int64_t end_dso_cmp(const std::string* l, const std::string* r) {
  if (!l || !r) {
    if (!l && !r) return 0;
    return !r ? -1 : 1;
  }
  if (l == r) return 0;
  return sign_of_cmp(l->compare(*r));
}

namespace {

// perf's sort__sym_from_cmp / sort__sym_to_cmp.
std::int64_t sym_cmp(const BranchEnd& l, const BranchEnd& r) {
  if (!l.has_sym && !r.has_sym) return static_cast<std::int64_t>(r.addr - l.addr);
  if (!l.has_sym || !r.has_sym) return !l.has_sym ? -1 : 1;
  if (l.sym_start != r.sym_start) return static_cast<std::int64_t>(r.sym_start - l.sym_start);
  return static_cast<std::int64_t>(r.sym_end - l.sym_end);
}

}  // namespace

std::int64_t branch_se_cmp(SortKey k, const BranchInfo& l, const BranchInfo& r) {
  switch (k) {
    case SortKey::kDsoFrom:
      return end_dso_cmp(l.from.dso, r.from.dso);
    case SortKey::kDsoTo:
      return end_dso_cmp(l.to.dso, r.to.dso);
    case SortKey::kSymFrom:
      return sym_cmp(l.from, r.from);
    case SortKey::kSymTo:
      return sym_cmp(l.to, r.to);
    case SortKey::kCycles:
      return static_cast<std::int64_t>(l.cycles) - r.cycles;
    case SortKey::kMispredict:  // (0 or 1: perf's is no order)
      return (l.flags & 0x3) != (r.flags & 0x3);
    case SortKey::kInTx:
      return (l.flags & 0x4) != (r.flags & 0x4);
    case SortKey::kAbort:
      return (l.flags & 0x8) != (r.flags & 0x8);
    case SortKey::kSrclineFrom:
    case SortKey::kSrclineTo: {  // perf's strcmp(right, left)
      const std::string* ls = k == SortKey::kSrclineFrom ? l.srcline_from : l.srcline_to;
      const std::string* rs = k == SortKey::kSrclineFrom ? r.srcline_from : r.srcline_to;
      if (ls == rs) return 0;
      if (!ls || !rs) return !rs ? -1 : 1;
      return sign_of_cmp(rs->compare(*ls));
    }
    case SortKey::kAddrFrom:
    case SortKey::kAddrTo: {
      const BranchEnd& le = k == SortKey::kAddrFrom ? l.from : l.to;
      const BranchEnd& re = k == SortKey::kAddrFrom ? r.from : r.to;
      if (std::int64_t c = end_dso_cmp(le.dso, re.dso)) return c;
      return static_cast<std::int64_t>(re.addr - le.addr);
    }
    default:
      return 0;
  }
}

}  // namespace perfkit::report
