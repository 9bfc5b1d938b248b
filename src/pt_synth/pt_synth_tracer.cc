#include "pt_synth/pt_synth_tracer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "intelpt/insn.h"

namespace perfkit::pt_synth {

namespace {

using intelpt::Insn;
using intelpt::InsnClass;
using intelpt::InsnOp;

std::vector<TracedMapping> read_exec_maps(pid_t pid) {
  std::vector<TracedMapping> out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string range, perms, off, dev, ino, path;
    ls >> range >> perms >> off >> dev >> ino;
    std::getline(ls >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x') continue;
    TracedMapping m;
    auto dash = range.find('-');
    m.start = std::stoull(range.substr(0, dash), nullptr, 16);
    m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
    m.pgoff = std::stoull(off, nullptr, 16);
    auto colon = dev.find(':');
    m.maj = static_cast<std::uint32_t>(std::stoul(dev.substr(0, colon), nullptr, 16));
    m.min = static_cast<std::uint32_t>(std::stoul(dev.substr(colon + 1), nullptr, 16));
    m.ino = std::stoull(ino);
    m.path = path;
    m.prot = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0);
    out.push_back(std::move(m));
  }
  return out;
}

bool same_mapping(const TracedMapping& a, const TracedMapping& b) {
  return a.start == b.start && a.end == b.end && a.pgoff == b.pgoff && a.path == b.path &&
         a.ino == b.ino;
}

std::string comm_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string s;
  std::getline(in, s);
  return s;
}

// Whether `pid` has a handler for `sig` (SigCgt in /proc/PID/status).
bool catches(pid_t pid, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("SigCgt:"))
      return (std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1;
  return false;
}

bool syscall_changes_maps(std::uint64_t nr) {
  switch (nr) {
    case SYS_mmap:
    case SYS_mprotect:
    case SYS_munmap:
    case SYS_mremap:
    case SYS_execve:
    case SYS_execveat:
    case SYS_pkey_mprotect:
    case SYS_remap_file_pages:
      return true;
    default:
      return false;
  }
}

// One traced process: what it has run so far and the step in flight.
struct Proc {
  pid_t pid = 0;
  TraceResult* r = nullptr;
  std::unordered_map<std::uint64_t, std::uint32_t> by_ip;  // into r->exec.insns
  std::vector<TracedMapping> current;                      // its executable maps now
  std::uint64_t ip = 0;
  std::uint64_t nr = 0;     // rax before the step: the system call number
  std::uint32_t idx = 0;    // the instruction in flight
  int deliver = 0;          // signal to deliver with the next step
  bool async_next = false;  // the next step starts a signal handler
  bool entering_handler = false;
  bool started = false;  // a forked process: its first stop was seen
  bool done = false;
};

// Steps every traced process, one instruction at a time, all at once: each
// is resumed as soon as its last step is recorded (a parent may be waiting
// for its child), and waitpid(-1) says which stopped.
class Tracer {
 public:
  explicit Tracer(const TracerOptions& opts) : opts_(opts) {}
  Status run(pid_t pid, TraceResult& r);

 private:
  std::uint32_t insn_index(Proc& p, std::uint64_t ip, Status& st);
  Status add_lost_steps(Proc& p, std::uint64_t from, std::uint64_t to);
  void refresh_maps(Proc& p, bool exec);
  Status start(Proc& p);
  Status issue_step(Proc& p);
  Status on_stop(Proc& p, int status);
  Status on_fork(Proc& parent);
  Proc* find(pid_t pid);
  void kill_all();

  const TracerOptions& opts_;
  intelpt::InsnDecoder decoder_;
  std::deque<Proc> procs_;
  std::deque<TraceResult> forked_;
  std::vector<std::pair<pid_t, int>> early_;  // stops of forked processes not yet announced
  std::uint64_t steps_ = 0;                   // of all processes
  bool truncated_ = false;
};

