#include "dwarf/cfi_unwinder.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>

#include "base/flat_map.h"
#include "dwarf/debug_file.h"
#include "elf/elf_file.h"

namespace perfkit::dwarf {

struct Op {
  std::uint8_t atom;
  std::uint64_t number, number2, offset;
};

struct UnwindTables::Rule {
  enum Kind : std::uint8_t { kSame, kUndefined, kOps } kind = kSame;
  std::vector<Op> ops;
};

// The rules most frames have, in a form read without evaluating DWARF
// expressions: the CFA is a register plus an offset, and each register
// keeps its value, is undefined, was saved at the CFA plus an offset, or is
// in another register, or is the CFA plus an offset (%rsp: val_offset(0)).
struct PlainRules {
  struct Reg {
    enum Kind : std::uint8_t { kSame, kUndefined, kAtCfa, kCfaPlus, kInReg } kind = kSame;
    std::uint8_t reg = 0;      // kInReg's
    std::uint64_t offset = 0;  // kAtCfa's and kCfaPlus's, added modulo 2^64 (DW_OP_plus_uconst)
  };
  int cfa_reg = 0;
  std::uint64_t cfa_offset = 0;
  Reg regs[kRegCount];
  std::uint32_t same = 0;               // bit per register that keeps its value
  std::uint8_t others[kRegCount] = {};  // the other registers, in order
  int n_others = 0;
};

struct UnwindTables::Frame {
  std::vector<Op> cfa;
  Rule regs[kRegCount];
  int ra = kRegRip;
  bool signal = false;
  std::optional<PlainRules> plain;  // when every rule has a plain form
};

struct UnwindTables::Impl {
  std::optional<elf::ElfFile> runtime;
  std::optional<elf::ElfFile> debug;
  Dwarf_CFI* eh = nullptr;
  Dwarf* debug_dw = nullptr;
  Dwarf_CFI* debug_cfi = nullptr;
  std::string debug_path;  // opened at the first address .eh_frame lacks
  Bytes image;             // the runtime file's bytes
  // The rules looked up so far: an address's index into frames, or
  // kNoFrame where no CFI covers it.
  struct AddrHash {
    std::size_t operator()(std::uint64_t a) const { return mix64(a); }
  };
  static constexpr std::uint32_t kNoFrame = UINT32_MAX - 1;
  FlatMap<std::uint64_t, AddrHash> cache;
  std::deque<Frame> frames;

  // The separate debug file's .debug_frame, opened once and only when it
  // has one (dwarf_begin_elf inflates every compressed debug section).
  Dwarf_CFI* lazy_debug_cfi() {
    if (debug_path.empty()) return debug_cfi;
    std::string path = std::move(debug_path);
    debug_path.clear();
    auto d = elf::ElfFile::open(path);
    if (!d || !d->section(".debug_frame")) return nullptr;
    debug.emplace(std::move(*d));
    debug->decompress_debug_sections();
    debug_dw = dwarf_begin_elf(debug->handle(), DWARF_C_READ, nullptr);
    if (debug_dw) debug_cfi = dwarf_getcfi(debug_dw);
    return debug_cfi;
  }

