// Workload: the command `perfkit record` and `perfkit stat` measure. It is
// forked at once but held before exec, so that counters can be opened on its
// pid with enable_on_exec (they start counting exactly at the exec), then
// released; the caller waits for its exit status and may forward signals.
//
//   PK_ASSIGN(Workload w, Workload::prepare({"./app", "arg"}));
//   open counters on w.pid() with enable_on_exec ...
//   PK_TRY(w.start());                 // exec; fails if the command cannot run
//   PK_ASSIGN(ExitInfo e, w.wait());   // e.shell_status() is what a shell reports
//
// The child inherits the caller's signal mask and dispositions as they are at
// prepare() (exec resets caught signals to their default); prepare before
// blocking signals for a signalfd. If the caller dies or destroys a prepared
// Workload without start(), the child exits without ever running the command.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace perfkit::capture {

// How the workload ended.
struct ExitInfo {
  int raw_status = 0;  // as waitpid(2) reports it
  bool exited = false;
  int exit_code = 0;  // when exited
  bool signaled = false;
  int signal = 0;  // when signaled
  bool core_dumped = false;
  rusage usage{};  // the child's resource usage (user and system time)

  // The status a shell reports: the exit code, or 128 + the signal.
  int shell_status() const { return exited ? exit_code : 128 + signal; }
};

struct WorkloadOptions {
  // The child's stdout goes to stderr (perf record -o -: the data owns stdout).
  bool stdout_to_stderr = false;
  // The signal mask the command runs with, when the caller has blocked
  // signals since (for a signalfd); unset: the mask at prepare().
  std::optional<sigset_t> child_sigmask;
};

class Workload {
 public:
  Workload() = default;
  Workload(Workload&& o) noexcept;
  Workload& operator=(Workload&& o) noexcept;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;
  // A prepared child that never started is killed and reaped; a started child
  // that was never waited for gets SIGTERM and is reaped.
  ~Workload();

  // Forks the child, which waits for start() before exec'ing argv[0] (searched
  // in PATH) with argv. Errors: empty argv; pipe or fork failure.
  static Expected<Workload> prepare(std::vector<std::string> argv, WorkloadOptions opts = {});
  // The same, under the name the recorder uses.
  static Expected<Workload> create(std::vector<std::string> argv, WorkloadOptions opts = {}) {
    return prepare(std::move(argv), opts);
  }

  pid_t pid() const { return pid_; }
  const std::vector<std::string>& argv() const { return argv_; }
  bool started() const { return started_; }
  bool reaped() const { return exit_.has_value(); }

  // Lets the child exec and returns once the exec happened. Errors: the
  // command could not be executed ("'./app': No such file or directory");
  // the child is reaped then. Calling it twice is an error.
  Status start();

  // Waits for the child to exit (retrying on EINTR) and returns how it ended.
  // Once reaped, returns the same ExitInfo again.
  Expected<ExitInfo> wait();
  // As wait() without blocking: nullopt while the child runs.
  Expected<std::optional<ExitInfo>> try_wait();
  // The raw waitpid(2) status once the child has exited; nullopt while it
  // runs (with block false), before start(), or when waiting failed.
  std::optional<int> wait(bool block);

  // Sends `sig` to the child (no-op once reaped). Errors: kill(2) failed.
  Status signal(int sig) const;

 private:
  void release_resources();

  pid_t pid_ = -1;
  int go_fd_ = -1;        // written by start(): the child may exec
  int exec_err_fd_ = -1;  // the child's exec errno, or EOF when exec succeeded
  bool started_ = false;
  std::vector<std::string> argv_;
  std::optional<ExitInfo> exit_;
};

// Decodes a waitpid(2) status.
ExitInfo decode_wait_status(int status, const rusage& usage);

}  // namespace perfkit::capture
