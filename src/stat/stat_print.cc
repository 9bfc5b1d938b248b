#include "stat/stat_print.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace perfkit::stat {

using namespace perfkit::abi;

namespace {

// perf formats with printf; so do we, for the same rounding and padding.
__attribute__((format(printf, 2, 3))) void cprintf(std::string& out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (static_cast<std::size_t>(n) < sizeof buf) {
    out.append(buf, static_cast<std::size_t>(n));
    return;
  }
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  va_end(ap);
  big.resize(static_cast<std::size_t>(n));
  out += big;
}

constexpr int kMetricLen = 35;  // perf 6.1's METRIC_LEN
constexpr const char* kNotSupported = "<not supported>";
constexpr const char* kNotCounted = "<not counted>";

bool hw(const StatEvent& e, std::uint64_t config) {
  return e.attr.type == kTypeHardware && e.attr.config == config;
}
// A hardware-cache read miss of `cache` (L1D 0, L1I 1, LL 2, DTLB 3, ITLB 4).
bool cache_read_miss(const StatEvent& e, std::uint64_t cache) {
  return e.attr.type == kTypeHwCache && e.attr.config == (cache | (0ULL << 8) | (1ULL << 16));
}

double convert_unit(double value, char& unit) {
  unit = ' ';
  if (value > 1000.0) value /= 1000.0, unit = 'K';
  if (value > 1000.0) value /= 1000.0, unit = 'M';
  if (value > 1000.0) value /= 1000.0, unit = 'G';
  return value;
}

int precision_for(double num) {
  if (num > 1) return 0;
  if (num <= 0) return 0;  // lround(inf) truncated to int, as perf ends up with
  return static_cast<int>(std::lround(std::ceil(-std::log10(num))));
}

}  // namespace

std::string format_grouped(double v, int width, int precision, const std::string& sep) {
  std::string digits;
  cprintf(digits, "%.*f", precision, v);
  if (!sep.empty()) {
    std::size_t start = (digits[0] == '-') ? 1 : 0;
    std::size_t end = digits.find('.');
    if (end == std::string::npos) end = digits.size();
    std::string grouped = digits.substr(0, start);
    const std::size_t n = end - start;
    for (std::size_t i = 0; i < n; ++i) {
      grouped += digits[start + i];
      const std::size_t left = n - i - 1;
      if (left > 0 && left % 3 == 0) grouped += sep;
    }
    grouped += digits.substr(end);
    digits = std::move(grouped);
  }
  if (static_cast<int>(digits.size()) < width)
    digits.insert(0, static_cast<std::size_t>(width) - digits.size(), ' ');
  return digits;
}

// perf's struct outstate: where a counter's line is going.
struct StatPrinter::Line {
  std::string& out;
  std::string prefix;
  std::size_t aggr = 0;
  std::size_t ev = 0;
  bool newline = false;
  int nfields = 0;
};

StatPrinter::StatPrinter(const StatEngine& engine, StatPrintOptions opts)
    : engine_(engine), opts_(std::move(opts)) {
  if (opts_.format != StatFormat::kStd) opts_.big_num = false;
  for (const auto& e : engine_.setup().events)
    if (e.supported) unit_width_ = std::max(unit_width_, e.unit.size());
}

static const char* sep_of(const StatPrintOptions& o) {
  return o.format == StatFormat::kCsv ? o.csv_sep.c_str() : " ";
}

