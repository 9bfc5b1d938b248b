// perf_event_open and the file descriptors it returns, with failures
// explained the way a user needs them: which event, what the kernel said, and
// what to change (perf_event_paranoid, the fd limit, the attr fields most
// likely at fault). `perfkit record` and `perfkit stat` open every event here.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "abi/attr.h"
#include "base/error.h"
#include "capture/system_paths.h"

namespace perfkit::capture {

// An owned perf event file descriptor (closed on destruction).
class EventFd {
 public:
  EventFd() = default;
  explicit EventFd(int fd) : fd_(fd) {}
  EventFd(EventFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  EventFd& operator=(EventFd&& o) noexcept;
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;
  ~EventFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // The ioctls. Errors carry strerror text.
  Status enable() const;
  Status disable() const;
  Status reset() const;
  // Sends this event's records to `target`'s ring buffer (PERF_EVENT_IOC_SET_OUTPUT).
  Status set_output(const EventFd& target) const;
  // The sample id the kernel gave the event (PERF_EVENT_IOC_ID).
  Expected<std::uint64_t> id() const;
  // read(2) of the counter: `words` u64 values in the attr's read_format layout.
  Expected<std::vector<std::uint64_t>> read_values(std::size_t words) const;

 private:
  int fd_ = -1;
};

// Where an event is opened: the perf_event_open arguments besides the attr.
struct OpenTarget {
  pid_t pid = -1;           // -1 with cpu >= 0: every task on that cpu
  int cpu = -1;             // -1: any cpu the task runs on
  int group_fd = -1;        // the group leader's fd, -1 for a leader
  unsigned long flags = 0;  // PERF_FLAG_FD_CLOEXEC is always added
};

// What the error explanations need to know about the machine.
struct OpenErrorContext {
  int paranoid = 2;                   // /proc/sys/kernel/perf_event_paranoid
  std::uint64_t max_sample_rate = 0;  // kernel.perf_event_max_sample_rate, 0 if unknown
  std::uint64_t max_stack = 0;        // kernel.perf_event_max_stack, 0 if unknown
  std::uint64_t fd_limit = 0;         // RLIMIT_NOFILE soft limit
  bool privileged = false;            // root or CAP_PERFMON/CAP_SYS_ADMIN

  // Reads the values above from `paths.procfs` and the process.
  static OpenErrorContext read(const SystemPaths& paths);
};

// The raw system call: the fd, or -errno. Encodes `attr` at the latest size.
int sys_perf_event_open(const abi::EventAttr& attr, const OpenTarget& target);

// Opens the event `name` (the name the user knows it by). Retries on EINTR.
// Errors come from explain_open_error.
Expected<EventFd> open_event(const abi::EventAttr& attr, const OpenTarget& target,
                             std::string_view name, const OpenErrorContext& ctx);

// One line saying why perf_event_open failed with `err` for `name`:
//   EACCES/EPERM  the perf_event_paranoid value, what it forbids and what to set
//   ENOENT/ENODEV/ENXIO/EOPNOTSUPP  the event is not available here (or cannot sample)
//   EINVAL        the attr fields most likely at fault
//   EMFILE/ENFILE the fd limit and how to raise it
//   ESRCH         the pid that is gone
//   EBUSY         the PMU is held by someone else
//   ENOSPC        no free hardware breakpoint slot
//   E2BIG         attr size
//   anything else strerror and the errno name
Error explain_open_error(int err, const abi::EventAttr& attr, const OpenTarget& target,
                         std::string_view name, const OpenErrorContext& ctx);

// The attr fields most likely at fault for EINVAL, each with why ("sample_freq
// 200000 above kernel.perf_event_max_sample_rate 100000"). Exposed for tests.
std::vector<std::string> suspect_attr_fields(const abi::EventAttr& attr, const OpenTarget& target,
                                             const OpenErrorContext& ctx);

// perf's fallback for a machine without a hardware PMU: when `err` says the
// generic cycles event does not exist (ENOENT, ENXIO, ENODEV), turns
// `attr` into cpu-clock (keeping its modifiers) and returns true. The note perf
// prints then is kCyclesFallbackNote.
bool fallback_to_cpu_clock(abi::EventAttr& attr, int err);
inline constexpr std::string_view kCyclesFallbackNote =
    "The cycles event is not supported, trying to fall back to cpu-clock-ticks";

// perf's other fallback: an unprivileged user with perf_event_paranoid > 1
// gets EACCES for kernel sampling; the event then excludes kernel and
// hypervisor, its name gains "u" (":u" when it has no modifiers yet) and
// `note` says so. False when that does not apply.
bool fallback_to_user_only(abi::EventAttr& attr, std::string& name, int err, int paranoid,
                           std::string& note);

// The symbolic name of an errno value ("EACCES"), "errno N" if unknown.
std::string errno_name(int err);

}  // namespace perfkit::capture
