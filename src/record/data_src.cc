#include "record/data_src.h"

namespace perfkit::record {

namespace {

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

}  // namespace

void append_mem_op(std::string& o, DataSrc d) {
  const std::uint64_t m = d.op();
  o += (m & 1)    ? "N/A"
       : (m & 2)  ? "LOAD"
       : (m & 4)  ? "STORE"
       : (m & 8)  ? "PFETCH"
       : (m & 16) ? "EXEC"
                  : "No";
}

void append_mem_lvl(std::string& o, DataSrc d) {
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

void append_mem_snoop(std::string& o, DataSrc d) {
  static const char* const kSnoop[] = {"N/A", "None", "Hit", "Miss", "HitM"};
  static const char* const kSnoopx[] = {"Fwd", "Peer"};
  bool any = false;
  bit_names(o, d.snoop(), kSnoop, any);
  bit_names(o, d.snoopx(), kSnoopx, any);
  if (!any) o += "N/A";
}

void append_mem_tlb(std::string& o, DataSrc d) {
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

void append_mem_blk(std::string& o, DataSrc d) {
  const std::uint64_t m = d.blk();
  if (!m || (m & 1)) {
    o += " N/A";
    return;
  }
  if (m & 2) o += " Data";
  if (m & 4) o += " Addr";
}

void append_mem_lock(std::string& o, DataSrc d) {
  o += (d.lock() & 1) ? "N/A" : (d.lock() & 2) ? "Yes" : "No";
}

}  // namespace perfkit::record