void StatPrinter::print_aggr_id(Line& ln, std::size_t aggr) const {
  const AggrSlot& id = engine_.slots()[aggr];
  const AggrMode mode = engine_.mode();
  std::string& o = ln.out;
  const char* sep = sep_of(opts_);
  const auto& setup = engine_.setup();
  auto comm = [&]() -> std::string {
    auto t = static_cast<std::size_t>(id.thread);
    return t < setup.comms.size() ? setup.comms[t] : std::string();
  };
  auto pid = [&]() { return static_cast<int>(setup.threads[static_cast<std::size_t>(id.thread)]); };
  if (opts_.format == StatFormat::kJson) {
    if (!opts_.interval_ms) o += '{';
    switch (mode) {
      case AggrMode::kCore:
        return cprintf(o, "\"core\" : \"S%d-D%d-C%d\", \"aggregate-number\" : %d, ", id.socket,
                       id.die, id.core, id.nr);
      case AggrMode::kDie:
        return cprintf(o, "\"die\" : \"S%d-D%d\", \"aggregate-number\" : %d, ", id.socket, id.die,
                       id.nr);
      case AggrMode::kSocket:
        return cprintf(o, "\"socket\" : \"S%d\", \"aggregate-number\" : %d, ", id.socket, id.nr);
      case AggrMode::kNode:
        return cprintf(o, "\"node\" : \"N%d\", \"aggregate-number\" : %d, ", id.node, id.nr);
      case AggrMode::kNone:
        if (id.cpu > -1) cprintf(o, "\"cpu\" : \"%d\", ", id.cpu);
        return;
      case AggrMode::kThread:
        return cprintf(o, "\"thread\" : \"%s-%d\", ", comm().c_str(), pid());
      case AggrMode::kGlobal:
        return;
    }
    return;
  }
  if (opts_.format == StatFormat::kCsv) {
    switch (mode) {
      case AggrMode::kCore:
        return cprintf(o, "S%d-D%d-C%d%s%d%s", id.socket, id.die, id.core, sep, id.nr, sep);
      case AggrMode::kDie:
        return cprintf(o, "S%d-D%d%s%d%s", id.socket, id.die, sep, id.nr, sep);
      case AggrMode::kSocket:
        return cprintf(o, "S%d%s%d%s", id.socket, sep, id.nr, sep);
      case AggrMode::kNode:
        return cprintf(o, "N%d%s%d%s", id.node, sep, id.nr, sep);
      case AggrMode::kNone:
        if (id.cpu > -1) cprintf(o, "CPU%d%s", id.cpu, sep);
        return;
      case AggrMode::kThread:
        return cprintf(o, "%s-%d%s", comm().c_str(), pid(), sep);
      case AggrMode::kGlobal:
        return;
    }
    return;
  }
  switch (mode) {
    case AggrMode::kCore:
      return cprintf(o, "S%d-D%d-C%*d %*d ", id.socket, id.die, -8, id.core, 4, id.nr);
    case AggrMode::kDie:
      return cprintf(o, "S%d-D%*d %*d ", id.socket, -8, id.die, 4, id.nr);
    case AggrMode::kSocket:
      return cprintf(o, "S%*d %*d ", -5, id.socket, 4, id.nr);
    case AggrMode::kNode:
      return cprintf(o, "N%*d %*d ", -5, id.node, 4, id.nr);
    case AggrMode::kNone:
      if (id.cpu > -1) cprintf(o, "CPU%*d ", -7, id.cpu);
      return;
    case AggrMode::kThread:
      return cprintf(o, "%*s-%*d ", 16, comm().c_str(), -8, pid());
    case AggrMode::kGlobal:
      return;
  }
}

void StatPrinter::new_line(Line& ln) const {
  if (opts_.format == StatFormat::kStd) {
    ln.newline = true;  // the next metric starts the line
    return;
  }
  ln.out += '\n';
  ln.out += ln.prefix;
  // perf's new_line_csv puts a separator after the (possibly empty) prefix.
  if (opts_.format == StatFormat::kCsv) ln.out += opts_.csv_sep;
  print_aggr_id(ln, ln.aggr);
  if (opts_.format == StatFormat::kCsv)
    for (int i = 0; i < ln.nfields; ++i) ln.out += opts_.csv_sep;
}

