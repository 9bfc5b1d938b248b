// perfkit report: perf report --stdio's histograms, call graphs and header
// comments from a perf.data file or stream, many times faster.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>

#include "analysis/dump.h"
#include "analysis/inject_itrace.h"
#include "analysis/itrace_dump.h"
#include "analysis/report.h"
#include "analysis/report_dump.h"
#include "analysis/session.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/stdin_peek.h"

#if __has_include("analysis/header_print.h")
#include "analysis/header_print.h"
#define PERFKIT_HAVE_HEADER_PRINT 1
#endif

namespace perfkit::cli {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    std::size_t comma = s.find(',', at);
    if (comma == std::string::npos) comma = s.size();
    if (comma > at) out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

template <class T>
bool parse_int_list(const std::string& s, std::vector<T>& out) {
  for (const auto& part : split_list(s)) {
    std::size_t dash = part.find('-');
    long a = 0, b = 0;
    auto p = part.substr(0, dash);
    if (std::from_chars(p.data(), p.data() + p.size(), a).ec != std::errc()) return false;
    b = a;
    if (dash != std::string::npos) {
      auto q = part.substr(dash + 1);
      if (std::from_chars(q.data(), q.data() + q.size(), b).ec != std::errc()) return false;
    }
    for (long v = a; v <= b; ++v) out.push_back(static_cast<T>(v));
  }
  return true;
}

// perf's pager: $PAGER (or less -FRSX) when stdout is a terminal.
pid_t start_pager() {
  if (!isatty(STDOUT_FILENO)) return -1;
  const char* pager = std::getenv("PERF_PAGER");
  if (!pager) pager = std::getenv("PAGER");
  if (!pager || !*pager) pager = "less";
  if (std::string_view(pager) == "cat") return -1;
  int fds[2];
  if (pipe(fds) < 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    close(fds[1]);
    setenv("LESS", "FRSX", 0);
    execlp("sh", "sh", "-c", pager, static_cast<char*>(nullptr));
    _exit(127);
  }
  dup2(fds[1], STDOUT_FILENO);
  close(fds[0]);
  close(fds[1]);
  return pid;
}

void wait_pager(pid_t pid) {
  if (pid < 0) return;
  fflush(stdout);
  close(STDOUT_FILENO);
  int st;
  waitpid(pid, &st, 0);
}

}  // namespace

