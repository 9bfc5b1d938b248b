// perfkit script: every event of a perf.data file as text, as 'perf script'
// prints it, streamed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>

#include "analysis/dump.h"
#include "analysis/header_print.h"
#include "analysis/itrace_dump.h"
#include "analysis/script.h"
#include "analysis/script_itrace.h"
#include "analysis/session.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/stdin_peek.h"

namespace perfkit::cli {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
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

// "1,3-5" -> 1 3 4 5. False on anything else.
bool parse_ids(const std::string& s, std::vector<std::int32_t>& out) {
  for (const auto& part : split_commas(s)) {
    std::size_t dash = part.find('-', 1);
    long a = 0, b = 0;
    std::string_view p = std::string_view(part).substr(0, dash);
    if (std::from_chars(p.data(), p.data() + p.size(), a).ec != std::errc()) return false;
    b = a;
    if (dash != std::string::npos) {
      std::string_view q = std::string_view(part).substr(dash + 1);
      if (std::from_chars(q.data(), q.data() + q.size(), b).ec != std::errc()) return false;
    }
    for (long v = a; v <= b; ++v) out.push_back(static_cast<std::int32_t>(v));
  }
  return true;
}

bool stdin_is_pipe() {
  struct stat st;
  return fstat(STDIN_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);
}

}  // namespace

