#include "report/diff_gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace perfkit::report {

namespace {

struct Spread {
  double mean = 0, min = 0, max = 0;
};

Spread spread(const std::vector<double>& v) {
  Spread s;
  if (v.empty()) return s;
  s.min = s.max = v[0];
  for (double x : v) s.mean += x, s.min = std::min(s.min, x), s.max = std::max(s.max, x);
  s.mean /= static_cast<double>(v.size());
  return s;
}

double share(const DiffEvent& e, const DiffRow& r, std::size_t f) {
  return e.total[f] ? 100.0 * static_cast<double>(r.period[f]) / static_cast<double>(e.total[f])
                    : 0.0;
}

// The files of `set` that have the event.
std::vector<std::size_t> with_event(const DiffEvent& e, const std::vector<std::size_t>& set) {
  std::vector<std::size_t> out;
  for (std::size_t f : set)
    if (f < e.present.size() && e.present[f]) out.push_back(f);
  return out;
}

void check_event(const DiffEvent& e, const std::vector<std::size_t>& base, std::size_t set,
                 const std::vector<std::size_t>& now, const GateLimits& limits,
                 std::vector<GateViolation>& out) {
  auto values = [](const std::vector<std::size_t>& files, auto get) {
    std::vector<double> v;
    for (std::size_t f : files) v.push_back(get(f));
    return v;
  };
  if (limits.total_percent) {
    auto total = [&](std::size_t f) { return static_cast<double>(e.total[f]); };
    const Spread b = spread(values(base, total)), n = spread(values(now, total));
    const double change = b.mean > 0 ? 100.0 * (n.mean - b.mean) / b.mean : 0.0;
    if (b.mean > 0 && change > *limits.total_percent && n.min > b.max)
      out.push_back(
          {true, e.name, set, nullptr, b.mean, n.mean, b.min, b.max, n.min, n.max, change});
  }
  if (!limits.entry_points) return;
  const std::size_t first = out.size();
  for (const DiffRow& r : e.rows) {
    auto sh = [&](std::size_t f) { return share(e, r, f); };
    const Spread b = spread(values(base, sh)), n = spread(values(now, sh));
    const double change = n.mean - b.mean;
    if (change > *limits.entry_points && n.min > b.max)
      out.push_back({false, e.name, set, &r, b.mean, n.mean, b.min, b.max, n.min, n.max, change});
  }
  std::stable_sort(
      out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
      [](const GateViolation& x, const GateViolation& y) { return x.change > y.change; });
}

}  // namespace

std::vector<GateViolation> check_gate(const std::vector<DiffEvent>& events,
                                      const std::vector<std::size_t>& base_set,
                                      const std::vector<std::vector<std::size_t>>& new_sets,
                                      const GateLimits& limits) {
  std::vector<GateViolation> out;
  for (const DiffEvent& e : events) {
    const std::vector<std::size_t> base = with_event(e, base_set);
    if (base.empty()) continue;
    for (std::size_t s = 0; s < new_sets.size(); ++s) {
      const std::vector<std::size_t> now = with_event(e, new_sets[s]);
      if (!now.empty()) check_event(e, base, s, now, limits, out);
    }
  }
  return out;
}

std::string row_label(const DiffRow& r) {
  std::string s;
  auto add = [&s](const std::string& part) {
    if (part.empty()) return;
    if (!s.empty()) s += "  ";
    s += part;
  };
  add(r.comm);
  if (r.pid) add(fmt::format("{}", r.pid));
  add(r.dso);
  add(r.symbol);
  add(r.keys);
  return s;
}

}  // namespace perfkit::report
