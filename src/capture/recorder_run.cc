// The Recorder's side-band synthesis and its poll-driven reading loop.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "abi/layout.h"
#include "abi/perf_event.h"
#include "base/text.h"
#include "capture/recorder.h"

namespace perfkit::capture {

using namespace perfkit::abi;
using Clock = std::chrono::steady_clock;

namespace {

// Lets the DSO tracker see the synthesized maps on their way out.
class ObservingSink : public RecordSink {
 public:
  ObservingSink(RecordSink& out, DsoHits& hits) : out_(out), hits_(hits) {}
  Status write(Bytes records) override {
    for (std::size_t at = 0; at + kHeaderSize <= records.size();) {
      std::uint16_t size = load<std::uint16_t>(records.data() + at + 6, false);
      if (size < kHeaderSize || size > records.size() - at) break;
      hits_.on_record(records.subspan(at, size));
      at += size;
    }
    return out_.write(records);
  }

 private:
  RecordSink& out_;
  DsoHits& hits_;
};

}  // namespace

Status Recorder::synthesize_next_file(RecordSink& out, SynthOptions synth) {
  if (opts_.tail_synthesize) return synthesize(out, false, std::move(synth));
  PK_TRY(synthesize(out, false, synth));
  if (!workload_) return ok();
  // perf's record__synthesize_workload: the workload's thread and maps, as
  // they are now, for the files after the first.
  ObservingSink sink(out, *hits_);
  Synthesizer s(paths_, completed(std::move(synth)), sink);
  return s.thread_map_threads({workload_->pid()});
}

SynthOptions Recorder::completed(SynthOptions synth) const {
  synth.id_hdr_size = trailer_size(config_.events.front().attr.sample_type);
  synth.mmap_data = opts_.sample_address || (opts_.call_graph.mode == CallGraphMode::kDwarf &&
                                             opts_.call_graph.dwarf_data_addresses);
  synth.namespaces = opts_.namespaces;
  synth.task_mmaps = (opts_.synth & kSynthMmap) != 0;
  return synth;
}

Status Recorder::synthesize(RecordSink& out, bool pipe, SynthOptions synth) {
  synth = completed(std::move(synth));
  if (opts_.tail_synthesize) {
    PK_TRY(synthesize_workload(out, synth));
    tail_ = TailSynthesis{pipe, std::move(synth)};
    return ok();
  }
  PK_TRY(synthesize_session(out, pipe, synth));
  return synthesize_workload(out, synth);
}

Status Recorder::synthesize_workload(RecordSink& out, const SynthOptions& synth) {
  if (!workload_) return ok();
  ObservingSink sink(out, *hits_);
  Synthesizer s(paths_, synth, sink);
  auto tgid = s.comm(workload_->pid());
  return tgid ? ok() : tgid.error();
}

Status Recorder::synthesize_tail(RecordSink& out) {
  if (!tail_) return ok();
  // perf marks the end of its (absent) initial side-band first.
  PK_TRY(out.write(header_only_record(kRecordFinishedInit)));
  if (workload_) {
    // perf's record__synthesize_workload: the thread as it ended (a zombie
    // has its name and no maps left).
    ObservingSink sink(out, *hits_);
    Synthesizer s(paths_, tail_->synth, sink);
    (void)s.thread_map_threads({workload_->pid()});
  }
  PK_TRY(synthesize_session(out, tail_->pipe, tail_->synth));
  tail_.reset();
  return ok();
}

Status Recorder::synthesize_session(RecordSink& out, bool pipe, const SynthOptions& synth) {
  ObservingSink sink(out, *hits_);
  TimeConversion tc = time_conversion();
  if (tc.cap_user_time_zero) PK_TRY(sink.write(time_conv_record(tc)));
  std::vector<IdIndexEntry> index;
  for (std::size_t e = 0; e < ids_.size(); ++e)
    for (std::size_t c = 0; c < cpus_.size(); ++c)
      for (std::size_t t = 0; t < threads_.size(); ++t) {
        IdIndexEntry x;
        x.id = ids_[e][c * threads_.size() + t];
        x.idx = per_thread_ ? t : c;
        x.cpu = static_cast<std::uint64_t>(static_cast<std::int64_t>(cpus_[c]));
        x.tid = static_cast<std::uint64_t>(static_cast<std::int64_t>(threads_[t]));
        index.push_back(x);
      }
  PK_TRY(sink.write(id_index_record(index)));
  Synthesizer s(paths_, synth, sink);
  bool exclude_kernel =
      std::all_of(config_.events.begin(), config_.events.end(),
                  [](const RecordEvent& e) { return e.attr.has(kAttrExcludeKernel); });
  if (!exclude_kernel) {
    // perf warns and goes on when the kernel map is hidden.
    (void)s.kernel_mmap();
    PK_TRY(s.modules());
  }
  for (std::size_t e = 0; e < config_.events.size(); ++e) {
    const RecordEvent& ev = config_.events[e];
    if (ids_[e].empty()) continue;
    if (!ev.unit.empty()) PK_TRY(sink.write(event_update_unit_record(ids_[e][0], ev.unit)));
    if (ev.scale && *ev.scale != 1.0)
      PK_TRY(sink.write(event_update_scale_record(ids_[e][0], *ev.scale)));
    if (pipe) PK_TRY(sink.write(event_update_name_record(ids_[e][0], ev.name)));
  }
  std::vector<std::string> comms;
  if (opts_.target.has_task())
    for (pid_t t : threads_) {
      auto st = read_proc_status(paths_, t, t);
      comms.push_back(st ? st->name : "");
    }
  PK_TRY(sink.write(thread_map_record(threads_, comms)));
  PK_TRY(sink.write(cpu_map_record(cpus_)));
  if (opts_.all_cgroups && (opts_.synth & kSynthCgroup)) PK_TRY(s.cgroups());
  if (!(opts_.synth & kSynthTask)) return ok();  // --synth=no / cgroup
  if (opts_.target.has_task()) {
    PK_TRY(s.thread_map_threads(threads_));
  } else if (opts_.target.has_cpu()) {
    PK_TRY(s.all_threads());
  }
  return ok();
}

namespace {

std::uint64_t payload_u64(Bytes rec, std::size_t offset) {
  return rec.size() >= offset + 8 ? load<std::uint64_t>(rec.data() + offset, false) : 0;
}

}  // namespace

std::uint64_t Recorder::sample_time(Bytes rec) const {
  int off = time_offset_;
  if (off == -2) {
    // Every event has IDENTIFIER when their layouts differ: it comes first.
    std::uint64_t id = payload_u64(rec, 8);
    auto it =
        std::lower_bound(id_time_offset_.begin(), id_time_offset_.end(), std::make_pair(id, -100));
    off = it != id_time_offset_.end() && it->first == id ? it->second : -1;
  }
  return off > 0 ? payload_u64(rec, static_cast<std::size_t>(off)) : 0;
}

void Recorder::scan(SplitBytes data) {
  RecordCursor c(data);
  Bytes rec;
  while (c.next(rec, scratch_)) {
    ++stats_.records;
    switch (load<std::uint32_t>(rec.data(), false)) {
      case kRecordSample: {
        ++stats_.samples;
        std::uint64_t t = sample_time(rec);
        if (t) {
          if (!stats_.first_sample_time || t < stats_.first_sample_time)
            stats_.first_sample_time = t;
          stats_.last_sample_time = std::max(stats_.last_sample_time, t);
        }
        break;
      }
      case kRecordLost:
        stats_.lost += payload_u64(rec, 16);
        break;
      case kRecordLostSamples:
        stats_.lost_samples += payload_u64(rec, 8);
        break;
      case kRecordThrottle:
        ++stats_.throttles;
        break;
      default:
        break;
    }
    hits_->on_record(rec);
  }
  if (c.failed()) stats_.corrupt_buffer = true;
}

Expected<bool> Recorder::read_backward(std::size_t r, RecordSink& sink) {
  const int fd = ring_fds_[r];
  if (::ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) != 0)
    return make_error("cannot pause the overwritable ring buffer: {}", std::strerror(errno));
  SplitBytes data = rings_[r].backward(since_[r]);
  Status st = ok();
  if (data.size() != 0) {
    {
      std::lock_guard lock(scan_mutex_);
      scan(data);
      stats_.bytes += data.size();
    }
    st = sink.write_ring(data);
  }
  (void)::ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
  PK_TRY(std::move(st));
  return data.size() != 0;
}

