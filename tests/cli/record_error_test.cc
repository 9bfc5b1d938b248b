// perfkit record's failures: each errno cause this machine can produce, bad
// events, options and targets (one clear line, exit 1), and the ways a
// recording ends (workload exit, SIGINT, SIGTERM, --duration, --control stop,
// a full disk) each leaving a complete file perf reads.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "capture/cgroup.h"
#include "record_test_support.h"

namespace perfkit::test {
namespace {

class RecordErrorTest : public ::testing::Test {
 protected:
  RunResult record(const std::string& args) {
    return run(perfkit_bin() + " record -o " + sh(dir_.path("out.data")) + " " + args);
  }
  // One line on stderr that starts with "perfkit record: " and has `what`.
  void expect_error(const RunResult& r, const std::string& what) {
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err.rfind("perfkit record: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  std::string loop() const { return workload("cpuloop"); }
  TempDir dir_;
};

TEST_F(RecordErrorTest, UnknownEventSuggestsCloseNames) {
  expect_error(
      record("-e cpu-clok -- true"),
      "event syntax error: 'cpu-clok': unknown event 'cpu-clok'; did you mean 'cpu-clock'");
  expect_error(record("-e nosuch -- true"), "unknown event 'nosuch'");
  expect_error(record("-e sched:sched_swich -- true"), "did you mean 'sched:sched_switch'");
  expect_error(record("-e cpu-clock/foo=1/ -- true"), "unknown term 'foo'");
}

TEST_F(RecordErrorTest, MalformedGroups) {
  expect_error(record("-e '{cpu-clock,task-clock' -- true"), "missing '}'");
  expect_error(record("-e '{cpu-clock,{task-clock}}' -- true"), "nested group");
  expect_error(record("-e 'cpu-clock}' -- true"), "unbalanced '}'");
  expect_error(record("-e '{cpu-clock}:z' -- true"), "invalid modifier 'z'");
}

TEST_F(RecordErrorTest, UnknownOptionAndBadValues) {
  auto r = record("--no-such-option -- true");
  EXPECT_EQ(r.status, 129);
  EXPECT_TRUE(r.err.starts_with("  Error: unknown option `no-such-option'\n\n")) << r.err;
  expect_error(record("-F 100 -c 100 -- true"), "cannot set frequency and period at the same time");
  expect_error(record("--call-graph xyz -- true"), "unknown --call-graph mode 'xyz'");
  expect_error(record("-k nosuchclock -- true"), "unknown clockid 'nosuchclock'");
  expect_error(record("-C 999 -- true"), "cpu 999 of -C 999 is not online");
  expect_error(record("-z99 -- true"), "compression level 99 out of range");
  expect_error(record(""), "no command to run");
}

TEST_F(RecordErrorTest, FrequencyAboveTheMaximum) {
  auto r = record("-F 1000000 -- " + loop() + " 1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: Maximum frequency rate ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exceeded, throttling from 1000000 Hz to"), std::string::npos) << r.err;
  auto strict = record("--strict-freq -F 1000000 -- true");
  EXPECT_EQ(strict.status, 1);
  EXPECT_NE(strict.err.find("error: Maximum frequency rate ("), std::string::npos) << strict.err;
}

TEST_F(RecordErrorTest, DeadPidIsNoSuchProcess) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  expect_error(record("-p " + std::to_string(child)), "no process " + std::to_string(child));
  expect_error(record("-t " + std::to_string(child)), std::to_string(child));
}

TEST_F(RecordErrorTest, FiveBreakpointsIsEnospc) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  auto r = record("-e mem:0x1000:w,mem:0x1008:w,mem:0x1010:w,mem:0x1018:w,mem:0x1020:w -- true");
  expect_error(r,
               "cannot open event 'mem:0x1020:w': No space left on device (ENOSPC): no free "
               "hardware breakpoint slot");
}

TEST_F(RecordErrorTest, BadAttrIsEinvalWithTheSuspects) {
  // The kernel rejects a breakpoint not aligned to its length.
  auto r = record("-e mem:0x1001/4:w -- true");
  expect_error(r, "(EINVAL): the attr fields most likely at fault: bp_addr 0x1001 (not aligned");
}

TEST_F(RecordErrorTest, HardwareEventMissingHereIsEnoent) {
  auto probe = record("-e instructions -- true");
  if (probe.status == 0) GTEST_SKIP() << "this machine has a hardware PMU";
  expect_error(probe, "cannot open event 'instructions'");
  EXPECT_NE(probe.err.find("not supported on this machine"), std::string::npos) << probe.err;
  // The default event falls back to cpu-clock, saying so with -v only, as
  // perf (which is asked too).
  const std::string note =
      "The cycles event is not supported, trying to fall back to cpu-clock-ticks";
  for (const char* v : {"", "-v "}) {
    auto d = record(std::string(v) + "-- " + loop() + " 1");
    EXPECT_EQ(d.status, 0) << d.err;
    auto p = run("perf record " + std::string(v) + "-o " + sh(dir_.path("p.data")) + " -- " +
                 sh(loop()) + " 1");
    EXPECT_EQ(p.status, 0) << p.err;
    EXPECT_EQ(d.err.find(note) != std::string::npos, p.err.find(note) != std::string::npos)
        << v << "\nperfkit: " << d.err << "\nperf: " << p.err;
  }
}

TEST_F(RecordErrorTest, UnprivilegedUserGetsParanoidAdvice) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop privileges";
  if (run("command -v setpriv").status != 0) GTEST_SKIP() << "no setpriv";
  chmod(dir_.dir().c_str(), 0777);
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  // The build tree may lie under a directory only root enters (a clone in
  // /root): the user runs copies in the test's own directory.
  const std::string bin = dir_.path("perfkit"), work = dir_.path("cpuloop");
  ASSERT_EQ(run("cp " + sh(perfkit_bin()) + " " + sh(bin) + " && cp " + sh(loop()) + " " +
                sh(work) + " && chmod 755 " + sh(bin) + " " + sh(work))
                .status,
            0);
  // System-wide needs paranoid <= 0.
  auto r = run(as_nobody + bin + " record -a -o " + sh(dir_.path("n.data")) + " -- true");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("(EACCES)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("perf_event_paranoid is "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("system-wide (-a, -C) monitoring needs perf_event_paranoid <= 0"),
            std::string::npos)
      << r.err;
  // Sampling one's own command falls back to user space only, as perf does.
  auto u = run(as_nobody + bin + " record -e cpu-clock -o " + sh(dir_.path("u.data")) + " -- " +
               work + " 1");
  EXPECT_EQ(u.status, 0) << u.err;
  EXPECT_NE(u.err.find("trying to fall back to excluding kernel and hypervisor"), std::string::npos)
      << u.err;
  // perf reads only files of its user or root.
  ASSERT_EQ(chown(dir_.path("u.data").c_str(), 0, 0), 0);
  EXPECT_NE(evlist(dir_.path("u.data")).find("cpu-clock:u:"), std::string::npos);
}

