#include "cli/options.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "abi/perf_event.h"

namespace perfkit::cli {

namespace {

// The first letter of a short cluster ("-qZ") that is no option of `app`;
// letters after one that takes a value are that value ("-iZ" is -i Z).
std::optional<char> unknown_switch(const CLI::App& app, std::string_view cluster) {
  for (char c : cluster) {
    const CLI::Option* opt = app.get_option_no_throw(std::string{'-', c});
    if (!opt) return c;
    if (opt->get_expected_min() > 0) return std::nullopt;
  }
  return std::nullopt;
}

bool is_option(std::string_view arg) { return arg.size() > 1 && arg[0] == '-' && arg != "--"; }

}  // namespace

std::optional<std::string> unknown_option(const CLI::App& app, const std::vector<std::string>& args,
                                          bool prefix) {
  for (const std::string& arg : args) {
    if (arg == "--") return std::nullopt;
    if (is_option(arg)) {
      if (arg[1] == '-') return fmt::format("option `{}'", arg.substr(2));
      if (auto c = unknown_switch(app, std::string_view(arg).substr(1)))
        return fmt::format("switch `{}'", *c);
      return fmt::format("option `{}'", arg.substr(1));
    }
    if (prefix) return std::nullopt;
  }
  return std::nullopt;
}

bool parse_options(CLI::App& app, int argc, char** argv, int& exit_code) {
  const bool prefix = app.get_prefix_command();
  // Unknown options are left over rather than thrown, so that they can be
  // reported in perf's words; left-over positionals are still an error.
  if (!prefix) app.allow_extras();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    exit_code = 0;
    return false;
  } catch (const CLI::ParseError& e) {
    // An unknown option is named first, as perf does, even when something
    // else (a missing program) is wrong too.
    if (auto bad = unknown_option(app, app.remaining(), prefix)) {
      fmt::print(stderr, "  Error: unknown {}\n\n{}", *bad, app.help());
      exit_code = kUsageExit;
      return false;
    }
    fmt::print(stderr, "perfkit {}: {}\n", app.get_name(), e.what());
    fmt::print(stderr, "Run 'perfkit {} --help' for usage.\n", app.get_name());
    exit_code = 1;
    return false;
  }
  std::vector<std::string> rest = app.remaining();
  if (auto bad = unknown_option(app, rest, prefix)) {
    fmt::print(stderr, "  Error: unknown {}\n\n{}", *bad, app.help());
    exit_code = kUsageExit;
    return false;
  }
  // A "--" before positionals is left over too when extras are allowed.
  std::erase(rest, "--");
  if (!prefix && !rest.empty()) {
    fmt::print(stderr, "perfkit {}: {}\n", app.get_name(), CLI::ExtrasError(rest).what());
    fmt::print(stderr, "Run 'perfkit {} --help' for usage.\n", app.get_name());
    exit_code = 1;
    return false;
  }
  return true;
}

IntListRules id_list_rules(std::string_view what) {
  IntListRules r;
  r.what = what;
  if (what == "cpu") r.min = 0;
  return r;
}

symbol::SymbolizerOptions symbolizer_options(const SymbolArgs& a) {
  symbol::SymbolizerOptions o = symbol::symbolizer_options_from_env();
  o.symfs = a.symfs;
  o.vmlinux = a.vmlinux;
  o.kallsyms = a.kallsyms;
  o.demangle = !a.no_demangle;
  o.demangle_kernel = a.demangle_kernel;
  return o;
}

int fail(std::string_view cmd, const Error& e) {
  fmt::print(stderr, "perfkit {}: {}\n", cmd, e.message());
  return 1;
}

void add_event_switch_options(CLI::App& app, session::EventSwitchOptions& o) {
  app.add_option("--switch-on", o.on, "Consider events after the ocurrence of this event");
  app.add_option("--switch-off", o.off,
                 "Stop considering events after the ocurrence of this event");
  app.add_flag("--show-on-off-events", o.show_on_off,
               "Show the on/off switch events, used with --switch-on and --switch-off");
}

void add_jobs_option(CLI::App& app, unsigned& jobs) {
  app.add_option("--jobs", jobs,
                 "Threads to use (default 0: every core available); the output is the same for "
                 "any number");
}

unsigned jobs_to_use(unsigned jobs) {
  if (jobs) return jobs;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

Status check_stitch_lbr(const perfdata::EventSet& events, std::string_view prefix) {
  bool lbr = false;
  for (const auto& ev : events.events())
    lbr |= (ev.attr.branch_sample_type & abi::kBranchCallStack) != 0;
  // perf stitches LBR call stacks across samples; perfkit does not (yet)
  if (lbr) return make_error("--stitch-lbr: stitching LBR call stacks is not supported");
  fmt::print(stderr,
             "{}Can't find LBR callchain. Switch off --stitch-lbr.\n"
             "Please apply --call-graph lbr when recording.\n",
             prefix);
  return ok();
}

}  // namespace perfkit::cli