int cmd_report(int argc, char** argv) {
  CLI::App app("Show perf.data histograms and call graphs, as 'perf report --stdio' does.",
               "report");
  std::string input;
  std::string sort, fields, callgraph, percentage = "absolute", time_str;
  std::string comms, dsos, symbols, pids, tids, cpus, time_quantum, parent;
  bool children = false, no_children = false, inverted = false, stats = false;
  bool header = false, header_only = false, no_demangle = false, demangle_kernel = false;
  bool stdio = false, force = false, quiet_progress = false, show_info = false;
  int verbose = 0;
  analysis::ReportOptions opts;
  std::string symfs, vmlinux, kallsyms;
  app.add_option("-i,--input", input, "Input file name ('-' for stdin)");
  app.add_flag("--stdio", stdio, "Use the stdio interface (the only one)");
  app.add_option("-s,--sort", sort,
                 "Sort by key(s): comm, pid, tid, dso, sym, symoff, cpu, socket, parent, "
                 "srcline, srcfile, time, period; with branch stacks dso_from, dso_to, "
                 "symbol_from, symbol_to, cycles");
  app.add_option("-F,--fields", fields, "Output fields: overhead, sample, period and sort keys");
  app.add_flag("--children", children, "Accumulate callchains of children into parent entries");
  app.add_flag("--no-children", no_children, "Do not accumulate callchains of children");
  app.add_option("-g,--call-graph", callgraph,
                 "Call graph: graph|flat|fractal|folded|none,min_percent[,limit],caller|callee")
      ->expected(0, 1);
  app.add_flag("-G,--inverted", inverted, "Alias for the 'caller' call-graph order");
  app.add_option("--max-stack", opts.max_stack, "Callchain frames to use at most");
  app.add_option("--percent-limit", opts.percent_limit, "Hide entries below this percentage");
  app.add_option("--percentage", percentage, "relative or absolute percentages with filters");
  app.add_option("-c,--comms,--comm", comms, "Only these comms (comma separated)");
  app.add_option("-d,--dsos,--dso", dsos, "Only these dsos (comma separated)");
  app.add_option("-S,--symbols", symbols, "Only these symbols (comma separated)");
  app.add_option("--pid", pids, "Only these process ids");
  app.add_option("--tid", tids, "Only these thread ids");
  app.add_option("-C,--cpu", cpus, "Only these CPUs (list or ranges)");
  app.add_option("--time", time_str,
                 "Time range start,stop in seconds, or percent ranges (10%/2, 0%-10%,30%-40%)");
  app.add_option("--time-quantum", time_quantum,
                 "Bins of the 'time' sort key (s, ms, us, ns; default 100ms)");
  app.add_option("-p,--parent", parent,
                 "Parent regex for the 'parent' sort key (added to the keys; default "
                 "'^sys_|^do_page_fault')");
  app.add_flag("-n,--show-nr-samples", opts.show_nr_samples, "Show a Samples column");
  app.add_flag("--show-total-period", opts.show_period, "Show a Period column");
  app.add_flag("--show-cpu-utilization", opts.show_cpu_utilization,
               "Show sys and usr columns: the period in kernel and in user mode");
  app.add_flag("--stats", stats, "Only print the number of records of each type");
  bool dump_raw = false;
  app.add_flag("-D,--dump-raw-trace", dump_raw, "Dump raw trace in ASCII");
  app.add_flag("--header", header, "Show the perf.data header first");
  app.add_flag("--header-only", header_only, "Only show the perf.data header");
  app.add_flag("-I,--show-info", show_info, "Show extra header information (topologies)");
  app.add_option("--symfs", symfs, "Look for files under this directory");
  app.add_option("-k,--vmlinux", vmlinux, "vmlinux file for kernel symbols");
  app.add_option("--kallsyms", kallsyms, "kallsyms file for kernel symbols");
  app.add_flag("--no-demangle", no_demangle, "Do not demangle C++ symbol names");
  bool inline_flag = false, no_inline = false;
  app.add_flag("--inline", inline_flag, "Show inline functions in call chains (the default)");
  app.add_flag("--no-inline", no_inline, "Do not show inline functions");
  app.add_flag("--demangle-kernel", demangle_kernel, "Demangle kernel symbol names");
  bool group = false, no_group = false;
  app.add_flag("--group", group, "Show event group members side by side");
  app.add_flag("--no-group", no_group, "Show each event of a group on its own");
  bool branch_stack = false, no_branch_stack = false;
  app.add_flag("-b,--branch-stack", branch_stack,
               "Report per branch of the sampled branch stacks (the default when samples "
               "carry them)");
  app.add_flag("--no-branch-stack", no_branch_stack, "Report sampled IPs, not branches");
  app.add_flag("-f,--force", force, "Do not complain, do it");
  app.add_flag("-q,--quiet", quiet_progress, "No progress bar or warnings");
  app.add_flag("-v,--verbose", verbose, "More messages");
  std::vector<std::string> itrace;  // each --itrace given, parsed on top of the ones before
  bool no_itrace = false;
  auto* itrace_opt = app.add_option("--itrace", itrace,
                                    "Intel PT: what to synthesize (perf's --itrace grammar; "
                                    "default i100usgxwpe)")
                         ->expected(0, 1)
                         ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--no-itrace", no_itrace, "Do not decode instruction trace data");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;

  if (input.empty())
    input = (!isatty(STDIN_FILENO) && lseek(STDIN_FILENO, 0, SEEK_CUR) < 0) ? "-" : "perf.data";
  // Intel PT: the trace decoded into a temporary file of synthesized samples,
  // which the report then reads (removed on return).
  struct RemoveOnExit {
    std::string path;
    ~RemoveOnExit() {
      if (!path.empty()) ::unlink(path.c_str());
    }
  } itrace_file;
  StdinPeek peek;
  const std::string input_name = input;  // as perf names it in messages
  if (input == "-" && !no_itrace) {
    auto st = peek_stdin_for_intel_pt(peek);
    if (!st) return fail("report", st.error());
    if (!peek.spooled.empty()) input = peek.spooled;
  }
  // perf's --stats counts the records as they are: nothing is decoded.
  if (!no_itrace && !stats && !dump_raw) {
    intelpt::ItraceOptions it = analysis::report_itrace_defaults();
    if (itrace_opt->count() > 0) {
      it = {};
      for (const auto& one : itrace) {
        auto ps = intelpt::parse_itrace(one, false, it);
        if (!ps) return fail("report", ps.error());
      }
    }
    // perf counts the samples as having call chains when its itrace options
    // ask for them, or are its defaults for a recorded (not piped) trace.
    const bool chains_asked = itrace_opt->count() > 0 && (it.callchain || it.add_callchain);
    // perf registers its call-chain parameters for the synthesized chains,
    // which -g none refuses: the samples then get none (g and G dropped).
    if (app.count("-g")) {
      analysis::ReportOptions probe;
      auto st = analysis::parse_callchain_arg(callgraph.empty() ? "graph" : callgraph, probe);
      if (st && probe.chain_mode == analysis::ChainMode::kNone)
        it.callchain = it.add_callchain = false;
    }
    // The decode prints nothing on stdout: a bar on a terminal stderr
    // unless -q, wiped before warnings.
    ProgressBar bar("Processing Intel PT trace...");
    std::function<void(std::uint64_t, std::uint64_t)> progress;
    if (stderr_progress_wanted(quiet_progress, false))
      progress = [&bar](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
    auto f = analysis::itrace_report_file(
        input, it,
        [quiet_progress, &bar](const std::string& m) {
          bar.clear();
          if (!quiet_progress) fmt::print(stderr, "{}\n", m);
        },
        progress);
    bar.clear();
    if (!f) return fail("report", f.error());
    opts.assume_callchains =
        chains_asked || (itrace_opt->count() == 0 && !f->empty() && peek.spooled.empty());
    if (!f->empty()) input = itrace_file.path = *f;
    opts.itrace_branch_stacks = !f->empty() && it.last_branch;
  }
  if (!sort.empty()) {
    auto keys = analysis::parse_sort_keys(sort);
    if (!keys) return fail("report", keys.error());
    opts.sort = *keys;
    opts.sort_given = true;
    opts.sort_starts_with_sym = fields.empty() && sort.starts_with("sym");
    // perf appends an IPC column to a --sort that names "symbol" anywhere.
    opts.ipc_column = fields.empty() && sort.find("symbol") != std::string::npos;
  }
  if (!fields.empty()) {
    // perf's -F: a list starting with '+' adds to the default columns.
    const bool strict = fields[0] != '+';
    std::string_view list = fields;
    if (!strict) list.remove_prefix(1);
    if (list.empty()) return fail("report", make_error("Invalid --fields key: `+'"));
    auto keys = analysis::parse_sort_keys(list, "fields");
    if (!keys) return fail("report", keys.error());
    opts.fields = *keys;
    opts.fields_given = strict;
    // With -F and no --sort, perf sorts by the fields alone.
    if (strict && sort.empty()) opts.sort.clear();
    opts.parent_refused_without_callchains = sort.find("parent") != std::string::npos;
  }
  if (branch_stack) opts.branch_mode = 1;
  if (no_branch_stack) opts.branch_mode = 0;
  opts.inline_frames = !no_inline;
  if (group) opts.group = 1;
  if (no_group) opts.group = 0;
  if (children) opts.children = 1;
  if (no_children) opts.children = 0;
  // perf settles --children before a stream's attrs arrive: off for a
  // stream, also one copied aside to decode its Intel PT trace.
  if (!peek.spooled.empty() && !children) opts.children = 0;
  if (app.count("-g")) {
    auto st = analysis::parse_callchain_arg(callgraph.empty() ? "graph" : callgraph, opts);
    if (!st) return fail("report", st.error());
  }
  if (inverted) opts.caller_order = true, opts.order_given = true;
  if (app.count("--percent-limit")) opts.chain_min_percent = opts.percent_limit;
  if (percentage == "absolute")
    opts.relative = false;
  else if (percentage == "relative")
    opts.relative = true;
  else
    return fail("report", make_error("--percentage: '{}' is not relative or absolute", percentage));
  opts.comms = split_list(comms);
  opts.dsos = split_list(dsos);
  opts.symbols = split_list(symbols);
  if (!parse_int_list(pids, opts.pids) || !parse_int_list(tids, opts.tids) ||
      !parse_int_list(cpus, opts.cpus))
    return fail("report", make_error("bad --pid, --tid or --cpu list"));
  opts.have_cpus = !cpus.empty();
  opts.time_str = time_str;  // percent ranges need the recording: settled by the builder
  if (!time_quantum.empty()) {
    auto q = analysis::parse_time_quantum(time_quantum);
    if (!q) return fail("report", q.error());
    opts.time_quantum = *q;
  }
  if (!parent.empty()) {
    // perf adds the parent key when -p changes the regex.
    opts.parent_regex = parent;
    opts.parent_refused_without_callchains = true;
    if (std::find(opts.sort.begin(), opts.sort.end(), analysis::SortKey::kParent) ==
        opts.sort.end())
      opts.sort.push_back(analysis::SortKey::kParent);
  }

  // perf's cmd_report refuses a -k or --kallsyms file it cannot read.
  for (const std::string* f : {&vmlinux, &kallsyms})
    if (!f->empty() && access(f->c_str(), R_OK) != 0)
      return fail("report", make_error("Invalid file: {}", *f));

  analysis::SessionOptions so;
  so.stream_prefix = std::move(peek.prefix);
  so.symbols = symbol::symbolizer_options_from_env();
  so.symbols.symfs = symfs;
  so.symbols.vmlinux = vmlinux;
  so.symbols.kallsyms = kallsyms;
  so.symbols.demangle = !no_demangle;
  so.symbols.demangle_kernel = demangle_kernel;
  so.warn = [quiet_progress](const std::string& m) {
    if (!quiet_progress) fmt::print(stderr, "{}\n", m);
  };
  bool tty_err = isatty(STDERR_FILENO) && !quiet_progress;
  if (tty_err) {
    so.progress = [](std::uint64_t done, std::uint64_t total) {
      if (total == 0 || total == UINT64_MAX) return;
      int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
      fmt::print(stderr, "\rProcessing events... {:3d}%", pct);
    };
  }
  auto session = analysis::Session::open(input, so);
  if (!session) return fail("report", session.error());
  auto& s = **session;

  if (header_only || header) {
#ifdef PERFKIT_HAVE_HEADER_PRINT
    analysis::HeaderPrintOptions ho;
    ho.full = show_info;
    ho.warn = so.warn;
    FdWriter hout = FdWriter::stdout_writer();
    auto hs = analysis::print_header_info(s.reader(), ho, hout);
    auto hf = hout.flush();
    if (!hs) return fail("report", hs.error());
    if (!hf) return fail("report", hf.error());
    if (header_only) return 0;
#else
    return fail("report", make_error("--header: the header printer is not built"));
#endif
  }
  if (stats) {
    // perf report --stats: the record counts perf report -D ends with.
    analysis::DumpOptions dopts;
    dopts.report_stats = true;
    FdWriter out = FdWriter::stdout_writer();
    auto st = analysis::run_dump(s.reader(), dopts, out);
    if (!st) return fail("report", st.error().with_context(s.reader().name()));
    return 0;
  }
  if (dump_raw) {
    // perf report -D: every record, with the Intel PT packets of AUXTRACE
    // records, and what resolving each sample found.
    FdWriter out = FdWriter::stdout_writer(1 << 20);
    if (!header)
      out.write(
          "# To display the perf.data header info, please use --header/--header-only "
          "options.\n#\n");
    analysis::RecordPrinterOptions ro;
    ro.auxtrace_dump = analysis::intel_pt_auxtrace_dumper();
    auto st = analysis::run_report_dump(s, ro, out);
    if (!st) return fail("report", st.error().with_context(s.reader().name()));
    return 0;
  }
  pid_t pager = start_pager();
  analysis::ReportBuilder builder(opts);
  auto st = builder.build(s);
  if (tty_err) fmt::print(stderr, "\r{:30}\r", "");
  if (!st) {
    wait_pager(pager);
    return fail("report", st.error().with_context(s.reader().name()));
  }
  FdWriter out = FdWriter::stdout_writer();
  if (!header)
    out.write(
        "# To display the perf.data header info, please use --header/--header-only options.\n#\n");
  if (builder.entries() == 0) {
    // perf's check after collapsing: nothing was added (every sample was
    // outside --time or -C, or there were none); status 0 as in perf.
    auto fl = out.flush();
    wait_pager(pager);
    fmt::print(stderr, "Error:\nThe {} data has no samples!\n", input_name);
    return fl ? 0 : fail("report", fl.error());
  }
  builder.print_elided(out);
  builder.print(s, out);
  auto fl = out.flush();
  wait_pager(pager);
  if (!fl) return fail("report", fl.error());
  return 0;
}

}  // namespace perfkit::cli