TEST_F(RecordErrorTest, WorkloadThatCannotRun) {
  auto r = record("-- /nonexistent/program");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
}

TEST_F(RecordErrorTest, OutputThatCannotBeCreated) {
  auto r = run(perfkit_bin() + " record -o /nonexistent/dir/out.data -- true");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/dir/out.data"), std::string::npos) << r.err;
}

TEST_F(RecordErrorTest, ExitStatusIsTheWorkloads) {
  EXPECT_EQ(record("-q -- sh -c 'exit 3'").status, 3);
  EXPECT_EQ(record("-q -- false").status, 1);
  // A workload killed by a signal takes perfkit with it, as with perf (the
  // shell reports 128 + SIGKILL).
  EXPECT_EQ(record("-q -- sh -c 'kill -9 $$'").status, 128 + SIGKILL);
}

TEST_F(RecordErrorTest, PreviousOutputIsKeptAsOld) {
  ASSERT_EQ(record("-q -- true").status, 0);
  ASSERT_EQ(record("-q -- true").status, 0);
  struct stat st {};
  EXPECT_EQ(stat(dir_.path("out.data.old").c_str(), &st), 0);
}

// Stops a system-wide recording with `sig` after a moment; the file must be whole.
void stop_with_signal(const std::string& out, int sig) {
  pid_t pid = fork();
  if (pid == 0) {
    execl(perfkit_bin().c_str(), "perfkit", "record", "-q", "-a", "-o", out.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  // perf leaves by the signal it got.
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
}

TEST_F(RecordErrorTest, InterruptedRecordingsAreComplete) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for -a";
  PK_SKIP_WITHOUT_PERF();
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string out = dir_.path("sig" + std::to_string(sig) + ".data");
    stop_with_signal(out, sig);
    EXPECT_EQ(perf_report_errors(out), "") << strsignal(sig);
    EXPECT_GT(count_samples(out), 0) << strsignal(sig);
    EXPECT_EQ(perf_sample_count(out), count_samples(out)) << strsignal(sig);
  }
  // --duration stops by itself, the workload gets SIGTERM.
  auto d = run(perfkit_bin() + " record -o " + sh(dir_.path("d.data")) + " --duration 0.5 -- " +
               loop() + " 100000");
  EXPECT_EQ(d.status, 0) << d.err;
  EXPECT_EQ(perf_report_errors(dir_.path("d.data")), "");
  EXPECT_EQ(perf_sample_count(dir_.path("d.data")), count_samples(dir_.path("d.data")));
}

