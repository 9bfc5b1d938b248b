// perf stat's three output layouts for a StatEngine's results, byte for byte
// as perf 6.1 prints them: the default aligned table (with the derived
// metrics after '#', the noise and running percentages, the header and the
// elapsed-time footer), CSV with any separator (-x), and JSON lines (-j);
// each also in interval form (-I) with the timestamp prefix.
//
//   StatPrinter p(engine, opts);
//   std::string text = p.final_report();        // or p.interval(ts_ns) per interval
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stat/stat.h"

namespace perfkit::stat {

enum class StatFormat { kStd, kCsv, kJson };

// What the header says is measured.
struct StatTargetDesc {
  enum Kind { kWorkload, kSystemWide, kCpus, kPid, kTid } kind = kWorkload;
  std::vector<std::string> argv;  // kWorkload: the command (perf stat report: perf's cmdline)
  std::string text;               // kCpus: the -C list; kPid/kTid: the -p/-t text
};

struct StatPrintOptions {
  StatFormat format = StatFormat::kStd;
  std::string csv_sep = ",";  // -x (only with kCsv)
  // Thousands grouping of counts (perf's %' with the locale's separator; the
  // C locale has none). --no-big-num and -x turn it off.
  bool big_num = true;
  std::string thousands_sep;
  int run_count = 1;              // -r
  bool table = false;             // --table: each run's time before the result
  bool interval_clear = false;    // --interval-clear: the header before every interval
  std::uint64_t interval_ms = 0;  // -I
  StatTargetDesc target;
  // The user/sys lines (one run of a workload): the child's rusage, seconds.
  bool ru_display = false;
  double ru_user_s = 0, ru_sys_s = 0;
  // System-wide --per-thread leaves out threads that counted nothing.
  bool skip_zero_threads = false;
  // /proc/sys/kernel/nmi_watchdog is on: hint when an event was not counted.
  bool nmi_watchdog = false;
  // --summary's CSV lines start with "summary" (not with --no-csv-summary).
  bool csv_summary = false;
  // --metric-only: each aggregation id's metrics on one line under a
  // header of their units. perf leaves out the rates of software events
  // ("CPUs utilized", "/sec"); a counter that did not count shows an empty
  // column.
  bool metric_only = false;
};

class StatPrinter {
 public:
  StatPrinter(const StatEngine& engine, StatPrintOptions opts);

  // Header, every counter, footer (the header and footer only in the default
  // layout), as perf prints at the end of a run.
  std::string final_report();
  // One interval's lines, prefixed with the time since the start
  // (`ts_ns`); the column header comes first and again every 25 intervals.
  std::string interval(std::uint64_t ts_ns);

  // The header alone (" Performance counter stats for 'cmd':").
  std::string header() const;
  // The counters alone, each line prefixed with `prefix`.
  std::string counters(const std::string& prefix) const;
  std::string footer() const;
  void run_table(std::string& o, int precision, double avg) const;

 private:
  struct Line;
  void printout(Line& ln, std::size_t ev, std::size_t aggr, const StatValue& v) const;
  void print_aggr_id(Line& ln, std::size_t aggr) const;
  void print_counter_value(Line& ln, std::size_t ev, double uval, bool ok) const;
  void print_noise(Line& ln, std::size_t ev, double avg) const;
  void print_running(Line& ln, std::uint64_t run, std::uint64_t ena) const;
  void print_metrics(Line& ln, std::size_t ev, double avg, std::size_t aggr) const;
  void metric(Line& ln, const char* fmt, const char* unit, double val) const;
  void new_line(Line& ln) const;
  void print_event_lines(std::string& out, std::size_t ev, const std::string& prefix) const;
  std::string interval_header() const;
  std::string metric_only_header(const char* prefix, bool no_indent) const;
  std::string metric_only_rows(const std::string& prefix) const;

  const StatEngine& engine_;
  StatPrintOptions opts_;
  std::size_t unit_width_ = 4;
  int intervals_printed_ = 0;
};

// Formats `v` as printf's "%'W.Pf" would with `sep` as the thousands
// separator (no grouping when `sep` is empty).
std::string format_grouped(double v, int width, int precision, const std::string& sep);

}  // namespace perfkit::stat
