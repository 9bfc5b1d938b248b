// perfkit diff: perf diff's comparison of recordings (the same text), and
// beyond perf a gate for CI (--fail-above, --fail-total-above, over sets of
// runs with --base-runs/--new-runs) with a JSON verdict for tools.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <memory>
#include <thread>

#include "abi/perf_event.h"
#include "base/text.h"
#include "cli/commands.h"
#include "cli/diff_exports.h"
#include "cli/options.h"
#include "cli/perfconfig.h"
#include "dump/session_dump.h"
#include "export/json.h"
#include "report/diff.h"
#include "report/diff_gate.h"
#include "session/session.h"

namespace perfkit::cli {

namespace {

struct Args {
  std::vector<std::string> files;
  std::string compute, sort = "dso,sym", percentage = "absolute", time_str;
  std::string comms, dsos, symbols, pids, tids, cpus, base_runs, new_runs;
  SymbolArgs lookup;
  unsigned jobs = 0;  // --jobs
  DiffExportArgs exports;
  bool force = false, modules = false, dump_raw = false, json = false;
  bool stream = false, cycles_hist = false;
  int verbose = 0;
  double fail_above = 0, fail_total_above = 0;
};

// perf's diff.compute, diff.order and hist.percentage: the defaults the
// options then change. A bad compute method is said and left at the default.
void apply_diff_config(const config::ConfigSet& cfg, Args& a, report::DiffOptions& o) {
  if (const std::string* c = cfg.get("diff.compute")) {
    if (*c == "delta" || *c == "delta-abs" || *c == "ratio" || *c == "wdiff") {
      a.compute = *c;
    } else {
      fmt::print(stderr, "Invalid compute method: {}\n", *c);
      fmt::print(stderr,
                 "Error in the given config file: wrong config key-value pair diff.compute={}\n",
                 *c);
    }
  }
  if (const std::string* v = cfg.get("diff.order")) {
    std::int64_t n = 0;
    if (parse_i64(*v, n) && n >= 0) o.order = static_cast<unsigned>(n);
  }
  if (const std::string* p = cfg.get("hist.percentage")) a.percentage = *p;
}

// Exit status of a gate that failed; errors keep perf's codes (255, 129).
constexpr int kGateFailed = 2;

void add_options(CLI::App& app, Args& a, report::DiffOptions& o) {
  app.add_option("files", a.files, "BASELINE [NEW...] (default: perf.data.old perf.data)");
  app.add_option("-c,--compute", a.compute,
                 "delta,delta-abs,ratio,wdiff:w1,w2 (default delta-abs): the computation");
  app.add_flag("-p,--period", o.show_period, "Show period values");
  app.add_flag("-F,--formula", o.show_formula, "Show formula");
  app.add_flag("-b,--baseline-only", o.baseline_only, "Show only items with match in baseline");
  app.add_option("-o,--order", o.order, "Sort by the computation of this file (default 1)");
  app.add_option("-s,--sort", a.sort, "Sort by key(s): comm, pid, dso, sym, cpu (default dso,sym)");
  app.add_option("-d,--dsos", a.dsos, "Only consider symbols in these dsos");
  app.add_option("-C,--comms", a.comms, "Only consider symbols in these comms");
  app.add_option("-S,--symbols", a.symbols, "Only consider these symbols");
  app.add_option("--pid", a.pids, "Only consider symbols in these pids");
  app.add_option("--tid", a.tids, "Only consider symbols in these tids");
  app.add_option("--cpu", a.cpus, "List of cpus to profile");
  app.add_option("--time", a.time_str, "Time span (time percent or absolute timestamp)");
  app.add_option("--percentage", a.percentage,
                 "relative|absolute: percentages of filtered entries");
  app.add_option("--symfs", a.lookup.symfs,
                 "Look for files with symbols relative to this directory");
  app.add_option("--kallsyms", a.lookup.kallsyms, "kallsyms pathname");
  app.add_flag("-m,--modules", a.modules, "Load module symbols (accepted, as perf)");
  app.add_flag("-f,--force", a.force, "Don't complain, do it");
  app.add_flag("-q,--quiet", o.quiet, "Do not show any warnings or messages");
  app.add_option("-t,--field-separator", o.field_sep,
                 "Separator for columns, no spaces will be added between columns '.' is reserved.");
  app.add_flag("-v,--verbose", a.verbose, "Be more verbose (DSO paths, symbol addresses)");
  app.add_flag("-D,--dump-raw-trace", a.dump_raw, "Dump raw trace in ASCII");
  add_jobs_option(app, a.jobs);
  app.add_flag("--stream", a.stream, "Hot streams comparison (branch stacks; not supported)");
  app.add_flag("--cycles-hist", a.cycles_hist,
               "Cycles histogram and standard deviation, with -c cycles (not supported)");
  app.add_option("--fail-above", a.fail_above,
                 "Gate: exit 2 when an entry's share grew by more than PCT percentage points");
  app.add_option("--fail-total-above", a.fail_total_above,
                 "Gate: exit 2 when an event's total count grew by more than PCT percent");
  app.add_option("--base-runs", a.base_runs, "Gate: the baseline's runs, F1,F2,...");
  app.add_option("--new-runs", a.new_runs, "Gate: the new runs, G1,G2,...");
  app.add_flag("--json", a.json, "Print the gate's verdict as a JSON object instead of the text");
  app.add_option("--to-folded", a.exports.folded,
                 "Write the baseline and the first NEW file's stacks as 'stack BEFORE AFTER' "
                 "lines (FlameGraph's difffolded.pl format)");
  app.add_option("--html", a.exports.html,
                 "Write a differential flame graph page of the baseline and the first NEW file "
                 "(red: grew, blue: shrank) with a table of the biggest changes");
  app.add_option("--to-pprof", a.exports.pprof,
                 "Write the first NEW file's pprof profile here and the baseline's beside it "
                 "(OUT.base, or X.base.pb.gz for X.pb.gz), for go tool pprof -diff_base");
}

Status apply(const Args& a, report::DiffOptions& o) {
  if (!a.compute.empty()) PK_TRY(report::parse_diff_compute(a.compute, o));
  PK_ASSIGN(o.report.sort, report::parse_sort_keys(a.sort));
  for (report::SortKey k : o.report.sort)
    if (!report::diff_sorts_by(k))
      return make_error(
          "--sort: perfkit diff sorts by comm, pid, dso, sym, cpu, srcline, srcfile, parent, "
          "symbol_size, dso_size, socket, time, trace, addr, weight, local_weight, ins_lat, "
          "local_ins_lat, transaction, code_page_size, cgroup and cgroup_id");
  o.report.sort_given = true;
  o.report.comms = split_list(a.comms);
  o.report.dsos = split_list(a.dsos);
  o.report.symbols = split_list(a.symbols);
  PK_TRY(parse_list_option(a.pids, id_list_rules("pid"), o.report.pids));
  PK_TRY(parse_list_option(a.tids, id_list_rules("tid"), o.report.tids));
  PK_TRY(parse_list_option(a.cpus, id_list_rules("cpu"), o.report.cpus));
  o.report.have_cpus = !a.cpus.empty();
  o.report.time_str = a.time_str;
  if (a.percentage != "absolute" && a.percentage != "relative")
    return make_error("--percentage: '{}' is not relative or absolute", a.percentage);
  o.report.relative = a.percentage == "relative";
  return ok();
}

// The files in Diff order and the gate's sets: positional files are
// perf diff's (one NEW set per NEW file); runs make one set per side.
struct Inputs {
  std::vector<std::string> paths;
  std::vector<std::size_t> base_set;
  std::vector<std::vector<std::size_t>> new_sets;
};

Expected<Inputs> inputs(const Args& a) {
  Inputs in;
  if (!a.base_runs.empty() || !a.new_runs.empty()) {
    if (a.base_runs.empty() || a.new_runs.empty())
      return make_error("--base-runs and --new-runs go together");
    if (!a.files.empty())
      return make_error("give either files or --base-runs/--new-runs, not both");
    std::vector<std::size_t> news;
    for (const auto& f : split_list(a.base_runs))
      in.base_set.push_back(in.paths.size()), in.paths.push_back(f);
    for (const auto& f : split_list(a.new_runs))
      news.push_back(in.paths.size()), in.paths.push_back(f);
    if (in.base_set.empty() || news.empty())
      return make_error("--base-runs and --new-runs name one file at least each");
    in.new_sets.push_back(news);
    return in;
  }
  in.paths = {"perf.data.old", "perf.data"};
  if (a.files.size() == 1) in.paths[1] = a.files[0];
  if (a.files.size() > 1) in.paths = a.files;
  in.base_set = {0};
  for (std::size_t f = 1; f < in.paths.size(); ++f) in.new_sets.push_back({f});
  return in;
}

std::string set_name(const Inputs& in, std::size_t set) {
  std::string s;
  for (std::size_t f : in.new_sets[set]) s += (s.empty() ? "" : ",") + in.paths[f];
  return s;
}

// The verdict for people: on stderr, one line per change that broke it.
void print_verdict(const Inputs& in, const report::GateLimits& lim,
                   const std::vector<report::GateViolation>& v) {
  if (v.empty()) {
    fmt::print(stderr, "perfkit diff: gate passed\n");
    return;
  }
  fmt::print(stderr, "perfkit diff: gate FAILED: {} change{} above the limit{}\n", v.size(),
             v.size() == 1 ? "" : "s", lim.entry_points && lim.total_percent ? "s" : "");
  for (const report::GateViolation& x : v) {
    if (x.total)
      fmt::print(stderr, "  {}: total {:.0f} -> {:.0f} (+{:.2f}%, limit {:.2f}%) in {}\n", x.event,
                 x.base, x.now, x.change, *lim.total_percent, set_name(in, x.new_set));
    else
      fmt::print(stderr, "  {}: {}  {:.2f}% -> {:.2f}% (+{:.2f} points, limit {:.2f}) in {}\n",
                 x.event, report::row_label(*x.row), x.base, x.now, x.change, *lim.entry_points,
                 set_name(in, x.new_set));
  }
}

std::string json_text(std::string_view s) {
  fmt::memory_buffer out;
  exports::json_string(out, s);
  return fmt::to_string(out);
}

// The verdict for tools (documented in README.md, "perfkit diff").
std::string verdict_json(const Inputs& in, const report::GateLimits& lim,
                         const std::vector<report::GateViolation>& v) {
  auto limit = [](const std::optional<double>& l) { return l ? fmt::format("{}", *l) : "null"; };
  auto names = [&](const std::vector<std::size_t>& set) {
    std::string s = "[";
    for (std::size_t f : set) s += (s.size() > 1 ? "," : "") + json_text(in.paths[f]);
    return s + "]";
  };
  std::string s =
      fmt::format("{{\"passed\":{},\"fail_above\":{},\"fail_total_above\":{},",
                  v.empty() ? "true" : "false", limit(lim.entry_points), limit(lim.total_percent));
  s += "\"baseline\":" + names(in.base_set) + ",\"new\":[";
  for (std::size_t i = 0; i < in.new_sets.size(); ++i) s += (i ? "," : "") + names(in.new_sets[i]);
  s += "],\"violations\":[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    const report::GateViolation& x = v[i];
    s += fmt::format("{}{{\"kind\":\"{}\",\"event\":{},\"new\":{},", i ? "," : "",
                     x.total ? "total" : "entry", json_text(x.event), x.new_set);
    if (!x.total)
      s += fmt::format("\"comm\":{},\"dso\":{},\"symbol\":{},\"keys\":{},", json_text(x.row->comm),
                       json_text(x.row->dso), json_text(x.row->symbol), json_text(x.row->keys));
    s += fmt::format(
        "\"baseline\":{},\"value\":{},\"baseline_min\":{},\"baseline_max\":{},\"value_min\":{},"
        "\"value_max\":{},\"change\":{}}}",
        x.base, x.now, x.base_min, x.base_max, x.now_min, x.now_max, x.change);
  }
  return s + "]}\n";
}

// -D: every record of each file in turn, as perf diff -D prints them
// before its table (report -D's dump with perf diff's tool). Returns -1 to
// go on, else the exit status.
int dump_files(const Inputs& in, const session::SessionOptions& so) {
  FdWriter out = FdWriter::stdout_writer(1 << 20);
  dump::RecordPrinterOptions ro;
  ro.diff_tool = true;  // AUX area records unhandled: no trace dumper
  for (const std::string& path : in.paths) {
    auto s = session::Session::open(path, so);
    Status st = s ? dump::run_report_dump(**s, ro, out) : Status(s.error());
    if (!st) {
      (void)out.flush();
      fmt::print(stderr, "{}\nFailed to process {}\n", st.error().message(), path);
      return 255;
    }
  }
  return out.flush() ? -1 : 255;
}

// Opens every file and reads them into `diff`, side by side. Returns -1 to
// go on, else the exit status (perf's 255 for a file it cannot open or
// read, and for branch-stack computations on files without branch stacks).
int read_files(const Args& a, const report::DiffOptions& o, const Inputs& in,
               std::vector<std::unique_ptr<session::Session>>& sessions, report::Diff& diff) {
  session::SessionOptions so;
  so.symbols = symbolizer_options(a.lookup);
  // The files are read side by side: each DSO's symbols are read once.
  so.symbols.kallsyms_share = std::make_shared<symbol::KallsymsShare>();
  so.symbols.dso_share = std::make_shared<symbol::DsoShare>();
  // A file per thread; threads to spare read ahead of their files.
  const unsigned jobs = jobs_to_use(a.jobs);
  so.read_ahead = jobs > in.paths.size();
  so.warn = [quiet = o.quiet](const std::string& m) {
    if (!quiet) fmt::print(stderr, "{}\n", m);
  };
  std::vector<session::Session*> opened;
  for (const std::string& path : in.paths) {
    auto s = session::Session::open(path, so);
    if (!s) {
      fmt::print(stderr, "{}\nFailed to open {}\n", s.error().message(), path);
      return 255;
    }
    sessions.push_back(std::move(*s));
    opened.push_back(sessions.back().get());
  }
  // perf's -c cycles and --stream need every file to have branch stacks
  // (else perf exits 255 without a word); perfkit computes neither.
  if (o.cycles || a.stream) {
    for (session::Session* s : opened) {
      bool branches = false;
      for (const auto& d : s->reader().events().events())
        branches |= (d.attr.sample_type & abi::kSampleBranchStack) != 0;
      if (!branches) return 255;
    }
    return fail("diff", make_error("{}: not supported (branch-stack cycles and streams)",
                                   o.cycles ? "-c cycles" : "--stream"));
  }
  if (a.dump_raw)
    if (int code = dump_files(in, so); code >= 0) return code;
  // The files are read at once, as many as --jobs allows.
  std::size_t failed = 0;
  if (auto st = diff.add_all(opened, jobs, failed); !st) {
    fmt::print(stderr, "{}\nFailed to process {}\n", st.error().message(), in.paths[failed]);
    return 255;
  }
  return -1;
}

}  // namespace