  ~Impl() {
    if (eh) dwarf_cfi_end(eh);
    if (debug_dw) dwarf_end(debug_dw);
  }
};

UnwindTables::UnwindTables(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
UnwindTables::~UnwindTables() = default;

Expected<std::unique_ptr<UnwindTables>> UnwindTables::open(const std::string& runtime,
                                                           const std::string& debug) {
  auto impl = std::make_unique<Impl>();
  PK_ASSIGN(elf::ElfFile f, elf::ElfFile::open(runtime));
  impl->runtime.emplace(std::move(f));
  std::size_t n = 0;
  if (char* raw = elf_rawfile(impl->runtime->handle(), &n))
    impl->image = Bytes(reinterpret_cast<const std::uint8_t*>(raw), n);
  impl->eh = dwarf_getcfi_elf(impl->runtime->handle());
  impl->debug_path = debug;
  return std::unique_ptr<UnwindTables>(new UnwindTables(std::move(impl)));
}

bool UnwindTables::offset_to_vaddr(std::uint64_t offset, std::uint64_t& vaddr) const {
  for (const auto& s : impl_->runtime->segments()) {
    if (offset >= s.offset && offset - s.offset < std::max(s.filesz, s.memsz)) {
      vaddr = offset - s.offset + s.vaddr;
      return true;
    }
  }
  return false;
}

std::uint64_t UnwindTables::elf_base() const {
  const auto& segs = impl_->runtime->segments();
  return segs.empty() ? 0 : segs.front().vaddr & ~std::uint64_t{0xfff};
}

bool UnwindTables::read_file(std::uint64_t offset, std::uint64_t& out) const {
  const Bytes& img = impl_->image;
  if (offset > img.size() || img.size() - offset < 8) return false;
  std::memcpy(&out, img.data() + offset, 8);
  return true;
}

namespace {

std::vector<Op> copy_ops(const Dwarf_Op* ops, std::size_t n) {
  std::vector<Op> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = Op{ops[i].atom, ops[i].number, ops[i].number2, ops[i].offset};
  return v;
}

bool rules_from(Dwarf_CFI* cfi, std::uint64_t vaddr, UnwindTables::Frame& out) {
  if (!cfi) return false;
  Dwarf_Frame* frame = nullptr;
  if (dwarf_cfi_addrframe(cfi, vaddr, &frame) != 0 || !frame) return false;
  bool good = true;
  Dwarf_Op* ops = nullptr;
  std::size_t nops = 0;
  if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0) good = false;
  if (good) out.cfa = copy_ops(ops, nops);
  bool signal = false;
  int ra = dwarf_frame_info(frame, nullptr, nullptr, &signal);
  out.ra = ra >= 0 && ra < kRegCount ? ra : kRegRip;
  out.signal = signal;
  for (int r = 0; good && r < kRegCount; ++r) {
    Dwarf_Op mem[3];
    Dwarf_Op* rops = nullptr;
    std::size_t rn = 0;
    auto& rule = out.regs[r];
    if (dwarf_frame_register(frame, r, mem, &rops, &rn) != 0) {
      rule.kind = UnwindTables::Rule::kUndefined;
    } else if (rn == 0) {
      rule.kind = rops ? UnwindTables::Rule::kUndefined : UnwindTables::Rule::kSame;
    } else {
      rule.kind = UnwindTables::Rule::kOps;
      rule.ops = copy_ops(rops, rn);
    }
  }
  free(frame);
  return good;
}

}  // namespace

namespace {

// The plain form of a register's rule as libdw spells it (offset(N):
// DW_OP_call_frame_cfa, DW_OP_plus_uconst N; val_offset(N): the same then
// DW_OP_stack_value; register(R): DW_OP_regx R), or nothing for any other
// expression.
std::optional<PlainRules::Reg> plain_reg(const UnwindTables::Rule& rule) {
  PlainRules::Reg out;
  if (rule.kind == UnwindTables::Rule::kSame) return out;
  if (rule.kind == UnwindTables::Rule::kUndefined) {
    out.kind = PlainRules::Reg::kUndefined;
    return out;
  }
  const std::vector<Op>& ops = rule.ops;
  if (ops.size() == 1 && ops[0].atom == DW_OP_regx && ops[0].number < kRegCount) {
    out.kind = PlainRules::Reg::kInReg;
    out.reg = static_cast<std::uint8_t>(ops[0].number);
    return out;
  }
  std::size_t n = ops.size();
  const bool value = n >= 2 && ops[n - 1].atom == DW_OP_stack_value;
  if (value) --n;
  if (n == 0 || n > 2 || ops[0].atom != DW_OP_call_frame_cfa) return std::nullopt;
  if (n == 2 && ops[1].atom != DW_OP_plus_uconst) return std::nullopt;
  out.kind = value ? PlainRules::Reg::kCfaPlus : PlainRules::Reg::kAtCfa;
  out.offset = n == 2 ? ops[1].number : 0;
  return out;
}

std::optional<PlainRules> plain_rules(const UnwindTables::Frame& f) {
  PlainRules p;
  if (f.cfa.size() != 1) return std::nullopt;
  const Op& c = f.cfa[0];
  if (c.atom >= DW_OP_breg0 && c.atom <= DW_OP_breg31) {
    p.cfa_reg = c.atom - DW_OP_breg0;
    p.cfa_offset = c.number;
  } else if (c.atom == DW_OP_bregx) {
    if (c.number >= kRegCount) return std::nullopt;
    p.cfa_reg = static_cast<int>(c.number);
    p.cfa_offset = c.number2;
  } else {
    return std::nullopt;
  }
  if (p.cfa_reg >= kRegCount) return std::nullopt;
  for (int r = 0; r < kRegCount; ++r) {
    auto reg = plain_reg(f.regs[r]);
    if (!reg) return std::nullopt;
    p.regs[r] = *reg;
    if (reg->kind == PlainRules::Reg::kSame)
      p.same |= 1u << r;
    else
      p.others[p.n_others++] = static_cast<std::uint8_t>(r);
  }
  return p;
}

}  // namespace

const UnwindTables::Frame* UnwindTables::frame_at(std::uint64_t vaddr) {
  Impl& m = *impl_;
  const std::uint32_t at = m.cache.find(vaddr);
  if (at != FlatMap<std::uint64_t, Impl::AddrHash>::kNone)
    return at == Impl::kNoFrame ? nullptr : &m.frames[at];
  Frame f;
  if (!rules_from(m.eh, vaddr, f) && !rules_from(m.lazy_debug_cfi(), vaddr, f)) {
    m.cache.insert(vaddr, Impl::kNoFrame);
    return nullptr;
  }
  f.plain = plain_rules(f);
  m.cache.insert(vaddr, static_cast<std::uint32_t>(m.frames.size()));
  return &m.frames.emplace_back(std::move(f));
}

namespace {

// A DWARF expression of CFI, evaluated over the current registers. The
// result is a value when it ends with DW_OP_stack_value (or is an
// expression the caller treats as one), a memory address otherwise, or a
// register (DW_OP_regN/regx).
struct EvalResult {
  enum Kind { kAddress, kValue, kRegister } kind = kAddress;
  std::uint64_t v = 0;
};

class Evaluator {
 public:
  Evaluator(const UnwindRegs& regs, std::uint64_t cfa, UnwindTarget& target)
      : regs_(regs), cfa_(cfa), target_(target) {}