// perf's print_metric_{std,csv,json}: a null fmt or unit prints the empty
// column; JSON prints the value and unit whatever they are ("(null)").
void StatPrinter::metric(Line& ln, const char* fmt, const char* unit, double val) const {
  std::string& o = ln.out;
  if (opts_.format == StatFormat::kJson) {
    cprintf(o, "\"metric-value\" : %f, ", val);
    cprintf(o, "\"metric-unit\" : \"%s\"", unit ? unit : "(null)");
    o += '}';
    return;
  }
  if (opts_.format == StatFormat::kCsv) {
    if (!unit || !fmt) {
      o += opts_.csv_sep + opts_.csv_sep;
      return;
    }
    std::string buf;
    cprintf(buf, fmt, val);  // NOLINT: perf's metric formats
    std::size_t b = 0;
    while (b < buf.size() && std::isspace(static_cast<unsigned char>(buf[b]))) ++b;
    std::size_t e = b;
    while (e < buf.size() && (std::isdigit(static_cast<unsigned char>(buf[e])) || buf[e] == '.'))
      ++e;
    const char* u = unit;
    while (*u && std::isspace(static_cast<unsigned char>(*u))) ++u;
    o += opts_.csv_sep + buf.substr(b, e - b) + opts_.csv_sep + u;
    return;
  }
  const bool newline = ln.newline;
  ln.newline = false;
  if (!unit || !fmt) {
    cprintf(o, "%-*s", kMetricLen, "");
    return;
  }
  if (newline) {
    o += '\n';
    o += ln.prefix;
    print_aggr_id(ln, ln.aggr);
    if (engine_.mode() == AggrMode::kNone) o += "        ";
    o += "                                                 ";
  }
  std::string val_text;
  cprintf(val_text, fmt, val);  // NOLINT
  const int n = 3 + static_cast<int>(val_text.size());
  o += " # " + val_text;
  cprintf(o, " %-*s", kMetricLen - n - 1, unit);
}

// perf's abs_printout (a count) and the start of printout's not-counted
// branch, which pads the name to 25 columns rather than 32.
void StatPrinter::print_counter_value(Line& ln, std::size_t ev, double uval, bool ok) const {
  const StatEvent& e = engine_.setup().events[ev];
  std::string& o = ln.out;
  const bool integral = std::floor(e.scale) == e.scale;
  const char* bad = e.supported ? kNotCounted : kNotSupported;
  const bool csv = opts_.format == StatFormat::kCsv;
  const char* sep = sep_of(opts_);
  if (opts_.format == StatFormat::kJson) {
    if (ok)
      cprintf(o, "\"counter-value\" : \"%f\", ", uval);
    else
      cprintf(o, "\"counter-value\" : \"%s\", ", bad);
    cprintf(o, "\"unit\" : \"%s\", ", e.unit.c_str());
    cprintf(o, "\"event\" : \"%s\", ", e.name.c_str());
    if (engine_.setup().cgroups) cprintf(o, "\"cgroup\" : \"%s\", ", e.cgroup.c_str());
    return;
  }
  if (!ok)
    cprintf(o, "%*s%s", csv ? 0 : 18, bad, sep);
  else if (csv)
    cprintf(o, integral ? "%.0f%s" : "%.2f%s", uval, sep);
  else
    o += format_grouped(uval, 18, integral ? 0 : 2, opts_.big_num ? opts_.thousands_sep : "") + sep;
  cprintf(o, "%-*s%s", csv ? 0 : static_cast<int>(unit_width_), e.unit.c_str(), sep);
  if (ok)
    cprintf(o, "%-*s", csv ? 0 : 32, e.name.c_str());
  else
    cprintf(o, "%*s", csv ? 0 : -25, e.name.c_str());
  if (engine_.setup().cgroups) cprintf(o, "%s%s", sep, e.cgroup.c_str());  // perf's print_cgroup
}

void StatPrinter::print_noise(Line& ln, std::size_t ev, double avg) const {
  if (opts_.run_count == 1) return;
  const auto& s = engine_;
  double pct = 0;
  if (s.mode() == AggrMode::kGlobal) {
    (void)ev;
    pct = rel_stddev(s.noise_stddev(ev), avg);
  }
  std::string& o = ln.out;
  if (opts_.format == StatFormat::kJson)
    cprintf(o, "\"variance\" : %.2f, ", pct);
  else if (opts_.format == StatFormat::kCsv)
    cprintf(o, "%s%.2f%%", opts_.csv_sep.c_str(), pct);
  else if (pct != 0)
    cprintf(o, "  ( +-%6.2f%% )", pct);
}

void StatPrinter::print_running(Line& ln, std::uint64_t run, std::uint64_t ena) const {
  std::string& o = ln.out;
  // perf computes the CSV and JSON percentage in integers.
  double pct = 100;
  if (run != ena) pct = static_cast<double>(ena ? 100 * run / ena : 0);
  if (opts_.format == StatFormat::kJson)
    cprintf(o, "\"event-runtime\" : %llu, \"pcnt-running\" : %.2f, ",
            static_cast<unsigned long long>(run), pct);
  else if (opts_.format == StatFormat::kCsv)
    cprintf(o, "%s%llu%s%.2f", opts_.csv_sep.c_str(), static_cast<unsigned long long>(run),
            opts_.csv_sep.c_str(), pct);
  else if (run != ena)
    cprintf(o, "  (%.2f%%)", 100.0 * static_cast<double>(run) / static_cast<double>(ena));
}

