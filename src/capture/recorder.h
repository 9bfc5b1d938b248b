// Recorder: runs a recording. It holds the workload before exec, builds the
// cpu and thread maps of the target, opens every event per (cpu, thread)
// with perf's fallbacks (precise levels, cycles -> cpu-clock, kernel ->
// user only), maps one ring buffer per cpu (per thread with --per-thread)
// and redirects the other events there with PERF_EVENT_IOC_SET_OUTPUT, writes
// the side-band, then reads the buffers in poll-driven passes, writing
// FINISHED_ROUND after every pass that wrote data, until the workload exits,
// the stop fd fires (SIGINT/SIGTERM in the CLI), --duration passes, a
// --control 'stop' arrives, or the output fails.
//
//   Recorder r(config, opts, paths);
//   PK_TRY(r.open(messages));        // events opened, buffers mapped
//   writer.begin(r.event_set());     // ids are known now
//   PK_TRY(r.synthesize(sink, ...));  // side-band before FINISHED_INIT
//   PK_TRY(r.run(sink, control));     // until a stop condition
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "capture/control.h"
#include "capture/dso_hits.h"
#include "capture/perf_event.h"
#include "capture/record_config.h"
#include "capture/record_options.h"
#include "capture/ring_buffer.h"
#include "capture/synthesize.h"
#include "capture/thread_masks.h"
#include "capture/workload.h"
#include "perfdata/event_set.h"

namespace perfkit::capture {

struct RecordStats {
  std::uint64_t samples = 0;       // SAMPLE records read
  std::uint64_t lost = 0;          // events lost, from LOST records
  std::uint64_t lost_samples = 0;  // from LOST_SAMPLES records
  std::uint64_t records = 0;       // every record read from the buffers
  std::uint64_t bytes = 0;         // bytes read from the buffers
  std::uint64_t wakeups = 0;       // poll wakeups ("Woken up N times")
  std::uint64_t throttles = 0;     // THROTTLE records
  std::uint64_t first_sample_time = 0, last_sample_time = 0;
  bool corrupt_buffer = false;  // a record header that made no sense
};

// Why run() ended.
enum class StopReason {
  kNone,
  kWorkloadExit,
  kSignal,
  kDuration,
  kControl,
  kTargetGone,
  kSizeLimit,
  kError
};

struct RunControl {
  int stop_fd = -1;  // readable: stop (the CLI's signal pipe)
  // --switch-output: between passes, switch_output() is called when
  // switch_fd is readable (SIGUSR2), every switch_every_s seconds, or when
  // switch_due() says so (a size reached); the recording goes on after it.
  int switch_fd = -1;
  unsigned switch_every_s = 0;
  std::function<bool()> switch_due;
  std::function<Status()> switch_output;
};

class Recorder {
 public:
  Recorder(RecordConfig config, RecordOptions opts, SystemPaths paths);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Forks the workload (held before exec), resolves the target's cpus and
  // threads, opens every event and maps the buffers. Lines perf would print
  // meanwhile (fallback notes) are appended to `messages`.
  // Errors: no such process for -p/-t, a cpu outside the machine for -C, a
  // workload that cannot be forked, an event that cannot be opened (with
  // explain_open_error's reason), a buffer that cannot be mapped.
  Status open(std::vector<std::string>& messages);

  const std::vector<RecordEvent>& events() const { return config_.events; }
  const std::vector<EventGroup>& groups() const { return config_.groups; }
  // Sample ids of each event, in (cpu, thread) order.
  const std::vector<std::vector<std::uint64_t>>& ids() const { return ids_; }
  // The attrs with their ids and names, for the perf.data writer.
  perfdata::EventSet event_set() const;
  const std::vector<int>& cpus() const { return cpus_; }
  const std::vector<pid_t>& threads() const { return threads_; }
  std::size_t ring_count() const { return rings_.size(); }
  // The clock conversion of the first buffer (TIME_CONV is written when
  // cap_user_time_zero says it is valid).
  TimeConversion time_conversion() const;
  // Bytes of one ring buffer mapping, user page included.
  std::size_t mmap_len() const;

  // Writes what perf synthesizes before FINISHED_INIT: TIME_CONV, ID_INDEX,
  // kernel and module maps, EVENT_UPDATE names (pipe mode), THREAD_MAP,
  // CPU_MAP, the target's threads and maps, the workload's COMM.
  // With --tail-synthesize only the workload's COMM is written now; the rest
  // when run() ends (synthesize_tail).
  Status synthesize(RecordSink& sink, bool pipe, SynthOptions synth);
  // What a file after the first gets (--switch-output): the same, then the
  // workload's thread with its maps as they are now.
  Status synthesize_next_file(RecordSink& sink, SynthOptions synth);

  // Starts the workload, enables the events, writes FINISHED_INIT, then
  // reads the buffers until a stop condition; the last pass drains them.
  // Errors: the workload's exec failed, the sink failed (the recording so
  // far has been written up to the failing write).
  Status run(RecordSink& sink, const RunControl& control,
             const std::function<void(const std::string&)>& say);

