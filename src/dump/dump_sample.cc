// The decoded part of a PERF_RECORD_SAMPLE as perf 6.1's dump_sample() prints it.
#include <array>

#include "abi/perf_event.h"
#include "abi/registers.h"
#include "dump/dump_records_impl.h"

namespace perfkit::dump::detail {

using namespace perfkit::abi;
using record::RecordView;
using record::Sample;

namespace {

// perf's branch_type_name() and branch_new_type_name().
constexpr std::array<std::string_view, 15> kBranchTypes = {
    "N/A",    "COND",      "UNCOND",   "IND",  "CALL", "IND_CALL", "RET",  "SYSCALL",
    "SYSRET", "COND_CALL", "COND_RET", "ERET", "IRQ",  "SERROR",   "NO_TX"};
constexpr std::array<std::string_view, 8> kBranchNewTypes = {
    "FAULT_ALGN", "FAULT_DATA", "FAULT_INST", "ARCH_1", "ARCH_2", "ARCH_3", "ARCH_4", "ARCH_5"};

std::string_view branch_type(std::uint64_t flags) {
  const unsigned type = (flags >> 20) & 0xf;
  if (type == 0) return "";
  if (type < kBranchTypes.size()) return kBranchTypes[type];
  const unsigned new_type = (flags >> 26) & 0xf;  // PERF_BR_EXTEND_ABI
  return new_type < kBranchNewTypes.size() ? kBranchNewTypes[new_type] : std::string_view("");
}

void print_regs(PrinterState& st, std::string_view which, const record::Regs& regs, Buf& b) {
  if (regs.abi == kRegsAbiNone) return;
  std::string_view abi = regs.abi == kRegsAbi32   ? "32-bit"
                         : regs.abi == kRegsAbi64 ? "64-bit"
                                                  : "unknown";
  auto out = fmt::appender(b);
  fmt::format_to(out, "... {} regs: mask {:#x} ABI {}\n", which, regs.mask, abi);
  const std::string& arch = st.regs_arch();
  std::uint64_t i = 0;
  for (unsigned reg = 0; reg < 64; ++reg) {
    if (!(regs.mask & (1ULL << reg))) continue;
    const std::uint64_t v = i < regs.values.size() ? regs.values[i] : 0;
    ++i;
    fmt::format_to(out, ".... {:<5} 0x{:016x}\n", register_name(arch, reg), v);
  }
}

void print_callchain(const PrinterState& st, const perfdata::EventDesc& ev, const Sample& s,
                     Buf& b) {
  auto out = fmt::appender(b);
  const auto& cc = s.callchain;
  const auto& bs = s.branch_stack;
  if ((ev.attr.branch_sample_type & kBranchCallStack) && (s.sample_type & kSampleBranchStack)) {
    std::uint64_t i = 0;
    while (i < cc.size() && cc[i] != kContextUser) ++i;
    if (i != cc.size() && bs.nr) {
      fmt::format_to(out, "... LBR call chain: nr:{}\n", i + 1 + bs.nr + 1);
      for (std::uint64_t k = 0; k <= i; ++k) fmt::format_to(out, "..... {:2}: {:016x}\n", k, cc[k]);
      fmt::format_to(out, "..... {:2}: {:016x}\n", i + 1, bs.at(0).to);
      for (std::uint64_t k = 0; k < bs.nr; ++k)
        fmt::format_to(out, "..... {:2}: {:016x}\n", k + i + 2, bs.at(k).from);
    }
  }
  (void)st;
  fmt::format_to(out, "... FP chain: nr:{}\n", cc.size());
  for (std::uint64_t k = 0; k < cc.size(); ++k)
    fmt::format_to(out, "..... {:2}: {:016x}\n", k, cc[k]);
}

void print_branch_stack(const perfdata::EventDesc& ev, const Sample& s, Buf& b) {
  auto out = fmt::appender(b);
  const auto& bs = s.branch_stack;
  if (!(ev.attr.branch_sample_type & kBranchCallStack)) {
    fmt::format_to(out, "... branch stack: nr:{}\n", bs.nr);
    for (std::uint64_t i = 0; i < bs.nr; ++i) {
      const record::BranchEntry e = bs.at(i);
      const std::uint64_t f = e.flags;
      fmt::format_to(out, "..... {:2}: {:016x} -> {:016x} {} cycles {}{}{}{} {:x} {}\n", i, e.from,
                     e.to, static_cast<std::uint16_t>(f >> 4), (f & 1) ? "M" : " ",
                     (f & 2) ? "P" : " ", (f & 8) ? "A" : " ", (f & 4) ? "T" : " ",
                     static_cast<std::uint32_t>(f >> 33), branch_type(f));
    }
    return;
  }
  fmt::format_to(out, "... branch callstack: nr:{}\n", bs.nr + 1);
  for (std::uint64_t i = 0; i < bs.nr; ++i) {
    const record::BranchEntry e = bs.at(i);
    if (i == 0)
      fmt::format_to(out, "..... {:2}: {:016x}\n..... {:2}: {:016x}\n", i, e.to, i + 1, e.from);
    else
      fmt::format_to(out, "..... {:2}: {:016x}\n", i + 1, e.from);
  }
}

// perf's get_page_size_name(): "4K", "2M", "N/A" for 0.
void page_size(Buf& b, std::uint64_t n) {
  if (n == 0) return put(b, "N/A");
  static constexpr char kUnits[] = "BKMG";
  int i = 0;
  while (n / 1024 > 1 && i < 3) {
    n /= 1024;
    ++i;
  }
  fmt::format_to(fmt::appender(b), "{}{}", n, kUnits[i]);
}

void print_sample_read(const perfdata::EventDesc& ev, const Sample& s, Buf& b) {
  auto out = fmt::appender(b);
  const std::uint64_t rf = ev.attr.read_format;
  put(b, "... sample_read:\n");
  if (rf & kFormatTotalTimeEnabled)
    fmt::format_to(out, "...... time enabled {:016x}\n", s.read.time_enabled);
  if (rf & kFormatTotalTimeRunning)
    fmt::format_to(out, "...... time running {:016x}\n", s.read.time_running);
  auto value = [&](const record::ReadValues::Value& v) {
    fmt::format_to(out, "..... id {:016x}, value {:016x}", v.id, v.value);
    if (rf & kFormatLost) fmt::format_to(out, ", lost {}", v.lost);
    b.push_back('\n');
  };
  if (rf & kFormatGroup) {
    fmt::format_to(out, ".... group nr {}\n", s.read.nr);
    for (std::uint64_t i = 0; i < s.read.nr; ++i) value(s.read.at(i));
  } else {
    value(s.read.at(0));
  }
}

}  // namespace

void print_sample(PrinterState& st, const RecordView& r, const perfdata::EventDesc& ev,
                  const Sample& s, Buf& b) {
  const std::uint64_t t = ev.attr.sample_type;
  auto out = fmt::appender(b);
  const std::int32_t pid = (t & kSampleTid) ? static_cast<std::int32_t>(s.pid) : -1;
  const std::int32_t tid = (t & kSampleTid) ? static_cast<std::int32_t>(s.tid) : -1;
  fmt::format_to(out, "(IP, 0x{:x}): {}/{}: {} period: {} addr: {}\n", r.misc, pid, tid,
                 AltHex{(t & kSampleIp) ? s.ip : 0},
                 (t & kSamplePeriod) ? s.period : ev.attr.sample_period,
                 AltHex{(t & kSampleAddr) ? s.addr : 0});
  if (t & kSampleCallchain) print_callchain(st, ev, s, b);
  if (t & kSampleBranchStack) print_branch_stack(ev, s, b);
  if (t & kSampleRegsUser) print_regs(st, "user", s.user_regs, b);
  if (t & kSampleRegsIntr) print_regs(st, "intr", s.intr_regs, b);
  if (t & kSampleStackUser) {
    // perf shows where the size field sits in the record, and the dumped size.
    const auto offset = static_cast<std::uint32_t>(s.user_stack.data() - 8 - r.bytes.data());
    fmt::format_to(out, "... ustack: size {}, offset {:#x}\n",
                   s.user_stack.empty() ? 0 : s.user_stack_dyn_size, offset);
  }
  if (t & kSampleWeightType) {
    if (t & kSampleWeight) {
      fmt::format_to(out, "... weight: {}", s.weight);
      if (t & kSampleWeightStruct) put(b, ",0x0,0x0");
    } else {
      // x86 perf takes var2 as the instruction latency and leaves the
      // pipeline-stage cycles (powerpc's var3) at zero.
      fmt::format_to(out, "... weight: {},{:#x},0x0", s.weight_var1(), s.weight_var2());
    }
    b.push_back('\n');
  }
  if (t & kSampleDataSrc) fmt::format_to(out, " . data_src: {:#x}\n", s.data_src);
  if (t & kSamplePhysAddr) fmt::format_to(out, " .. phys_addr: {:#x}\n", s.phys_addr);
  if (t & kSampleDataPageSize) {
    put(b, " .. data page size: ");
    page_size(b, s.data_page_size);
    b.push_back('\n');
  }
  if (t & kSampleCodePageSize) {
    put(b, " .. code page size: ");
    page_size(b, s.code_page_size);
    b.push_back('\n');
  }
  if (t & kSampleTransaction) fmt::format_to(out, "... transaction: {:x}\n", s.transaction);
  if (t & kSampleRead) print_sample_read(ev, s, b);
}

void count_sample(PrinterState& st, int idx, const Sample& s) {
  if (st.event_samples.size() < st.events.size()) st.event_samples.resize(st.events.size());
  if (idx < 0 || static_cast<std::size_t>(idx) >= st.event_samples.size()) return;
  if (st.branch_mode) {
    // perf report's branch mode adds one hist entry per branch.
    if (s.sample_type & kSampleBranchStack)
      st.event_samples[static_cast<std::size_t>(idx)] += s.branch_stack.nr;
    return;
  }
  if (!(s.sample_type & kSampleRead)) {
    ++st.event_samples[static_cast<std::size_t>(idx)];
    return;
  }
  // A READ sample is delivered once per value, to the value's event, with
  // the change since the last one as its period; a zero period is dropped.
  auto deliver = [&](const record::ReadValues::Value& v) {
    const int ev = st.events.index_of_id(v.id);
    if (ev < 0) return;
    std::uint64_t& last = st.read_last[v.id];
    const std::uint64_t period = v.value - last;
    last = v.value;
    if (period) ++st.event_samples[static_cast<std::size_t>(ev)];
  };
  if (s.read.read_format & kFormatGroup) {
    for (std::uint64_t i = 0; i < s.read.nr; ++i) deliver(s.read.at(i));
  } else {
    deliver(s.read.at(0));
  }
}

}  // namespace perfkit::dump::detail
