#include "capture/workload.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace perfkit::capture {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Runs in the forked child: waits for the go byte, then execs. Only
// async-signal-safe calls here (the parent may have threads).
[[noreturn]] void run_child(int go_read, int err_write, int ready_write, char* const* argv,
                            const WorkloadOptions& opts) {
  if (opts.stdout_to_stderr) ::dup2(2, 1);
  // Named as perf names its child until the exec: samples and COMMs of
  // that stretch say "perf-exec", not the recorder's name. The parent
  // waits for it (its COMM is synthesized from /proc).
  ::prctl(PR_SET_NAME, "perf-exec", 0, 0, 0);
  ::close(ready_write);
  if (opts.child_sigmask) ::sigprocmask(SIG_SETMASK, &*opts.child_sigmask, nullptr);
  char go = 0;
  ssize_t n;
  do {
    n = ::read(go_read, &go, 1);
  } while (n < 0 && errno == EINTR);
  // EOF: the parent died or gave up before start(); never run the command.
  if (n != 1) ::_exit(127);
  ::close(go_read);
  ::execvp(argv[0], argv);
  int err = errno;
  ssize_t w;
  do {
    w = ::write(err_write, &err, sizeof err);
  } while (w < 0 && errno == EINTR);
  ::_exit(127);
}

}  // namespace

ExitInfo decode_wait_status(int status, const rusage& usage) {
  ExitInfo e;
  e.raw_status = status;
  e.usage = usage;
  if (WIFEXITED(status)) {
    e.exited = true;
    e.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.signal = WTERMSIG(status);
    e.core_dumped = WCOREDUMP(status);
  }
  return e;
}

Workload::Workload(Workload&& o) noexcept { *this = std::move(o); }

Workload& Workload::operator=(Workload&& o) noexcept {
  if (this != &o) {
    release_resources();
    pid_ = o.pid_;
    go_fd_ = o.go_fd_;
    exec_err_fd_ = o.exec_err_fd_;
    started_ = o.started_;
    argv_ = std::move(o.argv_);
    exit_ = o.exit_;
    o.pid_ = -1;
    o.go_fd_ = o.exec_err_fd_ = -1;
    o.exit_.reset();
  }
  return *this;
}

Workload::~Workload() { release_resources(); }

void Workload::release_resources() {
  // Closing the go pipe before start() makes the child exit without exec.
  close_fd(go_fd_);
  close_fd(exec_err_fd_);
  if (pid_ > 0 && !exit_) {
    if (started_) ::kill(pid_, SIGTERM);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

Expected<Workload> Workload::prepare(std::vector<std::string> argv, WorkloadOptions opts) {
  if (argv.empty()) return make_error("no workload command given");
  int go[2], err[2] = {-1, -1}, ready[2];
  if (::pipe2(go, O_CLOEXEC) != 0)
    return make_error("cannot create the workload's start pipe: {}", std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(ready, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(go[0]);
    ::close(go[1]);
    if (err[0] >= 0) {
      ::close(err[0]);
      ::close(err[1]);
    }
    return make_error("cannot create the workload's exec pipe: {}", std::strerror(e));
  }
  // Built before fork: the child must not allocate.
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {go[0], go[1], err[0], err[1], ready[0], ready[1]}) ::close(fd);
    return make_error("cannot fork the workload '{}': {}", argv[0], std::strerror(e));
  }
  if (pid == 0) {
    ::close(go[1]);
    ::close(err[0]);
    ::close(ready[0]);
    run_child(go[0], err[1], ready[1], args.data(), opts);
  }
  ::close(go[0]);
  ::close(err[1]);
  ::close(ready[1]);
  char byte;
  while (::read(ready[0], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(ready[0]);
  Workload w;
  w.pid_ = pid;
  w.go_fd_ = go[1];
  w.exec_err_fd_ = err[0];
  w.argv_ = std::move(argv);
  return w;
}

Status Workload::start() {
  if (pid_ <= 0) return make_error("the workload was not prepared");
  if (started_) return make_error("the workload '{}' was already started", argv_[0]);
  char go = 1;
  ssize_t n;
  do {
    n = ::write(go_fd_, &go, 1);
  } while (n < 0 && errno == EINTR);
  int werr = errno;
  close_fd(go_fd_);
  started_ = true;
  if (n != 1)
    return make_error("cannot start the workload '{}': {}", argv_[0], std::strerror(werr));
  // EOF means the exec closed the pipe (O_CLOEXEC): the command runs.
  int child_errno = 0;
  std::size_t got = 0;
  while (got < sizeof child_errno) {
    ssize_t r =
        ::read(exec_err_fd_, reinterpret_cast<char*>(&child_errno) + got, sizeof child_errno - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  close_fd(exec_err_fd_);
  if (got == 0) return ok();
  auto reaped = wait();
  (void)reaped;
  return make_error("cannot run '{}': {}", argv_[0],
                    got == sizeof child_errno ? std::strerror(child_errno) : "exec failed");
}

Expected<ExitInfo> Workload::wait() {
  if (exit_) return *exit_;
  if (pid_ <= 0) return make_error("no workload to wait for");
  int status = 0;
  rusage usage{};
  pid_t r;
  do {
    r = ::wait4(pid_, &status, 0, &usage);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return make_error("waiting for the workload {}: {}", pid_, std::strerror(errno));
  exit_ = decode_wait_status(status, usage);
  return *exit_;
}

Expected<std::optional<ExitInfo>> Workload::try_wait() {
  if (exit_) return std::optional<ExitInfo>(*exit_);
  if (pid_ <= 0) return make_error("no workload to wait for");
  int status = 0;
  rusage usage{};
  pid_t r;
  do {
    r = ::wait4(pid_, &status, WNOHANG, &usage);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return make_error("waiting for the workload {}: {}", pid_, std::strerror(errno));
  if (r == 0) return std::optional<ExitInfo>();
  exit_ = decode_wait_status(status, usage);
  return std::optional<ExitInfo>(*exit_);
}

std::optional<int> Workload::wait(bool block) {
  if (block) {
    auto e = wait();
    if (!e) return std::nullopt;
    return e->raw_status;
  }
  auto e = try_wait();
  if (!e || !*e) return std::nullopt;
  return (*e)->raw_status;
}

Status Workload::signal(int sig) const {
  if (pid_ <= 0 || exit_) return ok();
  if (::kill(pid_, sig) != 0)
    return make_error("cannot send signal {} to the workload {}: {}", sig, pid_,
                      std::strerror(errno));
  return ok();
}

}  // namespace perfkit::capture
