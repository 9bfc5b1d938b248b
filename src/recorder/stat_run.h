// A live `perfkit stat`: resolves the target (a workload, -p, -t, -a, -C),
// parses and opens the events (perf stat's defaults when none are given),
// runs the workload (-r times), prints intervals (-I) through a hook, stops
// on the workload's exit or on a signal, and leaves the results in a
// StatEngine for stat_print.h. With a record path it also writes what
// `perf stat record` writes (stat_record.h).
//
// Signals: the caller blocks them and passes a signalfd. SIGINT, SIGTERM and
// SIGHUP stop a measurement without a workload, or with -I; with a workload
// they are left to the workload (it gets them too from the terminal) and
// counting ends when it exits, as perf does. SIGCHLD reports the workload's
// exit. Workloads get `child_sigmask` back before exec.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "capture/cgroup.h"
#include "capture/record_options.h"
#include "capture/system_paths.h"
#include "capture/workload.h"
#include "stat/stat.h"
#include "stat/stat_print.h"

namespace perfkit::recorder {

struct StatRunOptions {
  std::vector<std::string> events;  // -e arguments, each possibly a list
  // --filter: the tracepoint filter of each -e argument's events ("" for
  // none; shorter than `events` when the last have none).
  std::vector<std::string> event_filters;
  std::vector<std::string> workload;
  std::string pids;          // -p "1,2"
  std::string tids;          // -t "3,4"
  bool system_wide = false;  // -a
  std::string cpu_list;      // -C "0-1"
  // -G: the cgroup of each event in order (nullptr: none), perf's
  // parse_cgroups: one cgroup is every event's.
  std::vector<std::shared_ptr<const capture::Cgroup>> cgroups;
  // --for-each-cgroup: every event again for each of these, in turn.
  std::vector<std::shared_ptr<const capture::Cgroup>> for_each_cgroup;
  stat::AggrMode aggr = stat::AggrMode::kGlobal;
  std::uint64_t interval_ms = 0;  // -I
  int interval_count = 0;         // --interval-count
  int repeat = 1;                 // -r (0: until interrupted)
  bool no_inherit = false;        // -i
  bool null_run = false;          // --null: no counter, the run's times only
  bool scale = true;              // --no-scale clears it
  bool all_user = false, all_kernel = false;
  int timeout_ms = 0;  // --timeout: counting ends (the workload gets SIGTERM) after it
  // -D/--delay: counting starts this long after the workload (-1: never).
  int delay_ms = 0;
  int detailed = 0;      // -d, -dd, -ddd: perf's detailed events after the others
  bool group = false;    // -g/--group: every counter in one group
  bool summary = false;  // --summary: with -I, the whole run's counts too
  bool sync = false;     // --sync: sync() before counting
  // --control: enable/disable (optionally one event by name), ping,
  // snapshot, stop and evlist commands, each acknowledged.
  capture::ControlOptions control;
  std::string record_path;           // stat record: the output ("" when not recording)
  std::vector<std::string> cmdline;  // argv, for the record's CMDLINE
  std::string version;               // for the record's VERSION
  capture::SystemPaths paths;
};

struct StatRunHooks {
  // Notes and warnings perf prints on stderr while setting up.
  std::function<void(const std::string&)> message;
  // Called for every interval with the counts since the previous one.
  std::function<void(const stat::StatEngine&, std::uint64_t ts_ns)> interval;
  // Called after every run of a repeated measurement that goes on until
  // interrupted (-r 0), with that run's counts.
  std::function<void(const stat::StatEngine&)> forever_run;
  // Called before and after each run (--pre, --post); an error ends the
  // measurement with it.
  std::function<Status()> before_run, after_run;
  int signal_fd = -1;  // signalfd for SIGINT/SIGTERM/SIGHUP/SIGCHLD (-1: poll the workload)
  std::optional<sigset_t> child_sigmask;
};

struct StatOutcome {
  std::unique_ptr<stat::StatEngine> engine;
  stat::StatTargetDesc target;
  bool has_workload = false;
  capture::ExitInfo exit;          // the last run's
  int stop_signal = 0;             // the signal that interrupted counting (0: none)
  bool skip_zero_threads = false;  // system-wide --per-thread
  bool ru_display = false;         // one run of a workload: print user/sys
  // --summary with -I: the counts of the whole run (the last interval's
  // cumulative ones) over its elapsed time.
  std::unique_ptr<stat::StatEngine> summary;
};

// Runs the measurement. Errors: bad options (perf's messages: --per-thread
// without a task or -a, -A or --per-* without -a/-C, -r with record), an
// event that does not parse or cannot be opened, no such process, a
// workload that cannot be executed ("Workload failed: ..."), a record file
// that cannot be written.
Expected<StatOutcome> run_stat(const StatRunOptions& opts, const StatRunHooks& hooks);

}  // namespace perfkit::recorder
