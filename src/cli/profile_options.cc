#include "cli/profile_options.h"

#include <unistd.h>

#include "cli/progress.h"
#include "inject/inject_itrace.h"
#include "inject/itrace_feed.h"
#include "intelpt/itrace_options.h"
#include "session/session.h"

namespace perfkit::cli {

void add_profile_options(CLI::App& app, ProfileArgs& a) {
  auto& f = a.opts.filter;
  app.add_option("-i,--input", a.input, "Input file name ('-' for stdin; default perf.data)");
  app.add_option("-C,--cpu", a.cpus, "Only samples of these cpus");
  app.add_option("--pid", a.pids, "Only samples of these process ids");
  app.add_option("--tid", a.tids, "Only samples of these thread ids");
  app.add_option("-c,--comms,--comm", a.comms, "Only samples of these comms");
  app.add_option("--dsos", a.dsos, "Only samples in these DSOs");
  app.add_option("-S,--symbols", a.symbols, "Only samples in these symbols");
  app.add_option("--time", f.time, "Time span of interest (start,stop; percent slices)");
  app.add_option("--max-stack", a.opts.max_stack, "Frames of a call chain to keep at most");
  app.add_flag("--no-inline", a.no_inline, "Leave out inlined frames of DWARF call chains");
  app.add_flag("-G,--hide-call-graph", a.hide_callchain, "Only each sample's own location");
  add_jobs_option(app, a.jobs);
  app.add_option("--symfs", a.lookup.symfs, "Look for files with symbols under this directory");
  app.add_option("-k,--vmlinux", a.lookup.vmlinux, "vmlinux file for kernel symbols");
  app.add_option("--kallsyms", a.lookup.kallsyms, "kallsyms file for kernel symbols");
  app.add_flag("--no-demangle", a.lookup.no_demangle, "Do not demangle C++ symbol names");
  app.add_flag("-q,--quiet", a.quiet, "No warnings or progress bar");
  app.add_option("--itrace", a.itrace,
                 "Intel PT: what to synthesize (perf's --itrace grammar; default: report's)")
      ->expected(0, 1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--no-itrace", a.no_itrace, "Do not decode instruction trace data");
}

namespace {

// Intel PT: the trace decoded as the profile reads the recording, its
// samples among the recorded ones (report's decode).
Status decode_itrace(ProfileArgs& a, session::Session& s) {
  if (a.no_itrace || a.input == "-") return ok();
  intelpt::ItraceOptions it = inject::report_itrace_defaults();
  if (!a.itrace.empty()) {
    it = {};
    for (const auto& one : a.itrace) PK_TRY(intelpt::parse_itrace(one, false, it));
  }
  inject::ItraceFeedOptions fo;
  fo.itrace = it;
  fo.jobs = jobs_to_use(a.jobs);
  fo.warn = [&a](const std::string& m) {
    a.warnings.push_back(m);
    if (!a.quiet) fmt::print(stderr, "{}\n", m);
  };
  PK_ASSIGN(const bool attached, inject::ItraceFeed::attach(s, a.input, std::move(fo)));
  (void)attached;
  return ok();
}

}  // namespace

Expected<std::unique_ptr<session::Session>> open_profile_session(ProfileArgs& a, ProgressBar& bar) {
  auto& f = a.opts.filter;
  f.comms = split_list(a.comms);
  f.dsos = split_list(a.dsos);
  f.symbols = split_list(a.symbols);
  PK_TRY(parse_list_option(a.pids, id_list_rules("pid"), f.pids));
  PK_TRY(parse_list_option(a.tids, id_list_rules("tid"), f.tids));
  PK_TRY(parse_list_option(a.cpus, id_list_rules("cpu"), f.cpus));
  f.have_cpus = !a.cpus.empty();
  a.opts.inline_frames = !a.no_inline;
  a.opts.callchains = !a.hide_callchain;
  if (a.input.empty())
    a.input = (!isatty(STDIN_FILENO) && lseek(STDIN_FILENO, 0, SEEK_CUR) < 0) ? "-" : "perf.data";

  session::SessionOptions so;
  so.symbols = symbolizer_options(a.lookup);
  so.read_ahead = jobs_to_use(a.jobs) > 1;
  so.warn = [&a](const std::string& m) {
    a.warnings.push_back(m);
    if (!a.quiet) fmt::print(stderr, "{}\n", m);
  };
  if (stderr_progress_wanted(a.quiet, false))
    so.progress = [&bar](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
  PK_ASSIGN(auto session, session::Session::open(a.input, std::move(so)));
  PK_TRY(decode_itrace(a, *session));
  return session;
}

Expected<profile::Profile> read_profile(ProfileArgs& a) {
  ProgressBar bar("Reading the recording...");
  PK_ASSIGN(auto session, open_profile_session(a, bar));
  auto p = profile::build_profile(*session, a.opts);
  bar.clear();
  if (!p) return p.error().with_context(session->reader().name());
  return p;
}

}  // namespace perfkit::cli
