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

class Tracer {
 public:
  Tracer(pid_t pid, const TracerOptions& opts) : pid_(pid), opts_(opts) {}
  Status run(TraceResult& r);

 private:
  std::uint32_t insn_index(std::uint64_t ip, Status& st);
  Status add_lost_steps(TraceResult& r, std::uint64_t from, std::uint64_t to);
  void refresh_maps(TraceResult& r, bool exec);
  Status step(int sig, int& status);

  pid_t pid_;
  const TracerOptions& opts_;
  intelpt::InsnDecoder decoder_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_ip_;
  std::vector<Insn>* insns_ = nullptr;
  std::vector<TracedMapping> current_;
};

std::uint32_t Tracer::insn_index(std::uint64_t ip, Status& st) {
  if (auto it = by_ip_.find(ip); it != by_ip_.end()) return it->second;
  std::uint8_t buf[16] = {};
  // Read up to 16 bytes, but not across into an unmapped page.
  std::size_t n = std::min<std::uint64_t>(16, 4096 - (ip & 4095));
  iovec local{buf, n}, remote{reinterpret_cast<void*>(ip), n};
  ssize_t got = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (got > 0 && static_cast<std::size_t>(got) == n && n < 16) {
    iovec local2{buf + n, 16 - n}, remote2{reinterpret_cast<void*>(ip + n), 16 - n};
    ssize_t more = process_vm_readv(pid_, &local2, 1, &remote2, 1, 0);
    if (more > 0) got += more;
  }
  if (got <= 0) {
    st = make_error("cannot read the code at {:#x} of pid {}: {}", ip, pid_, strerror(errno));
    return 0;
  }
  Insn insn = decoder_.decode(Bytes(buf, static_cast<std::size_t>(got)));
  std::uint32_t idx = static_cast<std::uint32_t>(insns_->size());
  insns_->push_back(insn);
  by_ip_.emplace(ip, idx);
  return idx;
}

void Tracer::refresh_maps(TraceResult& r, bool exec) {
  auto now = read_exec_maps(pid_);
  if (exec) current_.clear();
  for (auto& m : now) {
    bool known = false;
    for (const auto& c : current_) known = known || same_mapping(c, m);
    if (known) continue;
    m.step = r.exec.steps.size();
    if (m.path == "[vdso]" && r.vdso.empty()) {
      r.vdso.resize(m.end - m.start);
      iovec local{r.vdso.data(), r.vdso.size()},
          remote{reinterpret_cast<void*>(m.start), r.vdso.size()};
      if (process_vm_readv(pid_, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(r.vdso.size()))
        r.vdso.clear();
      r.vdso_start = m.start;
    }
    r.mappings.push_back(m);
  }
  current_ = std::move(now);
  // Code may have been replaced where the maps changed.
  if (exec) by_ip_.clear();
}

// Some hypervisors emulate an instruction (CPUID, ...) and lose the
// single-step trap after it: the next trap comes one instruction later. The
// instructions between the fall-through `from` and the IP `to` it stopped
// at ran; each is added as a step, as far as the code says where it went.
// Errors: no such path within a few instructions.
Status Tracer::add_lost_steps(TraceResult& r, std::uint64_t from, std::uint64_t to) {
  std::uint64_t at = from;
  for (int n = 0; n < 4 && at != to; ++n) {
    Status err;
    const std::uint32_t idx = insn_index(at, err);
    if (!err) return err;
    const Insn i = r.exec.insns[idx];
    r.exec.steps.push_back({at, idx, 0u});
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
      pid_, from, to);
}

Status Tracer::step(int sig, int& status) {
  if (ptrace(PTRACE_SINGLESTEP, pid_, nullptr, reinterpret_cast<void*>(static_cast<long>(sig))) < 0)
    return make_error("ptrace(SINGLESTEP) of pid {}: {}", pid_, strerror(errno));
  if (waitpid(pid_, &status, __WALL) < 0)
    return make_error("waitpid({}): {}", pid_, strerror(errno));
  return ok();
}

Status Tracer::run(TraceResult& r) {
  insns_ = &r.exec.insns;
  r.execs.push_back({0, comm_of(pid_)});
  refresh_maps(r, true);
  user_regs_struct regs;
  if (ptrace(PTRACE_GETREGS, pid_, nullptr, &regs) < 0)
    return make_error("ptrace(GETREGS) of pid {}: {}", pid_, strerror(errno));
  std::uint64_t ip = regs.rip;
  int deliver = 0;  // signal to deliver with the next step
  bool async_next = false;
  while (true) {
    if (r.exec.steps.size() >= opts_.max_steps) {
      r.truncated = true;
      kill(pid_, SIGKILL);
      int st;
      waitpid(pid_, &st, __WALL);
      return ok();
    }
    Status err;
    std::uint32_t idx = insn_index(ip, err);
    if (!err) return err;
    const Insn insn = r.exec.insns[idx];
    const bool is_syscall = insn.op == InsnOp::kSyscall;
    const std::uint64_t nr = regs.rax;
    // A caught signal goes to its handler before this instruction runs.
    bool entering_handler = deliver && catches(pid_, deliver);
    int status = 0;
    PK_TRY(step(deliver, status));
    deliver = 0;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      // The last instruction ran (exit_group) unless a signal killed it.
      if (WIFEXITED(status))
        r.exec.steps.push_back({ip, idx, async_next ? intelpt::ExecStep::kAsyncBefore : 0u});
      r.exit_status = status;
      return ok();
    }
    if (ptrace(PTRACE_GETREGS, pid_, nullptr, &regs) < 0)
      return make_error("ptrace(GETREGS) of pid {}: {}", pid_, strerror(errno));
    if (entering_handler) {
      // The instruction at `ip` did not run: the handler starts now.
      r.exec.interrupted.push_back(ip);
      async_next = true;
      ip = regs.rip;
      continue;
    }
    int sig = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;
    // A REP string instruction traps after every iteration without moving:
    // it is one instruction to the trace.
    if (sig == SIGTRAP && regs.rip == ip && insn.cls == InsnClass::kOther) continue;
    bool executed = true;
    if (sig != SIGTRAP) {
      // A signal stop: the instruction ran unless the IP did not move (it faulted).
      executed = regs.rip != ip || insn.cls == InsnClass::kJump;
      deliver = sig;
    }
    if (executed) {
      r.exec.steps.push_back({ip, idx, async_next ? intelpt::ExecStep::kAsyncBefore : 0u});
      async_next = false;
      if (sig == SIGTRAP && insn.cls == InsnClass::kOther && regs.rip != ip + insn.length)
        PK_TRY(add_lost_steps(r, ip + insn.length, regs.rip));
      if (is_syscall && syscall_changes_maps(nr)) {
        bool exec = (nr == SYS_execve || nr == SYS_execveat) && regs.rip != ip + insn.length;
        if (exec) r.execs.push_back({r.exec.steps.size(), comm_of(pid_)});
        refresh_maps(r, exec);
      }
    }
    ip = regs.rip;
  }
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
  ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(PTRACE_O_EXITKILL));
  TraceResult r;
  r.pid = pid;
  Tracer t(pid, opts);
  Status st = t.run(r);
  if (!st) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, __WALL);
    return std::move(st).error().with_context(argv[0]);
  }
  return r;
}

}  // namespace perfkit::pt_synth