  bool run(const std::vector<Op>& ops, EvalResult& out) {
    sp_ = 0;
    out.kind = EvalResult::kAddress;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const std::uint8_t a = op.atom;
      if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
        if (!push(a - DW_OP_lit0)) return false;
        continue;
      }
      if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
        std::uint64_t r;
        if (!reg(a - DW_OP_breg0, r) || !push(r + op.number)) return false;
        continue;
      }
      if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
        out.kind = EvalResult::kRegister;
        out.v = a - DW_OP_reg0;
        return true;
      }
      switch (a) {
        case DW_OP_regx:
          out.kind = EvalResult::kRegister;
          out.v = op.number;
          return true;
        case DW_OP_bregx: {
          std::uint64_t r;
          if (!reg(static_cast<int>(op.number), r) || !push(r + op.number2)) return false;
          break;
        }
        case DW_OP_call_frame_cfa:
          if (!push(cfa_)) return false;
          break;
        case DW_OP_skip:
        case DW_OP_bra: {
          bool at_end = false;
          if (!jump(ops, i, at_end)) return false;
          if (at_end) return finish(out);
          break;
        }
        case DW_OP_stack_value:
          out.kind = EvalResult::kValue;
          break;
        case DW_OP_nop:
          break;
        default:
          if (!constant(op) && !stack_op(op) && !binary(a)) return false;
          break;
      }
    }
    return finish(out);
  }

 private:
  bool push(std::uint64_t v) {
    if (sp_ >= kStack) return false;
    st_[sp_++] = v;
    return true;
  }
  // DW_OP_addr and DW_OP_const*: the operand. False for other operations.
  bool constant(const Op& op) {
    switch (op.atom) {
      case DW_OP_addr:
      case DW_OP_const1u:
      case DW_OP_const1s:
      case DW_OP_const2u:
      case DW_OP_const2s:
      case DW_OP_const4u:
      case DW_OP_const4s:
      case DW_OP_const8u:
      case DW_OP_const8s:
      case DW_OP_constu:
      case DW_OP_consts:
        return push(op.number);
      default:
        return false;
    }
  }
  // The operations on the stack's top entries. False for others, or when
  // the stack is too short (or a read fails).
  bool stack_op(const Op& op) {
    switch (op.atom) {
      case DW_OP_deref:
        return sp_ >= 1 && target_.read(st_[sp_ - 1], st_[sp_ - 1]);
      case DW_OP_plus_uconst:
        if (sp_ < 1) return false;
        st_[sp_ - 1] += op.number;
        return true;
      case DW_OP_dup:
        return sp_ >= 1 && push(st_[sp_ - 1]);
      case DW_OP_drop:
        if (sp_ < 1) return false;
        --sp_;
        return true;
      case DW_OP_over:
        return sp_ >= 2 && push(st_[sp_ - 2]);
      case DW_OP_swap:
        if (sp_ < 2) return false;
        std::swap(st_[sp_ - 1], st_[sp_ - 2]);
        return true;
      case DW_OP_neg:
        if (sp_ < 1) return false;
        st_[sp_ - 1] = -st_[sp_ - 1];
        return true;
      case DW_OP_not:
        if (sp_ < 1) return false;
        st_[sp_ - 1] = ~st_[sp_ - 1];
        return true;
      default:
        return false;
    }
  }
  // The binary operations: the top two entries replaced by the result.
  // False for other operations, or with fewer than two entries.
  bool binary(std::uint8_t a) {
    std::uint64_t r = 0;
    if (sp_ < 2) return false;
    const std::uint64_t b = st_[sp_ - 1], x = st_[sp_ - 2];
    const auto sx = static_cast<std::int64_t>(x), sb = static_cast<std::int64_t>(b);
    switch (a) {
      case DW_OP_plus:
        r = x + b;
        break;
      case DW_OP_minus:
        r = x - b;
        break;
      case DW_OP_mul:
        r = x * b;
        break;
      case DW_OP_and:
        r = x & b;
        break;
      case DW_OP_or:
        r = x | b;
        break;
      case DW_OP_xor:
        r = x ^ b;
        break;
      case DW_OP_shl:
        r = b < 64 ? x << b : 0;
        break;
      case DW_OP_shr:
        r = b < 64 ? x >> b : 0;
        break;
      case DW_OP_shra:
        r = static_cast<std::uint64_t>(b < 64 ? sx >> b : (sx < 0 ? -1 : 0));
        break;
      case DW_OP_ge:
        r = sx >= sb;
        break;
      case DW_OP_gt:
        r = sx > sb;
        break;
      case DW_OP_le:
        r = sx <= sb;
        break;
      case DW_OP_lt:
        r = sx < sb;
        break;
      case DW_OP_eq:
        r = sx == sb;
        break;
      case DW_OP_ne:
        r = sx != sb;
        break;
      default:
        return false;
    }
    st_[--sp_ - 1] = r;
    return true;
  }
  // DW_OP_skip, and DW_OP_bra when the popped top is not zero: on to the
  // operation the operand (a byte offset from the end of this operation)
  // names, `i` left before it, or to the end (`at_end`). False when it
  // names no operation.
  bool jump(const std::vector<Op>& ops, std::size_t& i, bool& at_end) {
    const Op& op = ops[i];
    if (op.atom == DW_OP_bra) {
      if (sp_ < 1) return false;
      if (st_[--sp_] == 0) return true;
    }
    const std::uint64_t target =
        op.offset + 3 + static_cast<std::uint64_t>(static_cast<std::int16_t>(op.number));
    std::size_t j = 0;
    while (j < ops.size() && ops[j].offset != target) ++j;
    if (j == ops.size()) {
      at_end = target == ops.back().offset + 1;
      return at_end;
    }
    i = j - 1;
    return true;
  }
  bool finish(EvalResult& out) const {
    if (sp_ < 1) return false;
    out.v = st_[sp_ - 1];
    return true;
  }
  bool reg(int r, std::uint64_t& v) const {
    if (r == kRegRsp) {  // libunwind reads %rsp as the current CFA
      v = cfa_sp_;
      return true;
    }
    if (r < 0 || r >= kRegCount || !regs_.has(r)) return false;
    v = regs_.value[r];
    return true;
  }

 public:
  std::uint64_t cfa_sp_ = 0;

 private:
  static constexpr int kStack = 64;
  const UnwindRegs& regs_;
  std::uint64_t cfa_;
  UnwindTarget& target_;
  std::uint64_t st_[kStack];
  int sp_ = 0;
};

