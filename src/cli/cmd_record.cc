// perfkit record: sample a command, processes, threads or the whole system
// into perf.data, as 'perf record' does. Options and messages follow perf.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>

#include "base/text.h"
#include "capture/cgroup.h"
#include "capture/event_spec.h"
#include "capture/event_trigger.h"
#include "capture/record_options.h"
#include "capture/synthesize.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/perfconfig.h"
#include "recorder/record.h"

namespace perfkit::cli {

namespace {

// The signal pipe: the handler writes the signal number, the recorder polls
// the read end. (Signals are process-wide by nature; this is their only state.)
int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  unsigned char c = static_cast<unsigned char>(sig);
  ssize_t n = ::write(g_signal_pipe[1], &c, 1);
  (void)n;
}

void on_sigpipe(int) {}

// --switch-output's signal: SIGUSR2 writes to this pipe, the recorder polls it.
int g_switch_pipe[2] = {-1, -1};

void on_switch_signal(int) {
  char c = 1;
  ssize_t n = ::write(g_switch_pipe[1], &c, 1);
  (void)n;
}

void install_switch_signal() {
  if (::pipe2(g_switch_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction sa {};
  sa.sa_handler = on_switch_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR2, &sa, nullptr);
}

void install_signals() {
  if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A handler, not SIG_IGN: exec resets it, so the workload keeps the default.
  sa.sa_handler = on_sigpipe;
  sigaction(SIGPIPE, &sa, nullptr);
}

int received_signal() {
  unsigned char c = 0;
  return g_signal_pipe[0] >= 0 && ::read(g_signal_pipe[0], &c, 1) == 1 ? c : 0;
}

// perf's options whose argument is optional only take it attached
// ("-z3", "--user-regs=ax"); a bare one takes its default. CLI11 wants a
// value, so the bare forms are spelled out before parsing.
std::vector<std::string> normalize_args(int argc, char** argv) {
  std::vector<std::string> out;
  bool after_dashes = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (after_dashes || i == 0) {
      out.push_back(a);
      continue;
    }
    if (a == "--") after_dashes = true;
    if (a == "-z" || a == "--compression-level")
      a = "--compression-level=1";
    else if (a.size() > 2 && a.starts_with("-z") && std::isdigit(static_cast<unsigned char>(a[2])))
      a = "--compression-level=" + a.substr(2);
    else if (a == "--switch-output")
      a = "--switch-output=signal";
    else if (a == "--user-regs")
      a = "--user-regs=";
    else if (a == "--threads")
      a = "--threads=cpu";
    else if (a == "-I" || a == "--intr-regs")
      a = "--intr-regs=";
    else if (a.size() > 2 && a.starts_with("-I"))
      a = "--intr-regs=" + a.substr(2);
    out.push_back(a);
  }
  return out;
}

Expected<std::vector<pid_t>> parse_pids(const std::string& list, std::string_view what) {
  std::vector<pid_t> out;
  PK_TRY(parse_list_option(list, IntListRules::pids(what), out));
  return out;
}

struct Args {
  std::vector<std::string> events;
  std::string pids, tids, freq, call_graph, clockid, mmap_pages, mmap_flush, max_size, control,
      branch_filter, user_regs, intr_regs;
  bool g = false, branch_any = false, dry_run = false, no_buildid_cache = false;
  std::optional<capture::CallGraphOptions> config_call_graph;  // -g's mode from the configuration
  int compression = 0;
  int verbose = 0;
  std::vector<std::string> workload;
  // --filter and --exclude-perf apply to the event given just before them.
  std::vector<std::string> filters;
  int exclude_perf = 0;
  const CLI::Option *filter_opt = nullptr, *exclude_perf_opt = nullptr, *event_opt = nullptr,
                    *cgroup_opt = nullptr;
  std::vector<std::string> cgroups;  // -G, each a list
  std::string uid;                   // -u/--uid: the user's processes, as -p
  std::optional<std::string> synth;  // --synth, checked after parsing as perf does
  std::optional<std::string> switch_output;
  std::vector<std::string> switch_output_events;
  std::optional<std::string> threads;  // --threads[=spec]
  int realtime = 0;                    // --realtime: SCHED_FIFO priority of the recorder
  bool timestamp_filename = false;     // --timestamp-filename
  std::optional<std::string> debuginfod;
  // Accepted without an effect on what is recorded: perfkit reads the
  // buffers on one thread, writes synchronously and synthesizes without a
  // timeout (--affinity, --aio, --proc-map-timeout, --num-thread-synthesize,
  // --timestamp-boundary: the first and last sample times are always kept).
  std::string affinity;
  std::optional<int> aio;
  int accepted_int = 0;
  bool accepted = false;
};

void add_options(CLI::App& app, Args& a, capture::RecordOptions& o) {
  app.add_option("-e,--event", a.events,
                 "event selector. use 'perfkit list' to list available events")
      ->take_all();
  app.add_option("-p,--pid", a.pids, "record events on existing process id");
  app.add_option("-u,--uid", a.uid, "Record events in threads owned by uid. Name or number.");
  app.add_option("-t,--tid", a.tids, "record events on existing thread id");
  app.add_flag("-a,--all-cpus", o.target.system_wide, "system-wide collection from all CPUs");
  app.add_option("-C,--cpu", o.target.cpu_list, "list of cpus to monitor");
  app.add_flag("--per-thread", o.target.per_thread, "use per-thread mmaps");
  app.add_option("-c,--count", o.user_period, "event period to sample");
  app.add_option("-F,--freq", a.freq, "profile at this frequency (or 'max')");
  app.add_flag("--strict-freq", o.strict_freq, "Fail if the specified frequency can't be used");
  app.add_flag("-g", a.g, "enables call-graph recording");
  app.add_option("--call-graph", a.call_graph,
                 "setup and enables call-graph (stack chain/backtrace): fp, dwarf[,size], lbr");
  app.add_flag("-i,--no-inherit", o.no_inherit, "child tasks do not inherit counters");
  app.add_flag("-n,--no-samples", o.no_samples, "don't sample");
  app.add_flag("-d,--data", o.sample_address, "Record the sample addresses");
  app.add_flag("-T,--timestamp", o.sample_time_set, "Record the sample timestamps");
  app.add_flag("-P,--period", o.period_set, "Record the sample period");
  app.add_flag("-R,--raw-samples", o.raw_samples,
               "collect raw sample records from all opened counters");
  app.add_flag("-s,--stat", o.inherit_stat, "per thread counts");
  app.add_flag("-W,--weight", o.sample_weight, "sample by weight (on special events only)");
  app.add_flag("--sample-cpu", o.sample_cpu, "Record the sample cpu");
  app.add_flag("--sample-identifier", o.sample_identifier, "Record the sample identifier");
  app.add_flag("--phys-data", o.phys_data, "Record the sample physical addresses");
  app.add_flag("--data-page-size", o.data_page_size,
               "Record the sampled data address data page size");
  app.add_flag("--code-page-size", o.code_page_size,
               "Record the sampled code address (ip) page size");
  app.add_flag("--transaction", o.transaction, "sample transaction flags (special events only)");
  app.add_flag("--running-time", o.running_time, "Record running/enabled time of read (:S) events");
  app.add_flag("-b,--branch-any", a.branch_any, "sample any taken branches");
  app.add_option("-j,--branch-filter", a.branch_filter, "branch stack filter modes");
  app.add_option("--user-regs", a.user_regs, "sample selected machine registers in user space");
  app.add_option("-I,--intr-regs", a.intr_regs,
                 "sample selected machine registers on interrupt (-I alone: all of them)");
  app.add_flag("--switch-events", o.switch_events, "Record context switch events");
  app.add_flag("--namespaces", o.namespaces, "Record namespaces events");
  app.add_flag("--all-cgroups", o.all_cgroups, "Record cgroup events");
  app.add_option("--switch-output", a.switch_output,
                 "Switch output when receiving SIGUSR2 (signal) or cross a size or time threshold "
                 "(--switch-output[=signal|size[BKMG]|time[smhd]])");
  app.add_option("--switch-output-event", a.switch_output_events,
                 "switch output event selector. use 'perf list' to list available events");
  app.add_option("--switch-max-files", o.switch_output.max_files,
                 "Limit number of switch output generated files");
  app.add_flag("--overwrite", o.overwrite, "use overwrite mode");
  app.add_option("--threads", a.threads,
                 "write collected trace data into several data files using parallel threads "
                 "(--threads[=cpu|core|package|numa|CPUS/AFFINITY:...])");
  app.add_flag("--tail-synthesize", o.tail_synthesize,
               "synthesize non-sample events at the end of output");
  app.add_option("--synth", a.synth,
                 "Fine-tune event synthesis: default=all (no, all, task, mmap, cgroup)");
  app.add_flag("--all-user", o.all_user, "Configure all used events to run in user space.");
  app.add_flag("--all-kernel", o.all_kernel, "Configure all used events to run in kernel space.");
  app.add_flag("--kernel-callchains", o.kernel_callchains, "collect kernel callchains");
  app.add_flag("--user-callchains", o.user_callchains, "collect user callchains");
  app.add_flag("--no-bpf-event", o.no_bpf_event, "do not record bpf events");
  app.add_flag("--no-buffering", o.no_buffering, "collect data without buffering");
  app.add_flag("--group", o.group, "put the counters into a counter group");
  app.add_option("-k,--clockid", a.clockid, "clockid to use for events, see clock_gettime()");
  app.add_option("-D,--delay", o.initial_delay_ms,
                 "ms to wait before starting measurement after program start");
  app.add_option("-m,--mmap-pages", a.mmap_pages, "number of mmap data pages");
  app.add_option("--mmap-flush", a.mmap_flush,
                 "Minimal number of bytes that is extracted from mmap data pages (default: 1)");
  app.add_option("-z,--compression-level", a.compression,
                 "Compress records using specified level (default: 1 - fastest compression, 22 - "
                 "greatest compression); also -z, -zN");
  app.add_option("-o,--output", o.output, "output file name");
  app.add_flag("-B,--no-buildid", o.no_buildid, "do not collect buildids in perf.data");
  app.add_option("--vmlinux", o.vmlinux, "vmlinux pathname");
  app.add_flag("-N,--no-buildid-cache", a.no_buildid_cache, "do not update the buildid cache");
  app.add_flag("--buildid-all", o.buildid_all, "Record build-id of all DSOs regardless of hits");
  app.add_flag("--buildid-mmap", o.buildid_mmap, "Record build-id in map events");
  app.add_option("--max-size", a.max_size, "Limit the maximum size of the output file");
  app.add_option("--duration", o.duration_s, "stop after this many seconds (perfkit)");
  app.add_option("--control", a.control,
                 "Listen on ctl-fd descriptor for command to control measurement ('enable', "
                 "'disable', 'stop'): fd:ctl-fd[,ack-fd] or fifo:ctl-fifo[,ack-fifo]");
  a.filter_opt = app.add_option("--filter", a.filters,
                                "tracepoint filter of the event given just before it (-e)");
  a.exclude_perf_opt = app.add_flag("--exclude-perf", a.exclude_perf,
                                    "don't record events issued by perf itself (the tracepoint "
                                    "before it)");
  a.event_opt = app.get_option("--event");
  a.cgroup_opt = app.add_option("-G,--cgroup", a.cgroups, "monitor event in cgroup name only")
                     ->allow_extra_args(false);
  app.add_flag("--dry-run", a.dry_run, "Parse options then exit");
  app.add_option("-r,--realtime", a.realtime, "collect data with this RT SCHED_FIFO priority");
  app.add_flag("--timestamp-filename", a.timestamp_filename, "append timestamp to output filename");
  app.add_flag("--timestamp-boundary", a.accepted,
               "Record timestamp boundary (time of first/last samples)");
  app.add_option("--affinity", a.affinity,
                 "Set affinity mask of trace reading thread to NUMA node cpu mask or cpu of "
                 "processed mmap buffer");
  app.add_option("--aio", a.aio, "Use <n> control blocks in asynchronous trace writing mode")
      ->expected(0, 1);
  app.add_option("--proc-map-timeout", a.accepted_int,
                 "per thread proc mmap processing timeout in ms");
  app.add_option("--num-thread-synthesize", a.accepted_int,
                 "number of threads to run for event synthesis");
  app.add_option("--debuginfod", a.debuginfod,
                 "Enable debuginfod data retrieval from DEBUGINFOD_URLS or specified urls")
      ->expected(0, 1);
  app.add_flag("-q,--quiet", o.quiet, "don't print any warnings or messages");
  app.add_flag("-v,--verbose", a.verbose, "be more verbose (show counter open errors, etc)");
}

// -u USER: the processes of the user when recording starts, as -p takes
// them; perf's warnings where -p/-t or -a override it or it overrides -a.
Expected<std::string> user_pids(const Args& a, capture::RecordOptions& o) {
  if (!a.pids.empty() || !a.tids.empty()) {
    fmt::print(stderr, "Warning:\nPID/TID switch overriding UID\n");
    return a.pids;
  }
  PK_ASSIGN(uid_t uid, capture::parse_user(a.uid));
  if (o.target.system_wide) {
    fmt::print(stderr, "Warning:\nUID switch overriding SYSTEM\n");
    o.target.system_wide = false;
  }
  const auto pids = capture::processes_of_uid(capture::SystemPaths{}, uid);
  if (pids.empty()) return make_error("user {} (uid {}) has no process to record", a.uid, uid);
  std::string list;
  for (pid_t pid : pids) list += (list.empty() ? "" : ",") + std::to_string(pid);
  return list;
}

// Turns the parsed strings into RecordOptions. Errors name the option.
Status finish_options(Args& a, capture::RecordOptions& o) {
  o.sample_time = true;
  // perf caches the hit DSOs after recording, unless -N (record.build-id
  // no-cache) or -B: in buildid.dir, $PERF_BUILDID_DIR or ~/.debug.
  if (!a.no_buildid_cache && !o.no_buildid)
    o.buildid_cache_dir = symbol::symbolizer_options_from_env().buildid_dir;
  std::string pids = a.pids;
  if (!a.uid.empty()) {
    PK_ASSIGN(pids, user_pids(a, o));
  }
  if (!pids.empty()) {
    PK_ASSIGN(o.target.pids, parse_pids(pids, "pid"));
  }
  if (!a.tids.empty()) {
    PK_ASSIGN(o.target.tids, parse_pids(a.tids, "tid"));
  }
  if (a.freq == "max") {
    o.freq_max = true;
  } else if (!a.freq.empty()) {
    std::uint64_t f = 0;
    if (!parse_u64(a.freq, f, 10)) return make_error("invalid -F/--freq '{}'", a.freq);
    o.user_freq = f;
  }
  if (a.g)
    o.call_graph =
        a.config_call_graph.value_or(capture::CallGraphOptions{capture::CallGraphMode::kFp});
  if (!a.call_graph.empty()) {
    PK_ASSIGN(o.call_graph, capture::parse_call_graph(a.call_graph));
  }
  if (!a.clockid.empty()) {
    PK_ASSIGN(o.clockid, capture::parse_clockid(a.clockid));
  }
  if (!a.mmap_pages.empty()) {
    std::string data = a.mmap_pages.substr(0, a.mmap_pages.find(','));
    PK_ASSIGN(o.mmap_pages,
              capture::parse_mmap_pages(data, static_cast<std::size_t>(sysconf(_SC_PAGESIZE))));
  }
  if (!a.mmap_flush.empty()) {
    PK_ASSIGN(o.mmap_flush, capture::parse_size(a.mmap_flush));
  }
  if (!a.max_size.empty()) {
    PK_ASSIGN(o.max_size, capture::parse_size(a.max_size));
  }
  if (!a.control.empty()) {
    PK_ASSIGN(o.control, capture::parse_control(a.control));
  }
  if (a.branch_any) o.branch_stack = abi::kBranchAny;
  if (!a.branch_filter.empty()) {
    PK_ASSIGN(o.branch_stack, capture::parse_branch_filter(a.branch_filter));
  }
  o.compression_level = a.compression;
  if (o.compression_level < 0 || o.compression_level > 22)
    return make_error("-z: compression level {} out of range (1..22)", o.compression_level);
  o.verbose = a.verbose;
  o.workload = a.workload;
  if (o.target.none() && o.workload.empty())
    return make_error("no command to run and no target (-p, -t, -a or -C) given");
  if (o.duration_s < 0) return make_error("--duration must be positive");
  return ok();
}

}  // namespace

