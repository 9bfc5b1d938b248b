// perfkit inject: read a perf.data file or stream and write it back.
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/stdin_peek.h"
#include "inject/inject.h"
#include "inject/inject_itrace.h"
#include "inject/inject_vm_time.h"

namespace perfkit::cli {

namespace {

// --vm-time-correlation: the input is updated in place (inject_vm_time.h),
// with perf's checks and words.
int vm_time_correlation(const std::string& value, const std::string& input,
                        const std::string& output, bool force,
                        const std::vector<std::string>& itrace) {
  inject::VmTimeOptions vo;
  bool dry_run = false;
  inject::parse_vm_time_option(value, dry_run, vo.args);
  if (input == "-") {
    fmt::print(stderr, "Input file name required for in-place updating\n");
    return 255;
  }
  if (output != "-") {
    fmt::print(stderr, "Output file name must not be specified for in-place updating\n");
    return 255;
  }
  if (!force && !dry_run) {
    fmt::print(stderr,
               "The input file would be updated in place, the --force option is required.\n");
    return 255;
  }
  intelpt::ItraceOptions io = intelpt::itrace_defaults(true);
  for (const auto& one : itrace) {
    auto ps = intelpt::parse_itrace(one, false, io);
    if (!ps) return fail("inject", ps.error());
  }
  vo.timeless = io.timeless;
  int status = 1;
  auto st = inject::run_vm_time_correlation(
      input, dry_run, vo, [](std::string_view line) { fmt::print(stderr, "{}\n", line); }, status);
  if (st) return 0;
  if (status == 1) return fail("inject", st.error());
  fmt::print(stderr, "{}\n", st.error().message());  // perf's own failure, and its status
  return status;
}

}  // namespace

int cmd_inject(int argc, char** argv) {
  CLI::App app("Read a perf.data file or stream and write it back, as 'perf inject' does.",
               "inject");
  std::string input = "-";
  std::string output = "-";
  inject::InjectOptions opts;
  app.add_option("-i,--input", input, "Input file name ('-' for stdin)")->capture_default_str();
  app.add_option("-o,--output", output, "Output file name ('-' for stdout)")->capture_default_str();
  app.add_flag("-b,--build-ids", opts.build_ids, "Inject build-ids into the output stream");
  app.add_flag("-s,--sched-stat", opts.sched_stat,
               "Merge sched-stat and sched-switch for getting events where and how long tasks "
               "slept");
  app.add_flag("-j,--jit", opts.jit, "merge jitdump files into perf.data file");
  app.add_flag("--buildid-all", opts.build_id_all,
               "Inject build-ids of all DSOs into the output stream");
  std::string guest_data;
  auto* guest_opt =
      app.add_option("--guest-data", guest_data,
                     "inject events from a guest perf.data file: PATH,PID[,OFFSET[,SCALE]] "
                     "(the hypervisor's PID, the guest's TSC offset and multiplier)")
          ->expected(0, 1);
  app.add_option("--guestmount", opts.guestmount,
                 "guest mount directory under which every guest os instance has a subdir");
  std::string known;
  app.add_option("--known-build-ids", known,
                 "Override build-ids for DSOs: 'BUILDID1 DSO1,BUILDID2 DSO2'");
  // perf's options that change nothing perfkit's inject reads or writes:
  // it never checks the file's owner, loads no vmlinux or kallsyms to inject.
  bool accepted = false;
  std::string accepted_path;
  bool force = false;
  app.add_flag("-f,--force", force, "don't complain, do it");
  app.add_flag("-v,--verbose", accepted, "be more verbose (show build ids, etc)");
  app.add_flag("--ignore-vmlinux", accepted, "don't load vmlinux even if found");
  app.add_option("-k,--vmlinux", accepted_path, "vmlinux pathname");
  app.add_option("--kallsyms", accepted_path, "kallsyms pathname");
  std::vector<std::string> itrace;  // each --itrace given, parsed on top of the ones before
  auto* itrace_opt = app.add_option("--itrace", itrace,
                                    "Decode the Intel PT trace into synthesized samples (perf's "
                                    "--itrace grammar: i b c r x w p e g l s A Z)")
                         ->expected(0, 1)
                         ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  bool strip = false;
  app.add_flag("--strip", strip, "Use with --itrace to strip out non-synthesized events");
  std::string vm_time;
  auto* vm_time_opt =
      app.add_option("--vm-time-correlation", vm_time,
                     "correlate time between VM guests and the host: "
                     "[dry-run] [<TSC Offset> [: <VMCS> [, <VMCS>]...]]... (updates the input "
                     "file in place: -f needed unless dry-run)")
          ->expected(0, 1);
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  if (vm_time_opt->count() > 0) return vm_time_correlation(vm_time, input, output, force, itrace);
  // No half-written output stays under its name.
  auto failed = [&output](const Error& e) {
    if (output != "-") ::unlink(output.c_str());
    return fail("inject", e);
  };
  opts.known_build_ids = inject::parse_known_build_ids(known);
  opts.input_path = input;
  if (guest_opt->count() > 0) {
    auto g = inject::parse_guest_data(guest_data);
    if (!g) {
      // (perf's option callback fails: its message, then the usage line)
      fmt::print(stderr, "{}\n\n Usage: perfkit inject [<options>]\n\n", g.error().message());
      return 129;
    }
    opts.guest = *g;
  }
  if (strip && itrace_opt->count() == 0) {
    fmt::print(stderr, "--strip option requires --itrace option\n");
    return 255;
  }
  StdinPeek peek;
  if (itrace_opt->count() > 0 && input == "-") {
    auto st = peek_stdin_for_intel_pt(peek);
    if (!st) return fail("inject", st.error());
    if (peek.spooled.empty())
      return fail("inject", make_error("<stdin>: no Intel PT AUXTRACE_INFO record to decode"));
    input = peek.spooled;
  }
  if (itrace_opt->count() > 0) {
    inject::InjectItraceOptions io;
    io.strip = strip;
    io.itrace = {};
    for (const auto& one : itrace) {
      auto ps = intelpt::parse_itrace(one, false, io.itrace);
      if (!ps) return fail("inject", ps.error());
    }
    ProgressBar bar("Processing Intel PT trace...");
    const bool show = stderr_progress_wanted(false, false);
    io.warn = [&bar](const std::string& m) {
      bar.clear();
      fmt::print(stderr, "{}\n", m);
    };
    if (show)
      io.progress = [&bar](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
    auto st = inject::run_inject_itrace(input, output, io);
    bar.clear();
    if (!st) return failed(st.error());
    return 0;
  }

  perfdata::ReaderOptions ro;
  ro.warn = [](const std::string& m) { fmt::print(stderr, "Warning: {}\n", m); };
  auto reader = perfdata::Reader::open(input, ro);
  if (!reader) return fail("inject", reader.error());
  if (opts.sched_stat && (*reader)->is_pipe()) {
    // perf 6.1 refuses it too (-EINVAL), without a word
    fmt::print(stderr, "inject --sched-stat: {}: a pipe-mode input cannot be merged\n",
               (*reader)->name());
    return 234;
  }
  auto st = inject::run_inject(**reader, output, opts);
  if (!st) return failed(st.error());
  return 0;
}

}  // namespace perfkit::cli