// libunwind's unw_is_signal_frame on x86-64 Linux: the code at ip is
// __restore_rt (mov $0xf,%rax; syscall).
bool at_sigreturn(UnwindTarget& t, std::uint64_t ip) {
  std::uint64_t w0, w1;
  if (!t.read(ip, w0) || !t.read(ip + 8, w1)) return false;
  return (w0 == 0x0f0000000fc0c748ULL) && (w1 & 0xff) == 0x05;
}

enum class Step { kDone, kNext, kError };

// A frame's rules applied to `regs`: the caller's registers into `next`,
// the CFA into `cfa`. kDone when the return address or %rbp is undefined
// (the outermost frame), kError when the return address cannot be had.
Step evaluated_rules_step(const UnwindTables::Frame& frame, const UnwindRegs& regs,
                          std::uint64_t sp, UnwindTarget& target, UnwindRegs& next,
                          std::uint64_t& cfa) {
  Evaluator ev(regs, 0, target);
  ev.cfa_sp_ = sp;
  EvalResult c;
  if (!ev.run(frame.cfa, c)) return Step::kError;
  cfa = c.v;
  if (c.kind == EvalResult::kRegister) {
    if (!regs.has(static_cast<int>(c.v))) return Step::kError;
    cfa = regs.value[c.v];
  }
  Evaluator rv(regs, cfa, target);
  rv.cfa_sp_ = sp;
  bool rbp_null = false, ra_null = false;
  for (int r = 0; r < kRegCount; ++r) {
    const auto& rule = frame.regs[r];
    if (rule.kind == UnwindTables::Rule::kSame) {
      if (regs.has(r)) next.set(r, regs.value[r]);
      continue;
    }
    if (rule.kind == UnwindTables::Rule::kUndefined) {
      if (r == kRegRbp) rbp_null = true;
      if (r == frame.ra) ra_null = true;
      continue;
    }
    EvalResult res;
    if (!rv.run(rule.ops, res)) {
      if (r == frame.ra) return Step::kError;
      continue;
    }
    std::uint64_t v = res.v;
    if (res.kind == EvalResult::kAddress) {
      if (!target.read(res.v, v)) {
        if (r == frame.ra) return Step::kError;
        continue;
      }
    } else if (res.kind == EvalResult::kRegister) {
      if (!regs.has(static_cast<int>(res.v))) continue;
      v = regs.value[res.v];
    }
    next.set(r, v);
  }
  return ra_null || rbp_null ? Step::kDone : Step::kNext;
}