int cmd_diff(int argc, char** argv) {
  CLI::App app("Compare recordings, as 'perf diff' does; gate a CI build on the change.", "diff");
  Args a;
  report::DiffOptions o;
  apply_diff_config(read_config(false), a, o);
  add_options(app, a, o);
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  if (!a.compute.empty()) {
    if (auto st = report::parse_diff_compute(a.compute, o); !st) {
      fmt::print(stderr, "{}\n", st.error().message());
      return kUsageExit;
    }
  }
  if (a.cycles_hist && !o.cycles) {
    fmt::print(stderr, "\n Usage: perfkit diff [<options>] [old_file] [new_file]\n\n");
    return kUsageExit;
  }
  // perf's -v: the data files listed, DSOs by path, symbols after their
  // addresses and origins (report's -v columns).
  o.report.verbose = a.verbose > 0 && !o.quiet;  // (perf's -q sets verbose to -1)
  if (o.field_sep.starts_with(".")) {
    fmt::print(stderr, "'.' is the only non valid --field-separator argument\n");
    return 255;
  }
  if (auto st = apply(a, o); !st) return fail("diff", st.error());
  auto in = inputs(a);
  if (!in) return fail("diff", in.error());
  if (o.order >= in->paths.size()) {
    fmt::print(stderr, "Order option out of limit.\n");
    return 255;
  }
  std::vector<std::unique_ptr<session::Session>> sessions;
  report::Diff diff(o);
  if (int code = read_files(a, o, *in, sessions, diff); code >= 0) return code;
  diff.compare();
  report::GateLimits lim;
  if (app.count("--fail-above")) lim.entry_points = a.fail_above;
  if (app.count("--fail-total-above")) lim.total_percent = a.fail_total_above;
  const bool gate = lim.entry_points || lim.total_percent;
  std::vector<report::GateViolation> v;
  std::vector<report::DiffEvent> events;
  if (gate) {
    events = diff.events();
    v = report::check_gate(events, in->base_set, in->new_sets, lim);
  }
  FdWriter out = FdWriter::stdout_writer();
  if (a.json)
    out.write(verdict_json(*in, lim, v));
  else
    diff.print(in->paths, out);
  if (auto fl = out.flush(); !fl) return fail("diff", fl.error());
  if (!a.exports.folded.empty() || !a.exports.pprof.empty() || !a.exports.html.empty()) {
    a.exports.quiet = o.quiet;
    if (auto st = write_diff_exports(a.exports, in->paths[in->base_set[0]],
                                     in->paths[in->new_sets[0][0]]);
        !st)
      return fail("diff", st.error());
  }
  if (gate && !a.json) print_verdict(*in, lim, v);
  return v.empty() ? 0 : kGateFailed;
}

}  // namespace perfkit::cli
