// perfkit stat: count events while a command runs (or on processes, threads,
// cpus, the whole system) and print them as 'perf stat' does; 'perfkit stat
// record' writes the counts to perf.data and 'perfkit stat report' prints a
// file written by either tool. Options, output and exit status follow perf.
#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>

#include "abi/perf_event.h"
#include "capture/cgroup.h"
#include "capture/event_spec.h"
#include "capture/pmu.h"
#include "capture/system_info.h"
#include "capture/tracefs.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/perfconfig.h"
#include "perfdata/reader.h"
#include "recorder/stat_run.h"
#include "stat/stat_print.h"
#include "stat/stat_report.h"

namespace perfkit::cli {

namespace {

using stat::AggrMode;

struct Args {
  recorder::StatRunOptions run;
  bool no_aggr = false, per_core = false, per_socket = false, per_die = false, per_node = false,
       per_thread = false;
  std::string sep;
  bool json = false;
  bool big_num = false, no_big_num = false;
  bool config_big_num = true;  // stat.big-num
  bool no_scale = false;
  std::string output;
  bool append = false;
  bool quiet = false;
  bool table = false;  // --table
  bool interval_clear = false;
  int verbose = 0;
  bool no_csv_summary = false;
  int log_fd = 0;         // perf's "not given"
  bool accepted = false;  // options without an effect on this machine
  bool metric_only = false;
  bool topdown = false, smi_cost = false, transaction = false;
  int td_level = 0;
  std::vector<std::string> metrics;  // -M
  std::string cputype;
  std::optional<std::string> iostat;
  std::string control;  // --control, parsed after the options
  // --filter: each applies to the events of the -e given just before it.
  std::vector<std::string> filters;
  // -G (each a list, applying to the events given before it), --for-each-cgroup
  std::vector<std::string> cgroups;
  std::string for_each_cgroup;
  const CLI::Option *event_opt = nullptr, *filter_opt = nullptr, *cgroup_opt = nullptr,
                    *for_each_opt = nullptr;
};

void add_target_options(CLI::App& app, Args& a) {
  auto& o = a.run;
  a.event_opt = app.add_option("-e,--event", o.events,
                               "event selector. use 'perfkit list' to list available events")
                    ->allow_extra_args(false);
  a.filter_opt = app.add_option("--filter", a.filters, "event filter")->allow_extra_args(false);
  a.cgroup_opt = app.add_option("-G,--cgroup", a.cgroups, "monitor event in cgroup name only")
                     ->allow_extra_args(false);
  a.for_each_opt =
      app.add_option("--for-each-cgroup", a.for_each_cgroup, "expand events for each cgroup");
  app.add_flag("-i,--no-inherit", o.no_inherit, "child tasks do not inherit counters");
  app.add_flag("-n,--null", o.null_run, "null run - dont start any counters");
  app.add_flag("--table", a.table, "display details about each run (only with -r option)");
  app.add_flag("--interval-clear", a.interval_clear, "clear screen in between new interval");
  app.add_option("-p,--pid", o.pids, "stat events on existing process id");
  app.add_option("-t,--tid", o.tids, "stat events on existing thread id");
  app.add_flag("-a,--all-cpus", o.system_wide, "system-wide collection from all CPUs");
  app.add_option("-C,--cpu", o.cpu_list, "list of cpus to monitor in system-wide");
  app.add_flag("-A,--no-aggr", a.no_aggr, "disable CPU count aggregation");
  app.add_flag("--per-socket", a.per_socket, "aggregate counts per processor socket");
  app.add_flag("--per-die", a.per_die, "aggregate counts per processor die");
  app.add_flag("--per-core", a.per_core, "aggregate counts per physical processor core");
  app.add_flag("--per-node", a.per_node, "aggregate counts per numa node");
  app.add_flag("--per-thread", a.per_thread, "aggregate counts per thread");
  app.add_option("-I,--interval-print", o.interval_ms,
                 "print counts at regular interval in ms (overhead is possible for values <= "
                 "100ms)");
  app.add_option("--interval-count", o.interval_count, "print counts for fixed number of times");
  app.add_option("-r,--repeat", o.repeat,
                 "repeat command and print average + stddev (max: 100, forever: 0)");
  app.add_flag("--no-scale", a.no_scale, "don't scale counts for multiplexing");
  app.add_flag("--all-user", o.all_user, "Configure all used events to run in user space.");
  app.add_flag("--all-kernel", o.all_kernel, "Configure all used events to run in kernel space.");
  app.add_option("-x,--field-separator", a.sep, "print counts with custom separator");
  app.add_flag("-j,--json-output", a.json, "print counts in JSON format");
  app.add_flag("-B,--big-num", a.big_num, "print large numbers with thousands' separators");
  app.add_flag("--no-big-num", a.no_big_num, "print large numbers without thousands' separators");
  app.add_flag("--quiet", a.quiet, "don't print any output, messages or warnings");
  app.add_flag("-v,--verbose", a.verbose, "be more verbose");
  app.add_option("--timeout", o.timeout_ms,
                 "stop workload and print counts after a timeout period in ms (>= 10ms)");
  app.add_option("-D,--delay", o.delay_ms,
                 "ms to wait before starting measurement after program start (-1: start with "
                 "events disabled)");
  app.add_flag("-d,--detailed", o.detailed,
               "detailed run - start a lot of events (repeat: -dd, -ddd)");
  app.add_flag("-g,--group", o.group, "put the counters into a counter group");
  app.add_flag("--summary", o.summary, "print summary for interval mode");
  app.add_flag("--no-csv-summary", a.no_csv_summary,
               "don't print 'summary' for CSV summary output");
  app.add_flag("-S,--sync", o.sync, "call sync() before starting a run");
  app.add_option("--control", a.control,
                 "Listen on ctl-fd descriptor for command to control measurement ('enable': "
                 "enable events, 'disable': disable events). Optionally send control command "
                 "completion ('ack\\n') to ack-fd descriptor. Alternatively, ctl-fifo / ack-fifo "
                 "will be opened and used as ctl-fd / ack-fd as described. "
                 "(fd:ctl-fd[,ack-fd] or fifo:ctl-fifo[,ack-fifo])");
  app.add_option("--log-fd", a.log_fd, "log output to fd, instead of stderr");
  app.add_flag("-c,--scale", a.accepted, "scale/normalize counters (the default)");
  // No uncore PMU, hybrid core or metric is on this machine's list: these
  // change nothing perf would print here.
  app.add_flag("--no-merge", a.accepted, "Do not merge identical named events");
  app.add_flag("--hybrid-merge", a.accepted, "Merge identical named hybrid events");
  app.add_flag("--percore-show-thread", a.accepted,
               "Use with 'percore' event qualifier to show the event counts of one hardware "
               "thread by sum up total hardware threads of same physical core");
  app.add_flag("--metric-no-group", a.accepted, "don't group metric events, impacts multiplexing");
  app.add_flag("--metric-no-merge", a.accepted,
               "don't try to share events between metrics in a group");
  app.add_flag("--metric-only", a.metric_only, "Only print computed metrics. No raw values");
  app.add_flag("--topdown", a.topdown,
               "measure top-down statistics; the metrics' level follows --td-level");
  app.add_option("--td-level", a.td_level,
                 "Set the metrics level for the top-down statistics (0: max level)");
  app.add_flag("--smi-cost", a.smi_cost, "measure SMI cost");
  app.add_flag("-T,--transaction", a.transaction, "hardware transaction statistics");
  app.add_option("-M,--metrics", a.metrics,
                 "monitor specified metrics or metric groups (separated by ,)")
      ->allow_extra_args(false);
  app.add_option("--cputype", a.cputype,
                 "Only enable events on applying cpu with this type for hybrid platform (e.g. "
                 "core or atom)");
  app.add_option("--iostat", a.iostat, "measure I/O performance metrics provided by arch/platform")
      ->expected(0, 1);
}

// perf's --filter: each applies to the events of the -e before it (joined
// to one set before with &&); without an -e before it, or on an event that
// is not a tracepoint (perf takes those as address filters of HW tracers,
// which this machine has not), perf's words and status 129.
int attach_filters(const CLI::App& app, Args& a) {
  std::size_t seen_e = 0, next = 0;
  auto refuse = [](const char* msg) {
    fmt::print(stderr,
               "{}\n\n Usage: perfkit stat [<options>] [<command>]\n\n        --filter <filter>\n"
               "                          event filter\n",
               msg);
    return 129;
  };
  std::optional<capture::PmuCatalog> pmus;
  std::optional<capture::Tracefs> tracefs;
  for (const CLI::Option* opt : app.parse_order()) {
    if (opt == a.event_opt) ++seen_e;
    if (opt != a.filter_opt || next >= a.filters.size()) continue;
    const std::string& text = a.filters[next++];
    if (seen_e == 0)
      return refuse("--filter option should follow a -e tracepoint or HW tracer option");
    if (!pmus) {
      pmus = capture::PmuCatalog::load(a.run.paths);
      if (auto tf = capture::Tracefs::locate(a.run.paths)) tracefs = std::move(*tf);
    }
    capture::EventSources sources{&*pmus, tracefs ? &*tracefs : nullptr};
    capture::EventList list;
    if (capture::parse_events(a.run.events[seen_e - 1], sources, list))
      for (const auto& e : list.events)
        if (e.attr.type != abi::kTypeTracepoint)
          return refuse("This CPU does not support address filtering");
    auto& f = a.run.event_filters;
    if (f.size() < seen_e) f.resize(seen_e);
    f[seen_e - 1] = f[seen_e - 1].empty() ? text : fmt::format("({}) && ({})", f[seen_e - 1], text);
  }
  return 0;
}

// perf's usage error: the message, the usage line and the help lines of
// the options at fault (each group after its own usage line), status 234.
int usage_error(const std::string& msg, std::initializer_list<std::string_view> groups,
                int status = 234 /* perf's -EINVAL */) {
  if (!msg.empty()) fmt::print(stderr, "{}\n", msg);
  for (std::string_view g : groups)
    fmt::print(stderr, "\n Usage: perfkit stat [<options>] [<command>]\n\n{}\n", g);
  return status;
}

constexpr std::string_view kCgroupHelp =
    "    -G, --cgroup <name>   monitor event in cgroup name only";
constexpr std::string_view kForEachCgroupHelp =
    "        --for-each-cgroup <name>\n                          expand events for each cgroup";
constexpr std::string_view kSystemWideHelp =
    "    -G, --cgroup <name>   monitor event in cgroup name only\n"
    "    -A, --no-aggr         disable CPU count aggregation\n"
    "    -a, --all-cpus        system-wide collection from all CPUs\n"
    "        --for-each-cgroup <name>\n                          expand events for each cgroup";

// perf's -G and --for-each-cgroup: each -G's names go to the events given
// before it, in order (parse_cgroups), opened as they are read; the two
// together, or cgroups without -a/-C, are refused with perf's words and
// status. 0 when they pass.
int attach_cgroups(const CLI::App& app, Args& a) {
  std::size_t seen_e = 0, next = 0;
  bool for_each_seen = false;
  capture::CgroupSet cgroups(a.run.paths);
  for (const CLI::Option* opt : app.parse_order()) {
    if (opt == a.event_opt) ++seen_e;
    if (opt == a.for_each_opt) for_each_seen = true;
    if (opt != a.cgroup_opt || next >= a.cgroups.size()) continue;
    const std::string& text = a.cgroups[next++];
    if (for_each_seen)
      return usage_error("--cgroup and --for-each-cgroup cannot be used together", {kCgroupHelp},
                         129);
    if (seen_e == 0) return usage_error("must define events before cgroups", {kCgroupHelp}, 129);
    for (const std::string& name : capture::split_cgroup_list(text)) {
      std::shared_ptr<const capture::Cgroup> cg;
      if (!name.empty()) {
        auto c = cgroups.open(name);
        if (!c) return usage_error(c.error().message(), {kCgroupHelp}, 129);
        cg = *c;
      }
      a.run.cgroups.push_back(std::move(cg));
    }
  }
  if (!a.for_each_cgroup.empty() && !a.run.cgroups.empty())
    return usage_error("--cgroup and --for-each-cgroup cannot be used together",
                       {std::string(kCgroupHelp) + "\n" + std::string(kForEachCgroupHelp)});
  const auto& o = a.run;
  const bool has_cpu = o.system_wide || !o.cpu_list.empty() ||
                       (o.workload.empty() && o.pids.empty() && o.tids.empty());
  if ((a.no_aggr || !o.cgroups.empty() || !a.for_each_cgroup.empty()) && !has_cpu)
    return usage_error("both cgroup and no-aggregation modes only available in system-wide mode",
                       {kSystemWideHelp});
  std::vector<std::string> each;
  if (capture::is_cgroup_pattern(a.for_each_cgroup)) {
    auto matched = capture::match_cgroups(a.run.paths, a.for_each_cgroup);
    if (!matched) return usage_error(matched.error().message(), {kForEachCgroupHelp});
    each = std::move(*matched);
  } else if (!a.for_each_cgroup.empty()) {
    each = capture::split_cgroup_list(a.for_each_cgroup);
  }
  if (!each.empty())
    for (const std::string& name : each) {
      auto c = cgroups.open(name);
      if (!c) return usage_error(c.error().message(), {kForEachCgroupHelp});
      a.run.for_each_cgroup.push_back(*c);
    }
  return 0;
}

constexpr std::string_view kRepeatHelp =
    "    -r, --repeat <n>      repeat command and print average + stddev (max: 100, forever: 0)";
constexpr std::string_view kTimeoutHelp =
    "        --timeout <n>     stop workload and print counts after a timeout period in ms (>= "
    "10ms)";
constexpr std::string_view kIntervalHelp =
    "    -I, --interval-print <n>\n                          print counts at regular interval in "
    "ms (overhead is possible for values <= 100ms)";

// perf's checks of --table, --timeout and --log-fd; 0 when they pass.
int check_options(const Args& a) {
  const auto& o = a.run;
  if (a.table && o.repeat == 1)
    return usage_error("--table is only supported with -r",
                       {fmt::format("{}\n        --table           display details about each "
                                    "run (only with -r option)",
                                    kRepeatHelp)});
  if (o.timeout_ms && o.timeout_ms < 10)
    return usage_error("timeout must be >= 10ms.", {kTimeoutHelp});
  if (o.timeout_ms && o.interval_ms)
    return usage_error("timeout option is not supported with interval-print.",
                       {kTimeoutHelp, kIntervalHelp});
  if (o.timeout_ms && o.timeout_ms < 100)
    fmt::print(stderr,
               "timeout < 100ms. The overhead percentage could be high in some cases. Please "
               "proceed with caution.\n");
  constexpr std::string_view kLogFdHelp =
      "        --log-fd <n>      log output to fd, instead of stderr";
  if (a.log_fd && !a.output.empty())
    return usage_error("cannot use both --output and --log-fd",
                       {fmt::format("    -o, --output <file>   output file name\n{}", kLogFdHelp)});
  if (a.log_fd < 0) return usage_error("argument to --log-fd must be a > 0", {kLogFdHelp});
  return 0;
}

// Whether perf 6.1 has metric definitions for this cpu (its pmu-events
// tables: AMD families 0x17 and 0x19, Intel's family 6); on others it takes
// -M without a word.
bool perf_defines_metrics_here() {
  const auto id = capture::read_cpuid();  // "AuthenticAMD,25,1,1"
  if (!id) return false;
  const auto f = split_list(*id);
  if (f.size() < 2) return false;
  if (f[0] == "AuthenticAMD") return f[1] == "23" || f[1] == "25";
  return f[0] == "GenuineIntel" && f[1] == "6";
}

// What perf says of the options that need a PMU or a platform this
// machine may lack (a hybrid cpu, uncore I/O counters, SMI freezing,
// TSX, top-down slots); 0 when the machine has it. perf's status: 129 for
// the option parser's refusals, 234 for the rest.
int check_platform(Args& a) {
  const auto& paths = a.run.paths;
  auto pmus = capture::PmuCatalog::load(paths);
  const capture::Pmu* cpu = pmus.find("cpu");
  if (!a.cputype.empty() && !pmus.find("cpu_core") && !pmus.find("cpu_atom")) {
    usage_error(fmt::format("--cputype {} is not supported!", a.cputype),
                {"        --cputype <hybrid cpu type>\n                          Only enable "
                 "events on applying cpu with this type for hybrid platform (e.g. core or "
                 "atom)"});
    return 129;
  }
  if (a.iostat) {
    usage_error("Unsupported uncore pmu configuration",
                {"        --iostat[=<default>]\n                          measure I/O "
                 "performance metrics provided by arch/platform"});
    return 129;
  }
  if (a.transaction && !(cpu && cpu->event("cycles-t") && cpu->event("tx-start"))) {
    fmt::print(stderr,
               "Cannot set up transaction events\nevent syntax error: "
               "'task-clock,{{instructions,cycles,cpu/cycles-t/,cpu/tx-sta..'\n"
               "                     \\___ Cannot find PMU `cpu'. Missing kernel support?\n");
    return 234;
  }
  if (a.transaction) {
    const bool full = cpu->event("cycles-ct") && cpu->event("el-start");
    a.run.events = {std::string("task-clock,{instructions,cycles,cpu/cycles-t/,cpu/tx-start/,") +
                    (full ? "cpu/el-start/," : "") + "cpu/cycles-ct/}"};
  }
  if (a.smi_cost) {
    std::ifstream freeze(paths.sysfs + "/devices/cpu/freeze_on_smi");
    int v = 0;
    if (!(freeze >> v)) {
      fmt::print(stderr, "freeze_on_smi is not supported.\n");
      return 234;
    }
    fmt::print(stderr, "perfkit stat: --smi-cost is not supported by perfkit yet\n");
    return 234;
  }
  if (a.topdown) {
    const bool level2 = cpu && cpu->event("topdown-heavy-ops");
    const int max_level = level2 ? 2 : 1;
    if (a.td_level > max_level) {
      fmt::print(stderr, "Invalid top-down metrics level. The max level is {}.\n", max_level);
      return 234;
    }
    if (!a.run.system_wide && a.run.cpu_list.empty()) {
      fmt::print(stderr, "top down event configuration requires system-wide mode (-a)\n");
      return 234;
    }
    if (!(cpu && (cpu->event("topdown-total-slots") || cpu->event("slots")))) {
      fmt::print(stderr, "System does not support topdown\n");
      return 234;
    }
    fmt::print(stderr, "perfkit stat: --topdown is not supported by perfkit yet\n");
    return 234;
  }
  // perf's metric definitions are compiled into perf; perfkit has none yet:
  // perf's words for a name it does not know, and the counting goes on
  // (without a word on a cpu perf has no definitions for).
  if (!a.metrics.empty() && perf_defines_metrics_here()) {
    const std::string& first = a.metrics.front();
    fmt::print(stderr, "Cannot find metric or group `{}'\n", first.substr(0, first.find(',')));
  }
  return 0;
}

AggrMode aggr_of(const Args& a) {
  if (a.no_aggr) return AggrMode::kNone;
  if (a.per_thread) return AggrMode::kThread;
  if (a.per_core) return AggrMode::kCore;
  if (a.per_die) return AggrMode::kDie;
  if (a.per_socket) return AggrMode::kSocket;
  if (a.per_node) return AggrMode::kNode;
  return AggrMode::kGlobal;
}

// The print options every layout shares: -x, -j, thousands grouping.
Expected<stat::StatPrintOptions> print_options(const Args& a) {
  stat::StatPrintOptions p;
  if (!a.sep.empty() && a.json) return make_error("-x and -j cannot be used together");
  if (!a.sep.empty()) {
    if (a.big_num) return make_error("-B option not supported with -x");
    p.format = stat::StatFormat::kCsv;
    p.csv_sep = a.sep == "\\t" ? "\t" : a.sep;
  } else if (a.json) {
    p.format = stat::StatFormat::kJson;
  }
  p.big_num =
      (a.big_num || (!a.no_big_num && a.config_big_num)) && p.format == stat::StatFormat::kStd;
  // perf's %' flag: the locale's separator (none in the C locale).
  if (const lconv* lc = std::localeconv(); lc && lc->thousands_sep)
    p.thousands_sep = lc->thousands_sep;
  return p;
}

// Where the counts go: stderr, or -o FILE (with perf's "# started on" line).
struct Output {
  FILE* f = stderr;
  bool owned = false;
  ~Output() {
    if (owned) std::fclose(f);
  }
  void put(const std::string& s) const {
    std::fwrite(s.data(), 1, s.size(), f);
    std::fflush(f);
  }
};

Status open_output(const Args& a, Output& out) {
  if (a.log_fd > 0) {
    FILE* f = fdopen(a.log_fd, a.append ? "a" : "w");
    if (!f) return make_error("Failed opening logfd {}: {}", a.log_fd, std::strerror(errno));
    out.f = f;
    out.owned = true;
    return ok();
  }
  if (a.output.empty() || a.output == "-") return ok();
  out.f = std::fopen(a.output.c_str(), a.append ? "a" : "w");
  if (!out.f) {
    out.f = stderr;
    return make_error("failed to create output file '{}': {}", a.output, std::strerror(errno));
  }
  out.owned = true;
  std::time_t now = std::time(nullptr);
  out.put(fmt::format("# started on {}\n", std::ctime(&now)));
  return ok();
}

bool nmi_watchdog_enabled() {
  FILE* f = std::fopen("/proc/sys/kernel/nmi_watchdog", "r");
  if (!f) return false;
  int v = 0;
  bool on = std::fscanf(f, "%d", &v) == 1 && v != 0;
  std::fclose(f);
  return on;
}

// SIGINT ends a measurement without a workload (the workload's Ctrl-C ends
// it otherwise); SIGCHLD says the workload is gone. Both arrive on a
// signalfd while blocked; the workload gets the original mask back. A
// handler (never run) replaces an inherited SIG_IGN, as perf's does, so
// SIGINT reaches us and the workload's exec resets it to the default.
struct StatSignals {
  sigset_t old{};
  int fd = -1;
  StatSignals() {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &old);
    fd = signalfd(-1, &block, SFD_CLOEXEC);
  }
  ~StatSignals() {
    if (fd >= 0) ::close(fd);
    sigprocmask(SIG_SETMASK, &old, nullptr);
  }
};

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// Fills the run options from the parsed arguments.
void finish_run_options(Args& a, CLI::App& app, int argc, char** argv, bool record) {
  auto& o = a.run;
  o.workload = app.remaining();
  if (!o.workload.empty() && o.workload.front() == "--") o.workload.erase(o.workload.begin());
  o.aggr = aggr_of(a);
  o.scale = !a.no_scale;
  o.version = std::string("perfkit ") + PERFKIT_VERSION;
  // CMDLINE: "perfkit stat record ..." (argv[0] is "stat" or "record").
  o.cmdline = {"perfkit"};
  if (record) o.cmdline.push_back("stat");
  o.cmdline.insert(o.cmdline.end(), argv, argv + argc);
  if (record) o.record_path = a.output.empty() ? "perf.data" : a.output;
}

// The live measurement: perfkit stat [record].
int run_live(int argc, char** argv, bool record) {
  const char* cmd = record ? "stat record" : "stat";
  CLI::App app(record ? "Run a command and record its counts into perf.data, as 'perf stat "
                        "record' does.\n\n usage: perfkit stat record [<options>] [<command>]"
                      : "Run a command and count its events, as 'perf stat' does.\n\n"
                        " usage: perfkit stat [<options>] [<command>]\n"
                        "    or: perfkit stat record [<options>] [<command>]\n"
                        "    or: perfkit stat report [<options>]",
               cmd);
  app.prefix_command();
  Args a;
  a.config_big_num = config_bool(read_config(false), "stat.big-num").value_or(true);
  add_target_options(app, a);
  app.add_option("-o,--output", a.output,
                 record ? "output file name (perf.data by default)" : "output file name");
  std::string pre, post;
  app.add_option("--pre", pre, "command to run prior to the measured command");
  app.add_option("--post", post, "command to run after to the measured command");
  if (!record) app.add_flag("--append", a.append, "append to the output file");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  finish_run_options(a, app, argc, argv, record);
  const auto& o = a.run;
  if (int bad = check_options(a)) return bad;
  if (int bad = attach_filters(app, a)) return bad;
  if (int bad = attach_cgroups(app, a)) return bad;
  if (!a.control.empty()) {
    auto c = capture::parse_control(a.control);
    if (!c) return fail(cmd, c.error());
    a.run.control = *c;
  }
  if (int bad = check_platform(a)) return bad;
  std::setlocale(LC_ALL, "");
  auto popts = print_options(a);
  if (!popts) return fail(cmd, popts.error());
  Output out;
  if (!record)
    if (auto st = open_output(a, out); !st) return fail(cmd, st.error());

  stat::StatPrintOptions live = *popts;
  live.interval_ms = o.interval_ms;
  live.run_count = o.repeat > 0 ? o.repeat : 1;
  live.table = a.table;
  live.interval_clear = a.interval_clear;
  live.metric_only = a.metric_only;
  live.nmi_watchdog = nmi_watchdog_enabled();
  const bool print = !a.quiet && o.record_path != "-";
  std::optional<stat::StatPrinter> interval_printer;
  StatSignals signals;
  recorder::StatRunHooks hooks;
  hooks.signal_fd = signals.fd;
  hooks.child_sigmask = signals.old;
  hooks.message = [](const std::string& m) { fmt::print(stderr, "{}\n", m); };
  hooks.interval = [&](const stat::StatEngine& e, std::uint64_t ts) {
    if (!interval_printer) interval_printer.emplace(e, live);
    // --interval-clear: the terminal cleared on stdout first, as perf does
    if (a.interval_clear) std::fputs("\033[H\033[2J\n", stdout);
    if (print) out.put(interval_printer->interval(ts));
  };
  // -r 0: every run is printed as it ends, until interrupted.
  hooks.forever_run = [&](const stat::StatEngine& e) {
    stat::StatPrintOptions each = live;
    each.run_count = 1;
    each.target = {stat::StatTargetDesc::kWorkload, o.workload, {}};
    if (print) out.put(stat::StatPrinter(e, each).final_report());
  };
  // --pre, --post: through the shell, as perf's system(); one that fails
  // ends the measurement (perf would count on regardless).
  auto shell = [](const std::string& cmd, const char* which) -> Status {
    if (cmd.empty()) return ok();
    std::fflush(stdout);
    const int st = std::system(cmd.c_str());
    if (st == 0) return ok();
    return make_error("--{} command '{}' failed (status {})", which, cmd,
                      WIFEXITED(st) ? WEXITSTATUS(st) : st);
  };
  hooks.before_run = [&] { return shell(pre, "pre"); };
  hooks.after_run = [&] { return shell(post, "post"); };
  auto result = recorder::run_stat(o, hooks);
  if (!result && result.error().message().starts_with("failed to set filter ")) {
    fmt::print(stderr, "{}\n", result.error().message());  // perf's words and status
    return 255;
  }
  if (!result) return fail(cmd, result.error());
  auto& r = *result;
  if (r.summary && print) {
    stat::StatPrintOptions whole = live;
    whole.interval_ms = 0;
    whole.target = r.target;
    whole.ru_display = r.ru_display;
    whole.csv_summary = !a.no_csv_summary;
    out.put(stat::StatPrinter(*r.summary, whole).final_report());
  }
  if (o.interval_ms == 0 && o.repeat != 0 && print) {
    live.target = r.target;
    live.ru_display = r.ru_display;
    live.ru_user_s = seconds(r.exit.usage.ru_utime);
    live.ru_sys_s = seconds(r.exit.usage.ru_stime);
    live.skip_zero_threads = r.skip_zero_threads;
    out.put(stat::StatPrinter(*r.engine, live).final_report());
  }
  // perf leaves with the SIGINT that stopped it when it had no workload
  // (with one, the workload's SIGCHLD came last), else with the workload's
  // exit code (0 when a signal killed it).
  if (r.stop_signal == SIGINT && (!r.has_workload || o.repeat == 0)) {
    sigprocmask(SIG_SETMASK, &signals.old, nullptr);
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
  return r.has_workload && r.exit.exited ? r.exit.exit_code : 0;
}

int run_report(int argc, char** argv) {
  CLI::App app(
      "Print the counts of a 'perf stat record' file, as 'perf stat report' does.\n\n"
      " usage: perfkit stat report [<options>]",
      "stat report");
  Args a;
  std::string input;
  app.add_option("-i,--input", input, "input file name");
  app.add_flag("-A,--no-aggr", a.no_aggr, "disable CPU count aggregation");
  app.add_flag("--per-socket", a.per_socket, "aggregate counts per processor socket");
  app.add_flag("--per-die", a.per_die, "aggregate counts per processor die");
  app.add_flag("--per-core", a.per_core, "aggregate counts per physical processor core");
  app.add_flag("--per-node", a.per_node, "aggregate counts per numa node");
  app.add_option("-x,--field-separator", a.sep, "print counts with custom separator (perfkit)");
  app.add_flag("-j,--json-output", a.json, "print counts in JSON format (perfkit)");
  app.add_flag("--no-big-num", a.no_big_num, "print large numbers without thousands' separators");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  if (input.empty()) {
    // perf reads a pipe on stdin, else perf.data.
    struct stat st {};
    input = fstat(STDIN_FILENO, &st) == 0 && S_ISFIFO(st.st_mode) ? "-" : "perf.data";
  }
  std::setlocale(LC_ALL, "");
  auto popts = print_options(a);
  if (!popts) return fail("stat report", popts.error());
  auto reader = perfdata::Reader::open(input);
  if (!reader) return fail("stat report", reader.error());
  stat::StatReportOptions ro;
  AggrMode m = aggr_of(a);
  if (m != AggrMode::kGlobal) ro.aggr = m;
  ro.print = *popts;
  auto st = stat::stat_report(
      **reader, ro, [](const std::string& s) { std::fwrite(s.data(), 1, s.size(), stderr); });
  if (!st) return fail("stat report", st.error());
  return 0;
}

// perf's subcommand match: a prefix of at least three letters.
bool is_sub(const char* arg, std::string_view name) {
  std::string_view s = arg;
  return s.size() > 2 && s.size() <= name.size() && name.substr(0, s.size()) == s;
}

}  // namespace

int cmd_stat(int argc, char** argv) {
  if (argc > 1 && is_sub(argv[1], "record")) return run_live(argc - 1, argv + 1, true);
  if (argc > 1 && is_sub(argv[1], "report")) return run_report(argc - 1, argv + 1);
  return run_live(argc, argv, false);
}

}  // namespace perfkit::cli