Expected<bool> Recorder::pass_backward(RecordSink& sink) {
  if (since_.size() != rings_.size()) since_.assign(rings_.size(), 0);
  bool wrote = false;
  for (std::size_t r = 0; r < rings_.size(); ++r) {
    PK_ASSIGN(bool got, read_backward(r, sink));
    wrote |= got;
  }
  if (wrote) {
    hits_->end_pass();
    PK_TRY(sink.write(header_only_record(kRecordFinishedRound)));
  }
  return wrote;
}

Expected<bool> Recorder::pass(RecordSink& sink, bool final) {
  if (opts_.overwrite) return final ? pass_backward(sink) : Expected<bool>(false);
  bool wrote = false;
  for (auto& rb : rings_) {
    SplitBytes data = rb.pending();
    if (data.size() == 0) continue;
    if (!final && data.size() < opts_.mmap_flush) continue;
    scan(data);
    stats_.bytes += data.size();
    PK_TRY(sink.write_ring(data));
    rb.consume(data.size());
    wrote = true;
  }
  if (wrote) {
    hits_->end_pass();
    PK_TRY(sink.write(header_only_record(kRecordFinishedRound)));
  }
  return wrote;
}

Status Recorder::handle_control(ControlChannel& c, bool& stop,
                                const std::function<void(const std::string&)>& say) {
  for (const auto& [verb, arg] : c.read()) {
    if (verb == "enable" || verb == "disable") {
      PK_TRY(enable_all(verb == "enable", arg));
      if (!opts_.quiet) say(verb == "enable" ? "Events enabled" : "Events disabled");
    } else if (verb == "stop") {
      stop = true;
      stop_reason_ = StopReason::kControl;
    } else if (verb == "evlist") {
      for (const auto& e : config_.events) say(e.name);
    } else if (verb != "ping" && verb != "snapshot" && verb != "ack") {
      say(fmt::format("Warning: unknown control command '{}'",
                      verb + (arg.empty() ? "" : " " + arg)));
      continue;
    }
    c.ack();
  }
  return ok();
}

