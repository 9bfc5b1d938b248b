#include "report/branch_types.h"

#include <algorithm>
#include <cstdio>

namespace perfkit::report {

namespace {

constexpr std::uint8_t kBrCond = 1, kBrExtendAbi = 15;

const char* type_name(int type) {
  static const char* const kNames[BranchTypeStat::kTypes] = {
      "N/A",    "COND",      "UNCOND",   "IND",  "CALL", "IND_CALL", "RET",   "SYSCALL",
      "SYSRET", "COND_CALL", "COND_RET", "ERET", "IRQ",  "SERROR",   "NO_TX", ""};
  return kNames[type];
}

const char* new_type_name(int type) {
  static const char* const kNames[BranchTypeStat::kNewTypes] = {
      "FAULT_ALGN", "FAULT_DATA", "FAULT_INST", "ARCH_1", "ARCH_2", "ARCH_3", "ARCH_4", "ARCH_5"};
  return kNames[type];
}

}  // namespace

void BranchTypeStat::count(std::uint8_t type, std::uint8_t new_type, std::uint64_t from,
                           std::uint64_t to) {
  if (type == 0 || from == 0) return;
  if (type == kBrExtendAbi) {
    if (new_type < kNewTypes) ++new_counts[new_type];
  } else {
    ++counts[type & 0xf];
  }
  if (type == kBrCond) ++(to > from ? cond_fwd : cond_bwd);
  if ((from >> 21) != (to >> 21))
    ++cross_2m;
  else if ((from >> 12) != (to >> 12))
    ++cross_4k;
}

int branch_type_text(const BranchTypeStat& st, char* buf, std::size_t cap) {
  std::uint64_t total = 0;
  for (std::uint32_t c : st.counts) total += c;
  for (std::uint32_t c : st.new_counts) total += c;
  if (total == 0) return 0;
  int n = 0, parts = 0;
  auto put = [&](const char* name) {
    if (n >= 0 && static_cast<std::size_t>(n) < cap)
      n += std::snprintf(buf + n, cap - static_cast<std::size_t>(n), "%s%s", parts++ ? " " : " (",
                         name);
  };
  if (st.cond_fwd) put("COND_FWD");
  if (st.cond_bwd) put("COND_BWD");
  for (int i = 0; i < BranchTypeStat::kTypes; ++i)
    if (i != kBrCond && st.counts[i]) put(type_name(i));
  for (int i = 0; i < BranchTypeStat::kNewTypes; ++i)
    if (st.new_counts[i]) put(new_type_name(i));
  if (st.cross_4k) put("CROSS_4K");
  if (st.cross_2m) put("CROSS_2M");
  return std::clamp(n, 0, static_cast<int>(cap) - 1);
}

std::string branch_type_statistics(const BranchTypeStat& st) {
  std::uint64_t total = 0;
  for (std::uint32_t c : st.counts) total += c;
  if (total == 0) return {};
  std::string out = "\n#\n# Branch Statistics:\n#";
  char line[64];
  auto put = [&](const char* name, std::uint32_t v) {
    if (!v) return;
    std::snprintf(line, sizeof line, "\n%8s: %5.1f%%", name,
                  100.0 * static_cast<double>(v) / static_cast<double>(total));
    out += line;
  };
  put("COND_FWD", st.cond_fwd);
  put("COND_BWD", st.cond_bwd);
  put("CROSS_4K", st.cross_4k);
  put("CROSS_2M", st.cross_2m);
  for (int i = 0; i < BranchTypeStat::kTypes; ++i) put(type_name(i), st.counts[i]);
  for (int i = 0; i < BranchTypeStat::kNewTypes; ++i) put(new_type_name(i), st.new_counts[i]);
  return out;
}

}  // namespace perfkit::report