TEST_F(RecordErrorTest, ControlFifoEnablesDisablesAndStops) {
  const std::string ctl = dir_.path("ctl"), ack = dir_.path("ack");
  ASSERT_EQ(mkfifo(ctl.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo(ack.c_str(), 0600), 0);
  pid_t pid = fork();
  if (pid == 0) {
    std::string control = "fifo:" + ctl + "," + ack;
    std::string out = dir_.path("ctl.data");
    execl(perfkit_bin().c_str(), "perfkit", "record", "-o", out.c_str(), "--control",
          control.c_str(), "-D", "-1", "--", loop().c_str(), "100000", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Open both ends as a controller does; every command is acknowledged.
  std::ofstream c(ctl);
  std::ifstream a(ack);
  std::string line;
  for (const char* cmd : {"enable", "disable", "enable", "stop"}) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    c << cmd << "\n" << std::flush;
    ASSERT_TRUE(std::getline(a, line)) << cmd;
    EXPECT_EQ(line, "ack") << cmd;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_GT(count_samples(dir_.path("ctl.data")), 0);
}

TEST_F(RecordErrorTest, MaxSizeStopsTheRecording) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for -a";
  auto r = run(perfkit_bin() + " record -a -F 10000 --max-size 64K -o " + sh(dir_.path("m.data")) +
               " -- sleep 5");
  EXPECT_EQ(r.status, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(stat(dir_.path("m.data").c_str(), &st), 0);
  EXPECT_LT(st.st_size, 2 * 1024 * 1024);
  EXPECT_GT(count_samples(dir_.path("m.data")), 0);
}

TEST_F(RecordErrorTest, FullDiskKeepsWhatWasWritten) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  PK_SKIP_WITHOUT_PERF();
  const std::string mnt = dir_.path("tiny");
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=256k") != 0)
    GTEST_SKIP() << "cannot mount tmpfs: " << strerror(errno);
  struct Unmount {
    std::string dir;
    ~Unmount() { umount(dir.c_str()); }
  } unmount{mnt};
  const std::string out = mnt + "/full.data";
  auto r = run(perfkit_bin() + " record -a -F 20000 -g -o " + sh(out) + " -- sleep 3");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("recorded before it are kept and readable"), std::string::npos) << r.err;
  EXPECT_EQ(perf_report_errors(out), "");
  EXPECT_GT(count_samples(out), 0);
  EXPECT_EQ(perf_sample_count(out), count_samples(out));
  // /dev/full fails at once: a clear error, exit 1.
  auto full = run(perfkit_bin() + " record -o /dev/full -- true");
  EXPECT_EQ(full.status, 1) << full.err;
  EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;
}

// -G: only the cgroup's tasks are recorded, as with perf; perf's refusals
// word for word (the full usage after the system-wide one is CLI11's help).
TEST(RecordCgroup, RecordsOnlyTheCgroupAndRefusesAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  auto mnt = capture::cgroup_mountpoint(capture::SystemPaths{});
  if (!mnt) GTEST_SKIP() << "no cgroup file system";
  const std::string cg = "perfkit-record-test-" + std::to_string(::getpid());
  const std::string dir = *mnt + "/" + cg;
  if (::mkdir(dir.c_str(), 0755) != 0) GTEST_SKIP() << "cannot make a cgroup in " << *mnt;
  struct Remove {  // (once its tasks are gone)
    std::string dir;
    ~Remove() { ::rmdir(dir.c_str()); }
  } remove{dir};
  TempDir tmp;
  const std::string out = tmp.path("cg.data");
  const std::string w = "-- sh -c " + sh("echo $$ > " + dir + "/cgroup.procs && exec " +
                                         sh(workload("cpuloop")) + " 100");
  for (const std::string& tool : {perfkit_bin(), std::string("/usr/bin/perf")}) {
    auto r = run(sh(tool) + " record -q -a -e cpu-clock -G " + cg + " -o " + sh(out) + " " + w);
    ASSERT_EQ(r.status, 0) << tool << ": " << r.err;
    // Every sample of a task of the cgroup: the shell that moved there, then
    // the workload it became.
    auto comms = run("perf report --stdio -q --sort comm -g none -i " + sh(out) +
                     " 2>/dev/null | awk 'NF {print $2}' | sort -u");
    EXPECT_TRUE(comms.out == "cpuloop\n" || comms.out == "cpuloop\nsh\n") << tool << "\n"
                                                                          << comms.out;
  }
  for (const std::string& args :
       std::vector<std::string>{"-a -G " + cg + " -e cpu-clock", "-a -e cpu-clock -G no-such-cg",
                                "-a -e cpu-clock -G " + cg + "," + cg, "-e cpu-clock -G " + cg}) {
    auto p = run("/usr/bin/perf record " + args + " -o " + sh(out) + " -- true");
    auto k = run(sh(perfkit_bin()) + " record " + args + " -o " + sh(out) + " -- true");
    std::string want = p.err;
    for (std::size_t at; (at = want.find("perf record")) != std::string::npos;)
      want.replace(at, 11, "perfkit record");
    if (args.starts_with("-e"))  // (the usage after perf's error is its option list)
      want = want.substr(0, want.find('\n')), k.err = k.err.substr(0, k.err.find('\n'));
    EXPECT_EQ(k.err, want) << args;
    EXPECT_EQ(k.status, p.status) << args;
  }
}

}  // namespace
}  // namespace perfkit::test