// perf's --filter and --exclude-perf: each applies to the events of the -e
// given just before it (a glob's every tracepoint), joined to a filter set
// before with &&. Without an -e before them, or on an event that is not a
// tracepoint (perf takes those as address filters of HW tracers, which this
// build has not), perf's words and status 129. `ends`: the event count after
// each -e.
int attach_filters(const CLI::App& app, const Args& a, const std::vector<std::size_t>& ends,
                   capture::EventList& events) {
  std::size_t seen_e = 0, next_filter = 0;
  for (const CLI::Option* opt : app.parse_order()) {
    if (opt == a.event_opt) ++seen_e;
    const bool filter = opt == a.filter_opt;
    if (!filter && opt != a.exclude_perf_opt) continue;
    const std::string text = filter && next_filter < a.filters.size()
                                 ? a.filters[next_filter++]
                                 : fmt::format("common_pid != {}", ::getpid());
    const std::size_t begin = seen_e >= 2 ? ends[seen_e - 2] : 0;
    const std::size_t end = seen_e ? ends[seen_e - 1] : 0;
    const char* refusal = nullptr;
    if (begin == end)
      refusal = filter ? "--filter option should follow a -e tracepoint or HW tracer option"
                       : "--exclude-perf option should follow a -e tracepoint option";
    for (std::size_t i = begin; i < end && !refusal; ++i)
      if (events.events[i].attr.type != abi::kTypeTracepoint)
        refusal = filter ? "This CPU does not support address filtering"
                         : "--exclude-perf option should follow a -e tracepoint option";
    if (refusal) {
      fmt::print(stderr,
                 "{}\n\n Usage: perfkit record [<options>] [<command>]\n"
                 "    or: perfkit record [<options>] -- <command> [<options>]\n",
                 refusal);
      return 129;
    }
    for (std::size_t i = begin; i < end; ++i) {
      std::string& f = events.events[i].filter;
      f = f.empty() ? text : fmt::format("({}) && ({})", f, text);
    }
  }
  return 0;
}