std::uint32_t Tracer::insn_index(Proc& p, std::uint64_t ip, Status& st) {
  if (auto it = p.by_ip.find(ip); it != p.by_ip.end()) return it->second;
  std::uint8_t buf[16] = {};
  // Read up to 16 bytes, but not across into an unmapped page.
  std::size_t n = std::min<std::uint64_t>(16, 4096 - (ip & 4095));
  iovec local{buf, n}, remote{reinterpret_cast<void*>(ip), n};
  ssize_t got = process_vm_readv(p.pid, &local, 1, &remote, 1, 0);
  if (got > 0 && static_cast<std::size_t>(got) == n && n < 16) {
    iovec local2{buf + n, 16 - n}, remote2{reinterpret_cast<void*>(ip + n), 16 - n};
    ssize_t more = process_vm_readv(p.pid, &local2, 1, &remote2, 1, 0);
    if (more > 0) got += more;
  }
  if (got <= 0) {
    st = make_error("cannot read the code at {:#x} of pid {}: {}", ip, p.pid, strerror(errno));
    return 0;
  }
  Insn insn = decoder_.decode(Bytes(buf, static_cast<std::size_t>(got)));
  auto& insns = p.r->exec.insns;
  std::uint32_t idx = static_cast<std::uint32_t>(insns.size());
  insns.push_back(insn);
  p.by_ip.emplace(ip, idx);
  return idx;
}

