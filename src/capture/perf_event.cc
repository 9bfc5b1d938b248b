#include "capture/perf_event.h"

#include <fmt/ranges.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/mapped_file.h"
#include "base/text.h"

namespace perfkit::capture {

using namespace perfkit::abi;

EventFd& EventFd::operator=(EventFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

EventFd::~EventFd() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

Status ioctl_status(int fd, unsigned long request, unsigned long arg, std::string_view what) {
  if (::ioctl(fd, request, arg) == 0) return ok();
  return make_error("{} on perf event fd {}: {}", what, fd, std::strerror(errno));
}

std::uint64_t read_u64_file(const std::string& path) {
  auto t = read_text_file(path);
  std::uint64_t v = 0;
  if (!t || !parse_u64(trim(*t), v, 10)) return 0;
  return v;
}

}  // namespace

Status EventFd::enable() const {
  return ioctl_status(fd_, PERF_EVENT_IOC_ENABLE, 0, "PERF_EVENT_IOC_ENABLE");
}
Status EventFd::disable() const {
  return ioctl_status(fd_, PERF_EVENT_IOC_DISABLE, 0, "PERF_EVENT_IOC_DISABLE");
}
Status EventFd::reset() const {
  return ioctl_status(fd_, PERF_EVENT_IOC_RESET, 0, "PERF_EVENT_IOC_RESET");
}
Status EventFd::set_output(const EventFd& target) const {
  return ioctl_status(fd_, PERF_EVENT_IOC_SET_OUTPUT, static_cast<unsigned long>(target.fd_),
                      "PERF_EVENT_IOC_SET_OUTPUT");
}

Expected<std::uint64_t> EventFd::id() const {
  std::uint64_t id = 0;
  if (::ioctl(fd_, PERF_EVENT_IOC_ID, &id) != 0)
    return make_error("PERF_EVENT_IOC_ID on perf event fd {}: {}", fd_, std::strerror(errno));
  return id;
}

Expected<std::vector<std::uint64_t>> EventFd::read_values(std::size_t words) const {
  std::vector<std::uint64_t> v(words);
  ssize_t n;
  do {
    n = ::read(fd_, v.data(), words * 8);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return make_error("read of perf event fd {}: {}", fd_, std::strerror(errno));
  v.resize(static_cast<std::size_t>(n) / 8);
  return v;
}

OpenErrorContext OpenErrorContext::read(const SystemPaths& paths) {
  OpenErrorContext c;
  if (auto t = read_text_file(paths.procfs + "/sys/kernel/perf_event_paranoid")) {
    std::int64_t v = 2;
    if (parse_i64(trim(*t), v)) c.paranoid = static_cast<int>(v);
  }
  c.max_sample_rate = read_u64_file(paths.procfs + "/sys/kernel/perf_event_max_sample_rate");
  c.max_stack = read_u64_file(paths.procfs + "/sys/kernel/perf_event_max_stack");
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) c.fd_limit = rl.rlim_cur;
  // CapEff: CAP_SYS_ADMIN is bit 21, CAP_PERFMON bit 38.
  if (auto s = read_text_file(paths.procfs + "/self/status")) {
    auto at = s->find("CapEff:");
    std::uint64_t caps = 0;
    if (at != std::string::npos) {
      auto line = std::string_view(*s).substr(at + 7);
      line = trim(line.substr(0, line.find('\n')));
      parse_u64(line, caps, 16);
    }
    c.privileged = (caps & (1ULL << 21)) || (caps & (1ULL << 38));
  }
  return c;
}

int sys_perf_event_open(const EventAttr& attr, const OpenTarget& target) {
  std::vector<std::uint8_t> bytes;
  encode_attr(attr, kAttrSizeLatest, false, bytes);
  long fd = ::syscall(SYS_perf_event_open, bytes.data(), target.pid, target.cpu, target.group_fd,
                      target.flags | PERF_FLAG_FD_CLOEXEC);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

Expected<EventFd> open_event(const EventAttr& attr, const OpenTarget& target, std::string_view name,
                             const OpenErrorContext& ctx) {
  int fd;
  do {
    fd = sys_perf_event_open(attr, target);
  } while (fd == -EINTR);
  if (fd < 0) return explain_open_error(-fd, attr, target, name, ctx);
  return EventFd(fd);
}

std::string errno_name(int err) {
  switch (err) {
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENOENT:
      return "ENOENT";
    case ENODEV:
      return "ENODEV";
    case ENXIO:
      return "ENXIO";
    case EOPNOTSUPP:
      return "EOPNOTSUPP";
    case EINVAL:
      return "EINVAL";
    case EMFILE:
      return "EMFILE";
    case ENFILE:
      return "ENFILE";
    case ESRCH:
      return "ESRCH";
    case EBUSY:
      return "EBUSY";
    case ENOSPC:
      return "ENOSPC";
    case E2BIG:
      return "E2BIG";
    case EFAULT:
      return "EFAULT";
    case EOVERFLOW:
      return "EOVERFLOW";
    case ENOMEM:
      return "ENOMEM";
    case EINTR:
      return "EINTR";
    default:
      return fmt::format("errno {}", err);
  }
}

std::vector<std::string> suspect_attr_fields(const EventAttr& a, const OpenTarget& t,
                                             const OpenErrorContext& ctx) {
  std::vector<std::string> s;
  if (a.freq() && ctx.max_sample_rate && a.sample_period > ctx.max_sample_rate)
    s.push_back(fmt::format("sample_freq {} (above kernel.perf_event_max_sample_rate {})",
                            a.sample_period, ctx.max_sample_rate));
  if (a.freq() && a.sample_period == 0) s.push_back("sample_freq 0 with the freq flag");
  if (a.sample_max_stack && ctx.max_stack && a.sample_max_stack > ctx.max_stack)
    s.push_back(fmt::format("sample_max_stack {} (above kernel.perf_event_max_stack {})",
                            a.sample_max_stack, ctx.max_stack));
  if (a.precise_ip() && a.type != kTypeHardware && a.type != kTypeHwCache && a.type != kTypeRaw &&
      a.type != kTypeSoftware)
    s.push_back(fmt::format("precise_ip {} (the :p modifiers) on a PMU that may not have it",
                            a.precise_ip()));
  if (a.type == kTypeBreakpoint) {
    if (a.config2 == 0 || (a.config2 & (a.config2 - 1)) || a.config2 > 8)
      s.push_back(fmt::format("bp_len {} (1, 2, 4 or 8)", a.config2));
    else if (a.config1 % a.config2)
      s.push_back(fmt::format("bp_addr {:#x} (not aligned to bp_len {})", a.config1, a.config2));
    if (a.bp_type == 0 || a.bp_type > 4 || (a.bp_type == 4 && a.config2 != sizeof(long)))
      s.push_back(fmt::format("bp_type {} with bp_len {}", a.bp_type, a.config2));
  }
  if ((a.sample_type & kSampleStackUser) &&
      (a.sample_stack_user % 8 || a.sample_stack_user > 65528 || a.sample_stack_user == 0))
    s.push_back(
        fmt::format("sample_stack_user {} (a multiple of 8, at most 65528)", a.sample_stack_user));
  if ((a.sample_type & kSampleRegsUser) && a.sample_regs_user >> 24)
    s.push_back(fmt::format("sample_regs_user {:#x} (registers this arch does not have)",
                            a.sample_regs_user));
  if ((a.sample_type & kSampleRegsIntr) && a.sample_regs_intr >> 24)
    s.push_back(fmt::format("sample_regs_intr {:#x}", a.sample_regs_intr));
  if (a.sample_type & kSampleBranchStack)
    s.push_back(fmt::format("branch_sample_type {:#x} (-b/-j: branch stacks need a PMU with LBR)",
                            a.branch_sample_type));
  if (a.has(kAttrUseClockid)) s.push_back(fmt::format("clockid {} (-k)", a.clockid));
  if (a.has(kAttrInherit) && (a.read_format & kFormatGroup))
    s.push_back("inherit with read_format GROUP (use --no-inherit)");
  if (a.has(kAttrInherit) && (a.sample_type & kSampleRead) && t.pid == -1 && t.cpu >= 0)
    s.push_back("inherit with PERF_SAMPLE_READ");
  if (a.has(kAttrAuxOutput)) s.push_back("aux_output (needs an AUX area event as group leader)");
  if (a.sample_type >= kSampleMax)
    s.push_back(fmt::format("sample_type {:#x} (bits this kernel may not know)", a.sample_type));
  if (a.type > kTypeBreakpoint && a.type < 6) s.push_back(fmt::format("type {}", a.type));
  if (t.pid == -1 && t.cpu == -1) s.push_back("pid -1 with cpu -1 (no task and no cpu)");
  if (a.has(kAttrExclusive) || a.has(kAttrPinned))
    s.push_back("pinned/exclusive on a group member");
  return s;
}

namespace {

std::string permission_hint(const EventAttr& a, const OpenTarget& t, const OpenErrorContext& c) {
  // What each level forbids to unprivileged users (Documentation/admin-guide/perf-security).
  std::string need;
  if (a.type == kTypeTracepoint || (a.sample_type & kSampleRaw))
    need = "tracepoints and raw samples need perf_event_paranoid -1";
  else if (t.pid == -1)
    need = "system-wide (-a, -C) monitoring needs perf_event_paranoid <= 0";
  else if (!a.has(kAttrExcludeKernel))
    need = "kernel-level measurement needs perf_event_paranoid <= 1 (or add :u to the event)";
  else
    need = "monitoring other users' processes needs perf_event_paranoid <= 0 and ptrace access";
  return fmt::format(
      "perf_event_paranoid is {}: {}; run as root, grant CAP_PERFMON, or 'sysctl -w "
      "kernel.perf_event_paranoid=N'",
      c.paranoid, need);
}

}  // namespace

Error explain_open_error(int err, const EventAttr& a, const OpenTarget& t, std::string_view name,
                         const OpenErrorContext& c) {
  const std::string head =
      fmt::format("cannot open event '{}': {} ({})", name, std::strerror(err), errno_name(err));
  switch (err) {
    case EACCES:
    case EPERM:
      return make_error("{}: {}", head, permission_hint(a, t, c));
    case ENOENT:
    case ENODEV:
    case ENXIO:
      return make_error(
          "{}: the event is not supported on this machine (no PMU provides "
          "type {} config {:#x}); see 'perfkit list'",
          head, a.type, a.config);
    case EOPNOTSUPP:
      if (a.sample_type & kSampleBranchStack)
        return make_error("{}: this PMU cannot sample branch stacks (-b/-j, --call-graph lbr)",
                          head);
      if (a.sample_period)
        return make_error(
            "{}: the PMU cannot sample (no overflow interrupts); count it with "
            "'perfkit stat' instead",
            head);
      return make_error("{}: the event is not supported on this machine", head);
    case EINVAL: {
      auto suspects = suspect_attr_fields(a, t, c);
      if (suspects.empty())
        return make_error("{}: the kernel rejected the attr; 'dmesg | grep -i perf' may say why",
                          head);
      return make_error("{}: the attr fields most likely at fault: {}", head,
                        fmt::join(suspects, "; "));
    }
    case EMFILE:
    case ENFILE:
      return make_error(
          "{}: too many open files (the limit is {}); raise it with 'ulimit -n "
          "{}' or record fewer events or CPUs",
          head, c.fd_limit, c.fd_limit ? c.fd_limit * 2 : 4096);
    case ESRCH:
      return make_error("{}: no process {} (it has exited or never existed)", head, t.pid);
    case EBUSY:
      return make_error(
          "{}: the PMU is busy: another tool (another perf session with "
          "exclusive or pinned events, oprofile, a hypervisor) holds it",
          head);
    case ENOSPC:
      if (a.type == kTypeBreakpoint)
        return make_error(
            "{}: no free hardware breakpoint slot (x86 has 4 debug registers, "
            "shared with debuggers)",
            head);
      return make_error("{}: no room left on the PMU for this event", head);
    case E2BIG:
      return make_error("{}: the kernel is older than this attr (size {}); update the kernel", head,
                        kAttrSizeLatest);
    default:
      return make_error("{}", head);
  }
}

bool fallback_to_cpu_clock(EventAttr& attr, int err) {
  if (attr.type != kTypeHardware || attr.config != 0) return false;
  if (err != ENOENT && err != ENXIO && err != ENODEV) return false;
  attr.type = kTypeSoftware;
  attr.config = 0;  // PERF_COUNT_SW_CPU_CLOCK
  return true;
}

bool fallback_to_user_only(EventAttr& attr, std::string& name, int err, int paranoid,
                           std::string& note) {
  if ((err != EACCES && err != EPERM) || attr.has(kAttrExcludeKernel) || paranoid <= 1)
    return false;
  if (attr.has(kAttrExcludeUser)) return false;
  // perf appends ":u", or "u" when the name already has modifiers or terms.
  bool has_sep = name.find('/') != std::string::npos || name.find(':') != std::string::npos;
  name += has_sep ? "u" : ":u";
  attr.set(kAttrExcludeKernel);
  attr.set(kAttrExcludeHv);
  note = fmt::format(
      "kernel.perf_event_paranoid={}, trying to fall back to excluding kernel and hypervisor  "
      "samples",
      paranoid);
  return true;
}

}  // namespace perfkit::capture