struct Recorder::RunState {
  ControlChannel control;
  int pidfd = -1;  // tells poll when the workload exits (kernels since 5.3)
  std::optional<Clock::time_point> enable_at, stop_at, switch_at;
  // The rings, then the stop fd, the workload's pidfd, the control fd, the
  // switch-output fd.
  std::vector<pollfd> pfds;
  std::size_t nrings = 0;
  int stop_i = -1, child_i = -1, ctl_i = -1, switch_i = -1;
  bool stop = false;
  bool switch_now = false;

  ~RunState() {
    if (pidfd >= 0) ::close(pidfd);
  }
  int add(int fd) {
    if (fd < 0) return -1;
    pfds.push_back({fd, POLLIN, 0});
    return static_cast<int>(pfds.size() - 1);
  }
  short revents(int i) const { return i < 0 ? 0 : pfds[static_cast<std::size_t>(i)].revents; }
  // Milliseconds to the nearest deadline, -1 for none.
  int timeout(Clock::time_point now) const {
    int timeout = -1;
    for (auto& at : {enable_at, stop_at, switch_at})
      if (at) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*at - now).count();
        timeout = static_cast<int>(
            std::max<std::int64_t>(0, timeout < 0 ? ms : std::min<std::int64_t>(ms, timeout)));
      }
    return timeout;
  }
};

Status Recorder::start_run(RunState& rs, RecordSink& sink, const RunControl& rc,
                           const std::function<void(const std::string&)>& say) {
  PK_ASSIGN(rs.control, ControlChannel::open(opts_.control));
  const bool delayed = opts_.initial_delay_ms != 0;
  if (!opts_.target.none() && !delayed) PK_TRY(enable_all(true));
  if (workload_) {
    if (auto st = workload_->start(); !st)
      return make_error("Failed to collect '{}' for the workload: {}", config_.events.front().name,
                        st.error().message());
    long fd = ::syscall(SYS_pidfd_open, workload_->pid(), 0);
    rs.pidfd = fd >= 0 ? static_cast<int>(fd) : -1;
  }
  const auto start = Clock::now();
  if (delayed && !opts_.quiet) say("Events disabled");
  if (!opts_.tail_synthesize) PK_TRY(sink.write(header_only_record(kRecordFinishedInit)));
  if (opts_.initial_delay_ms > 0)
    rs.enable_at = start + std::chrono::milliseconds(opts_.initial_delay_ms);
  if (opts_.duration_s > 0)
    rs.stop_at =
        start + std::chrono::microseconds(static_cast<std::int64_t>(opts_.duration_s * 1e6));
  // Backward buffers (--overwrite) are read at the end, --threads' by the
  // workers: their fds are watched for hang-ups only.
  const short ring_events = opts_.overwrite || !masks_.empty() ? 0 : POLLIN;
  for (int fd : ring_fds_) rs.pfds.push_back({fd, ring_events, 0});
  rs.nrings = rs.pfds.size();
  rs.stop_i = rs.add(rc.stop_fd);
  rs.child_i = rs.add(rs.pidfd);
  rs.ctl_i = rs.add(rs.control.fd());
  rs.switch_i = rs.add(rc.switch_fd);
  if (rc.switch_every_s) rs.switch_at = start + std::chrono::seconds(rc.switch_every_s);
  return ok();
}