// perf's -G (parse_cgroups): each name goes to the event of its place
// among those given before it (one name to all of them), opened as it is
// read; only with -a. perf's words and status 129 otherwise.
int attach_cgroups(const CLI::App& app, const Args& a, const capture::RecordOptions& o,
                   const std::vector<std::size_t>& ends, capture::EventList& events) {
  auto refuse = [](const std::string& msg) {
    if (!msg.empty()) fmt::print(stderr, "{}\n", msg);
    fmt::print(stderr,
               "\n Usage: perfkit record [<options>] [<command>]\n"
               "    or: perfkit record [<options>] -- <command> [<options>]\n\n"
               "    -G, --cgroup <name>   monitor event in cgroup name only\n");
    return kUsageExit;
  };
  std::size_t seen_e = 0, next = 0, nr = 0;
  capture::CgroupSet cgroups{capture::SystemPaths{}};
  for (const CLI::Option* opt : app.parse_order()) {
    if (opt == a.event_opt) ++seen_e;
    if (opt != a.cgroup_opt || next >= a.cgroups.size()) continue;
    const std::string& text = a.cgroups[next++];
    if (seen_e == 0) return refuse("must define events before cgroups");
    const std::size_t defined = ends[seen_e - 1];
    for (const std::string& name : capture::split_cgroup_list(text)) {
      if (nr >= defined) return refuse("");  // no event of its place: perf's usage alone
      if (!name.empty()) {
        auto c = cgroups.open(name);
        if (!c) return refuse(c.error().message());
        events.events[nr].cgroup = *c;
      }
      ++nr;
    }
    if (nr == 1)
      for (std::size_t i = 1; i < defined; ++i) events.events[i].cgroup = events.events[0].cgroup;
  }
  if (nr && !o.target.system_wide) {
    fmt::print(stderr, "  Error: cgroup monitoring only available in system-wide mode\n\n{}",
               app.help());
    return kUsageExit;
  }
  return 0;
}