// perf's perf_stat__print_shadow_stats for the metrics of the generic events.
void StatPrinter::print_metrics(Line& ln, std::size_t ev, double avg, std::size_t aggr) const {
  const StatEvent& e = engine_.setup().events[ev];
  const int ctx = event_context(e.attr);
  auto savg = [&](ShadowKind k) { return engine_.shadow_avg(k, ctx, aggr, e.cgroup_id); };
  auto sn = [&](ShadowKind k) { return engine_.shadow_n(k, ctx, aggr, e.cgroup_id); };
  auto miss_ratio = [&](ShadowKind k, const char* unit) {
    if (sn(k) != 0) {
      const double total = savg(k);
      metric(ln, "%7.2f%%", unit, total ? avg / total * 100.0 : 0.0);
    } else {
      metric(ln, nullptr, unit, 0);
    }
  };
  if (hw(e, 1)) {  // instructions
    const double cycles = savg(ShadowKind::kCycles);
    if (cycles)
      metric(ln, "%7.2f ", "insn per cycle", avg / cycles);
    else
      metric(ln, nullptr, "insn per cycle", 0);
    const double stalled =
        std::max(savg(ShadowKind::kStalledFront), savg(ShadowKind::kStalledBack));
    if (stalled && avg) {
      new_line(ln);
      metric(ln, "%7.2f ", "stalled cycles per insn", stalled / avg);
    }
  } else if (hw(e, 5)) {
    miss_ratio(ShadowKind::kBranches, "of all branches");
  } else if (cache_read_miss(e, 0)) {
    miss_ratio(ShadowKind::kL1Dcache, "of all L1-dcache accesses");
  } else if (cache_read_miss(e, 1)) {
    miss_ratio(ShadowKind::kL1Icache, "of all L1-icache accesses");
  } else if (cache_read_miss(e, 3)) {
    miss_ratio(ShadowKind::kDtlbCache, "of all dTLB cache accesses");
  } else if (cache_read_miss(e, 4)) {
    miss_ratio(ShadowKind::kItlbCache, "of all iTLB cache accesses");
  } else if (cache_read_miss(e, 2)) {
    miss_ratio(ShadowKind::kLlCache, "of all LL-cache accesses");
  } else if (hw(e, 3)) {  // cache-misses
    const double refs = savg(ShadowKind::kCacheRefs);
    if (sn(ShadowKind::kCacheRefs) != 0)
      metric(ln, "%8.3f %%", "of all cache refs", refs ? avg * 100 / refs : 0.0);
    else
      metric(ln, nullptr, "of all cache refs", 0);
  } else if (hw(e, 7) || hw(e, 8)) {  // stalled-cycles-frontend/backend
    const double cycles = savg(ShadowKind::kCycles);
    const double ratio = cycles ? avg / cycles * 100.0 : 0.0;
    if (hw(e, 8))
      metric(ln, "%7.2f%%", "backend cycles idle", ratio);
    else if (ratio)
      metric(ln, "%7.2f%%", "frontend cycles idle", ratio);
    else
      metric(ln, nullptr, "frontend cycles idle", 0);
  } else if (hw(e, 0)) {  // cycles
    const double ns = savg(ShadowKind::kNsecs);
    if (ns)
      metric(ln, "%8.3f", "GHz", avg / ns);
    else
      metric(ln, nullptr, "Ghz", 0);
  } else if (is_clock_event(e.attr)) {
    const double wall = engine_.walltime().mean;
    if (wall != 0)
      metric(ln, "%8.3f", "CPUs utilized", avg / (wall * e.scale));
    else
      metric(ln, nullptr, "CPUs utilized", 0);
  } else if (sn(ShadowKind::kNsecs) != 0) {
    const double ns = savg(ShadowKind::kNsecs);
    char unit = ' ';
    double ratio = ns ? convert_unit(1000000000.0 * avg / ns, unit) : 0.0;
    std::string unit_buf = unit == ' ' ? std::string("/sec") : std::string(1, unit) + "/sec";
    metric(ln, "%8.3f", unit_buf.c_str(), ratio);
  } else {
    metric(ln, nullptr, nullptr, 0);
  }
}

