// `perfkit stat record`: counting results written as perf stat record writes
// them, so that `perf stat report` (and `perfkit stat report`) read them:
//
//   header  attrs (as opened for counting) with one id per (cpu, thread)
//   data    EVENT_UPDATE unit and scale of the events that have them,
//           THREAD_MAP, CPU_MAP, STAT_CONFIG (aggr mode, interval, scale),
//           then for every reading one STAT per event, cpu and thread (the
//           raw cumulative counts), each reading closed by a STAT_ROUND
//           (INTERVAL with its time, or FINAL with the elapsed time)
//   features the machine's (hostname ... mem topology), CMDLINE,
//           EVENT_DESC, GROUP_DESC, and the empty STAT section
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "capture/counter.h"
#include "capture/system_paths.h"
#include "perfdata/event_set.h"
#include "perfdata/writer.h"
#include "stat/stat.h"

namespace perfkit::recorder {

struct StatRecordConfig {
  stat::AggrMode aggr = stat::AggrMode::kGlobal;
  std::uint64_t interval_ms = 0;
  bool scale = true;
  std::vector<std::string> cmdline;  // for CMDLINE (argv[0] becomes this binary's path)
  std::string version;               // for VERSION
  capture::SystemPaths paths;
};

class StatRecordWriter {
 public:
  // Creates `path` ("-" streams pipe mode to stdout). Errors name the path.
  static Expected<std::unique_ptr<StatRecordWriter>> create(const std::string& path,
                                                            StatRecordConfig config);

  // Writes the header and the maps once the counters are open. `comms` are
  // the threads' names (empty strings unless --per-thread, as perf).
  Status begin(const capture::CounterSet& set, const std::vector<std::string>& comms);
  // One STAT per opened event, cpu and thread, cpu by cpu as perf reads them.
  Status write_counts(const capture::CounterSet& set, const capture::CounterReadings& r);
  // STAT_ROUND of `type` at `time_ns`.
  Status write_round(std::uint64_t type, std::uint64_t time_ns);
  // Rewrites the header with the feature sections.
  Status finish(const capture::CounterSet& set);

  const std::string& path() const { return path_; }

 private:
  StatRecordWriter(std::unique_ptr<perfdata::Writer> w, std::string path, StatRecordConfig c)
      : writer_(std::move(w)), path_(std::move(path)), config_(std::move(c)) {}
  perfdata::EventSet event_set(const capture::CounterSet& set) const;

  std::unique_ptr<perfdata::Writer> writer_;
  std::string path_;
  StatRecordConfig config_;
};

// The STAT_CONFIG record for `config`.
std::vector<std::uint8_t> stat_config_record(stat::AggrMode aggr, std::uint64_t interval_ms,
                                             bool scale);
std::vector<std::uint8_t> stat_record(std::uint64_t id, std::int32_t cpu, std::uint32_t thread,
                                      const abi::CounterValue& v);
std::vector<std::uint8_t> stat_round_record(std::uint64_t type, std::uint64_t time_ns);

}  // namespace perfkit::recorder
