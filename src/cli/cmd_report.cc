// perfkit report: perf report --stdio's histograms, call graphs and header
// comments from a perf.data file or stream, many times faster.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/perfconfig.h"
#include "cli/report_html.h"
#include "cli/stdin_peek.h"
#include "dump/dump.h"
#include "dump/header_print.h"
#include "dump/itrace_dump.h"
#include "dump/session_dump.h"
#include "inject/inject_itrace.h"
#include "inject/itrace_feed.h"
#include "report/report.h"
#include "report/report_callees.h"
#include "report/report_tasks.h"
#include "session/session.h"

namespace perfkit::cli {

namespace {

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

// --stdio-color: "always", "never", or "auto" (perf's default: on a
// terminal, or into the pager, whose terminal is not "dumb"). perf warns of
// another value and takes "auto".
bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  if (mode != "auto") fmt::print(stderr, "bad config value for 'color.ui', ignoring...\n");
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && term && std::string_view(term) != "dumb";
}

void wait_pager(pid_t pid) {
  if (pid < 0) return;
  fflush(stdout);
  close(STDOUT_FILENO);
  int st;
  waitpid(pid, &st, 0);
}

// The options as given, before they are checked and turned into the
// report's, the session's and the decoder's options.
struct Args {
  std::string input, sort, fields, callgraph, percentage = "absolute", time_str;
  std::string comms, dsos, symbols, pids, tids, cpus, time_quantum, parent;
  std::string html;   // --html OUT: the page instead of the text
  SymbolArgs lookup;  // where symbols come from
  bool children = false, no_children = false, inverted = false, stats = false;
  bool header = false, header_only = false;
  bool tasks = false, mmaps = false;
  std::string stdio_color = "auto";
  // accepted for perf's command lines; they change nothing --stdio prints
  std::string percent_type = "global-period", pretty = "normal";
  int samples = 0;
  bool demangle = true;
  std::string objdump, disassembler_style, prefix, prefix_strip;
  bool asm_raw = false, source = true, tui = false, modules = false, ref_call_graph = false;
  bool ignore_vmlinux = false, stitch_lbr = false;
  bool stdio = false, force = false, quiet = false, show_info = false, dump_raw = false;
  bool disable_order = false;  // --disable-order: -D's records in file order
  bool inline_flag = false, no_inline = false, group = false, no_group = false;
  bool branch_stack = false, no_branch_stack = false, no_itrace = false, mem_mode = false,
       branch_history = false, total_cycles = false;
  int verbose = 0;
  std::vector<std::string> itrace;  // each --itrace given, parsed on top of the ones before
  const CLI::Option* itrace_opt = nullptr;
  bool callgraph_given = false, percent_limit_given = false;
  bool use_pager = true;  // pager.report
  unsigned jobs = 0;      // --jobs
};

// What to show: sort keys, columns, call graphs, groups.
void add_view_options(CLI::App& app, Args& a, report::ReportOptions& opts) {
  app.add_flag("--stdio", a.stdio, "Use the stdio interface (the only one)");
  app.add_option("-s,--sort", a.sort,
                 "Sort by key(s): comm, pid, tid, dso, sym, symoff, cpu, socket, parent, "
                 "srcline, srcfile, time, period; with branch stacks dso_from, dso_to, "
                 "symbol_from, symbol_to, cycles");
  app.add_option("-F,--fields", a.fields, "Output fields: overhead, sample, period and sort keys");
  app.add_flag("--hierarchy", opts.hierarchy, "Show entries in a hierarchy");
  app.add_flag("--children", a.children, "Accumulate callchains of children into parent entries");
  app.add_flag("--no-children", a.no_children, "Do not accumulate callchains of children");
  app.add_option("-g,--call-graph", a.callgraph,
                 "Call graph: graph|flat|fractal|folded|none,min_percent[,limit],caller|callee,"
                 "function|address|srcline,percent|period|count")
      ->expected(0, 1);
  app.add_flag("-G,--inverted", a.inverted, "Alias for the 'caller' call-graph order");
  app.add_option("--max-stack", opts.max_stack, "Callchain frames to use at most");
  app.add_option("--percent-limit", opts.percent_limit, "Hide entries below this percentage");
  app.add_option("--percentage", a.percentage, "relative or absolute percentages with filters");
  app.add_flag("--ns", opts.nanosecs, "Show times in nanoseconds");
  app.add_flag("-U,--hide-unresolved", opts.hide_unresolved,
               "Only display entries resolved to a symbol");
  add_event_switch_options(app, opts.evswitch);
  app.add_option("--percent-type", a.percent_type,
                 "Set percent type local/global-period/hits (annotate's; no change to --stdio)");
  app.add_option("--samples", a.samples,
                 "Number of samples to save per histogram entry for individual browsing (the "
                 "TUI's; no change to --stdio)");
  app.add_option("--pretty", a.pretty,
                 "pretty printing style key: normal raw (no change to --stdio)");
  app.add_flag("--demangle", a.demangle, "Demangle symbol names (the default)");
  // annotate's and the TUI's: --stdio prints the same with them, as perf's
  app.add_option("--objdump", a.objdump, "objdump binary to use for disassembly and annotations");
  app.add_flag("--asm-raw", a.asm_raw, "Display raw encoding of assembly instructions (default)");
  app.add_option("-M,--disassembler-style", a.disassembler_style,
                 "Specify disassembler style (e.g. -M intel for intel syntax)");
  app.add_option("--prefix", a.prefix,
                 "Add prefix to source file path names in programs (with --prefix-strip)");
  app.add_option("--prefix-strip", a.prefix_strip,
                 "Strip first N entries of source file path name in programs (with --prefix)");
  app.add_flag("--source,!--no-source", a.source,
               "Interleave source code with assembly code (default)");
  app.add_flag("--tui", a.tui, "Use the TUI interface (this build has none: --stdio)");
  app.add_flag("-m,--modules", a.modules,
               "load module symbols - WARNING: use only with -k and LIVE kernel");
  app.add_flag("--show-ref-call-graph", a.ref_call_graph, "Show callgraph from reference event");
  app.add_flag("--ignore-vmlinux", a.ignore_vmlinux, "don't load vmlinux even if found");
  app.add_flag("--stitch-lbr", a.stitch_lbr, "Enable LBR callgraph stitching approach");
  app.add_option("--stdio-color", a.stdio_color,
                 "'always' (default), 'never' or 'auto' only applicable to --stdio mode");
  app.add_flag("--skip-empty,!--no-skip-empty", opts.skip_empty,
               "Do not display empty (or dummy) events in the output");
  app.add_flag("--full-source-path", opts.full_source_path,
               "Show full source file name path for source lines");
  app.add_flag("--raw-trace", opts.raw_trace,
               "Show raw trace event output (do not use print fmt or plugins)");
  app.add_flag("-T,--threads", opts.show_threads, "Show per-thread event counters");
  app.add_option("--socket-filter", opts.socket_filter,
                 "only show processor socket that match with this filter");
  app.add_option("--symbol-filter", opts.symbol_filter,
                 "Only show symbols that (partially) match with this filter");
  app.add_flag("-x,--exclude-other", opts.exclude_other, "Only display entries with parent-match");
  app.add_option("--ignore-callees", opts.ignore_callees,
                 "Ignore callees of the functions matching this regex in call graphs");
  app.add_option("--time-quantum", a.time_quantum,
                 "Bins of the 'time' sort key (s, ms, us, ns; default 100ms)");
  app.add_option("-p,--parent", a.parent,
                 "Parent regex for the 'parent' sort key (added to the keys; default "
                 "'^sys_|^do_page_fault')");
  app.add_flag("-n,--show-nr-samples", opts.show_nr_samples, "Show a Samples column");
  app.add_option("-t,--field-separator", opts.field_sep,
                 "Separator for columns, no spaces will be added between columns '.' is reserved.");
  app.add_option("-w,--column-widths", opts.column_widths,
                 "don't try to adjust column width, use these fixed values (width[,width...])");
  app.add_flag("--show-total-period", opts.show_period, "Show a Period column");
  app.add_flag("--show-cpu-utilization", opts.show_cpu_utilization,
               "Show sys and usr columns: the period in kernel and in user mode");
  app.add_flag("--inline", a.inline_flag, "Show inline functions in call chains (the default)");
  app.add_flag("--no-inline", a.no_inline, "Do not show inline functions");
  app.add_flag("--group", a.group, "Show event group members side by side");
  app.add_option("--group-sort-idx", opts.group_sort_idx,
                 "Sort the output by the event at the index n in group. If n is invalid, sort by "
                 "the first event. It can support multiple groups with different amount of events. "
                 "WARNING: This should be used on grouped events.");
  app.add_flag("--no-group", a.no_group, "Show each event of a group on its own");
  app.add_flag("-b,--branch-stack", a.branch_stack,
               "Report per branch of the sampled branch stacks (the default when samples "
               "carry them)");
  app.add_flag("--no-branch-stack", a.no_branch_stack, "Report sampled IPs, not branches");
  app.add_flag("--mem-mode", a.mem_mode, "mem access profile");
  app.add_flag("--branch-history", a.branch_history, "add last branch records to call history");
  app.add_flag("--total-cycles", a.total_cycles, "Sort all blocks by 'Sampled Cycles%'");
}

// Which samples count.
void add_filter_options(CLI::App& app, Args& a) {
  app.add_option("-c,--comms,--comm", a.comms, "Only these comms (comma separated)");
  app.add_option("-d,--dsos,--dso", a.dsos, "Only these dsos (comma separated)");
  app.add_option("-S,--symbols", a.symbols, "Only these symbols (comma separated)");
  app.add_option("--pid", a.pids, "Only these process ids");
  app.add_option("--tid", a.tids, "Only these thread ids");
  app.add_option("-C,--cpu", a.cpus, "Only these CPUs (list or ranges)");
  app.add_option("--time", a.time_str,
                 "Time range start,stop in seconds, or percent ranges (10%/2, 0%-10%,30%-40%)");
}

// The input, its symbols, the other modes (header, stats, raw dump), Intel PT.
void add_input_options(CLI::App& app, Args& a) {
  app.add_option("-i,--input", a.input, "Input file name ('-' for stdin)");
  app.add_flag("--stats", a.stats, "Only print the number of records of each type");
  app.add_option("--html", a.html,
                 "Write the profile as one self-contained HTML page (flame graph, trees, "
                 "timeline) to this file");
  app.add_flag("-D,--dump-raw-trace", a.dump_raw, "Dump raw trace in ASCII");
  app.add_flag("--disable-order", a.disable_order, "Disable raw trace ordering");
  add_jobs_option(app, a.jobs);
  app.add_flag("--tasks", a.tasks, "Display recorded tasks");
  app.add_flag("--mmaps", a.mmaps, "Display recorded tasks memory maps");
  app.add_flag("--header", a.header, "Show the perf.data header first");
  app.add_flag("--header-only", a.header_only, "Only show the perf.data header");
  app.add_flag("-I,--show-info", a.show_info, "Show extra header information (topologies)");
  app.add_option("--symfs", a.lookup.symfs, "Look for files under this directory");
  app.add_option("-k,--vmlinux", a.lookup.vmlinux, "vmlinux file for kernel symbols");
  app.add_option("--kallsyms", a.lookup.kallsyms, "kallsyms file for kernel symbols");
  app.add_flag("--no-demangle", a.lookup.no_demangle, "Do not demangle C++ symbol names");
  app.add_flag("--demangle-kernel", a.lookup.demangle_kernel, "Demangle kernel symbol names");
  app.add_flag("-f,--force", a.force, "Do not complain, do it");
  app.add_flag("-q,--quiet", a.quiet, "No progress bar or warnings");
  app.add_flag("-v,--verbose", a.verbose, "More messages");
  a.itrace_opt = app.add_option("--itrace", a.itrace,
                                "Intel PT: what to synthesize (perf's --itrace grammar; "
                                "default i100usgxwpe)")
                     ->expected(0, 1)
                     ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--no-itrace", a.no_itrace, "Do not decode instruction trace data");
}

// Intel PT: what report's decode synthesizes (--itrace, else perf
// report's defaults); perf parses --itrace with the other options.
struct ReportItrace {
  intelpt::ItraceOptions it;
  // perf counts the samples as having call chains when its itrace options
  // ask for them (even where -g none then drops them).
  bool chains_asked = false;
  int max_stack_floor = 0;  // --itrace's g: its chains' size
};

Status itrace_options(const Args& a, ReportItrace& ri) {
  intelpt::ItraceOptions& it = ri.it;
  it = inject::report_itrace_defaults();
  if (a.itrace_opt->count() > 0) {
    it = {};
    for (const auto& one : a.itrace) PK_TRY(intelpt::parse_itrace(one, false, it));
    ri.chains_asked = it.callchain || it.add_callchain;
    // perf raises --max-stack to the synthesized chains' size
    if (it.callchain) ri.max_stack_floor = static_cast<int>(it.callchain_sz);
  }
  // perf registers its call-chain parameters for the synthesized chains,
  // which -g none refuses: the samples then get none (g and G dropped).
  if (a.callgraph_given) {
    report::ReportOptions probe;
    auto st = report::parse_callchain_arg(a.callgraph.empty() ? "graph" : a.callgraph, probe);
    if (st && probe.chain_mode == report::ChainMode::kNone) it.callchain = it.add_callchain = false;
  }
  return ok();
}

// Intel PT: the trace decoded as the report reads the recording, its
// samples among the recorded ones (nothing to do without a trace). perf's
// --stats and -D decode nothing, nor do --tasks and --mmaps.
Status decode_itrace(const Args& a, const ReportItrace& ri, const StdinPeek& peek,
                     session::Session& s, const std::string& input, bool tty_err,
                     report::ReportOptions& opts) {
  if (a.no_itrace || a.stats || a.dump_raw || a.tasks || a.mmaps) return ok();
  inject::ItraceFeedOptions fo;
  fo.itrace = ri.it;
  fo.jobs = jobs_to_use(a.jobs);
  fo.warn = [quiet = a.quiet, tty_err](const std::string& m) {
    if (tty_err) fmt::print(stderr, "\r{:30}\r", "");  // the progress line
    if (!quiet) fmt::print(stderr, "{}\n", m);
  };
  PK_ASSIGN(const bool feed, inject::ItraceFeed::attach(s, input, std::move(fo)));
  // ... or when they are its defaults, for a recorded (not piped) trace.
  const bool given = a.itrace_opt->count() > 0;
  opts.assume_callchains = ri.chains_asked || (!given && feed && peek.spooled.empty());
  opts.itrace_branch_stacks = feed && ri.it.last_branch;
  return ok();
}

// --sort, -F/--fields and -p/--parent into the report's keys and columns.
Status apply_keys(const Args& a, report::ReportOptions& opts) {
  if (!a.sort.empty()) {
    PK_ASSIGN(opts.sort, report::parse_sort_keys(a.sort));
    opts.sort_given = true;
    opts.sort_text = a.sort;
    opts.sort_starts_with_sym = a.fields.empty() && a.sort.starts_with("sym");
    // perf appends an IPC column to a --sort that names "symbol" anywhere.
    opts.ipc_column = a.fields.empty() && a.sort.find("symbol") != std::string::npos;
    if (opts.ipc_column) opts.sort_text += ",ipc_null";  // (perf's string grows too)
  }
  if (!a.fields.empty()) {
    // perf's -F: a list starting with '+' adds to the default columns.
    const bool strict = a.fields[0] != '+';
    std::string_view list = a.fields;
    if (!strict) list.remove_prefix(1);
    if (list.empty()) return make_error("Invalid --fields key: `+'");
    PK_ASSIGN(opts.fields, report::parse_sort_keys(list, "fields"));
    opts.fields_given = strict;
    // With -F and no --sort, perf sorts by the fields alone.
    if (strict && a.sort.empty()) opts.sort.clear();
    opts.parent_refused_without_callchains = a.sort.find("parent") != std::string::npos;
  }
  if (!a.parent.empty()) {
    // perf adds the parent key when -p changes the regex.
    opts.parent_regex = a.parent;
    opts.parent_refused_without_callchains = true;
    if (std::find(opts.sort.begin(), opts.sort.end(), report::SortKey::kParent) == opts.sort.end())
      opts.sort.push_back(report::SortKey::kParent);
  }
  return ok();
}

// Branch, group and children modes, call graphs and percentages.
Status apply_view(const Args& a, const StdinPeek& peek, report::ReportOptions& opts) {
  if (a.branch_stack) opts.branch_mode = 1;
  if (a.no_branch_stack) opts.branch_mode = 0;
  opts.mem_mode = a.mem_mode;
  opts.branch_history = a.branch_history;
  opts.total_cycles = a.total_cycles;
  opts.inline_frames = !a.no_inline;
  if (a.group) opts.group = 1;
  if (a.no_group) opts.group = 0;
  if (a.children) opts.children = 1;
  if (a.no_children) opts.children = 0;
  // perf settles --children before a stream's attrs arrive: off for a
  // stream, also one copied aside to decode its Intel PT trace.
  if (!peek.spooled.empty() && !a.children) opts.children = 0;
  if (a.callgraph_given)
    PK_TRY(report::parse_callchain_arg(a.callgraph.empty() ? "graph" : a.callgraph, opts));
  if (a.inverted) opts.caller_order = true, opts.order_given = true;
  if (a.percent_limit_given) opts.chain_min_percent = opts.percent_limit;
  if (a.percentage == "absolute")
    opts.relative = false;
  else if (a.percentage == "relative")
    opts.relative = true;
  else
    return make_error("--percentage: '{}' is not relative or absolute", a.percentage);
  if (!a.time_quantum.empty()) {
    PK_ASSIGN(opts.time_quantum, report::parse_time_quantum(a.time_quantum));
  }
  return ok();
}

// -c, -d, -S, --pid, --tid, -C and --time.
Status apply_filters(const Args& a, report::ReportOptions& opts) {
  opts.comms = split_list(a.comms);
  opts.dsos = split_list(a.dsos);
  opts.symbols = split_list(a.symbols);
  PK_TRY(parse_list_option(a.pids, id_list_rules("pid"), opts.pids));
  PK_TRY(parse_list_option(a.tids, id_list_rules("tid"), opts.tids));
  PK_TRY(parse_list_option(a.cpus, id_list_rules("cpu"), opts.cpus));
  opts.have_cpus = !a.cpus.empty();
  opts.time_str = a.time_str;  // percent ranges need the recording: settled by the builder
  return ok();
}

session::SessionOptions session_options(const Args& a, StdinPeek& peek, bool tty_err) {
  session::SessionOptions so;
  so.stream_prefix = std::move(peek.prefix);
  so.symbols = symbolizer_options(a.lookup);
  so.read_ahead = jobs_to_use(a.jobs) > 1;
  so.warn = [quiet = a.quiet](const std::string& m) {
    if (!quiet) fmt::print(stderr, "{}\n", m);
  };
  if (tty_err) {
    so.progress = [](std::uint64_t done, std::uint64_t total) {
      if (total == 0 || total == UINT64_MAX) return;
      int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
      fmt::print(stderr, "\rProcessing events... {:3d}%", pct);
    };
  }
  return so;
}

// --header and --header-only: the header as perf prints it.
Status print_header(const Args& a, session::Session& s, const session::SessionOptions& so) {
  dump::HeaderPrintOptions ho;
  ho.full = a.show_info;
  ho.warn = so.warn;
  FdWriter hout = FdWriter::stdout_writer();
  auto hs = dump::print_header_info(s.reader(), ho, hout);
  auto hf = hout.flush();
  PK_TRY(hs);
  return hf;
}

// perf report --stats (the record counts perf report -D ends with) and -D
// (every record, with the Intel PT packets of AUXTRACE records, and what
// resolving each sample found).
Status print_records(const Args& a, session::Session& s) {
  if (a.stats) {
    dump::DumpOptions dopts;
    dopts.report_stats = true;
    FdWriter out = FdWriter::stdout_writer();
    return dump::run_dump(s.reader(), dopts, out);
  }
  FdWriter out = FdWriter::stdout_writer(1 << 20);
  if (!a.header)
    out.write(
        "# To display the perf.data header info, please use --header/--header-only "
        "options.\n#\n");
  dump::RecordPrinterOptions ro;
  ro.auxtrace_dump = dump::intel_pt_auxtrace_dumper();
  ro.unordered = a.disable_order;
  return dump::run_report_dump(s, ro, out);
}

// Wants no sample (the session skips them for --tasks).
class NoSamples : public session::SampleVisitor {
 public:
  Status on_sample(const session::ResolvedSample&) override { return ok(); }
};

// --tasks, --mmaps: every side-band record applied, then the machine's threads.
Status print_tasks(const Args& a, session::Session& s) {
  NoSamples none;
  PK_TRY(s.run(none));
  FdWriter out = FdWriter::stdout_writer();
  PK_TRY(report::print_tasks(s.machine(), a.mmaps, out));
  return out.flush();
}

// --html: the options that mean the same for the profile model (the input,
// perf script's filters, symbols, call chains, Intel PT).
int html_report(const Args& a, const report::ReportOptions& opts) {
  ProfileArgs p;
  p.input = a.input;
  p.cpus = a.cpus, p.pids = a.pids, p.tids = a.tids;
  p.comms = a.comms, p.dsos = a.dsos, p.symbols = a.symbols;
  p.opts.filter.time = a.time_str;
  p.lookup = a.lookup;
  p.opts.max_stack = opts.max_stack;
  p.no_inline = a.no_inline;
  p.quiet = a.quiet;
  p.jobs = a.jobs;
  p.itrace = a.itrace;
  p.no_itrace = a.no_itrace;
  if (a.callgraph_given) {
    report::ReportOptions probe;
    if (auto st = report::parse_callchain_arg(a.callgraph.empty() ? "graph" : a.callgraph, probe);
        !st)
      return fail("report", st.error());
    p.hide_callchain = probe.chain_mode == report::ChainMode::kNone;
  }
  return report_html(p, a.html);
}

// The histograms, through the pager on a terminal.
int print_report(const Args& a, const report::ReportOptions& opts, session::Session& s,
                 bool tty_err, const std::string& input_name) {
  pid_t pager = a.use_pager ? start_pager() : -1;
  report::ReportBuilder builder(opts);
  auto st = builder.build(s);
  if (tty_err) fmt::print(stderr, "\r{:30}\r", "");
  if (!st) {
    wait_pager(pager);
    return fail("report", st.error().with_context(s.reader().name()));
  }
  FdWriter out = FdWriter::stdout_writer();
  if (!a.header && !a.quiet)
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

}  // namespace

int cmd_report(int argc, char** argv) {
  CLI::App app("Show perf.data histograms and call graphs, as 'perf report --stdio' does.",
               "report");
  Args a;
  report::ReportOptions opts;
  // perf's configuration sets the defaults the options then change.
  const config::ConfigSet cfg = read_config(false);
  std::string config_sort;  // report.sort_order: the default keys, not a --sort
  apply_report_config(cfg, opts, config_sort);
  a.percentage = opts.relative ? "relative" : "absolute";
  a.use_pager = pager_allowed(cfg, "report");
  add_input_options(app, a);
  add_view_options(app, a, opts);
  add_filter_options(app, a);
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  a.callgraph_given = app.count("-g") > 0;
  // The call graphs' lanes: the drain that feeds them at the end runs on
  // one thread, at some 2/5 of their work (deep stacks), so that lanes
  // beyond 4 would wait for it.
  if (const unsigned jobs = jobs_to_use(a.jobs); jobs > 1) opts.chain_threads = std::min(jobs, 4u);
  if (a.sort.empty() && !config_sort.empty()) {
    auto keys = report::parse_sort_keys(config_sort);
    if (!keys) {
      fmt::print(stderr, "Error:\n{}", keys.error().message());  // (perf's words and status)
      return 0;
    }
    opts.sort = *keys;
  }
  if (report::IgnoreCallees check; !opts.ignore_callees.empty()) {
    // perf refuses a bad regex as it parses the options
    if (auto st = check.setup(opts.ignore_callees); !st) {
      fmt::print(stderr, "{}\n Usage: perfkit report [<options>]\n\n", st.error().message());
      return kUsageExit;
    }
  }
  a.percent_limit_given = app.count("--percent-limit") > 0;
  if (opts.hierarchy && !a.fields.empty()) {
    // perf says so and leaves with status 0
    fmt::print(stderr,
               "Error: --hierarchy and --fields options cannot be used together\n\n Usage: "
               "perfkit report [<options>]\n\n    -F, --fields <key[,keys...]>\n"
               "                          output field(s): overhead period sample and the sort "
               "keys\n        --hierarchy       Show entries in a hierarchy\n");
    return 0;
  }
  // perf's -v widens the entry tables (DSO paths, each symbol's address
  // and origin) and orders DSOs by path.
  opts.verbose = a.verbose > 0 && !a.quiet;  // (perf's -q sets verbose to -1)
  if (!a.html.empty()) return html_report(a, opts);
  opts.color = use_color(a.stdio_color);
  opts.raw_thread_counts = a.pretty == "raw";
  if (!a.prefix_strip.empty() && a.prefix.empty()) {
    fmt::print(stderr, "--prefix-strip requires --prefix\n");
    return 234;  // perf's -EINVAL
  }
  if (!std::set<std::string>{"global-period", "local-period", "global-hits", "local-hits"}.count(
          a.percent_type)) {
    fmt::print(stderr,
               "  Error: --percent-type '{}': global-period, local-period, global-hits or "
               "local-hits\n Usage: perfkit report [<options>]\n\n",
               a.percent_type);
    return kUsageExit;
  }

  std::string input = a.input;
  if (input.empty())
    input = (!isatty(STDIN_FILENO) && lseek(STDIN_FILENO, 0, SEEK_CUR) < 0) ? "-" : "perf.data";
  const std::string input_name = input;  // as perf names it in messages
  StdinPeek peek;
  if (input == "-" && !a.no_itrace) {
    if (auto st = peek_stdin_for_intel_pt(peek); !st) return fail("report", st.error());
    if (!peek.spooled.empty()) input = peek.spooled;
  }
  ReportItrace itrace;
  const bool decodes = !(a.no_itrace || a.stats || a.dump_raw || a.tasks || a.mmaps);
  Status st = decodes ? itrace_options(a, itrace) : ok();
  if (st) st = apply_keys(a, opts);
  if (st) st = apply_view(a, peek, opts);
  if (st) st = apply_filters(a, opts);
  if (!st) return fail("report", st.error());
  opts.max_stack = std::max(opts.max_stack, itrace.max_stack_floor);
  if (opts.field_sep.starts_with(".")) {
    // perf says so, prints its first header lines and nothing more
    fmt::print(stderr, "'.' is the only non valid --field-separator argument\n");
    if (!a.header && !a.header_only)
      fmt::print(
          "# To display the perf.data header info, please use --header/--header-only "
          "options.\n#\n");
    return 0;
  }
  // perf's cmd_report refuses a -k or --kallsyms file it cannot read.
  for (const std::string* f : {&a.lookup.vmlinux, &a.lookup.kallsyms})
    if (!f->empty() && access(f->c_str(), R_OK) != 0)
      return fail("report", make_error("Invalid file: {}", *f));
  if (a.ignore_vmlinux) a.lookup.vmlinux.clear();  // perf then reads no vmlinux, -k's neither

  const bool tty_err = isatty(STDERR_FILENO) && !a.quiet;
  opts.quiet = a.quiet;
  session::SessionOptions so = session_options(a, peek, tty_err);
  so.skip_samples = a.tasks || a.mmaps;  // perf's table: the side-band records' threads
  so.skip_maps = a.tasks && !a.mmaps;    // and without --mmaps, not the maps'
  // (the header, the record counts and the task table name no symbol)
  so.prefetch_kernel = !(a.header_only || a.stats || a.tasks || a.mmaps);
  auto session = session::Session::open(input, so);
  if (!session) return fail("report", session.error());
  auto& s = **session;
  if (a.header_only || a.header) {
    if (auto st = print_header(a, s, so); !st) return fail("report", st.error());
    if (a.header_only) return 0;
  }
  if (a.stats || a.dump_raw) {
    auto st = print_records(a, s);
    return st ? 0 : fail("report", st.error().with_context(s.reader().name()));
  }
  if (auto st = decode_itrace(a, itrace, peek, s, input, tty_err, opts); !st)
    return fail("report", st.error());
  if (a.stitch_lbr)
    if (auto st = check_stitch_lbr(s.reader().events(), "Warning:\n"); !st)
      return fail("report", st.error());
  if (a.tasks || a.mmaps) {
    auto st = print_tasks(a, s);
    return st ? 0 : fail("report", st.error().with_context(s.reader().name()));
  }
  // (--disable-order changes -D only: perf 6.1's report keeps time order)
  return print_report(a, opts, s, tty_err, input_name);
}

}  // namespace perfkit::cli