// perf's printout(): one counter at one aggregation id.
void StatPrinter::printout(Line& ln, std::size_t ev, std::size_t aggr, const StatValue& v) const {
  const StatEvent& e = engine_.setup().events[ev];
  const double uval = v.val * e.scale;
  const double noise_avg = engine_.mode() == AggrMode::kGlobal ? v.val : 1.0;
  const bool std_layout = opts_.format == StatFormat::kStd;
  if (opts_.format == StatFormat::kCsv) {
    int aggr_fields = 0;
    switch (engine_.mode()) {
      case AggrMode::kNone:
      case AggrMode::kThread:
        aggr_fields = 1;
        break;
      case AggrMode::kSocket:
      case AggrMode::kDie:
      case AggrMode::kCore:
        aggr_fields = 2;
        break;
      case AggrMode::kNode:  // perf 6.1 counts no field for the node
      case AggrMode::kGlobal:
        break;
    }
    ln.nfields = 3 + aggr_fields;
  }
  print_aggr_id(ln, aggr);
  if (!v.counted) {
    print_counter_value(ln, ev, uval, false);
    if (std_layout) metric(ln, nullptr, nullptr, 0);
    print_noise(ln, ev, noise_avg);
    print_running(ln, v.run, v.ena);
    if (!std_layout) metric(ln, nullptr, "", 0);
    return;
  }
  print_counter_value(ln, ev, uval, true);
  if (!std_layout) {
    print_noise(ln, ev, noise_avg);
    print_running(ln, v.run, v.ena);
  }
  print_metrics(ln, ev, uval, aggr);
  if (std_layout) {
    print_noise(ln, ev, noise_avg);
    print_running(ln, v.run, v.ena);
  }
}

void StatPrinter::print_event_lines(std::string& out, std::size_t ev,
                                    const std::string& prefix) const {
  std::vector<std::size_t> order;
  const auto& slots = engine_.slots();
  for (std::size_t i = 0; i < slots.size(); ++i) order.push_back(i);
  if (engine_.mode() == AggrMode::kThread) {
    // perf sorts the threads by count, largest first; system-wide it leaves
    // out the threads that counted nothing.
    const double scale = engine_.setup().events[ev].scale;
    if (opts_.skip_zero_threads)
      std::erase_if(order, [&](std::size_t i) { return engine_.value(ev, i).val * scale == 0.0; });
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return engine_.value(ev, a).val > engine_.value(ev, b).val;
    });
  }
  for (std::size_t i : order) {
    Line ln{out, prefix, i, ev};
    out += prefix;
    printout(ln, ev, i, engine_.value(ev, i));
    out += '\n';
  }
}

std::string StatPrinter::counters(const std::string& prefix) const {
  std::string out;
  const std::size_t nev = engine_.setup().events.size();
  const AggrMode mode = engine_.mode();
  if (mode == AggrMode::kSocket || mode == AggrMode::kDie || mode == AggrMode::kCore ||
      mode == AggrMode::kNode) {
    // Aggregation id first, then every event (perf's print_aggr).
    for (std::size_t i = 0; i < engine_.slots().size(); ++i) {
      for (std::size_t ev = 0; ev < nev; ++ev) {
        const StatValue& v = engine_.value(ev, i);
        Line ln{out, prefix, i, ev};
        out += prefix;
        printout(ln, ev, i, v);
        out += '\n';
      }
    }
    return out;
  }
  for (std::size_t ev = 0; ev < nev; ++ev) print_event_lines(out, ev, prefix);
  return out;
}

