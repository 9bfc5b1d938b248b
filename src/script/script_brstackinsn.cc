// -F brstackinsn, brstackinsnlen (perf 6.1's perf_sample__fprintf_brstackinsn):
// the instructions of the basic blocks a sample's branch stack says ran,
// oldest first, read from the code of the DSOs: the source of the oldest
// branch, each block from one branch's target to the next branch, the
// branch itself with its flags and cycles, then the block from the newest
// target up to the sample. A symbol heads the lines where it changes.
// --max-blocks keeps the newest blocks only.
#include "abi/perf_event.h"
#include "intelpt/insn.h"
#include "script/script_printer.h"

namespace perfkit::script {

using namespace perfkit::abi;
using F = ScriptField;

namespace {

constexpr std::uint64_t kMaxBlock = 16384, kMaxInsn = 15;  // perf's MAXBB, MAXINSN
constexpr int kTransfer = -1;  // a block crossing between kernel and user (perf's -ENXIO)

}  // namespace

// The code of the block [start, end] and an instruction more (perf's
// grab_bb): the bytes read, 0 where they cannot be, kTransfer.
int ScriptPrinter::grab_block(machine::Thread& t, std::uint64_t start, std::uint64_t end,
                              std::vector<std::uint8_t>& buf) {
  if (!start || !end) return 0;
  const bool kernel = start >= kernel_start_;
  if (kernel != (end >= kernel_start_)) return kTransfer;
  if (end - start > kMaxBlock - kMaxInsn) return 0;
  const machine::Location loc =
      session_.machine().resolve(t, kernel ? kMiscKernel : kMiscUser, start);
  if (!loc.map || !loc.dso) return 0;
  // As much as the file has, up to the block and an instruction after it.
  for (std::uint64_t n = end - start + kMaxInsn; n > 0 && n + kMaxInsn > end - start + kMaxInsn;
       --n) {
    buf.resize(n);
    if (read_code(loc, buf.data(), n) == n) return static_cast<int>(n);
  }
  return 0;
}

// The symbol at `addr` and its offset, when it is not the last one shown.
void ScriptPrinter::brstack_symbol(const OutputConfig& o, machine::Thread& t, std::uint64_t addr,
                                   BrstackState& st) {
  const machine::Location loc =
      session_.machine().resolve(t, addr >= kernel_start_ ? kMiscKernel : kMiscUser, addr);
  if (st.have_sym && loc.addr >= st.sym_start && loc.addr < st.sym_end) return;
  if (!loc.map || !loc.dso || loc.symbol < 0 || !loc.dso->symbols) return;
  const symbol::Symbol& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
  const std::int64_t off = loc.addr < sym.end
                               ? static_cast<std::int64_t>(loc.addr - sym.start)
                               : static_cast<std::int64_t>(loc.addr - loc.map->start - sym.start);
  b_.push_back('\t');
  b_.append(symbol_name(loc));
  if (off) fmt::format_to(fmt::appender(b_), "{:+d}", static_cast<int>(off));
  b_.push_back(':');
  if (o.has(F::kSrcline)) print_srcline(loc, "\t");
  b_.push_back('\n');
  st.have_sym = true;
  st.sym_start = sym.start;
  st.sym_end = sym.end;
}

// perf's dump_insn for x86: "insn: " and the instruction's bytes, each with
// a space after it; "<bad>" where it does not decode. `len`: its length.
std::string_view ScriptPrinter::dump_insn(const std::uint8_t* code, int avail, int& len) {
  insn_text_.clear();
  const intelpt::Insn insn =
      avail > 0 ? insn_decoder_.decode(Bytes(code, static_cast<std::size_t>(avail)))
                : intelpt::Insn{};
  if (!insn.length || insn.length > avail) return "<bad>";
  len = insn.length;
  insn_text_ = "insn: ";
  for (int i = 0; i < insn.length; ++i)
    fmt::format_to(std::back_inserter(insn_text_), "{:02x} ", code[i]);
  return insn_text_;
}

void ScriptPrinter::brstack_line(const OutputConfig& o, std::uint64_t ip, const std::uint8_t* code,
                                 int avail, int& len) {
  len = 0;
  const std::string_view text = dump_insn(code, avail, len);
  fmt::format_to(fmt::appender(b_), "\t{:016x}\t{}", ip, text);
  if (o.has(F::kBrstackinsnlen)) fmt::format_to(fmt::appender(b_), "\tilen: {}", len);
  b_.push_back('\n');
}

// A branch: its instruction, then "#" and its flags, cycles and IPC.
void ScriptPrinter::brstack_jump(const OutputConfig& o, std::uint64_t ip,
                                 const record::BranchEntry& e, const std::uint8_t* code, int avail,
                                 int insns, BrstackState& st) {
  int len = 0;
  const std::string_view text = dump_insn(code, avail, len);
  auto out = fmt::appender(b_);
  fmt::format_to(out, "\t{:016x}\t{:<30}\t", ip, text);
  if (o.has(F::kBrstackinsnlen)) fmt::format_to(out, "ilen: {}\t", len);
  fmt::format_to(out, "#{}{}{}{}", (e.flags & 2) ? " PRED" : "", (e.flags & 1) ? " MISPRED" : "",
                 (e.flags & 4) ? " INTX" : "", (e.flags & 8) ? " ABORT" : "");
  if (const int cycles = static_cast<int>((e.flags >> 4) & 0xffff)) {
    st.total_cycles += cycles;
    fmt::format_to(out, " {} cycles [{}]", cycles, st.total_cycles);
    if (insns)
      fmt::format_to(out, " {:.2f} IPC",
                     static_cast<double>(static_cast<float>(insns) / static_cast<float>(cycles)));
  }
  b_.push_back('\n');
}

void ScriptPrinter::print_brstackinsn(const OutputConfig& o, const session::ResolvedSample& s) {
  const record::BranchStack& br = s.sample->branch_stack;
  if (!br.nr || !s.thread) return;
  machine::Thread& t = *s.thread;
  std::uint64_t nr = br.nr;
  if (opts_.max_blocks && nr > opts_.max_blocks + 1) nr = opts_.max_blocks + 1;
  BrstackState st;
  std::vector<std::uint8_t>& buf = brstack_code_;
  b_.push_back('\n');
  // The oldest branch, whose block's start is not known.
  const record::BranchEntry oldest = br.at(nr - 1);
  int len = grab_block(t, oldest.from, oldest.from, buf);
  if (len > 0) {
    brstack_symbol(o, t, oldest.from, st);
    brstack_jump(o, oldest.from, oldest, buf.data(), len, 0, st);
  }
  for (std::int64_t i = static_cast<std::int64_t>(nr) - 2; i >= 0; --i) {
    const std::uint64_t start = br.at(static_cast<std::uint64_t>(i) + 1).to;
    std::uint64_t end = br.at(static_cast<std::uint64_t>(i)).from;
    len = grab_block(t, start, end, buf);
    if (len == kTransfer && i > 0) {  // a kernel entry the filter left out: on to the next
      end = br.at(static_cast<std::uint64_t>(--i)).from;
      len = grab_block(t, start, end, buf);
    }
    if (len <= 0) continue;
    int insns = 0, ilen = 0;
    std::uint64_t off = 0;
    for (; off < static_cast<std::uint64_t>(len); off += static_cast<std::uint64_t>(ilen)) {
      const std::uint64_t ip = start + off;
      brstack_symbol(o, t, ip, st);
      const int avail = len - static_cast<int>(off);
      if (ip == end) {
        brstack_jump(o, ip, br.at(static_cast<std::uint64_t>(i)), buf.data() + off, avail, ++insns,
                     st);
        break;
      }
      brstack_line(o, ip, buf.data() + off, avail, ilen);
      if (!ilen) break;
      ++insns;
    }
    if (off != end - start) b_.append(std::string_view("\tmismatch of LBR data and executable\n"));
  }
  // The newest branch's target up to the sample, unless the sample is the
  // branch or an aborted transaction.
  const record::BranchEntry newest = br.at(0);
  const std::uint64_t ip = s.sample->ip;
  if (newest.from == ip || (newest.flags & 8)) return;
  const std::uint64_t start = newest.to;
  std::uint64_t end = ip < start ? start + 128 : ip;  // a branch missing: scan on
  len = grab_block(t, start, end, buf);
  brstack_symbol(o, t, start, st);
  int ilen = 0;
  if (len <= 0) {
    len = grab_block(t, ip, ip, buf);
    if (len > 0) brstack_line(o, ip, buf.data(), len, ilen);
    return;
  }
  for (std::uint64_t off = 0; off <= end - start; off += static_cast<std::uint64_t>(ilen)) {
    const int avail = len - static_cast<int>(std::min<std::uint64_t>(off, len));
    brstack_line(o, start + off, buf.data() + std::min<std::uint64_t>(off, len), avail, ilen);
    if (!ilen) break;
    const intelpt::Insn insn =
        insn_decoder_.decode(Bytes(buf.data() + off, static_cast<std::size_t>(avail)));
    if (insn.is_branch() && start + off != ip) {
      b_.append(std::string_view("\t... not reaching sample ...\n"));
      break;
    }
  }
}

}  // namespace perfkit::script