Status Recorder::wait(RunState& rs, const std::function<void(const std::string&)>& say) {
  int timeout = rs.timeout(Clock::now());
  // Without a pidfd, look at the workload now and then.
  if (workload_ && rs.child_i < 0 && (timeout < 0 || timeout > 100)) timeout = 100;
  int n = ::poll(rs.pfds.data(), rs.pfds.size(), timeout);
  if (n < 0 && errno != EINTR) return make_error("poll: {}", std::strerror(errno));
  ++stats_.wakeups;
  const auto now = Clock::now();
  if (rs.enable_at && now >= *rs.enable_at) {
    rs.enable_at.reset();
    PK_TRY(enable_all(true));
    if (!opts_.quiet) say("Events enabled");
  }
  if (rs.stop_at && now >= *rs.stop_at) {
    rs.stop = true;
    stop_reason_ = StopReason::kDuration;
    if (workload_) (void)workload_->signal(SIGTERM);
  }
  if (rs.revents(rs.stop_i) & POLLIN) {
    rs.stop = true;
    stop_reason_ = StopReason::kSignal;
  }
  if (workload_ &&
      (rs.child_i >= 0 ? rs.revents(rs.child_i) != 0 : workload_->wait(false).has_value())) {
    rs.stop = true;
    if (stop_reason_ == StopReason::kNone) stop_reason_ = StopReason::kWorkloadExit;
    if (rs.child_i >= 0) rs.pfds[static_cast<std::size_t>(rs.child_i)].fd = -1;
  }
  if (rs.revents(rs.ctl_i) & POLLIN) PK_TRY(handle_control(rs.control, rs.stop, say));
  if (rs.revents(rs.switch_i) & POLLIN) {
    char drain[64];
    while (::read(rs.pfds[static_cast<std::size_t>(rs.switch_i)].fd, drain, sizeof drain) > 0) {
    }
    rs.switch_now = true;
  }
  if (rs.switch_at && now >= *rs.switch_at) rs.switch_now = true;
  // A ring whose events all died (the -p process exited) hangs up.
  std::size_t alive = 0;
  for (std::size_t i = 0; i < rs.nrings; ++i) {
    if (rs.pfds[i].revents & (POLLHUP | POLLERR)) rs.pfds[i].fd = -1;
    alive += rs.pfds[i].fd >= 0;
  }
  if (alive == 0 && !rs.stop) {
    rs.stop = true;
    stop_reason_ = StopReason::kTargetGone;
  }
  return ok();
}

Status Recorder::run(RecordSink& sink, const RunControl& rc,
                     const std::function<void(const std::string&)>& say) {
  if (!masks_.empty()) return run_parallel(sink, rc, say);
  RunState rs;
  PK_TRY(start_run(rs, sink, rc, say));
  bool disabled = false;
  for (;;) {
    PK_ASSIGN(bool got, pass(sink, false));
    if (sink.full()) {
      // --max-size: stop writing at once.
      stop_reason_ = StopReason::kSizeLimit;
      if (workload_) (void)workload_->signal(SIGTERM);
      break;
    }
    if (!got) {
      if (rs.stop) break;
      PK_TRY(wait(rs, say));
    }
    if (rc.switch_output && !rs.stop && (rs.switch_now || (rc.switch_due && rc.switch_due()))) {
      PK_TRY(pass(sink, true));  // what the rings hold goes in the file it belongs to
      PK_TRY(rc.switch_output());
      rs.switch_now = false;
      if (rc.switch_every_s) rs.switch_at = Clock::now() + std::chrono::seconds(rc.switch_every_s);
    }
    if (rs.stop && !disabled && !opts_.target.none()) {
      PK_TRY(enable_all(false));
      disabled = true;
    }
  }
  if (!disabled && !opts_.target.none()) PK_TRY(enable_all(false));
  if (stop_reason_ != StopReason::kSizeLimit) PK_TRY(pass(sink, true));
  PK_TRY(synthesize_tail(sink));
  // A workload still running when recording stops gets SIGTERM, as perf sends it.
  if (workload_ && !workload_->wait(false)) (void)workload_->signal(SIGTERM);
  if (workload_) workload_->wait(true);
  return ok();
}

}  // namespace perfkit::capture

namespace perfkit::capture {

void Recorder::begin_output_file() {
  stats_.wakeups = 0;
  hits_->clear_hits();
}

}  // namespace perfkit::capture

