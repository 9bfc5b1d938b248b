// RecordOptions: everything `perfkit record` can be asked, as values (no
// globals), with perf's defaults. The CLI fills it from perf's option names;
// record_config.h turns it and the parsed events into final attrs, and the
// Recorder uses it to run. The parse_* helpers read perf's option syntaxes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace perfkit::capture {

enum class CallGraphMode { kNone, kFp, kDwarf, kLbr };

struct CallGraphOptions {
  CallGraphMode mode = CallGraphMode::kNone;
  std::uint32_t dump_size = 8192;  // --call-graph dwarf,SIZE (rounded up to 8)
  std::uint16_t max_stack = 0;     // max-stack term; 0 leaves the kernel default
  // perf turns data addresses (-d) on as it parses --call-graph dwarf, not
  // when -g takes dwarf from the configuration (call-graph.record-mode).
  bool dwarf_data_addresses = true;
};

// Who is recorded. With none of pids/tids/system_wide/cpus set, the workload is.
struct Target {
  std::vector<pid_t> pids;   // -p: every thread of these processes
  std::vector<pid_t> tids;   // -t: just these threads
  bool system_wide = false;  // -a
  std::string cpu_list;      // -C: "0-3,8" (implies system-wide on those cpus)
  bool per_thread = false;   // --per-thread: one buffer per thread, no cpu
  bool has_task() const { return !pids.empty() || !tids.empty(); }
  bool has_cpu() const { return system_wide || !cpu_list.empty(); }
  bool none() const { return !has_task() && !has_cpu(); }
};

struct ControlOptions {
  std::string ctl_fifo;  // --control fifo:CTL[,ACK]
  std::string ack_fifo;
  int ctl_fd = -1;  // --control fd:CTL[,ACK]
  int ack_fd = -1;
  bool enabled() const { return !ctl_fifo.empty() || ctl_fd >= 0; }
};

// perf record --synth's parts (PERF_SYNTH_*).
inline constexpr unsigned kSynthTask = 1, kSynthMmap = 2, kSynthCgroup = 4,
                          kSynthAll = kSynthTask | kSynthMmap | kSynthCgroup;

// --switch-output: a new output file on SIGUSR2, past a size, or every so
// many seconds; each one finished is renamed FILE.TIMESTAMP.
struct SwitchOutput {
  bool signal = false;
  std::uint64_t size = 0;  // bytes (perf's B, K, M, G tags)
  unsigned time_s = 0;     // seconds (perf's s, m, h, d tags)
  int max_files = 0;       // --switch-max-files: past it the oldest file goes
  bool enabled() const { return signal || size || time_s; }
};

struct RecordOptions {
  Target target;

  // Sampling rate: -c, -F (or "max"), perf's default 4000 Hz.
  std::optional<std::uint64_t> user_period;  // -c
  std::optional<std::uint64_t> user_freq;    // -F N
  bool freq_max = false;                     // -F max
  bool strict_freq = false;
  std::uint64_t default_freq = 4000;

  bool no_inherit = false;  // -i
  bool no_samples = false;  // -n
  CallGraphOptions call_graph;
  bool kernel_callchains = false;
  bool user_callchains = false;
  std::uint64_t user_regs = 0;  // --user-regs mask
  std::uint64_t intr_regs = 0;  // -I/--intr-regs mask
  bool sample_address = false;  // -d
  bool phys_data = false;
  bool data_page_size = false;
  bool code_page_size = false;
  bool sample_time = true;  // -T (default on)
  bool sample_time_set = false;
  bool sample_cpu = false;
  bool sample_weight = false;  // -W
  bool sample_identifier = false;
  bool period_set = false;    // -P
  bool raw_samples = false;   // -R
  bool inherit_stat = false;  // -s
  bool running_time = false;
  bool transaction = false;
  std::uint64_t branch_stack = 0;  // -b / -j (branch_sample_type)
  bool switch_events = false;
  bool namespaces = false;
  bool all_cgroups = false;
  unsigned synth = kSynthAll;  // --synth: what side-band is synthesized
  // --tail-synthesize: the side-band of what exists is synthesized when
  // recording ends, not before it starts.
  bool tail_synthesize = false;
  // --overwrite: the buffers overwrite their oldest records (write_backward)
  // and are read when recording ends or switches (the side-band then too).
  bool overwrite = false;
  SwitchOutput switch_output;
  bool all_user = false;
  bool all_kernel = false;
  bool no_bpf_event = false;
  bool no_buffering = false;
  bool group = false;                 // --group
  std::optional<int> clockid;         // -k
  std::int64_t initial_delay_ms = 0;  // -D; -1 starts disabled (--control enables)