// The same for rules in their plain form, with the same outcome: the
// expressions evaluated_rules_step would run, worked out directly (%rsp
// read as `sp`, as the evaluator reads it). `next` need not be cleared.
Step plain_rules_step(const PlainRules& p, int ra, const UnwindRegs& regs, std::uint64_t sp,
                      UnwindTarget& target, UnwindRegs& next, std::uint64_t& cfa) {
  if (p.cfa_reg != kRegRsp && !regs.has(p.cfa_reg)) return Step::kError;
  cfa = (p.cfa_reg == kRegRsp ? sp : regs.value[p.cfa_reg]) + p.cfa_offset;
  // The registers that keep their values, copied whole (a value counts
  // only where its bit is set).
  std::memcpy(next.value, regs.value, sizeof next.value);
  next.known = regs.known & p.same;
  bool rbp_null = false, ra_null = false;
  for (int k = 0; k < p.n_others; ++k) {
    const int r = p.others[k];
    const PlainRules::Reg& rule = p.regs[r];
    switch (rule.kind) {
      case PlainRules::Reg::kSame:
        break;
      case PlainRules::Reg::kUndefined:
        if (r == kRegRbp) rbp_null = true;
        if (r == ra) ra_null = true;
        break;
      case PlainRules::Reg::kAtCfa: {
        std::uint64_t v;
        if (!target.read(cfa + rule.offset, v)) {
          if (r == ra) return Step::kError;
          break;
        }
        next.set(r, v);
        break;
      }
      case PlainRules::Reg::kCfaPlus:
        next.set(r, cfa + rule.offset);
        break;
      case PlainRules::Reg::kInReg:
        if (regs.has(rule.reg)) next.set(r, regs.value[rule.reg]);
        break;
    }
  }
  return ra_null || rbp_null ? Step::kDone : Step::kNext;
}