std::string StatPrinter::header() const {
  std::string o;
  if (opts_.format != StatFormat::kStd) return o;
  o += "\n Performance counter stats for ";
  const auto& t = opts_.target;
  switch (t.kind) {
    case StatTargetDesc::kSystemWide:
      o += "'system wide";
      break;
    case StatTargetDesc::kCpus:
      o += "'CPU(s) " + t.text;
      break;
    case StatTargetDesc::kPid:
      o += "process id '" + t.text;
      break;
    case StatTargetDesc::kTid:
      o += "thread id '" + t.text;
      break;
    case StatTargetDesc::kWorkload:
      o += "'" + (t.argv.empty() ? std::string("pipe") : t.argv[0]);
      for (std::size_t i = 1; i < t.argv.size(); ++i) o += " " + t.argv[i];
      break;
  }
  o += "'";
  if (opts_.run_count > 1) cprintf(o, " (%d runs)", opts_.run_count);
  o += ":\n\n";
  return o;
}

// --table: each run's elapsed time, its difference from the mean and a bar
// of one '#' plus one per 5% of the run the difference is, indented as the
// mean's digits will be; then the "Final result" heading.
void StatPrinter::run_table(std::string& o, int precision, double avg) const {
  std::string mean;
  cprintf(mean, " %17.*f", precision, avg);
  const int indent = static_cast<int>(mean.find_first_not_of(' '));
  cprintf(o, "%*s# Table of individual measurements:\n", indent, "");
  for (std::uint64_t ns : engine_.run_walltimes()) {
    const double run = static_cast<double>(ns) / 1e9;
    const int pct = run != 0 ? static_cast<int>(100.0 * (run - avg) / run) : 0;
    cprintf(o, " %17.*f (%+.*f) ", precision, run, precision, run - avg);
    o.append(static_cast<std::size_t>(1 + std::abs(pct) / 5), '#');
    o += "\n";
  }
  cprintf(o, "\n%*s# Final result:\n", indent, "");
}

std::string StatPrinter::footer() const {
  std::string o;
  if (opts_.format != StatFormat::kStd) return o;
  const auto& wall = engine_.walltime();
  const double avg = wall.mean / 1e9;
  if (!engine_.setup().events.empty()) o += "\n";  // (perf stat --null has none)
  if (opts_.run_count == 1) {
    cprintf(o, " %17.9f seconds time elapsed", avg);
    if (opts_.ru_display) {
      o += "\n\n";
      cprintf(o, " %17.9f seconds user\n", opts_.ru_user_s);
      cprintf(o, " %17.9f seconds sys\n", opts_.ru_sys_s);
    }
  } else {
    const double sd = wall.stddev() / 1e9;
    const int precision = precision_for(sd) + 2;
    if (opts_.table) run_table(o, precision, avg);
    cprintf(o, " %17.*f +- %.*f seconds time elapsed", precision, avg, precision, sd);
    const double pct = rel_stddev(sd, avg);
    if (pct != 0) cprintf(o, "  ( +-%6.2f%% )", pct);
  }
  o += "\n\n";
  bool not_counted = false;
  for (std::size_t ev = 0; ev < engine_.setup().events.size(); ++ev)
    for (std::size_t i = 0; i < engine_.slots().size(); ++i)
      if (engine_.setup().events[ev].supported && !engine_.value(ev, i).counted) not_counted = true;
  if (not_counted && opts_.nmi_watchdog)
    o += "Some events weren't counted. Try disabling the NMI watchdog:\n"
         "\techo 0 > /proc/sys/kernel/nmi_watchdog\n"
         "\tperf stat ...\n"
         "\techo 1 > /proc/sys/kernel/nmi_watchdog\n";
  return o;
}

std::string StatPrinter::final_report() {
  if (opts_.metric_only)
    return header() + metric_only_header(nullptr, false) + metric_only_rows("") + footer();
  std::string prefix;
  if (opts_.csv_summary && opts_.format == StatFormat::kCsv)
    cprintf(prefix, "%16s%s", "summary", opts_.csv_sep.c_str());
  return header() + counters(prefix) + footer();
}