namespace perfkit::capture {

struct Recorder::Worker {
  std::vector<std::size_t> rings;
  std::vector<int> affinity;
  std::uint64_t wakeups = 0;
  Status status = ok();
  std::atomic<bool>* stopping = nullptr;
};

Expected<bool> Recorder::drain(const Worker& w, bool final) {
  bool wrote = false;
  for (std::size_t r : w.rings) {
    if (opts_.overwrite) {  // backward buffers: read once, at the end
      if (!final) return false;
      PK_ASSIGN(bool got, read_backward(r, *ring_sinks_[r]));
      wrote |= got;
      continue;
    }
    SplitBytes data = rings_[r].pending();
    if (data.size() == 0) continue;
    if (!final && data.size() < opts_.mmap_flush) continue;
    {
      std::lock_guard lock(scan_mutex_);
      scan(data);
      stats_.bytes += data.size();
    }
    PK_TRY(ring_sinks_[r]->write_ring(data));
    rings_[r].consume(data.size());
    wrote = true;
  }
  if (wrote) {
    std::lock_guard lock(scan_mutex_);
    hits_->end_pass();
  }
  return wrote;
}

// A worker: on its cpus, it reads its buffers whenever they wake it, until
// told to stop (`stop_fd` readable), then drains them. A failure is kept and
// told to the waiting thread through `fail_fd`.
void Recorder::work(Worker& w, int stop_fd, int fail_fd) {
  if (!w.affinity.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : w.affinity)
      if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  }
  std::vector<pollfd> pfds;
  for (std::size_t r : w.rings) pfds.push_back({ring_fds_[r], POLLIN, 0});
  pfds.push_back({stop_fd, POLLIN, 0});
  for (;;) {
    auto got = drain(w, false);
    if (!got) {
      w.status = std::move(got).error();
      const std::uint64_t one = 1;
      (void)!::write(fail_fd, &one, sizeof one);
      return;
    }
    if (w.stopping->load()) break;
    if (*got) continue;
    if (::poll(pfds.data(), pfds.size(), -1) < 0 && errno != EINTR) break;
    ++w.wakeups;
    for (std::size_t i = 0; i + 1 < pfds.size(); ++i)
      if (pfds[i].revents & (POLLHUP | POLLERR)) pfds[i].fd = -1;
  }
  auto last = drain(w, true);
  if (!last) w.status = std::move(last).error();
}

Status Recorder::run_parallel(RecordSink& sink, const RunControl& rc,
                              const std::function<void(const std::string&)>& say) {
  const int stop_fd = ::eventfd(0, EFD_CLOEXEC);
  const int fail_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  struct Fds {
    int a, b;
    ~Fds() {
      if (a >= 0) ::close(a);
      if (b >= 0) ::close(b);
    }
  } fds{stop_fd, fail_fd};
  if (stop_fd < 0 || fail_fd < 0) return make_error("eventfd: {}", std::strerror(errno));
  std::atomic<bool> stopping{false};
  since_.assign(rings_.size(), 0);
  std::vector<Worker> workers(masks_.size());
  for (std::size_t i = 0; i < masks_.size(); ++i) {
    workers[i].affinity = masks_[i].affinity;
    workers[i].stopping = &stopping;
    for (std::size_t r = 0; r < rings_.size() && r < cpus_.size(); ++r)
      if (std::find(masks_[i].cpus.begin(), masks_[i].cpus.end(), cpus_[r]) != masks_[i].cpus.end())
        workers[i].rings.push_back(r);
  }
  RunState rs;
  PK_TRY(start_run(rs, sink, rc, say));
  const int fail_i = rs.add(fail_fd);
  std::vector<std::thread> threads;
  for (Worker& w : workers)
    threads.emplace_back([this, &w, stop_fd, fail_fd] { work(w, stop_fd, fail_fd); });
  Status st = ok();
  while (!rs.stop) {
    st = wait(rs, say);
    if (!st) break;
    if (rs.revents(fail_i) & POLLIN) {
      rs.stop = true;
      stop_reason_ = StopReason::kError;
    }
  }
  if (!opts_.target.none()) (void)enable_all(false);
  stopping = true;
  const std::uint64_t one = 1;
  (void)!::write(stop_fd, &one, sizeof one);
  for (auto& t : threads) t.join();
  stats_.wakeups = 0;
  for (Worker& w : workers) {
    stats_.wakeups += w.wakeups;
    if (st && !w.status) st = std::move(w.status);
  }
  PK_TRY(std::move(st));
  PK_TRY(synthesize_tail(sink));
  if (workload_ && !workload_->wait(false)) (void)workload_->signal(SIGTERM);
  if (workload_) workload_->wait(true);
  return ok();
}

}  // namespace perfkit::capture
