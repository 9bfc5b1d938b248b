// The `perfkit record` session: configures the events, opens the output
// (renaming an existing perf.data to perf.data.old, as perf does), runs the
// Recorder into the perf.data writer (file or pipe mode, -z compression),
// then fills the header features (this machine's, the events', sample times,
// build-ids of the DSOs that got samples) and finishes the file. A write
// failure (disk full) leaves the part recorded so far readable.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "capture/event_spec.h"
#include "capture/record_options.h"
#include "capture/recorder.h"
#include "capture/system_paths.h"
#include "perfdata/features.h"

namespace perfkit::recorder {

struct RecordHooks {
  int stop_fd = -1;    // readable: stop (the CLI's signal pipe)
  int switch_fd = -1;  // readable: switch the output (SIGUSR2, --switch-output)
  // Each line perf would print on stderr during the session (warnings,
  // notes, "Events enabled"), as it happens.
  std::function<void(const std::string&)> message;
  std::string version = "perfkit";  // the VERSION feature: "perfkit 0.1.0"
};

struct RecordSummary {
  capture::RecordStats stats;
  capture::StopReason stop_reason = capture::StopReason::kNone;
  std::string output;                   // the path, "-" for stdout
  std::uint64_t output_bytes = 0;       // bytes of the output file or stream
  std::uint64_t bytes_transferred = 0;  // bytes read from the ring buffers
  bool compressed = false;
  std::uint64_t compressed_bytes = 0;  // bytes of COMPRESSED records (-z)
  std::optional<int> workload_status;  // wait status of the workload
  std::optional<Error> write_error;    // the output failed; what it had was kept
  bool salvaged = false;               // after a write error, the file was made readable
  std::uint64_t salvaged_data_bytes = 0;
  // --switch-output: the name the last file was given (FILE.TIMESTAMP).
  std::string dumped;
};

// Runs the whole session. Errors: options that conflict, the output cannot
// be created, an event cannot be opened, the workload cannot run. A write
// error is not an Error here: the summary carries it (with the recording made
// readable), so the caller can still report what was captured.
Expected<RecordSummary> run_record(const capture::EventList& events,
                                   const capture::RecordOptions& opts,
                                   const capture::SystemPaths& paths, const RecordHooks& hooks);

// The local time as perf's --timestamp-filename and --switch-output append
// it: %Y%m%d%H%M%S and two digits of hundredths.
std::string timestamp_suffix();

// The lines perf prints at the end, with "perfkit" for "perf":
//   [ perfkit record: Woken up N times to write data ]
//   [ perfkit record: Captured and wrote X MB FILE (S samples, L lost) ]
// plus ", compressed (original X MB, ratio is R)" with -z.
std::vector<std::string> closing_lines(const RecordSummary& s);

// The header features for a recording (exposed for tests): this machine's,
// then the session's. `pipe` selects what perf streams at the start.
perfdata::Features session_features(const capture::Recorder& r, const capture::RecordOptions& opts,
                                    const capture::SystemPaths& paths, const std::string& version,
                                    bool pipe);

}  // namespace perfkit::recorder