  // --threads: run() reads the buffers on threads of their own, one per
  // mask (the buffers of its cpus, on its affinity), each buffer's data
  // going to its own sink (`ring_sinks`, one per buffer), with no
  // FINISHED_ROUND (perf's directory layout); `sink` then gets the rest.
  // For per-cpu buffers; call after open().
  void set_parallel(std::vector<RecordSink*> ring_sinks, std::vector<ThreadMask> masks) {
    ring_sinks_ = std::move(ring_sinks);
    masks_ = std::move(masks);
  }

  const RecordStats& stats() const { return stats_; }
  // A new output file begins (--switch-output): the wake-ups and the DSOs'
  // hits are counted afresh, the maps seen so far kept.
  void begin_output_file();
  // The files mapped during the recording and whether samples hit them.
  const DsoHits& dso_hits() const { return *hits_; }
  StopReason stop_reason() const { return stop_reason_; }
  // The workload's wait status once it has exited.
  std::optional<int> workload_status() { return workload_ ? workload_->wait(false) : std::nullopt; }
  bool has_workload() const { return workload_.has_value(); }

 private:
  struct RunState;  // run()'s poll set, deadlines and stop condition
  struct Worker;    // --threads: one reading thread
  // run() with --threads: the workers read, this thread waits for the end.
  Status run_parallel(RecordSink& sink, const RunControl& control,
                      const std::function<void(const std::string&)>& say);
  void work(Worker& w, int stop_fd, int fail_fd);
  // One pass of a worker over its buffers; true if anything was written.
  Expected<bool> drain(const Worker& w, bool final);
  Status build_maps();
  Status open_event(std::size_t index, std::vector<std::string>& messages);
  Status open_all(std::size_t index, std::vector<std::vector<EventFd>>& fds);
  Status map_buffers();
  Status enable_all(bool enable, const std::string& only = "");
  // One pass over every buffer; true if anything was written. Backward
  // buffers (--overwrite) are read by the final pass alone.
  Expected<bool> pass(RecordSink& sink, bool final);
  // Pauses each backward buffer, takes what it holds since the last time,
  // resumes it.
  Expected<bool> pass_backward(RecordSink& sink);
  // Backward buffer `r`: paused, what it holds since the last time written
  // to `sink`, resumed; true if it held anything.
  Expected<bool> read_backward(std::size_t r, RecordSink& sink);
  void scan(SplitBytes data);
  std::uint64_t sample_time(Bytes record) const;
  Status handle_control(ControlChannel& c, bool& stop,
                        const std::function<void(const std::string&)>& say);
  // run()'s start: the control fds, the events enabled (unless delayed), the
  // workload started, FINISHED_INIT written, the poll set made.
  Status start_run(RunState& rs, RecordSink& sink, const RunControl& control,
                   const std::function<void(const std::string&)>& say);
  // `synth` with what the recording decides (trailer size, -d's data maps,
  // --namespaces, --synth's maps).
  SynthOptions completed(SynthOptions synth) const;
  // synthesize()'s records but the workload's COMM.
  Status synthesize_session(RecordSink& sink, bool pipe, const SynthOptions& synth);
  // The workload's COMM (and NAMESPACES), before it runs.
  Status synthesize_workload(RecordSink& sink, const SynthOptions& synth);
  // --tail-synthesize at the end: FINISHED_INIT, the workload's threads
  // (before it is reaped), the session's side-band, in perf's order.
  Status synthesize_tail(RecordSink& sink);
  // Waits for the rings, the deadlines, a signal, the workload's exit or a
  // control command, and handles what came.
  Status wait(RunState& rs, const std::function<void(const std::string&)>& say);

  RecordConfig config_;
  RecordOptions opts_;
  SystemPaths paths_;
  OpenErrorContext error_ctx_;
  std::optional<Workload> workload_;
  std::vector<int> cpus_;       // -1 alone for per-thread buffers
  std::vector<pid_t> threads_;  // -1 alone for system-wide
  bool per_thread_ = false;
  // fds_[event][cpu * threads + thread]
  std::vector<std::vector<EventFd>> fds_;
  std::vector<std::vector<std::uint64_t>> ids_;
  std::vector<RingBuffer> rings_;
  std::vector<int> ring_fds_;         // the fd each ring is mapped from
  std::vector<std::uint64_t> since_;  // --overwrite: each ring's head when last read
  std::vector<std::uint8_t> scratch_;
  int time_offset_ = -1;  // byte offset of TIME in every SAMPLE, -1 when it varies
  std::vector<std::pair<std::uint64_t, int>> id_time_offset_;  // id -> TIME offset
  RecordStats stats_;
  std::optional<DsoHits> hits_;
  StopReason stop_reason_ = StopReason::kNone;
  struct TailSynthesis {
    bool pipe = false;
    SynthOptions synth;
  };
  std::optional<TailSynthesis> tail_;    // --tail-synthesize's, kept by synthesize()
  std::vector<RecordSink*> ring_sinks_;  // --threads: each buffer's output
  std::vector<ThreadMask> masks_;
  std::mutex scan_mutex_;  // --threads: the workers' scan() (stats_, hits_, scratch_)
};

}  // namespace perfkit::capture
