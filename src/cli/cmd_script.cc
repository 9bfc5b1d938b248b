// perfkit script: every event of a perf.data file as text, as 'perf script'
// prints it, streamed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/stdin_peek.h"
#include "dump/dump.h"
#include "dump/header_print.h"
#include "dump/itrace_dump.h"
#include "itrace/synth_events.h"
#include "script/dlfilter.h"
#include "script/script.h"
#include "script/script_itrace.h"
#include "session/session.h"

namespace perfkit::cli {

namespace {

bool stdin_is_pipe() {
  struct stat st;
  return fstat(STDIN_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);
}

// The options as given, before they are checked and turned into the
// script's, the session's and the decoder's options.
struct Args {
  std::string input;
  std::vector<std::string> fields;
  std::string cpus, pids, tids, comms, symbols, dsos;
  std::string graph_function;          // --graph-function
  SymbolArgs lookup;                   // where symbols come from
  session::GuestOptions guest;         // --guestkallsyms, --guestvmlinux, ...
  unsigned jobs = 0;                   // --jobs
  std::uint64_t shard_samples = 1024;  // samples per slice with --jobs (hidden, for tests)
  bool header = false, header_only = false, show_info = false, dump_raw = false;
  bool dump_unsorted = false, per_event_dump = false, list_dlfilters = false, stitch_lbr = false;
  bool no_inline = false, inline_flag = false, demangle = false, force = false, all_cpus = false;
  int verbose = 0;
  // Intel PT (perf-intel-pt(1)): what to synthesize from the trace.
  std::vector<std::string> itrace;  // each --itrace given, parsed on top of the ones before
  bool no_itrace = false, insn_trace = false, call_trace = false, call_ret_trace = false,
       xed = false;
};

// What each sample shows.
void add_output_options(CLI::App& app, Args& a, script::ScriptOptions& opts) {
  app.add_option("-F,--fields", a.fields,
                 "Comma separated output fields, prepend with 'type:' (hw,sw,trace,raw,break,"
                 "synth); +field adds, -field removes. Fields: comm,tid,pid,time,cpu,event,trace,"
                 "ip,sym,dso,addr,symoff,srcline,period,iregs,uregs,brstack,brstacksym,flags,"
                 "data_src,weight,bpf-output,brstackinsn,brstackinsnlen,brstackoff,callindent,"
                 "insn,insnlen,synth,phys_addr,metric,misc,srccode,ipc,tod,data_page_size,"
                 "code_page_size,ins_lat");
  app.add_flag("-G,--hide-call-graph", opts.hide_callchain,
               "When printing symbols do not display call chain");
  app.add_option("--graph-function", a.graph_function,
                 "Only print symbols and callees with --call-trace/--call-ret-trace");
  add_event_switch_options(app, opts.evswitch);
  app.add_option("--max-blocks", opts.max_blocks,
                 "Maximum number of code blocks to dump with brstackinsn");
  app.add_option("--max-stack", opts.max_stack,
                 "Set the maximum stack depth when parsing the callchain (default 127)");
  app.add_flag("--ns", opts.ns, "Use 9 decimal places when displaying time");
  app.add_flag("--reltime", opts.reltime, "Show time stamps relative to start");
  app.add_flag("--deltatime", opts.deltatime, "Show time stamps relative to previous event");
  app.add_flag("--inline", a.inline_flag, "Show inline functions (the default)");
  app.add_flag("--no-inline", a.no_inline, "Do not show inline functions");
  app.add_option("--stop-bt", opts.stop_bt, "Stop display of callgraph at these symbols")
      ->delimiter(',');
  app.add_flag("--full-source-path", opts.full_source_path,
               "Show full source file name path for source lines");
  app.add_flag("--show-task-events", opts.show_task, "Show the fork/comm/exit events");
  app.add_flag("--show-mmap-events", opts.show_mmap, "Show the mmap events");
  app.add_flag("--show-switch-events", opts.show_switch, "Show context switch events");
  app.add_flag("--show-namespace-events", opts.show_namespace, "Show namespace events");
  app.add_flag("--show-cgroup-events", opts.show_cgroup, "Show cgroup events");
  app.add_flag("--show-lost-events", opts.show_lost, "Show lost events");
  app.add_flag("--show-round-events", opts.show_round, "Show round events");
  app.add_flag("--show-bpf-events", opts.show_bpf, "Show bpf related events");
  app.add_flag("--show-text-poke-events", opts.show_text_poke, "Show text poke related events");
  app.add_flag("--show-kernel-path", opts.show_kernel_path, "Show the path of [kernel.kallsyms]");
  app.add_flag("-L,--Latency", opts.latency, "Show latency attributes");
  app.add_flag("-d,--debug-mode", opts.debug_mode, "Check that samples are time ordered");
}

// Which events count, and where they come from.
void add_input_options(CLI::App& app, Args& a, script::ScriptOptions& opts) {
  app.add_option("-i,--input", a.input, "Input file name ('-' for stdin)");
  add_jobs_option(app, a.jobs);
  app.add_option("--shard-samples", a.shard_samples)->group("");  // (tests: small slices)
  app.add_option("--time", opts.time,
                 "Time span of interest: start,stop (seconds), several separated by spaces, "
                 "or percent slices (10%/2, 0%-10%,30%-40%)");
  app.add_option("-C,--cpu", a.cpus, "List of cpus to show");
  app.add_option("--pid", a.pids, "Only show events of these process ids");
  app.add_option("--tid", a.tids, "Only show events of these thread ids");
  app.add_option("-c,--comms,--comm", a.comms, "Only display events for these comms");
  app.add_option("-S,--symbols", a.symbols, "Only consider these symbols");
  app.add_option("--dsos", a.dsos, "Only consider symbols in these DSOs");
  app.add_option("--addr-range", opts.addr_range,
                 "Use with -S to list traced records within address range");
  app.add_flag("-D,--dump-raw-trace", a.dump_raw, "Dump raw trace in ASCII");
  app.add_flag("--dump-unsorted-raw-trace", a.dump_unsorted,
               "Dump unsorted raw trace in ASCII (the records in file order)");
  app.add_option("--dlfilter", opts.dlfilter, "Filter sample events using the given shared object");
  app.add_option("--dlarg", opts.dlargs, "Argument to pass to the dlfilter (one per --dlarg)")
      ->allow_extra_args(false);
  app.add_flag("--list-dlfilters", a.list_dlfilters, "list available dlfilters");
  app.add_flag("--per-event-dump", a.per_event_dump,
               "Dump trace output to files named by the monitored events");
  app.add_flag("--header", a.header, "Show data header");
  app.add_flag("--header-only", a.header_only, "Show only data header");
  app.add_flag("-I,--show-info", a.show_info, "Display extended information from perf.data file");
  app.add_option("-k,--vmlinux", a.lookup.vmlinux, "vmlinux pathname");
  app.add_option("--kallsyms", a.lookup.kallsyms, "kallsyms pathname");
  app.add_option("--symfs", a.lookup.symfs,
                 "Look for files with symbols relative to this directory");
  app.add_option("--guestkallsyms", a.guest.kallsyms, "file saving guest os /proc/kallsyms");
  app.add_option("--guestmodules", a.guest.modules, "file saving guest os /proc/modules");
  app.add_option("--guestmount", a.guest.mount,
                 "guest mount directory under which every guest os instance has a subdir");
  app.add_option("--guestvmlinux", a.guest.vmlinux, "file saving guest os vmlinux");
  app.add_flag("--guest-code", a.guest.code, "Guest code can be found in hypervisor process");
  app.add_flag("--demangle", a.demangle, "Enable symbol demangling (the default)");
  app.add_flag("--no-demangle", a.lookup.no_demangle, "Disable symbol demangling");
  app.add_flag("--demangle-kernel", a.lookup.demangle_kernel, "Enable kernel symbol demangling");
  app.add_flag("-a,--all-cpus", a.all_cpus, "System-wide collection (accepted, no effect)");
  app.add_flag("-f,--force", a.force, "Don't complain, do it");
  app.add_flag("-v,--verbose", a.verbose, "Be more verbose");
}

void add_itrace_options(CLI::App& app, Args& a) {
  app.add_option("--itrace", a.itrace,
                 "Instruction Tracing options (perf's grammar; default "
                 "cepwx): i[period] b c r x w p e[flags] g[len] l[len] s[n] A Z")
      ->expected(0, 1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--no-itrace", a.no_itrace, "Do not decode instruction trace data");
  app.add_flag("--stitch-lbr", a.stitch_lbr, "Enable LBR callgraph stitching approach");
  app.add_flag("--insn-trace", a.insn_trace, "Decode instructions from itrace (i0nse, -F+insn)");
  app.add_flag("--xed", a.xed, "With --insn-trace: disassemble (Zydis, AT&T syntax as xed -A)");
  app.add_flag("--call-trace", a.call_trace, "Show call trace from itrace (cewp, -F+callindent)");
  app.add_flag("--call-ret-trace", a.call_ret_trace,
               "Show call and return trace from itrace (crewp, -F+callindent,+flags)");
}

// -F, --itrace and the trace presets apply in the order given, as perf's
// option callbacks do: fields accumulate (or override), and each itrace
// string is parsed on top of what came before.
Status apply_fields_and_itrace(const CLI::App& app, const Args& a, script::ScriptOptions& opts,
                               script::ScriptItraceOptions& itopts) {
  const CLI::Option* insn_opt = app.get_option("--insn-trace");
  const CLI::Option* call_opt = app.get_option("--call-trace");
  const CLI::Option* call_ret_opt = app.get_option("--call-ret-trace");
  const CLI::Option* fields_opt = app.get_option("--fields");
  const CLI::Option* itrace_opt = app.get_option("--itrace");
  itopts.itrace = {};
  bool itrace_given = false;
  std::size_t next_field = 0, next_itrace = 0;
  for (const CLI::Option* op : app.parse_order()) {
    std::string preset, preset_fields;
    if (op == fields_opt && next_field < a.fields.size()) {
      PK_TRY(opts.fields.parse(a.fields[next_field++], opts.warn));
    } else if (op == itrace_opt && next_itrace < a.itrace.size()) {
      PK_TRY(intelpt::parse_itrace(a.itrace[next_itrace++], true, itopts.itrace));
      itrace_given = true;
    } else if (op == insn_opt) {
      preset = "i0nse", preset_fields = "+insn,-event,-period";
    } else if (op == call_opt) {
      preset = "cewp", preset_fields = "-ip,-addr,-event,-period,+callindent";
      itopts.dso_pad = 50;
    } else if (op == call_ret_opt) {
      preset = "crewp", preset_fields = "-ip,-addr,-event,-period,+callindent,+flags";
    }
    if (preset.empty()) continue;
    opts.ns = true;
    PK_TRY(opts.fields.parse(preset_fields, opts.warn));
    (void)intelpt::parse_itrace(preset, true, itopts.itrace);
    itrace_given = true;
  }
  if (!itrace_given) (void)intelpt::parse_itrace("", true, itopts.itrace);
  itopts.disasm = a.xed;
  return ok();
}

// -C, --pid, --tid, -c, -S and --dsos.
Status apply_filters(const Args& a, script::ScriptOptions& opts) {
  if (!a.cpus.empty()) {
    PK_TRY(parse_list_option(a.cpus, id_list_rules("cpu"), opts.cpus));
    opts.have_cpus = true;
  }
  PK_TRY(parse_list_option(a.pids, id_list_rules("pid"), opts.pids));
  PK_TRY(parse_list_option(a.tids, id_list_rules("tid"), opts.tids));
  opts.comms = split_list(a.comms);
  opts.symbols = split_list(a.symbols);
  opts.dsos = split_list(a.dsos);
  // perf compares each name of the list whole; an empty one matches none.
  for (std::string& f : split_list(a.graph_function))
    if (!f.empty()) opts.graph_functions.push_back(std::move(f));
  return ok();
}

session::SessionOptions session_options(const Args& a, const script::ScriptOptions& opts) {
  session::SessionOptions so;
  so.symbols = symbolizer_options(a.lookup);
  so.guest = a.guest;
  so.unordered = opts.show_round;
  so.warn = [](const std::string& m) { fmt::print(stderr, "{}\n", m); };
  return so;
}

// The Intel PT trace decoded and printed with the recorded events, a
// progress bar on stderr meanwhile (stdout elsewhere); warnings wipe it first.
Status run_itrace(session::Session& s, script::ScriptOptions opts,
                  script::ScriptItraceOptions& itopts, const std::string& input, FdWriter& out) {
  ProgressBar bar("Processing Intel PT trace...");
  if (stderr_progress_wanted(false, true)) {
    itopts.progress = [&bar](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
    opts.warn = [&bar](const std::string& m) {
      bar.clear();
      fmt::print(stderr, "{}\n", m);
    };
  }
  auto st = script::run_script_itrace(s, std::move(opts), itopts, input, out);
  bar.clear();
  return st;
}

}  // namespace

int cmd_script(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "report")
    return cmd_script_report(argc - 1, argv + 1);
  CLI::App app("Read perf.data and display every event as text, as 'perf script' does.", "script");
  Args a;
  script::ScriptOptions opts;
  add_input_options(app, a, opts);
  add_output_options(app, a, opts);
  add_itrace_options(app, a);
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;

  if (a.list_dlfilters) {
    fmt::print("{}", script::DlFilter::list());
    return 0;
  }
  if (opts.reltime && opts.deltatime)
    return fail("script",
                make_error("reltime and deltatime - the two don't get along well. Please limit "
                           "to --reltime or --deltatime."));
  opts.warn = [](const std::string& m) { fmt::print(stderr, "{}\n", m); };
  script::ScriptItraceOptions itopts;
  Status st = apply_fields_and_itrace(app, a, opts, itopts);
  opts.inline_frames = !a.no_inline;
  if (st) st = apply_filters(a, opts);
  if (!st) return fail("script", st.error());
  std::string input = a.input;
  if (input.empty()) input = stdin_is_pipe() ? "-" : "perf.data";

  // perf names a pipe's dumps after the file name it does not have.
  // (named after the file of the header: a perf.data directory's DIR/data)
  if (a.per_event_dump) {
    struct stat st {};
    const bool dir = ::stat(input.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    opts.per_event_dump = input == "-" ? "(null)" : dir ? input + "/data" : input;
  }
  FdWriter out = FdWriter::stdout_writer(1 << 20);
  // perf script -D dumps every record and decodes no instruction trace.
  opts.dump_raw = a.dump_raw || a.dump_unsorted;
  const bool no_itrace = a.no_itrace || opts.dump_raw;
  session::SessionOptions so = session_options(a, opts);
  opts.dump_unsorted = a.dump_unsorted;
  StdinPeek peek;
  if (input == "-" && !no_itrace) {
    if (auto ps = peek_stdin_for_intel_pt(peek); !ps) return fail("script", ps.error());
    if (!peek.spooled.empty()) input = peek.spooled;
    so.stream_prefix = std::move(peek.prefix);
  }
  // An Intel PT decode adds its events to the reader as it goes: no
  // reading ahead then (its queues decode on threads of their own).
  const bool pt = !no_itrace && itrace::has_intel_pt(input);
  // With --jobs, sessions side by side each print a share of the samples
  // (script/script.h: run_script_shards); the first does the rest.
  const unsigned jobs = jobs_to_use(a.jobs);
  const unsigned shards = !pt && jobs > 1 && input != "-" && script::can_shard(opts) ? jobs : 1;
  so.read_ahead = !pt && shards == 1 && jobs > 1;
  so.reuse_resolutions = true;
  itopts.jobs = a.jobs;
  session::ShardWarnings warnings(shards, so.warn);
  if (shards > 1) {
    so.symbols.kallsyms_share = std::make_shared<symbol::KallsymsShare>();
    so.symbols.dso_share = std::make_shared<symbol::DsoShare>();
    so.warn = warnings.for_shard(0);
    // One mapping for all (a file; the sessions report what fails).
    struct stat st {};
    if (::stat(input.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      if (auto m = MappedFile::open(input)) {
        m->advise_sequential();
        so.shared_mapping = std::make_shared<SharedMapping>(std::move(*m), shards);
      }
  }
  auto session = session::Session::open(input, so);
  if (!session) return fail("script", session.error());
  auto& s = **session;
  std::vector<std::unique_ptr<session::Session>> others;
  std::vector<session::Session*> all{&s};
  for (unsigned k = 1; k < shards; ++k) {
    session::SessionOptions sk = so;
    sk.warn = warnings.for_shard(k);
    sk.shared_slot = k;
    auto more = session::Session::open(input, std::move(sk));
    if (!more) return fail("script", more.error());
    all.push_back(others.emplace_back(std::move(*more)).get());
  }
  if (a.stitch_lbr)
    if (auto st = check_stitch_lbr(s.reader().events(), ""); !st) return fail("script", st.error());
  if (a.header || a.header_only) {
    dump::HeaderPrintOptions ho;
    ho.full = a.show_info;
    if (auto hs = dump::print_header_info(s.reader(), ho, out); !hs)
      return fail("script", hs.error());
    if (a.header_only) {
      auto fl = out.flush();
      return fl ? 0 : fail("script", fl.error());
    }
  }
  st = pt ? run_itrace(s, std::move(opts), itopts, input, out)
       : shards > 1
           ? script::run_script_shards(all, std::move(opts), out, warnings, a.shard_samples)
           : script::run_script(s, std::move(opts), out);
  if (!st) {
    (void)out.flush();
    return fail("script", st.error().with_context(s.reader().name()));
  }
  return 0;
}

}  // namespace perfkit::cli
