// The data_src field of perf script: PERF_SAMPLE_DATA_SRC decoded as perf
// 6.1's perf_script__meminfo_scnprintf prints it ("|OP LOAD|LVL L1 hit|SNP
// None|TLB L1 or L2 hit|LCK No|BLK  N/A"), padded to the widest one so far.
#include <string>

#include "script/script_printer.h"

namespace perfkit::script {

namespace {

// Bit fields of union perf_mem_data_src.
struct DataSrc {
  std::uint64_t v;
  std::uint64_t bits(unsigned at, unsigned n) const { return (v >> at) & ((1ULL << n) - 1); }
  std::uint64_t op() const { return bits(0, 5); }
  std::uint64_t lvl() const { return bits(5, 14); }
  std::uint64_t snoop() const { return bits(19, 5); }
  std::uint64_t lock() const { return bits(24, 2); }
  std::uint64_t dtlb() const { return bits(26, 7); }
  std::uint64_t lvl_num() const { return bits(33, 4); }
  std::uint64_t remote() const { return bits(37, 1); }
  std::uint64_t snoopx() const { return bits(38, 2); }
  std::uint64_t blk() const { return bits(40, 3); }
  std::uint64_t hops() const { return bits(43, 3); }
};

// Names of the set bits of `m`, " or " between them.
template <std::size_t N>
void bit_names(std::string& out, std::uint64_t m, const char* const (&names)[N], bool& any) {
  for (std::size_t i = 0; m && i < N; ++i, m >>= 1) {
    if (!(m & 1)) continue;
    if (any) out += " or ";
    out += names[i];
    any = true;
  }
}

void op(std::string& o, const DataSrc& d) {
  const std::uint64_t m = d.op();
  o += (m & 1)    ? "N/A"
       : (m & 2)  ? "LOAD"
       : (m & 4)  ? "STORE"
       : (m & 8)  ? "PFETCH"
       : (m & 16) ? "EXEC"
                  : "No";
}

void lvl(std::string& o, const DataSrc& d) {
  static const char* const kLvl[] = {"N/A",
                                     "HIT",
                                     "MISS",
                                     "L1",
                                     "LFB/MAB",
                                     "L2",
                                     "L3",
                                     "Local RAM",
                                     "Remote RAM (1 hop)",
                                     "Remote RAM (2 hops)",
                                     "Remote Cache (1 hop)",
                                     "Remote Cache (2 hops)",
                                     "I/O",
                                     "Uncached"};
  static const char* const kHops[] = {
      "N/A", "core, same node", "node, same socket", "socket, same board", "board", "", "", ""};
  const std::size_t start = o.size();
  std::uint64_t m = d.lvl();
  const bool hit = m & 2, miss = m & 4;
  m &= ~std::uint64_t{6};
  bool any = false;
  if (d.remote()) o += "Remote ";
  if (d.hops()) {
    o += kHops[d.hops()];
    o += ' ';
  } else {
    bit_names(o, m, kLvl, any);
  }
  if (const std::uint64_t n = d.lvl_num()) {
    if (any) o += " or ";
    any = true;
    switch (n) {
      case 0x09:
        o += "CXL";
        break;
      case 0x0a:
        o += "I/O";
        break;
      case 0x0b:
        o += "Any cache";
        break;
      case 0x0c:
        o += "LFB/MAB";
        break;
      case 0x0d:
        o += "RAM";
        break;
      case 0x0e:
        o += "PMEM";
        break;
      case 0x0f:
        o += "N/A";
        break;
      default:
        o += "L" + std::to_string(n);
        break;
    }
  }
  if (o.size() == start) o += "N/A";
  if (hit) o += " hit";
  if (miss) o += " miss";
}

void snoop(std::string& o, const DataSrc& d) {
  static const char* const kSnoop[] = {"N/A", "None", "Hit", "Miss", "HitM"};
  static const char* const kSnoopx[] = {"Fwd", "Peer"};
  bool any = false;
  bit_names(o, d.snoop(), kSnoop, any);
  bit_names(o, d.snoopx(), kSnoopx, any);
  if (!any) o += "N/A";
}

void tlb(std::string& o, const DataSrc& d) {
  static const char* const kTlb[] = {"N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault"};
  std::uint64_t m = d.dtlb();
  const bool hit = m & 2, miss = m & 4;
  m &= ~std::uint64_t{6};
  bool any = false;
  bit_names(o, m, kTlb, any);
  if (!any) o += "N/A";
  if (hit) o += " hit";
  if (miss) o += " miss";
}

void blk(std::string& o, const DataSrc& d) {
  const std::uint64_t m = d.blk();
  if (!m || (m & 1)) {
    o += " N/A";
    return;
  }
  if (m & 2) o += " Data";
  if (m & 4) o += " Addr";
}

}  // namespace

void ScriptPrinter::print_data_src(std::uint64_t data_src) {
  const DataSrc d{data_src};
  std::string decode = "|OP ";
  op(decode, d);
  decode += "|LVL ";
  lvl(decode, d);
  decode += "|SNP ";
  snoop(decode, d);
  decode += "|TLB ";
  tlb(decode, d);
  decode += "|LCK ";
  decode += (d.lock() & 1) ? "N/A" : (d.lock() & 2) ? "Yes" : "No";
  decode += "|BLK ";
  blk(decode, d);
  if (decode.size() > 99) decode.resize(99);  // perf's 100-byte buffers
  std::string line = fmt::format("{:16x} {}", data_src, decode);
  if (line.size() > 99) line.resize(99);
  data_src_width_ = std::max(data_src_width_, line.size());
  fmt::format_to(fmt::appender(b_), "{:<{}}", line, data_src_width_);
}

}  // namespace perfkit::script