  // Buffers and output.
  std::uint32_t mmap_pages = 0;      // -m; 0 picks perf's default from perf_event_mlock_kb
  std::uint64_t mmap_flush = 1;      // --mmap-flush bytes
  int compression_level = 0;         // -z: 0 off, 1..22
  std::string output = "perf.data";  // -o ("-" for a pipe-mode stream on stdout)
  bool no_buildid = false;           // -B
  std::string buildid_cache_dir;     // where the hit DSOs are cached after; empty: -N
  bool buildid_all = false;
  bool buildid_mmap = false;
  std::string vmlinux;         // --vmlinux: the kernel's name in the BUILD_ID table (perf's)
  std::uint64_t max_size = 0;  // --max-size bytes, 0 unlimited
  // --threads[=SPEC]: a perf.data directory, its buffers read by threads
  // (thread_masks.h); "" is perf's default, a thread per cpu.
  std::optional<std::string> threads;
  double duration_s = 0;  // --duration (a perfkit extension)
  ControlOptions control;

  bool quiet = false;
  int verbose = 0;

  // The command line (argv), for the CMDLINE feature.
  std::vector<std::string> cmdline;
  // The workload to run (after --), empty when recording a target.
  std::vector<std::string> workload;
};

// --call-graph fp | dwarf[,SIZE] | lbr | no. Errors name the bad text.
Expected<CallGraphOptions> parse_call_graph(std::string_view text);
// -k: a name ("monotonic", "mono", "CLOCK_MONOTONIC", "raw", "boottime", ...)
// or a number.
Expected<int> parse_clockid(std::string_view text);
// The name perf prints for a clockid ("CLOCK_MONOTONIC"), "" if unknown.
std::string_view clockid_name(int clockid);
// --user-regs/--intr-regs: "ax,bx,r8" into a mask of x86-64 registers;
// empty text selects perf's default set. `intr` allows the XMM registers.
Expected<std::uint64_t> parse_regs(std::string_view text, bool intr);
// The x86-64 register names by bit, as perf prints them ("AX", ...).
std::string_view reg_name(unsigned bit);
// -j: "any,u,k" etc. into branch_sample_type bits. Errors name the mode.
Expected<std::uint64_t> parse_branch_filter(std::string_view text);
// -m: pages or a size with B/K/M/G, rounded up to a power of two pages
// ("512K" -> 128 with 4 KiB pages). Errors: not a number, zero.
Expected<std::uint32_t> parse_mmap_pages(std::string_view text, std::size_t page_size);
// --mmap-flush / --max-size: bytes with an optional B/K/M/G suffix.
Expected<std::uint64_t> parse_size(std::string_view text);
// --control fifo:CTL[,ACK] or fd:CTL[,ACK].
Expected<ControlOptions> parse_control(std::string_view text);
// --synth: "no", or a comma list of all, task, mmap (task's maps too) and
// cgroup. Errors: perf's "Invalid synth option: X".
Expected<unsigned> parse_synth(std::string_view text);
// --switch-output's value: "signal", a size ("10M") or a time ("30s"), as
// perf's parse_tag_value reads them (digits, then the tag). Errors: neither.
Expected<SwitchOutput> parse_switch_output(std::string_view text);

}  // namespace perfkit::capture