int cmd_script(int argc, char** argv) {
  CLI::App app("Read perf.data and display every event as text, as 'perf script' does.", "script");
  std::string input;
  std::vector<std::string> fields;
  std::string cpus, pids, tids, comms, symbols, dsos;
  std::string symfs, vmlinux, kallsyms;
  bool header = false, header_only = false, show_info = false, dump_raw = false;
  bool no_inline = false, inline_flag = false, no_demangle = false, demangle = false,
       demangle_kernel = false, force = false, all_cpus = false;
  int verbose = 0;
  analysis::ScriptOptions opts;
  app.add_option("-i,--input", input, "Input file name ('-' for stdin)");
  app.add_option("-F,--fields", fields,
                 "Comma separated output fields, prepend with 'type:' (hw,sw,trace,raw,break,"
                 "synth); +field adds, -field removes. Fields: comm,tid,pid,time,cpu,event,trace,"
                 "ip,sym,dso,addr,symoff,srcline,period,iregs,uregs,brstack,brstacksym,flags,"
                 "data_src,weight,bpf-output,brstackinsn,brstackinsnlen,brstackoff,callindent,"
                 "insn,insnlen,synth,phys_addr,metric,misc,srccode,ipc,tod,data_page_size,"
                 "code_page_size,ins_lat");
  app.add_flag("-G,--hide-call-graph", opts.hide_callchain,
               "When printing symbols do not display call chain");
  app.add_option("--max-stack", opts.max_stack,
                 "Set the maximum stack depth when parsing the callchain (default 127)");
  app.add_flag("--ns", opts.ns, "Use 9 decimal places when displaying time");
  app.add_flag("--reltime", opts.reltime, "Show time stamps relative to start");
  app.add_flag("--deltatime", opts.deltatime, "Show time stamps relative to previous event");
  app.add_flag("--inline", inline_flag, "Show inline functions (the default)");
  app.add_flag("--no-inline", no_inline, "Do not show inline functions");
  app.add_flag("--full-source-path", opts.full_source_path,
               "Show full source file name path for source lines");
  app.add_option("--time", opts.time,
                 "Time span of interest: start,stop (seconds), several separated by spaces, "
                 "or percent slices (10%/2, 0%-10%,30%-40%)");
  app.add_option("-C,--cpu", cpus, "List of cpus to show");
  app.add_option("--pid", pids, "Only show events of these process ids");
  app.add_option("--tid", tids, "Only show events of these thread ids");
  app.add_option("-c,--comms,--comm", comms, "Only display events for these comms");
  app.add_option("-S,--symbols", symbols, "Only consider these symbols");
  app.add_option("--dsos", dsos, "Only consider symbols in these DSOs");
  app.add_flag("-D,--dump-raw-trace", dump_raw, "Dump raw trace in ASCII");
  app.add_flag("--header", header, "Show data header");
  app.add_flag("--header-only", header_only, "Show only data header");
  app.add_flag("-I,--show-info", show_info, "Display extended information from perf.data file");
  app.add_flag("--show-task-events", opts.show_task, "Show the fork/comm/exit events");
  app.add_flag("--show-mmap-events", opts.show_mmap, "Show the mmap events");
  app.add_flag("--show-switch-events", opts.show_switch, "Show context switch events");
  app.add_flag("--show-namespace-events", opts.show_namespace, "Show namespace events");
  app.add_flag("--show-cgroup-events", opts.show_cgroup, "Show cgroup events");
  app.add_flag("--show-lost-events", opts.show_lost, "Show lost events");
  app.add_flag("--show-round-events", opts.show_round, "Show round events");
  app.add_flag("--show-bpf-events", opts.show_bpf, "Show bpf related events");
  app.add_flag("--show-kernel-path", opts.show_kernel_path, "Show the path of [kernel.kallsyms]");
  app.add_flag("-L,--Latency", opts.latency, "Show latency attributes");
  app.add_flag("-d,--debug-mode", opts.debug_mode, "Check that samples are time ordered");
  app.add_option("-k,--vmlinux", vmlinux, "vmlinux pathname");
  app.add_option("--kallsyms", kallsyms, "kallsyms pathname");
  app.add_option("--symfs", symfs, "Look for files with symbols relative to this directory");
  app.add_flag("--demangle", demangle, "Enable symbol demangling (the default)");
  app.add_flag("--no-demangle", no_demangle, "Disable symbol demangling");
  app.add_flag("--demangle-kernel", demangle_kernel, "Enable kernel symbol demangling");
  app.add_flag("-a,--all-cpus", all_cpus, "System-wide collection (accepted, no effect)");
  app.add_flag("-f,--force", force, "Don't complain, do it");
  app.add_flag("-v,--verbose", verbose, "Be more verbose");
  // Intel PT (perf-intel-pt(1)): what to synthesize from the trace.
  std::vector<std::string> itrace;  // each --itrace given, parsed on top of the ones before
  bool no_itrace = false, insn_trace = false, call_trace = false, call_ret_trace = false,
       xed = false;
  auto* itrace_opt = app.add_option("--itrace", itrace,
                                    "Instruction Tracing options (perf's grammar; default "
                                    "cepwx): i[period] b c r x w p e[flags] g[len] l[len] s[n] A Z")
                         ->expected(0, 1)
                         ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--no-itrace", no_itrace, "Do not decode instruction trace data");
  app.add_flag("--insn-trace", insn_trace, "Decode instructions from itrace (i0nse, -F+insn)");
  app.add_flag("--xed", xed, "With --insn-trace: disassemble (Zydis, AT&T syntax as xed -A)");
  app.add_flag("--call-trace", call_trace, "Show call trace from itrace (cewp, -F+callindent)");
  app.add_flag("--call-ret-trace", call_ret_trace,
               "Show call and return trace from itrace (crewp, -F+callindent,+flags)");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;

  if (opts.reltime && opts.deltatime)
    return fail("script",
                make_error("reltime and deltatime - the two don't get along well. Please limit "
                           "to --reltime or --deltatime."));
  opts.warn = [](const std::string& m) { fmt::print(stderr, "{}\n", m); };
  analysis::ScriptItraceOptions itopts;
  {
    // -F, --itrace and the trace presets apply in the order given, as perf's
    // option callbacks do: fields accumulate (or override), and each itrace
    // string is parsed on top of what came before.
    auto* insn_opt = app.get_option("--insn-trace");
    auto* call_opt = app.get_option("--call-trace");
    auto* call_ret_opt = app.get_option("--call-ret-trace");
    auto* fields_opt = app.get_option("--fields");
    itopts.itrace = {};
    bool itrace_given = false;
    std::size_t next_field = 0, next_itrace = 0;
    for (const CLI::Option* op : app.parse_order()) {
      std::string preset, preset_fields;
      if (op == fields_opt && next_field < fields.size()) {
        auto st = opts.fields.parse(fields[next_field++], opts.warn);
        if (!st) return fail("script", st.error());
      } else if (op == itrace_opt && next_itrace < itrace.size()) {
        auto st = intelpt::parse_itrace(itrace[next_itrace++], true, itopts.itrace);
        if (!st) return fail("script", st.error());
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
      auto st = opts.fields.parse(preset_fields, opts.warn);
      if (!st) return fail("script", st.error());
      (void)intelpt::parse_itrace(preset, true, itopts.itrace);
      itrace_given = true;
    }
    if (!itrace_given) (void)intelpt::parse_itrace("", true, itopts.itrace);
    itopts.disasm = xed;
  }
  opts.inline_frames = !no_inline;
  if (!cpus.empty()) {
    if (!parse_ids(cpus, opts.cpus)) return fail("script", make_error("bad --cpu list '{}'", cpus));
    opts.have_cpus = true;
  }
  if (!parse_ids(pids, opts.pids) || !parse_ids(tids, opts.tids))
    return fail("script", make_error("bad --pid or --tid list"));
  opts.comms = split_commas(comms);
  opts.symbols = split_commas(symbols);
  opts.dsos = split_commas(dsos);
  if (input.empty()) input = stdin_is_pipe() ? "-" : "perf.data";

  FdWriter out = FdWriter::stdout_writer(1 << 20);
  // perf script -D dumps every record and decodes no instruction trace.
  opts.dump_raw = dump_raw;
  if (dump_raw) no_itrace = true;

  analysis::SessionOptions so;
  StdinPeek peek;
  if (input == "-" && !no_itrace) {
    auto st = peek_stdin_for_intel_pt(peek);
    if (!st) return fail("script", st.error());
    if (!peek.spooled.empty()) input = peek.spooled;
    so.stream_prefix = std::move(peek.prefix);
  }
  so.symbols = symbol::symbolizer_options_from_env();
  so.symbols.symfs = symfs;
  so.symbols.vmlinux = vmlinux;
  so.symbols.kallsyms = kallsyms;
  so.symbols.demangle = !no_demangle;
  so.symbols.demangle_kernel = demangle_kernel;
  so.unordered = opts.show_round;
  so.warn = [](const std::string& m) { fmt::print(stderr, "{}\n", m); };
  auto session = analysis::Session::open(input, so);
  if (!session) return fail("script", session.error());
  auto& s = **session;
  if (header || header_only) {
    analysis::HeaderPrintOptions ho;
    ho.full = show_info;
    auto st = analysis::print_header_info(s.reader(), ho, out);
    if (!st) return fail("script", st.error());
    if (header_only) {
      auto fl = out.flush();
      return fl ? 0 : fail("script", fl.error());
    }
  }
  if (!no_itrace && analysis::has_intel_pt(input)) {
    // A progress bar on stderr while the trace decodes (stdout elsewhere);
    // warnings wipe it first.
    ProgressBar bar("Processing Intel PT trace...");
    if (stderr_progress_wanted(false, true)) {
      itopts.progress = [&bar](std::uint64_t done, std::uint64_t total) {
        bar.update(done, total);
      };
      opts.warn = [&bar](const std::string& m) {
        bar.clear();
        fmt::print(stderr, "{}\n", m);
      };
    }
    auto st = analysis::run_script_itrace(s, std::move(opts), itopts, input, out);
    bar.clear();
    if (!st) {
      (void)out.flush();
      return fail("script", st.error().with_context(s.reader().name()));
    }
    return 0;
  }
  auto st = analysis::run_script(s, std::move(opts), out);
  if (!st) {
    (void)out.flush();
    return fail("script", st.error().with_context(s.reader().name()));
  }
  return 0;
}

}  // namespace perfkit::cli
