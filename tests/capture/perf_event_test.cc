// perf_event_open failures as users meet them, produced for real where this
// machine can (ESRCH, ENOSPC, EINVAL, ENOENT, EACCES, EMFILE) and checked
// through explain_open_error where it cannot (EBUSY, E2BIG).
#include "capture/perf_event.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>

#include "abi/perf_event.h"

namespace perfkit::capture {
namespace {

using namespace perfkit::abi;

volatile std::uint64_t g_watched[8];

EventAttr software(std::uint64_t config) {
  EventAttr a;
  a.type = kTypeSoftware;
  a.config = config;
  a.sample_period = 4000;
  a.set(kAttrFreq);
  a.set(kAttrDisabled);
  return a;
}

EventAttr breakpoint(const volatile void* addr, std::uint64_t len) {
  EventAttr a;
  a.type = kTypeBreakpoint;
  a.bp_type = 2;  // write
  a.config1 = reinterpret_cast<std::uint64_t>(addr);
  a.config2 = len;
  a.sample_period = 1;
  a.set(kAttrDisabled);
  return a;
}

// Runs `fn` in a forked child (to drop privileges or lower limits there) and
// returns what it wrote.
std::string in_child(const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out = fn();
    ssize_t w = write(fds[1], out.data(), out.size());
    (void)w;
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return out;
}

class PerfEventTest : public ::testing::Test {
 protected:
  OpenErrorContext ctx_ = OpenErrorContext::read(SystemPaths{});
};

TEST_F(PerfEventTest, OpensAndReadsACounter) {
  EventAttr a = software(1);
  a.sample_period = 0;
  a.flags = 0;
  a.set(kAttrExcludeKernel);
  auto fd = open_event(a, {0, -1, -1, 0}, "task-clock", ctx_);
  ASSERT_TRUE(fd) << fd.error().message();
  volatile std::uint64_t x = 0;
  for (int i = 0; i < 1000000; ++i) x = x + i;
  auto v = fd->read_values(1);
  ASSERT_TRUE(v);
  ASSERT_EQ(v->size(), 1u);
  EXPECT_GT((*v)[0], 0u);
}

TEST_F(PerfEventTest, DeadPidIsEsrch) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  auto fd = open_event(software(0), {child, -1, -1, 0}, "cpu-clock", ctx_);
  ASSERT_FALSE(fd);
  const auto& m = fd.error().message();
  EXPECT_NE(m.find("cannot open event 'cpu-clock'"), std::string::npos) << m;
  EXPECT_NE(m.find("(ESRCH)"), std::string::npos) << m;
  EXPECT_NE(m.find("no process " + std::to_string(child)), std::string::npos) << m;
}

TEST_F(PerfEventTest, FifthBreakpointIsEnospc) {
  std::vector<EventFd> fds;
  std::string error;
  for (int i = 0; i < 5 && error.empty(); ++i) {
    auto fd =
        open_event(breakpoint(&g_watched[i], 8), {0, -1, -1, 0}, fmt::format("mem:{}:w", i), ctx_);
    if (fd)
      fds.push_back(std::move(*fd));
    else
      error = fd.error().message();
  }
  if (error.empty()) GTEST_SKIP() << "this machine has more than 4 breakpoint slots";
  EXPECT_EQ(fds.size(), 4u);
  EXPECT_NE(error.find("(ENOSPC)"), std::string::npos) << error;
  EXPECT_NE(error.find("no free hardware breakpoint slot"), std::string::npos) << error;
}

TEST_F(PerfEventTest, BadAttrsAreEinvalWithSuspects) {
  auto len3 = open_event(breakpoint(&g_watched[0], 3), {0, -1, -1, 0}, "mem:x/3:w", ctx_);
  ASSERT_FALSE(len3);
  EXPECT_NE(len3.error().message().find("(EINVAL)"), std::string::npos);
  EXPECT_NE(len3.error().message().find("bp_len 3"), std::string::npos) << len3.error().message();

  if (ctx_.max_sample_rate == 0) GTEST_SKIP() << "no perf_event_max_sample_rate";
  EventAttr fast = software(0);
  fast.sample_period = ctx_.max_sample_rate * 2;
  auto f = open_event(fast, {0, -1, -1, 0}, "cpu-clock", ctx_);
  ASSERT_FALSE(f);
  const auto& m = f.error().message();
  EXPECT_NE(m.find("attr fields most likely at fault: sample_freq " +
                   std::to_string(ctx_.max_sample_rate * 2) +
                   " (above kernel.perf_event_max_sample_rate"),
            std::string::npos)
      << m;
}

TEST_F(PerfEventTest, CyclesWithoutHardwarePmuFallsBack) {
  EventAttr cycles;
  cycles.type = kTypeHardware;
  cycles.config = 0;
  cycles.sample_period = 4000;
  cycles.set(kAttrFreq);
  cycles.set(kAttrDisabled);
  cycles.set_precise_ip(3);
  int fd = sys_perf_event_open(cycles, {0, -1, -1, 0});
  if (fd >= 0) {
    close(fd);
    GTEST_SKIP() << "this machine has a hardware PMU";
  }
  int err = -fd;
  // Every precise level fails too before perf falls back.
  auto e = explain_open_error(err, cycles, {0, -1, -1, 0}, "cycles", ctx_);
  EXPECT_NE(e.message().find("not supported on this machine"), std::string::npos) << e.message();
  EventAttr fallback = cycles;
  ASSERT_TRUE(fallback_to_cpu_clock(fallback, err)) << errno_name(err);
  EXPECT_EQ(fallback.type, kTypeSoftware);
  EXPECT_EQ(fallback.config, 0u);
  EXPECT_EQ(fallback.precise_ip(), 3u);  // perf keeps it: "cpu-clock:ppp"
  auto opened = open_event(fallback, {0, -1, -1, 0}, "cpu-clock:ppp", ctx_);
  EXPECT_TRUE(opened) << opened.error().message();
  // Only cycles falls back.
  EventAttr instructions = cycles;
  instructions.config = 1;
  EXPECT_FALSE(fallback_to_cpu_clock(instructions, err));
  EXPECT_FALSE(fallback_to_cpu_clock(cycles, EINVAL));
}

TEST_F(PerfEventTest, UnprivilegedKernelSamplingIsEacces) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop privileges";
  if (ctx_.paranoid < 2) GTEST_SKIP() << "perf_event_paranoid < 2 allows it";
  std::string out = in_child([] {
    if (setgid(65534) != 0 || setuid(65534) != 0) return std::string("setuid failed");
    auto ctx = OpenErrorContext::read(SystemPaths{});
    EventAttr a = software(0);
    auto fd = open_event(a, {0, -1, -1, 0}, "cpu-clock", ctx);
    if (fd) return std::string("opened");
    std::string m = fd.error().message();
    // perf's fallback then opens it for user space only.
    std::string name = "cpu-clock", note;
    if (!fallback_to_user_only(a, name, EACCES, ctx.paranoid, note)) return m + "|no fallback";
    auto user = open_event(a, {0, -1, -1, 0}, name, ctx);
    return m + "|" + name + "|" + note + "|" + (user ? "ok" : user.error().message());
  });
  EXPECT_NE(out.find("(EACCES)"), std::string::npos) << out;
  EXPECT_NE(out.find("perf_event_paranoid is " + std::to_string(ctx_.paranoid)), std::string::npos)
      << out;
  EXPECT_NE(out.find("kernel-level measurement needs perf_event_paranoid <= 1"), std::string::npos)
      << out;
  EXPECT_NE(out.find("|cpu-clock:u|kernel.perf_event_paranoid=2, trying to fall back to "
                     "excluding kernel and hypervisor  samples|ok"),
            std::string::npos)
      << out;
  // System-wide needs more.
  std::string cpu = in_child([] {
    if (setgid(65534) != 0 || setuid(65534) != 0) return std::string("setuid failed");
    auto ctx = OpenErrorContext::read(SystemPaths{});
    EventAttr a = software(0);
    a.set(kAttrExcludeKernel);
    auto fd = open_event(a, {-1, 0, -1, 0}, "cpu-clock:u", ctx);
    return fd ? std::string("opened") : fd.error().message();
  });
  EXPECT_NE(cpu.find("system-wide (-a, -C) monitoring needs perf_event_paranoid <= 0"),
            std::string::npos)
      << cpu;
}

