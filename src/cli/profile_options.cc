#include "cli/profile_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include "cli/progress.h"
#include "inject/inject_itrace.h"
#include "inject/itrace_feed.h"
#include "intelpt/itrace_options.h"
#include "itrace/synth_events.h"
#include "session/session.h"
#include "session/shards.h"

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

namespace {

// The filters into a.opts, and the input's default.
Status settle_args(ProfileArgs& a) {
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
  return ok();
}

session::SessionOptions session_options(ProfileArgs& a, ProgressBar& bar) {
  session::SessionOptions so;
  so.symbols = symbolizer_options(a.lookup);
  so.read_ahead = jobs_to_use(a.jobs) > 1;
  so.warn = [&a](const std::string& m) {
    a.warnings.push_back(m);
    if (!a.quiet) fmt::print(stderr, "{}\n", m);
  };
  if (stderr_progress_wanted(a.quiet, false))
    so.progress = [&bar](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
  return so;
}

// How many sessions read the input side by side (--jobs): one for a pipe,
// a directory or an Intel PT recording (its decoder has threads of its own).
// Source lines are looked up on a thread of their own, which takes a core.
unsigned shards_for(const ProfileArgs& a) {
  const unsigned jobs = jobs_to_use(a.jobs) - (a.opts.source_lines ? 1 : 0);
  struct stat st {};
  if (jobs < 2 || a.input == "-" || ::stat(a.input.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return 1;
  return !a.no_itrace && itrace::has_intel_pt(a.input) ? 1 : jobs;
}

// Reads the input with `n` sessions side by side: one load of the kernel's
// and each DSO's symbols, warnings said once and in one session's order
// (at the end), the progress of the last (which reads every record). Each maps the file on its own
// and releases the pages behind itself: a later run reads through the earlier runs' records well
// ahead of them, and one mapping released behind the slowest would keep all the pages between
// resident.
Expected<profile::Profile> read_shards(ProfileArgs& a, ProgressBar& bar, unsigned n) {
  session::SessionOptions so = session_options(a, bar);
  so.read_ahead = false;
  session::RunWarnings warnings(n);
  so.symbols.kallsyms_share = std::make_shared<symbol::KallsymsShare>();
  so.symbols.dso_share = std::make_shared<symbol::DsoShare>();
  std::vector<std::unique_ptr<session::Session>> sessions;
  std::vector<session::Session*> all;
  for (unsigned k = 0; k < n; ++k) {
    session::SessionOptions sk = so;
    sk.warn = warnings.for_shard(k);
    sk.shared_slot = k;
    if (k + 1 < n) sk.progress = nullptr;
    auto s = session::Session::open(a.input, std::move(sk));
    if (!s) {
      warnings.say(so.warn);
      return s.error();
    }
    all.push_back(sessions.emplace_back(std::move(*s)).get());
  }
  auto p = profile::build_profile_shards(all, a.opts);
  warnings.say(so.warn);
  if (!p) return p.error().with_context(all[0]->reader().name());
  return p;
}

}  // namespace

Expected<std::unique_ptr<session::Session>> open_profile_session(ProfileArgs& a, ProgressBar& bar) {
  PK_TRY(settle_args(a));
  PK_ASSIGN(auto session, session::Session::open(a.input, session_options(a, bar)));
  PK_TRY(decode_itrace(a, *session));
  return session;
}

Expected<profile::Profile> read_profile(ProfileArgs& a) {
  ProgressBar bar("Reading the recording...");
  PK_TRY(settle_args(a));
  if (const unsigned n = shards_for(a); n > 1) {
    auto p = read_shards(a, bar, n);
    bar.clear();
    return p;
  }
  PK_ASSIGN(auto session, open_profile_session(a, bar));
  auto p = profile::build_profile(*session, a.opts);
  bar.clear();
  if (!p) return p.error().with_context(session->reader().name());
  return p;
}

}  // namespace perfkit::cli