// perf's print_metric_headers: the aggregation columns' room (their names
// in CSV), then each metric's unit (none on this machine's events).
std::string StatPrinter::metric_only_header(const char* prefix, bool no_indent) const {
  std::string o;
  if (opts_.format == StatFormat::kJson) return "{}\n";
  if (prefix) o += prefix;
  const AggrMode mode = engine_.mode();
  if (opts_.format == StatFormat::kCsv) {
    if (opts_.interval_ms) o += "time,";
    switch (mode) {
      case AggrMode::kCore:
        o += "core,cpus,";
        break;
      case AggrMode::kDie:
        o += "die,cpus";
        break;
      case AggrMode::kSocket:
        o += "socket,cpus";
        break;
      case AggrMode::kNone:
        o += "cpu,";
        break;
      case AggrMode::kThread:
        o += "comm-pid,";
        break;
      case AggrMode::kNode:
        o += "node,";
        break;
      case AggrMode::kGlobal:
        break;
    }
  } else if (!no_indent) {
    int room = 0;
    switch (mode) {
      case AggrMode::kCore:
      case AggrMode::kThread:
        room = 24;
        break;
      case AggrMode::kDie:
        room = 18;
        break;
      case AggrMode::kSocket:
        room = 12;
        break;
      case AggrMode::kNone:
      case AggrMode::kNode:
        room = 6;
        break;
      case AggrMode::kGlobal:
        break;
    }
    o.append(static_cast<std::size_t>(room), ' ');
  }
  return o + "\n";
}

// One line per aggregation id: its id, then each counter's metric column.
std::string StatPrinter::metric_only_rows(const std::string& prefix) const {
  std::string out;
  const std::size_t nev = engine_.setup().events.size();
  for (std::size_t i = 0; i < engine_.slots().size(); ++i) {
    out += prefix;
    Line ln{out, prefix, i, 0};
    if (engine_.mode() != AggrMode::kGlobal && opts_.format != StatFormat::kJson)
      print_aggr_id(ln, i);
    for (std::size_t ev = 0; ev < nev; ++ev) {
      const StatValue& v = engine_.value(ev, i);
      if (v.counted && v.ena && v.run) continue;  // only rates, which perf leaves out
      if (opts_.format == StatFormat::kCsv)
        out += opts_.csv_sep;
      else if (opts_.format == StatFormat::kJson)
        out += "{\"metric-value\" : \"\"}";
      else
        out.append(21, ' ');  // an empty metric column ("%*s ", 20 wide)
    }
    out += '\n';
  }
  return out;
}

std::string StatPrinter::interval_header() const {
  std::string o;
  const int w = static_cast<int>(unit_width_);
  switch (engine_.mode()) {
    case AggrMode::kNode:
      o += "#           time node   cpus";
      if (!opts_.metric_only) cprintf(o, "             counts %*s events\n", w, "unit");
      break;
    case AggrMode::kSocket:
      o += "#           time socket cpus";
      if (!opts_.metric_only) cprintf(o, "             counts %*s events\n", w, "unit");
      break;
    case AggrMode::kDie:
      o += "#           time die          cpus";
      if (!opts_.metric_only) cprintf(o, "             counts %*s events\n", w, "unit");
      break;
    case AggrMode::kCore:
      o += "#           time core            cpus";
      if (!opts_.metric_only) cprintf(o, "             counts %*s events\n", w, "unit");
      break;
    case AggrMode::kNone:
      o += "#           time CPU    ";
      if (!opts_.metric_only) cprintf(o, "                counts %*s events\n", w, "unit");
      break;
    case AggrMode::kThread:
      o += "#           time             comm-pid";
      if (!opts_.metric_only) cprintf(o, "                  counts %*s events\n", w, "unit");
      break;
    case AggrMode::kGlobal:
      o += "#           time";
      if (!opts_.metric_only) cprintf(o, "             counts %*s events\n", w, "unit");
      break;
  }
  return o;
}

std::string StatPrinter::interval(std::uint64_t ts_ns) {
  std::string prefix;
  const auto sec = static_cast<unsigned long>(ts_ns / 1000000000ULL);
  const auto nsec = static_cast<unsigned long>(ts_ns % 1000000000ULL);
  if (opts_.format == StatFormat::kJson)
    cprintf(prefix, "{\"interval\" : %lu.%09lu, ", sec, nsec);
  else
    cprintf(prefix, "%6lu.%09lu%s", sec, nsec, sep_of(opts_));
  std::string out;
  const bool head = intervals_printed_ == 0 || opts_.interval_clear;
  if (head && opts_.format == StatFormat::kStd) out += interval_header();
  if (head && opts_.metric_only) out += metric_only_header(" ", true);
  if (++intervals_printed_ == 25) intervals_printed_ = 0;
  out += opts_.metric_only ? metric_only_rows(prefix) : counters(prefix);
  return out;
}

}  // namespace perfkit::stat