TEST_F(PerfEventTest, FdLimitIsEmfile) {
  std::string out = in_child([] {
    rlimit rl{24, 24};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return std::string("setrlimit failed");
    auto ctx = OpenErrorContext::read(SystemPaths{});
    std::vector<EventFd> fds;
    for (int i = 0; i < 64; ++i) {
      auto fd = open_event(software(9), {0, -1, -1, 0}, "dummy", ctx);
      if (!fd) return fd.error().message();
      fds.push_back(std::move(*fd));
    }
    return std::string("no limit hit");
  });
  EXPECT_NE(out.find("(EMFILE)"), std::string::npos) << out;
  EXPECT_NE(out.find("the limit is 24"), std::string::npos) << out;
  EXPECT_NE(out.find("ulimit -n 48"), std::string::npos) << out;
}

TEST_F(PerfEventTest, ExplanationsForErrorsThisMachineCannotProduce) {
  EventAttr a = software(0);
  auto busy = explain_open_error(EBUSY, a, {0, -1, -1, 0}, "cycles", ctx_).message();
  EXPECT_NE(busy.find("cannot open event 'cycles': Device or resource busy (EBUSY): the PMU is "
                      "busy"),
            std::string::npos)
      << busy;
  auto big = explain_open_error(E2BIG, a, {0, -1, -1, 0}, "cycles", ctx_).message();
  EXPECT_NE(big.find("(E2BIG)"), std::string::npos);
  EventAttr lbr = a;
  lbr.sample_type |= kSampleBranchStack;
  auto nolbr = explain_open_error(EOPNOTSUPP, lbr, {0, -1, -1, 0}, "cycles", ctx_).message();
  EXPECT_NE(nolbr.find("cannot sample branch stacks"), std::string::npos) << nolbr;
  auto count_only = explain_open_error(EOPNOTSUPP, a, {0, -1, -1, 0}, "msr/tsc/", ctx_).message();
  EXPECT_NE(count_only.find("the PMU cannot sample"), std::string::npos) << count_only;
  OpenErrorContext c3 = ctx_;
  c3.paranoid = 3;
  EventAttr tp = a;
  tp.type = kTypeTracepoint;
  auto tpm = explain_open_error(EPERM, tp, {0, -1, -1, 0}, "sched:sched_switch", c3).message();
  EXPECT_NE(tpm.find("perf_event_paranoid is 3: tracepoints"), std::string::npos) << tpm;
  EXPECT_EQ(errno_name(EACCES), "EACCES");
  EXPECT_EQ(errno_name(12345), "errno 12345");
}

TEST_F(PerfEventTest, SuspectFields) {
  OpenErrorContext c;
  c.max_sample_rate = 1000;
  c.max_stack = 127;
  EventAttr a = software(0);
  a.sample_period = 5000;
  a.sample_max_stack = 500;
  a.sample_type = kSampleStackUser;
  a.sample_stack_user = 100;
  a.set(kAttrUseClockid);
  a.clockid = 99;
  auto s = suspect_attr_fields(a, {0, -1, -1, 0}, c);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], "sample_freq 5000 (above kernel.perf_event_max_sample_rate 1000)");
  EXPECT_EQ(s[1], "sample_max_stack 500 (above kernel.perf_event_max_stack 127)");
  EXPECT_EQ(s[2], "sample_stack_user 100 (a multiple of 8, at most 65528)");
  EXPECT_EQ(s[3], "clockid 99 (-k)");
  EventAttr bp = breakpoint(reinterpret_cast<void*>(0x1002), 4);
  auto b = suspect_attr_fields(bp, {0, -1, -1, 0}, c);
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b[0], "bp_addr 0x1002 (not aligned to bp_len 4)");
}

}  // namespace
}  // namespace perfkit::capture
