#include "report/report_cells.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "symbol/symbol_table.h"

namespace perfkit::report {

// snprintf(buf, cap, "%-*.*s", w, w, s): left-aligned in `w`, cut at `w`,
// at most cap - 1 bytes stored; returns the untruncated length, as snprintf.
std::vector<int> parse_column_widths(std::string_view list) {
  std::vector<int> out;
  if (list.empty()) return out;
  const std::string s(list);
  const char* p = s.c_str();
  for (;;) {
    char* end = nullptr;
    out.push_back(static_cast<int>(std::strtol(p, &end, 10)));
    if (*end != ',') break;
    p = end + 1;
  }
  return out;
}

int put_left(char* buf, std::size_t cap, std::string_view s, int w) {
  auto width = static_cast<std::size_t>(std::max(w, 0));
  std::size_t stored = std::min(width, cap - 1);
  std::size_t n = std::min(s.size(), stored);
  std::memcpy(buf, s.data(), n);
  std::memset(buf + n, ' ', stored - n);
  return static_cast<int>(width);
}

// perf's get_percent_color: red from 5%, green above 0.5%, else none.
const char* percent_color(double p) {
  const double a = std::fabs(p);
  return a >= 5.0 ? "\033[31m" : a > 0.5 ? "\033[32m" : nullptr;
}

// printf's "%*.2f%%" in `width` after `lead` (to_chars gives printf's
// digits for a precision); with `color`, all of it in the percentage's
// colour (perf's percent_color_snprintf).
std::size_t put_percent(FdWriter& out, double p, const char* lead, int width, bool color) {
  const char* c = color ? percent_color(p) : nullptr;
  if (c) out.write(c);
  char buf[64];
  char* end = std::to_chars(buf, buf + sizeof buf, p, std::chars_format::fixed, 2).ptr;
  auto len = static_cast<std::size_t>(end - buf);
  out.write(lead);
  for (auto w = static_cast<std::size_t>(std::max(width, 0)); len < w; --w) out.write(" ");
  out.write(std::string_view(buf, len));
  // (printf's negative width: left-aligned, padded after)
  for (auto w = static_cast<std::size_t>(std::max(-width, 0)); len < w; --w) out.write(" ");
  out.write("%");
  if (c) out.write("\033[m");
  const auto w = static_cast<std::size_t>(width < 0 ? -width : width);
  return std::strlen(lead) + std::max(w, len) + 1;
}

const char* header_of(SortKey k) {
  switch (k) {
    case SortKey::kComm:
      return "Command";
    case SortKey::kPid:
      return "    Pid:Command";
    case SortKey::kDso:
      return "Shared Object";
    case SortKey::kSym:
      return "Symbol";
    case SortKey::kCpu:
      return "CPU";
    case SortKey::kSymoff:
      return "Symbol Offset";
    case SortKey::kSocket:
      return "Socket";
    case SortKey::kParent:
      return "Parent symbol";
    case SortKey::kTime:
      return "Time";
    case SortKey::kSrcline:
      return "Source:Line";
    case SortKey::kSrcfile:
      return "Source File";
    case SortKey::kTrace:
      return "Trace output";
    case SortKey::kPeriod:
      return "Period";
    case SortKey::kOverhead:
      return "Overhead";
    case SortKey::kOverheadChildren:
      return "Children";
    case SortKey::kOverheadSys:
      return "sys";
    case SortKey::kOverheadUs:
      return "usr";
    case SortKey::kOverheadGuestSys:
      return "guest sys";
    case SortKey::kOverheadGuestUs:
      return "guest usr";
    case SortKey::kSample:
      return "Samples";
    case SortKey::kDsoFrom:
      return "Source Shared Object";
    case SortKey::kDsoTo:
      return "Target Shared Object";
    case SortKey::kSymFrom:
      return "Source Symbol";
    case SortKey::kSymTo:
      return "Target Symbol";
    case SortKey::kCycles:
      return "Basic Block Cycles";
    case SortKey::kMispredict:
      return "Branch Mispredicted";
    case SortKey::kInTx:
      return "Branch in transaction";
    case SortKey::kAbort:
      return "Transaction abort";
    case SortKey::kAddrFrom:
      return "Source Address";
    case SortKey::kAddrTo:
      return "Target Address";
    case SortKey::kSrclineFrom:
      return "From Source:Line";
    case SortKey::kSrclineTo:
      return "To Source:Line";
    case SortKey::kIpcLbr:
    case SortKey::kIpcNull:
      return "IPC   [IPC Coverage]";
    case SortKey::kLocalWeight:
      return "Local Weight";
    case SortKey::kWeight:
      return "Weight";
    case SortKey::kLocalInsLat:
      return "Local INSTR Latency";
    case SortKey::kInsLat:
      return "INSTR Latency";
    case SortKey::kSymDaddr:
      return "Data Symbol";
    case SortKey::kSymIaddr:
      return "Code Symbol";
    case SortKey::kDsoDaddr:
      return "Data Object";
    case SortKey::kLocked:
      return "Locked";
    case SortKey::kTlb:
      return "TLB access";
    case SortKey::kMem:
      return "Memory access";
    case SortKey::kSnoop:
      return "Snoop";
    case SortKey::kBlocked:
      return "Blocked";
    case SortKey::kPhysDaddr:
      return "Data Physical Address";
    case SortKey::kDataPageSize:
      return "Data Page Size";
    case SortKey::kDcacheline:
      return "Data Cacheline";
    case SortKey::kSymSize:
      return "Symbol size";
    case SortKey::kDsoSize:
      return "DSO size";
    case SortKey::kAddr:
      return "Address";
    case SortKey::kCodePageSize:
      return "Code Page Size";
    case SortKey::kTransaction:
      return "Transaction                ";
    case SortKey::kCgroup:
      return "Cgroup";
    case SortKey::kCgroupId:
      return "cgroup id (dev/inode)";
    default:
      return "?";
  }
}

// perf's _hist_entry__sym_snprintf: "[level] name" cut to the width (an
// object's name with its offset from `ip`), or the address when there is
// no symbol. Returns the untruncated length, as snprintf.
int sym_cell(char* buf, std::size_t cap, char level, std::string_view name, std::uint8_t type,
             bool inlined, std::uint64_t ip, std::uint64_t start_abs, int w) {
  buf[0] = '[', buf[1] = level, buf[2] = ']', buf[3] = ' ';
  int n = 4;
  if (name.empty()) return n + std::snprintf(buf + n, cap - n, "%-#.*" PRIx64, 16, ip);
  if (type == symbol::kTypeObject)
    return n + std::snprintf(buf + n, cap - n, "%.*s+0x%" PRIx64, static_cast<int>(name.size()),
                             name.data(), ip - start_abs);
  // perf's "%.*s" in what the width leaves: a width narrower than the
  // level ("-w") is a negative precision, which printf ignores.
  const int room = w - n;
  // As snprintf: n counts what did not fit in buf.
  auto len = room < 0 ? name.size() : std::min(static_cast<std::size_t>(room), name.size());
  std::memcpy(buf + n, name.data(), std::min(len, cap - 1 - n));
  n += static_cast<int>(len);
  if (inlined) {
    constexpr std::string_view kInl = " (inlined)";
    if (static_cast<std::size_t>(n) < cap - 1)
      std::memcpy(buf + n, kInl.data(), std::min(kInl.size(), cap - 1 - n));
    n += static_cast<int>(kInl.size());
  }
  return n;
}

int addr_cell(char* buf, std::size_t cap, char level, const BranchEnd& end, int w) {
  int n = std::snprintf(buf, cap, "[%c] ", level);
  auto rest = [&]() {
    return cap - static_cast<std::size_t>(std::min<int>(n, static_cast<int>(cap) - 1));
  };
  char* at = buf + std::min<int>(n, static_cast<int>(cap) - 1);
  if (!end.has_sym || !end.dso)
    return n + std::snprintf(at, rest(), "%-#.*" PRIx64, 16, end.al_addr);
  const std::string_view name = end.sym_name;
  if (end.sym_type == symbol::kTypeObject)
    return n + std::snprintf(at, rest(), "%.*s+0x%" PRIx64, static_cast<int>(name.size()),
                             name.data(), end.al_addr - end.sym_start_abs);
  // "%.*s" in what the width leaves (none left: printf's negative precision, all of it)
  const int room = w - n;
  const int len =
      room < 0 ? static_cast<int>(name.size()) : std::min(room, static_cast<int>(name.size()));
  n += std::snprintf(at, rest(), "%.*s", len, name.data());
  at = buf + std::min<int>(n, static_cast<int>(cap) - 1);
  if (const std::uint64_t offs = end.al_addr - end.sym_start)
    n += std::snprintf(at, rest(), "+0x%" PRIx64, offs);
  return n;
}

// perf's hpp column width of one event (perf_hpp__reset_width).
std::size_t hpp_len(SortKey k) {
  switch (k) {
    case SortKey::kOverheadGuestSys:
    case SortKey::kOverheadGuestUs:
      return 9;
    case SortKey::kSample:
    case SortKey::kPeriod:
      return 12;
    default:
      return 8;
  }
}

bool is_percent(SortKey k) {
  return is_hpp_key(k) && k != SortKey::kSample && k != SortKey::kPeriod;
}

}  // namespace perfkit::report
