// perf stat's counting results: the measured events, their raw readings per
// (cpu, thread), and what perf stat 6.1 computes from them before printing:
// the counts aggregated per aggregation mode (global, per cpu, core, die,
// socket, node, thread), scaled for multiplexing (abi/read_format.h), the
// statistics over repeated runs (-r) and the "shadow" figures derived
// metrics need (clock time, cycles, branches, cache accesses per context).
//
// Live counting (perfkit stat) and files (perfkit stat report) both fill a
// StatSetup and feed readings into a StatEngine; stat_print.h prints it.
//
// As perf 6.1 does, a repeated run (-r N) shows the last run's counts with
// the relative standard deviation of all runs, and metrics from the averages
// of all runs; an interval (-I) shows the counts since the previous one.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "abi/attr.h"
#include "abi/read_format.h"

namespace perfkit::stat {

enum class AggrMode { kGlobal, kNone, kSocket, kDie, kCore, kNode, kThread };

// perf's PERF_STAT_ROUND_TYPE__* (STAT_ROUND) and PERF_STAT_CONFIG_TERM__*
// (STAT_CONFIG).
inline constexpr std::uint64_t kStatRoundInterval = 0;
inline constexpr std::uint64_t kStatRoundFinal = 1;
inline constexpr std::uint64_t kStatConfigAggrMode = 0;
inline constexpr std::uint64_t kStatConfigInterval = 1;
inline constexpr std::uint64_t kStatConfigScale = 2;

// The aggregation mode perf records in STAT_CONFIG (enum aggr_mode).
int aggr_mode_to_perf(AggrMode m);
std::optional<AggrMode> aggr_mode_from_perf(std::uint64_t v);

// Welford's running mean and variance, as perf's update_stats/avg_stats/
// stddev_stats (stddev of the mean).
struct RunningStats {
  double n = 0, mean = 0, m2 = 0;
  double max = 0, min = 0;
  void update(std::uint64_t v);
  double stddev() const;  // of the mean: sqrt(variance / n); 0 under two values
};
// 100 * stddev / avg, 0 when avg is 0 (perf's rel_stddev_stats).
double rel_stddev(double stddev, double avg);

struct StatEvent {
  std::string name;
  abi::EventAttr attr;  // type/config classify metrics, exclude_* bits the context
  std::string unit;
  double scale = 1.0;
  bool supported = true;  // false: "<not supported>"
  std::size_t leader = 0;
  std::size_t group_size = 1;  // of the group this event leads
  std::string cgroup;          // -G's (and its column), "" none
  std::size_t cgroup_id = 0;   // which cgroup, for the metrics' figures (0: none)
};

// Where a cpu sits, for --per-core/--per-die/--per-socket/--per-node.
struct CpuPlace {
  int socket = 0, die = 0, core = 0, node = 0;
};

struct StatSetup {
  std::vector<StatEvent> events;
  std::vector<int> cpus = {-1};       // the cpu map ({-1}: any cpu)
  std::vector<pid_t> threads = {-1};  // the thread map ({-1}: every task)
  std::vector<std::string> comms;     // per thread, for --per-thread
  std::map<int, CpuPlace> topology;   // by cpu number; missing cpus count as 0s
  bool cgroups = false;               // -G or --for-each-cgroup: a cgroup column
};

// One reading of every event: [event][cpu_idx * nthreads + thread_idx],
// cumulative since the counters were enabled. ok false: the read failed.
struct StatReading {
  std::vector<std::vector<abi::CounterValue>> values;
  std::vector<std::vector<bool>> ok;
};

// One printed position: an aggregation id and the (cpu, thread) slots in it.
struct AggrSlot {
  int socket = -1, die = -1, core = -1, node = -1, cpu = -1;
  int thread = -1;                 // thread index for --per-thread
  int nr = 0;                      // cpus aggregated (perf's "cpus" column)
  std::vector<std::size_t> slots;  // cpu_idx * nthreads + thread_idx
};

// The slots of each aggregation id, in perf's order (sorted by node, socket,
// die, core, cpu; the cpu map's order for -A; thread order for --per-thread).
std::vector<AggrSlot> aggr_slots(const StatSetup& setup, AggrMode mode);

// What perf prints for one event at one aggregation id.
struct StatValue {
  double val = 0;  // count (unscaled by the unit scale), summed over the id
  std::uint64_t ena = 0, run = 0;
  bool counted = true;  // false: "<not counted>" / "<not supported>"
};

// The figures derived metrics use, perf's enum stat_type.
enum class ShadowKind {
  kNsecs,
  kCycles,
  kStalledFront,
  kStalledBack,
  kBranches,
  kCacheRefs,
  kL1Dcache,
  kL1Icache,
  kLlCache,
  kDtlbCache,
  kItlbCache,
};

class StatEngine {
 public:
  StatEngine(StatSetup setup, AggrMode mode, bool scale = true);

  const StatSetup& setup() const { return setup_; }
  AggrMode mode() const { return mode_; }
  const std::vector<AggrSlot>& slots() const { return slots_; }

  // A finished run: `reading` holds the final cumulative counts and `wall_ns`
  // the elapsed time. Replaces the shown counts, adds to the run statistics.
  void add_run(const StatReading& reading, std::uint64_t wall_ns);
  // An interval: shows the counts since the previous interval (or since the
  // start), with the interval's length as the elapsed time for the metrics.
  // perf stat starts each interval's metric figures afresh; perf stat report
  // does not (`reset_shadow` false): its rates divide by the mean clock of
  // all intervals so far.
  void add_interval(const StatReading& reading, std::uint64_t interval_ns,
                    bool reset_shadow = true);

  int runs() const { return runs_; }
  const StatValue& value(std::size_t ev, std::size_t aggr) const { return shown_[ev][aggr]; }
  // Stddev of the mean of the event's global count over the runs.
  double noise_stddev(std::size_t ev) const;
  // Mean and stddev of the elapsed time over runs, in ns.
  const RunningStats& walltime() const { return walltime_; }
  // Each run's elapsed time, in ns (stat --table).
  const std::vector<std::uint64_t>& run_walltimes() const { return run_walltimes_; }

  // Shadow statistics of aggregation id `aggr` (0 in global mode).
  // Average of `kind` for events in context `ctx`, and how many updates it had.
  // (`cgroup`: the events' StatEvent::cgroup_id; 0 none.)
  double shadow_avg(ShadowKind kind, int ctx, std::size_t aggr, std::size_t cgroup = 0) const;
  double shadow_n(ShadowKind kind, int ctx, std::size_t aggr, std::size_t cgroup = 0) const;

 private:
  void process(const StatReading& reading, const StatReading* previous);
  StatValue aggregate(std::size_t ev, const AggrSlot& slot, const StatReading& r,
                      const StatReading* prev) const;
  void update_shadow(std::size_t ev, double count, std::size_t aggr);

  StatSetup setup_;
  AggrMode mode_;
  bool scale_;
  std::vector<AggrSlot> slots_;
  std::vector<std::vector<StatValue>> shown_;           // [event][aggr]
  std::vector<std::array<RunningStats, 3>> res_stats_;  // global: val, ena, run per event
  std::map<std::tuple<int, int, std::size_t>, RunningStats> shadow_;
  RunningStats walltime_;
  std::vector<std::uint64_t> run_walltimes_;
  std::optional<StatReading> previous_;
  int runs_ = 0;
};

// perf's evsel_context: the exclude_* bits that separate shadow figures.
int event_context(const abi::EventAttr& a);
// cpu-clock or task-clock (their unit is msec).
bool is_clock_event(const abi::EventAttr& a);

}  // namespace perfkit::stat
