// SingleStepTracer: runs a program under ptrace, single-stepping its first
// thread in user mode, and records the exact sequence of instructions it
// executes, the executable mappings as they appear (re-read from
// /proc/PID/maps after every syscall that can change them), the vdso's bytes
// and asynchronous entries (signal handlers). This is the ground truth that
// pt-synth encodes as an Intel PT trace.
//
// The thread that execs is traced, and so is every process it forks (and
// they fork), from its first instruction, as perf record's inherited events
// follow them; threads run untraced. A program that execs again is followed
// into the new image.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "intelpt/trace_encoder.h"

namespace perfkit::pt_synth {

struct TracedMapping {
  std::uint64_t start = 0, end = 0, pgoff = 0;
  std::string path;        // "[vdso]" for the vdso
  std::uint32_t prot = 0;  // PROT_* bits
  std::uint32_t maj = 0, min = 0;
  std::uint64_t ino = 0;
  std::uint64_t step = 0;  // the first step that may run code in it
};

struct TracedExec {
  std::uint64_t step = 0;  // first step of the new program
  std::string comm;
};

struct TraceResult {
  intelpt::Execution exec;
  // Executable ones, in order of appearance; a forked process's start with
  // those it mapped itself (it runs in its parent's maps as of the fork).
  std::vector<TracedMapping> mappings;
  std::vector<TracedExec> execs;   // the first exec (step 0) and any later ones
  std::vector<std::uint8_t> vdso;  // bytes of [vdso], if mapped
  std::uint64_t vdso_start = 0;
  pid_t pid = 0;
  int exit_status = 0;     // as from waitpid
  bool truncated = false;  // stopped at max_steps
  // A forked process: its parent, which of `TraceResult::forked` that is
  // (-1: the first process), and the parent's step that forked it (the
  // system call, whose return is this process's first step).
  pid_t ppid = 0;
  int parent = -1;
  std::uint64_t fork_step = 0;
  // Of the first process only: the processes forked, in the order they were.
  std::vector<TraceResult> forked;
};

struct TracerOptions {
  std::uint64_t max_steps = 20'000'000;  // of all processes together
  bool follow_forks = true;
  // Where the tracee's stdout and stderr go (-1: inherited).
  int stdout_fd = -1;
};

// Runs argv[0] (looked up in PATH) with `argv` and traces it to the end.
// Errors: fork/exec/ptrace failures, with the program's name.
Expected<TraceResult> single_step(const std::vector<std::string>& argv, const TracerOptions& opts);

}  // namespace perfkit::pt_synth