void Tracer::refresh_maps(Proc& p, bool exec) {
  TraceResult& r = *p.r;
  auto now = read_exec_maps(p.pid);
  if (exec) p.current.clear();
  for (auto& m : now) {
    bool known = false;
    for (const auto& c : p.current) known = known || same_mapping(c, m);
    if (known) continue;
    m.step = r.exec.steps.size();
    if (m.path == "[vdso]" && r.vdso.empty()) {
      r.vdso.resize(m.end - m.start);
      iovec local{r.vdso.data(), r.vdso.size()},
          remote{reinterpret_cast<void*>(m.start), r.vdso.size()};
      if (process_vm_readv(p.pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(r.vdso.size()))
        r.vdso.clear();
      r.vdso_start = m.start;
    }
    r.mappings.push_back(m);
  }
  p.current = std::move(now);
  // Code may have been replaced where the maps changed.
  if (exec) p.by_ip.clear();
}

// Some hypervisors emulate an instruction (CPUID, ...) and lose the
// single-step trap after it: the next trap comes one instruction later. The
// instructions between the fall-through `from` and the IP `to` it stopped
// at ran; each is added as a step, as far as the code says where it went.
// Errors: no such path within a few instructions.
Status Tracer::add_lost_steps(Proc& p, std::uint64_t from, std::uint64_t to) {
  std::uint64_t at = from;
  for (int n = 0; n < 4 && at != to; ++n) {
    Status err;
    const std::uint32_t idx = insn_index(p, at, err);
    if (!err) return err;
    const Insn i = p.r->exec.insns[idx];
    p.r->exec.steps.push_back({at, idx, 0u});
    ++steps_;
    const std::uint64_t next = at + i.length;
    const std::uint64_t target = next + static_cast<std::uint64_t>(i.displacement);
    if (i.cls == InsnClass::kOther) {
      at = next;
    } else if ((i.cls == InsnClass::kJump || i.cls == InsnClass::kCall) && target == to) {
      return ok();
    } else if (i.cls == InsnClass::kCondJump && (target == to || next == to)) {
      return ok();
    } else {
      break;
    }
  }
  if (at == to) return ok();
  return make_error(
      "pid {}: the single-step trap after {:#x} came at {:#x}, where the code does not lead "
      "(a trap the machine lost)",
      p.pid, from, to);
}

// Reads where a stopped process is, for its first step.
Status Tracer::start(Proc& p) {
  user_regs_struct regs;
  if (ptrace(PTRACE_GETREGS, p.pid, nullptr, &regs) < 0)
    return make_error("ptrace(GETREGS) of pid {}: {}", p.pid, strerror(errno));
  p.ip = regs.rip;
  p.nr = regs.rax;
  p.started = true;
  return issue_step(p);
}

// Resumes `p` for one instruction, the one at p.ip.
Status Tracer::issue_step(Proc& p) {
  Status err;
  p.idx = insn_index(p, p.ip, err);
  if (!err) return err;
  // A caught signal goes to its handler before this instruction runs.
  p.entering_handler = p.deliver && catches(p.pid, p.deliver);
  const int sig = p.deliver;
  p.deliver = 0;
  if (ptrace(PTRACE_SINGLESTEP, p.pid, nullptr, reinterpret_cast<void*>(static_cast<long>(sig))) <
      0)
    return make_error("ptrace(SINGLESTEP) of pid {}: {}", p.pid, strerror(errno));
  return ok();
}

// A PTRACE_EVENT_FORK or _VFORK stop of `parent`, inside the system call:
// the new process is traced from the instruction after it, in its parent's
// maps (a vfork child in its parent's memory until it execs, the parent
// waiting in the kernel meanwhile).
Status Tracer::on_fork(Proc& parent) {
  unsigned long msg = 0;
  if (ptrace(PTRACE_GETEVENTMSG, parent.pid, nullptr, &msg) < 0)
    return make_error("ptrace(GETEVENTMSG) of pid {}: {}", parent.pid, strerror(errno));
  TraceResult& r = forked_.emplace_back();
  r.pid = static_cast<pid_t>(msg);
  r.ppid = parent.pid;
  r.fork_step = parent.r->exec.steps.size();
  r.parent = -1;
  for (std::size_t i = 0; i + 1 < forked_.size(); ++i)
    if (&forked_[i] == parent.r) r.parent = static_cast<int>(i);
  r.execs.push_back({0, parent.r->execs.back().comm});
  r.vdso = parent.r->vdso;
  r.vdso_start = parent.r->vdso_start;
  Proc& child = procs_.emplace_back();
  child.pid = r.pid;
  child.r = &r;
  child.current = parent.current;
  // Its first stop (SIGSTOP) may have been seen already.
  for (std::size_t i = 0; i < early_.size(); ++i)
    if (early_[i].first == child.pid) {
      early_.erase(early_.begin() + static_cast<std::ptrdiff_t>(i));
      return start(child);
    }
  return ok();
}

Status Tracer::on_stop(Proc& p, int status) {
  if (!p.started) {
    // A forked process's first stop: it has run nothing yet.
    return start(p);
  }
  TraceResult& r = *p.r;
  const Insn insn = r.exec.insns[p.idx];
  const std::uint64_t ip = p.ip;
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    // The last instruction ran (exit_group) unless a signal killed it.
    if (WIFEXITED(status)) {
      r.exec.steps.push_back({ip, p.idx, p.async_next ? intelpt::ExecStep::kAsyncBefore : 0u});
      ++steps_;
    }
    r.exit_status = status;
    p.done = true;
    return ok();
  }
  if (WIFSTOPPED(status) && (status >> 16) != 0) {
    // An event stop inside the system call: it has not returned yet.
    const int event = status >> 16;
    if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) PK_TRY(on_fork(p));
    if (ptrace(PTRACE_SINGLESTEP, p.pid, nullptr, nullptr) < 0)
      return make_error("ptrace(SINGLESTEP) of pid {}: {}", p.pid, strerror(errno));
    return ok();
  }
  user_regs_struct regs;
  if (ptrace(PTRACE_GETREGS, p.pid, nullptr, &regs) < 0)
    return make_error("ptrace(GETREGS) of pid {}: {}", p.pid, strerror(errno));
  const bool is_syscall = insn.op == InsnOp::kSyscall;
  const std::uint64_t nr = p.nr;
  p.nr = regs.rax;
  if (p.entering_handler) {
    // The instruction at `ip` did not run: the handler starts now.
    r.exec.interrupted.push_back(ip);
    p.async_next = true;
    p.ip = regs.rip;
    return issue_step(p);
  }
  int sig = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;
  // A REP string instruction traps after every iteration without moving:
  // it is one instruction to the trace.
  if (sig == SIGTRAP && regs.rip == ip && insn.cls == InsnClass::kOther) return issue_step(p);
  bool executed = true;
  if (sig != SIGTRAP) {
    // A signal stop: the instruction ran unless the IP did not move (it faulted).
    executed = regs.rip != ip || insn.cls == InsnClass::kJump;
    p.deliver = sig;
  }
  if (executed) {
    r.exec.steps.push_back({ip, p.idx, p.async_next ? intelpt::ExecStep::kAsyncBefore : 0u});
    ++steps_;
    p.async_next = false;
    if (sig == SIGTRAP && insn.cls == InsnClass::kOther && regs.rip != ip + insn.length)
      PK_TRY(add_lost_steps(p, ip + insn.length, regs.rip));
    if (is_syscall && syscall_changes_maps(nr)) {
      bool exec = (nr == SYS_execve || nr == SYS_execveat) && regs.rip != ip + insn.length;
      if (exec) r.execs.push_back({r.exec.steps.size(), comm_of(p.pid)});
      refresh_maps(p, exec);
    }
  }
  p.ip = regs.rip;
  return issue_step(p);
}