// One step of libunwind's unw_step on x86-64: the caller's registers into
// `next` (not `regs`). `sp` is the current CFA (libunwind's view of %rsp);
// `prev_instr` whether to look up ip - 1.
Step step(const UnwindRegs& regs, UnwindRegs& next, std::uint64_t& sp, bool& prev_instr,
          UnwindTarget& target) {
  const std::uint64_t ip = regs.value[kRegRip];
  std::uint64_t bias = 0;
  UnwindTables* tables = target.tables_at(ip, bias);
  // No file to read tables from: perf's find_proc_info fails outright
  // (-EINVAL), and libunwind tries no fallback.
  if (!tables) return Step::kError;
  const UnwindTables::Frame* frame = tables->frame_at(ip - bias - (prev_instr ? 1 : 0));
  const std::uint64_t prev_ip = ip, prev_sp = sp;
  if (frame) {
    std::uint64_t cfa_v = 0;
    Step rules;
    if (frame->plain) {
      rules = plain_rules_step(*frame->plain, frame->ra, regs, sp, target, next, cfa_v);
    } else {
      next = UnwindRegs{};
      rules = evaluated_rules_step(*frame, regs, sp, target, next, cfa_v);
    }
    if (rules != Step::kNext) return rules;
    if (!next.has(frame->ra)) return Step::kError;
    std::uint64_t new_ip = next.value[frame->ra];
    next.set(kRegRip, new_ip);
    sp = cfa_v;
    next.set(kRegRsp, sp);
    prev_instr = !frame->signal;
    // A return address read as 0 is still a frame to libunwind (perf shows
    // it as ffffffffffffffff); the step after it finds no map and stops.
    if (new_ip == prev_ip && sp == prev_sp) return Step::kError;
    return Step::kNext;
  }
  // Tables without a frame for ip (-UNW_ENOINFO): libunwind's x86-64 fallbacks.
  std::uint64_t w0 = 0, w1 = 0;
  if (target.read(ip, w0) && target.read(ip + 8, w1) && (w0 & 0xffff) == 0x25ff &&
      ((w0 >> 48) & 0xff) == 0x68 && ((w1 >> 24) & 0xff) == 0xe9) {
    // A PLT stub: the return address is at the stack pointer.
    std::uint64_t ra;
    if (!target.read(sp, ra)) return Step::kError;
    next = regs;
    next.set(kRegRip, ra);
    sp += 8;
    next.set(kRegRsp, sp);
  } else {
    if (!regs.has(kRegRbp)) return Step::kDone;
    const std::uint64_t rbp = regs.value[kRegRbp];
    std::uint64_t unused;
    const bool ip_readable = target.read(prev_ip, unused);
    if (!rbp && ip_readable) return Step::kDone;
    std::uint64_t saved_rbp = 0, ra = 0;
    if (!target.read(rbp, saved_rbp) || rbp < sp || rbp - sp > 0x4000) return Step::kDone;
    if (!target.read(rbp + 8, ra)) return Step::kError;
    next = UnwindRegs{};
    next.set(kRegRbp, saved_rbp);
    next.set(kRegRip, ra);
    sp += 16;
  }
  prev_instr = true;
  // A return address of 0 found this way is a frame to libunwind too (perf
  // shows it as ffffffffffffffff); the step after it finds no map.
  if (next.value[kRegRip] == prev_ip && sp == prev_sp) return Step::kError;
  return Step::kNext;
}

}  // namespace

void unwind_stack(const UnwindRegs& initial, UnwindTarget& target, int max,
                  std::vector<std::uint64_t>& ips) {
  if (max <= 0 || !initial.has(kRegRip)) return;
  ips.push_back(initial.value[kRegRip]);
  if (!initial.has(kRegRsp)) return;
  // Each step reads one set of registers and writes the other.
  UnwindRegs regs[2] = {initial, {}};
  int cur = 0;
  std::uint64_t sp = initial.value[kRegRsp];
  bool prev_instr = false;
  for (int i = 1; i < max; ++i) {
    if (step(regs[cur], regs[cur ^ 1], sp, prev_instr, target) != Step::kNext) break;
    cur ^= 1;
    std::uint64_t ip = regs[cur].value[kRegRip];
    if (!at_sigreturn(target, ip)) --ip;
    ips.push_back(ip);
  }
}

}  // namespace perfkit::dwarf