int cmd_record(int argc, char** argv) {
  CLI::App app(
      "Run a command and record its profile into perf.data, as 'perf record' does.\n\n"
      " usage: perfkit record [<options>] [<command>]\n"
      "    or: perfkit record [<options>] -- <command> [<options>]",
      "record");
  app.prefix_command();
  Args a;
  capture::RecordOptions o;
  // perf's configuration first: -g's mode, record.build-id.
  const RecordConfig rc = record_config(read_config(false));
  a.config_call_graph = rc.call_graph;
  if (rc.build_id == "no-cache") {
    a.no_buildid_cache = true;
  } else if (rc.build_id == "skip") {
    o.no_buildid = true;
  } else if (rc.build_id == "mmap") {
    o.buildid_mmap = true;
  } else if (!rc.build_id.empty() && rc.build_id != "cache") {
    fmt::print(stderr,
               "Error in the given config file: wrong config key-value pair record.build-id={}\n",
               rc.build_id);
    return 255;
  }
  add_options(app, a, o);
  auto args = normalize_args(argc, argv);
  std::vector<char*> cargs;
  for (auto& s : args) cargs.push_back(s.data());
  // The registers and their optional values are parsed after CLI11 saw them.
  bool user_regs_given = false, intr_regs_given = false;
  for (const auto& s : args) {
    if (s.starts_with("--user-regs")) user_regs_given = true;
    if (s.starts_with("--intr-regs")) intr_regs_given = true;
    if (s == "--") break;
  }
  int code = 0;
  if (!parse_options(app, static_cast<int>(cargs.size()), cargs.data(), code)) return code;
  a.workload = app.remaining();
  if (!a.workload.empty() && a.workload.front() == "--") a.workload.erase(a.workload.begin());
  if (a.user_regs == "?" || a.intr_regs == "?") {
    fmt::print("available registers:");
    for (unsigned i = 0; !capture::reg_name(i).empty(); ++i)
      fmt::print(" {}", capture::reg_name(i));
    fmt::print("\n");
    return 0;
  }
  if (user_regs_given) {
    auto m = capture::parse_regs(a.user_regs, false);
    if (!m) return fail("record", m.error());
    o.user_regs = *m;
  }
  if (intr_regs_given) {
    auto m = capture::parse_regs(a.intr_regs, true);
    if (!m) return fail("record", m.error());
    o.intr_regs = *m;
  }
  // perf's --switch-output-event means --switch-output=signal, whatever
  // --switch-output says: its events' side-band thread signals the switch.
  if (!a.switch_output_events.empty()) {
    o.switch_output.signal = true;
    if (o.output == "-")
      return fail("record", make_error("--switch-output-event writes files: it cannot be used "
                                       "with -o - (a pipe)"));
  } else if (a.switch_output) {
    const int keep = o.switch_output.max_files;
    auto so = capture::parse_switch_output(*a.switch_output);
    if (!so) {
      fmt::print(stderr,
                 "\n Usage: perfkit record [<options>] [<command>]\n"
                 "    or: perfkit record [<options>] -- <command> [<options>]\n\n"
                 "        --switch-output[=<signal or size[BKMG] or time[smhd]>]\n"
                 "                          Switch output when receiving SIGUSR2 (signal) or "
                 "cross a size or time threshold\n");
      return 234;  // perf's -EINVAL
    }
    o.switch_output = *so;
    o.switch_output.max_files = keep;
    if (o.output == "-")
      return fail("record", make_error("--switch-output writes files: it cannot be used with "
                                       "-o - (a pipe)"));
  }
  if (a.synth) {
    auto synth = capture::parse_synth(*a.synth);
    if (!synth) {
      fmt::print(stderr,
                 "{}\n\n Usage: perfkit record [<options>] [<command>]\n"
                 "    or: perfkit record [<options>] -- <command> [<options>]\n",
                 synth.error().message());
      return 129;
    }
    o.synth = *synth;
  }
  if (o.overwrite) o.tail_synthesize = true;  // what exists at the end, as perf
  if (a.threads) {
    o.threads = *a.threads;
    if (o.switch_output.enabled()) {
      fmt::print(stderr,
                 "WARNING: --switch-output option is not available in parallel streaming mode.\n");
      o.switch_output = {};
    }
  }
  if (!o.vmlinux.empty() && ::access(o.vmlinux.c_str(), R_OK) != 0) {
    if (!o.quiet) fmt::print(stderr, "Invalid file: {}\n", o.vmlinux);
    return 234;  // perf's -EINVAL (said only without -q)
  }
  if (auto st = finish_options(a, o); !st) return fail("record", st.error());

  capture::SystemPaths paths;
  auto pmus = capture::PmuCatalog::load(paths);
  auto tracefs = capture::Tracefs::locate(paths);
  capture::EventSources sources{&pmus, tracefs ? &*tracefs : nullptr};
  capture::EventList events;
  std::vector<std::size_t> ends;  // events.size() after each -e
  for (const auto& e : a.events) {
    if (auto st = capture::parse_events(e, sources, events); !st) return fail("record", st.error());
    ends.push_back(events.size());
  }
  capture::EventList trigger_events;
  for (const auto& e : a.switch_output_events)
    if (auto st = capture::parse_events(e, sources, trigger_events); !st)
      return fail("record", st.error());
  if (int code = attach_filters(app, a, ends, events); code != 0) return code;
  if (int code = attach_cgroups(app, a, o, ends, events); code != 0) return code;
  if (a.dry_run) return 0;

  // The CMDLINE feature: argv as given ("perfkit" becomes this binary's path).
  o.cmdline.assign(argv, argv + argc);
  o.cmdline.insert(o.cmdline.begin(), "perfkit");
  if (a.debuginfod && !a.debuginfod->empty()) setenv("DEBUGINFOD_URLS", a.debuginfod->c_str(), 1);
  // perf's recorder runs at the priority asked; its workload does not
  // (reset on fork).
  if (a.realtime) {
    sched_param param{};
    param.sched_priority = a.realtime;
    if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) != 0) {
      fmt::print(stderr, "Could not set realtime priority.\n");
      return 255;
    }
  }
  install_signals();
  recorder::RecordHooks hooks;
  hooks.stop_fd = g_signal_pipe[0];
  std::unique_ptr<capture::EventTrigger> trigger;
  if (o.switch_output.signal) {
    install_switch_signal();
    hooks.switch_fd = g_switch_pipe[0];
    if (!trigger_events.empty()) {
      auto t = capture::EventTrigger::start(trigger_events, paths, g_switch_pipe[1]);
      if (!t) return fail("record", t.error().with_context("--switch-output-event"));
      trigger = std::move(*t);
    }
  }
  hooks.version = std::string("perfkit ") + PERFKIT_VERSION;
  hooks.message = [](const std::string& m) { fmt::print(stderr, "{}\n", m); };
  auto summary = recorder::run_record(events, o, paths, hooks);
  trigger.reset();  // no switch after the last file
  if (!summary) return fail("record", summary.error());
  std::string dumped = summary->dumped;  // --switch-output's last file
  if (!dumped.empty()) summary->output = o.output + ".<timestamp>";
  if (dumped.empty() && a.timestamp_filename && o.output != "-" && !summary->write_error) {
    // perf renames the file with the time it ends ("%Y%m%d%H%M%S" and the
    // hundredths) and names it "<timestamp>" in its last line
    dumped = o.output + "." + recorder::timestamp_suffix();
    if (::rename(o.output.c_str(), dumped.c_str()) != 0)
      return fail("record",
                  make_error("cannot rename {} to {}: {}", o.output, dumped, std::strerror(errno)));
    summary->output = o.output + ".<timestamp>";
  }
  if (!o.quiet) {
    auto lines = recorder::closing_lines(*summary);
    if (!dumped.empty())
      lines.insert(lines.begin() + 1, fmt::format("[ perfkit record: Dump {} ]", dumped));
    for (const auto& line : lines) fmt::print(stderr, "{}\n", line);
  }
  if (summary->write_error) {
    if (summary->salvaged)
      fmt::print(stderr,
                 "perfkit record: writing {} failed: {}; the {:.3f} MB recorded before it are kept "
                 "and readable\n",
                 o.output, summary->write_error->message(),
                 static_cast<double>(summary->salvaged_data_bytes) / 1024.0 / 1024.0);
    else
      fmt::print(stderr, "perfkit record: writing {} failed: {}\n", o.output,
                 summary->write_error->message());
    return 1;
  }
  if (summary->stats.lost + summary->stats.lost_samples && !o.quiet)
    fmt::print(stderr, "Warning: {} events were lost; try a larger -m or a lower -F\n",
               summary->stats.lost + summary->stats.lost_samples);
  // perf leaves with the signal that stopped it or its workload.
  int sig = received_signal();
  const auto& ws = summary->workload_status;
  const bool we_stopped_it = summary->stop_reason == capture::StopReason::kDuration ||
                             summary->stop_reason == capture::StopReason::kSizeLimit ||
                             summary->stop_reason == capture::StopReason::kControl;
  if (!sig && !we_stopped_it && ws && WIFSIGNALED(*ws)) sig = WTERMSIG(*ws);
  if (sig) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
  return ws && WIFEXITED(*ws) ? WEXITSTATUS(*ws) : 0;
}

}  // namespace perfkit::cli
