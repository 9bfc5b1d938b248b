#include "dump/dump_stats.h"

#include "abi/names.h"

namespace perfkit::dump {

std::uint64_t RecordStats::of(std::uint32_t type) const {
  if (type < counts_.size()) return counts_[type];
  auto it = unknown_.find(type);
  return it == unknown_.end() ? 0 : it->second;
}

void RecordStats::print(FdWriter& out, bool with_percent) const {
  auto line = [&](std::string_view name, std::uint64_t n) {
    double pct = total_ ? 100.0 * static_cast<double>(n) / static_cast<double>(total_) : 0.0;
    if (with_percent)
      out.print("{:>16} events: {:>10}  ({:4.1f}%)\n", name, n, pct);
    else
      out.print("{:>16} events: {:>10}\n", name, n);
  };
  for (std::uint32_t t = 1; t < counts_.size(); ++t) {
    if (!counts_[t]) continue;
    auto name = abi::record_type_name(t);
    line(name.empty() ? fmt::format("UNKNOWN({})", t) : std::string(name), counts_[t]);
  }
  for (auto [t, n] : unknown_) line(fmt::format("UNKNOWN({})", t), n);
  out.print("{:>16} events: {:>10}\n", "TOTAL", total_);
}

void RecordStats::print_perf_dump(FdWriter& out) const {
  out.print("{:>16} events: {:>10}\n", "TOTAL", total_);
  for (std::uint32_t t = 1; t < counts_.size(); ++t) {
    auto name = abi::record_type_name(t);
    if (!counts_[t] || name.empty()) continue;
    double pct = 100.0 * static_cast<double>(counts_[t]) / static_cast<double>(total_);
    out.print("{:>16} events: {:>10}  ({:4.1f}%)\n", name, counts_[t], pct);
  }
}

}  // namespace perfkit::dump
