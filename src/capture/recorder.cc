#include "capture/recorder.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>

#include "abi/event_names.h"
#include "abi/perf_event.h"
#include "base/mapped_file.h"
#include "base/text.h"
#include "capture/system_info.h"

namespace perfkit::capture {

using namespace perfkit::abi;

Recorder::Recorder(RecordConfig config, RecordOptions opts, SystemPaths paths)
    : config_(std::move(config)), opts_(std::move(opts)), paths_(std::move(paths)) {
  error_ctx_ = OpenErrorContext::read(paths_);
}

Recorder::~Recorder() = default;

Status Recorder::build_maps() {
  const Target& t = opts_.target;
  per_thread_ = t.per_thread && !t.has_cpu();
  if (t.has_cpu()) {
    auto online = online_cpus(paths_);
    if (!t.cpu_list.empty()) {
      PK_ASSIGN(cpus_, parse_cpu_list(t.cpu_list));
      for (int c : cpus_)
        if (std::find(online.begin(), online.end(), c) == online.end())
          return make_error("cpu {} of -C {} is not online (online: {})", c, t.cpu_list,
                            format_cpu_list(online));
    } else {
      cpus_ = online;
    }
  } else if (per_thread_) {
    cpus_ = {-1};
  } else {
    cpus_ = online_cpus(paths_);
  }
  if (t.has_task()) {
    for (pid_t pid : t.pids) {
      auto tids = process_threads(paths_, pid);
      if (!tids) return make_error("Couldn't create thread/CPU maps: {}", tids.error().message());
      threads_.insert(threads_.end(), tids->begin(), tids->end());
    }
    for (pid_t tid : t.tids) {
      if (!read_proc_status(paths_, tid, tid) &&
          !read_text_file(fmt::format("{}/{}/status", paths_.procfs, tid)))
        return make_error("Couldn't create thread/CPU maps: no thread {}", tid);
      threads_.push_back(tid);
    }
  } else if (t.has_cpu()) {
    threads_ = {-1};
  } else {
    threads_ = {workload_->pid()};
  }
  return ok();
}

// Opens event `index` on every (cpu, thread). On failure returns the errno
// (as an Error) with fds closed; the caller decides on fallbacks.
Status Recorder::open_all(std::size_t index, std::vector<std::vector<EventFd>>& fds) {
  RecordEvent& e = config_.events[index];
  std::vector<EventFd>& mine = fds[index];
  mine.clear();
  for (std::size_t c = 0; c < cpus_.size(); ++c) {
    for (std::size_t t = 0; t < threads_.size(); ++t) {
      OpenTarget target{threads_[t], cpus_[c], -1, 0};
      if (e.cgroup) {  // (system-wide: one thread slot, -1)
        target.pid = e.cgroup->dir.get();
        target.flags |= PERF_FLAG_PID_CGROUP;
      }
      if (e.leader != index) target.group_fd = fds[e.leader][c * threads_.size() + t].get();
      int fd = sys_perf_event_open(e.attr, target);
      while (fd == -EINTR) fd = sys_perf_event_open(e.attr, target);
      if (fd < 0) {
        mine.clear();
        return make_error("{}|{}|{}", -fd, threads_[t], cpus_[c]);
      }
      mine.emplace_back(fd);
    }
  }
  return ok();
}

Status Recorder::open_event(std::size_t index, std::vector<std::string>& messages) {
  RecordEvent& e = config_.events[index];
  unsigned precise_fallback = 0;
  for (;;) {
    auto st = open_all(index, fds_);
    if (st) break;
    // "errno|pid|cpu" from open_all.
    auto parts = split(st.error().message(), '|');
    std::int64_t err = 0, pid = -1, cpu = -1;
    parse_i64(parts[0], err);
    parse_i64(parts[1], pid);
    parse_i64(parts[2], cpu);
    const int errnum = static_cast<int>(err);
    // perf's order: lower the precise level, then the event fallbacks.
    if (e.precise_max && e.attr.precise_ip() > 0) {
      if (!precise_fallback) precise_fallback = e.attr.precise_ip();
      e.attr.set_precise_ip(e.attr.precise_ip() - 1);
      continue;
    }
    if (e.precise_max && precise_fallback) {
      e.attr.set_precise_ip(precise_fallback);
      precise_fallback = 0;
    }
    std::string note;
    if (fallback_to_cpu_clock(e.attr, errnum)) {
      // (perf says so only with -v)
      if (!opts_.quiet && opts_.verbose > 0)
        messages.push_back(fmt::format("Warning:\n{}", kCyclesFallbackNote));
      e.name = default_event_name(e.attr);
      e.default_name = true;
      e.precise_max = false;
      continue;
    }
    if (fallback_to_user_only(e.attr, e.name, errnum, error_ctx_.paranoid, note)) {
      if (!opts_.quiet) messages.push_back(fmt::format("Warning:\n{}", note));
      continue;
    }
    // A thread of a -p process that exited meanwhile is dropped, as perf does.
    if (errnum == ESRCH && !opts_.target.pids.empty() && threads_.size() > 1 && index == 0) {
      threads_.erase(std::find(threads_.begin(), threads_.end(), static_cast<pid_t>(pid)));
      continue;
    }
    return explain_open_error(errnum, e.attr,
                              OpenTarget{static_cast<pid_t>(pid), static_cast<int>(cpu), -1, 0},
                              e.name, error_ctx_);
  }
  // The tracepoint filter --filter gave the event (the one before it).
  if (!e.filter.empty()) {
    for (const auto& fd : fds_[index])
      if (::ioctl(fd.get(), PERF_EVENT_IOC_SET_FILTER, e.filter.c_str()) != 0)
        return make_error("failed to set filter \"{}\" on event {}: {}", e.filter, e.name,
                          std::strerror(errno));
  }
  return ok();
}

Status Recorder::map_buffers() {
  std::uint32_t pages = opts_.mmap_pages;
  if (pages == 0) {
    // perf's default: perf_event_mlock_kb worth of pages, rounded down to a power of two.
    std::uint64_t kb = 516;
    if (auto t = read_text_file(paths_.procfs + "/sys/kernel/perf_event_mlock_kb")) {
      std::uint64_t v = 0;
      if (parse_u64(trim(*t), v, 10) && v) kb = v;
    }
    std::uint64_t p = kb * 1024 / static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    pages = static_cast<std::uint32_t>(std::bit_floor(std::max<std::uint64_t>(p, 1)));
  }
  const std::size_t nthreads = threads_.size();
  const std::size_t nrings = per_thread_ ? nthreads : cpus_.size();
  for (std::size_t r = 0; r < nrings; ++r) {
    // Slots (cpu, thread) that feed ring r.
    std::vector<std::size_t> slots;
    if (per_thread_)
      slots.push_back(r);  // cpu index 0 (any cpu), thread r
    else
      for (std::size_t t = 0; t < nthreads; ++t) slots.push_back(r * nthreads + t);
    const EventFd& target = fds_[0][slots[0]];
    PK_ASSIGN(RingBuffer rb, RingBuffer::map(target.get(), pages, opts_.overwrite));
    for (std::size_t e = 0; e < fds_.size(); ++e)
      for (std::size_t s : slots) {
        const EventFd& fd = fds_[e][s];
        if (&fd == &target) continue;
        PK_TRY(fd.set_output(target));
      }
    rings_.push_back(std::move(rb));
    ring_fds_.push_back(target.get());
  }
  return ok();
}

Status Recorder::open(std::vector<std::string>& messages) {
  if (!opts_.workload.empty()) {
    WorkloadOptions wo;
    // With -o - the data owns stdout; the workload's output goes to stderr.
    wo.stdout_to_stderr = opts_.output == "-";
    PK_ASSIGN(Workload w, Workload::create(opts_.workload, wo));
    workload_ = std::move(w);
  }
  PK_TRY(build_maps());
  fds_.resize(config_.events.size());
  for (std::size_t i = 0; i < config_.events.size(); ++i) PK_TRY(open_event(i, messages));
  ids_.assign(config_.events.size(), {});
  for (std::size_t e = 0; e < fds_.size(); ++e)
    for (const auto& fd : fds_[e]) {
      PK_ASSIGN(std::uint64_t id, fd.id());
      ids_[e].push_back(id);
    }
  PK_TRY(map_buffers());
  // Every event has IP; IDENTIFIER (on all or none) comes before it.
  hits_.emplace(config_.events[0].attr.sample_type & kSampleIdentifier ? 16 : 8);
  // Where TIME sits in a SAMPLE: the same for every event when they agree on
  // the fields before it; otherwise found through the sample id.
  auto offset_of = [](const EventAttr& a) {
    if (!(a.sample_type & kSampleTime)) return -1;
    int n = 1;
    for (std::uint64_t bit : {kSampleIdentifier, kSampleIp, kSampleTid})
      if (a.sample_type & bit) ++n;
    return 8 * n;
  };
  time_offset_ = offset_of(config_.events[0].attr);
  for (const auto& e : config_.events)
    if (offset_of(e.attr) != time_offset_) time_offset_ = -2;
  if (time_offset_ == -2)
    for (std::size_t e = 0; e < ids_.size(); ++e)
      for (auto id : ids_[e]) id_time_offset_.emplace_back(id, offset_of(config_.events[e].attr));
  std::sort(id_time_offset_.begin(), id_time_offset_.end());
  return ok();
}

perfdata::EventSet Recorder::event_set() const {
  perfdata::EventSet set;
  for (std::size_t i = 0; i < config_.events.size(); ++i) {
    set.add(config_.events[i].attr, i < ids_.size() ? ids_[i] : std::vector<std::uint64_t>{});
    set[i].name = config_.events[i].name;
  }
  return set;
}

TimeConversion Recorder::time_conversion() const {
  return rings_.empty() ? TimeConversion{} : rings_.front().time_conversion();
}

std::size_t Recorder::mmap_len() const { return rings_.empty() ? 0 : rings_.front().mapped_size(); }

Status Recorder::enable_all(bool enable, const std::string& only) {
  for (std::size_t e = 0; e < fds_.size(); ++e) {
    if (!only.empty() && config_.events[e].name != only) continue;
    for (const auto& fd : fds_[e]) PK_TRY(enable ? fd.enable() : fd.disable());
  }
  return ok();
}

}  // namespace perfkit::capture