Proc* Tracer::find(pid_t pid) {
  for (auto& p : procs_)
    if (p.pid == pid && !p.done) return &p;
  return nullptr;
}

void Tracer::kill_all() {
  for (auto& p : procs_)
    if (!p.done) kill(p.pid, SIGKILL);
  for (auto& p : procs_) {
    int st;
    if (!p.done) waitpid(p.pid, &st, __WALL);
    p.done = true;
  }
}

Status Tracer::run(pid_t pid, TraceResult& r) {
  Proc& first = procs_.emplace_back();
  first.pid = pid;
  first.r = &r;
  r.execs.push_back({0, comm_of(pid)});
  refresh_maps(first, true);
  Status st = start(first);
  while (st) {
    bool live = false;
    for (const auto& p : procs_) live = live || !p.done;
    if (!live) break;
    if (steps_ >= opts_.max_steps) {
      truncated_ = true;
      kill_all();
      break;
    }
    int status = 0;
    const pid_t got = waitpid(-1, &status, __WALL);
    if (got < 0) {
      st = make_error("waitpid: {}", strerror(errno));
      break;
    }
    if (Proc* p = find(got)) {
      st = on_stop(*p, status);
    } else if (WIFSTOPPED(status)) {
      early_.push_back({got, status});  // a forked process before its parent's event
    }
  }
  if (!st) kill_all();
  r.truncated = truncated_;
  for (auto& f : forked_) {
    f.truncated = truncated_;
    r.forked.push_back(std::move(f));
  }
  return st;
}

}  // namespace

Expected<TraceResult> single_step(const std::vector<std::string>& argv, const TracerOptions& opts) {
  if (argv.empty()) return make_error("no program to run");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return make_error("fork: {}", strerror(errno));
  if (pid == 0) {
    if (opts.stdout_fd >= 0) {
      dup2(opts.stdout_fd, 1);
      dup2(opts.stdout_fd, 2);
    }
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return make_error("waitpid: {}", strerror(errno));
  if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      return make_error("{}: cannot run it (not found or not executable)", argv[0]);
    return make_error("{}: did not stop at exec (status {:#x})", argv[0], status);
  }
  long options =
      PTRACE_O_EXITKILL | (opts.follow_forks ? PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK : 0);
  ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(options));
  TraceResult r;
  r.pid = pid;
  Tracer t(opts);
  Status st = t.run(pid, r);
  if (!st) return std::move(st).error().with_context(argv[0]);
  return r;
}

}  // namespace perfkit::pt_synth
