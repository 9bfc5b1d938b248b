// Shared pieces of the commands' option handling (CLI11).
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/text.h"
#include "perfdata/event_set.h"
#include "session/event_switch.h"
#include "symbol/symbolizer.h"

namespace perfkit::cli {

// perf's exit status for a command line it does not understand.
inline constexpr int kUsageExit = 129;

// Parses argv with `app`. Returns true when the command should go on;
// otherwise `exit_code` says how to leave:
// - --help: usage on stdout, 0;
// - an unknown option, as perf says it ("  Error: unknown option `NAME'" or
//   "unknown switch `C'", then the usage), on stderr, 129; for a command
//   that runs a program (app.prefix_command()), every option before the
//   program's name or "--" must be known;
// - any other bad option or value: a one-line error, 1.
bool parse_options(CLI::App& app, int argc, char** argv, int& exit_code);

// --stitch-lbr (report, script): perf's warning on stderr, after `prefix`
// (report's "Warning:\n"), when no event has LBR call stacks; an error when
// one has (stitching them is not built).
Status check_stitch_lbr(const perfdata::EventSet& events, std::string_view prefix);

// The unknown option among `args` (what CLI11 left unparsed), as perf's error
// names it: "option `NAME'" for a long one (with its "=VALUE"), "switch `C'"
// for the first unknown letter of a short cluster; nullopt when `args` holds
// no option. With `prefix`, only the first argument is looked at (the rest
// belong to the program to run).
std::optional<std::string> unknown_option(const CLI::App& app, const std::vector<std::string>& args,
                                          bool prefix);

// Parses the list of a --pid, --tid or -C/--cpu option ("1,3-5") into
// `out`, as parse_int_list with `rules`. Errors: parse_int_list's.
template <class T>
Status parse_list_option(std::string_view text, const IntListRules& rules, std::vector<T>& out) {
  PK_ASSIGN(auto list, parse_int_list(text, rules));
  out.assign(list.begin(), list.end());
  return ok();
}
// The rules for a list of ids named `what` ("pid", "cpu"): cpus from 0.
IntListRules id_list_rules(std::string_view what);

// The options of report's and script's symbol lookup: --symfs, -k/--vmlinux,
// --kallsyms, --no-demangle, --demangle-kernel.
struct SymbolArgs {
  std::string symfs, vmlinux, kallsyms;
  bool no_demangle = false, demangle_kernel = false;
};
// The symbolizer's options: the environment's (PERF_BUILDID_DIR, HOME) with
// `a` on top.
symbol::SymbolizerOptions symbolizer_options(const SymbolArgs& a);

// Prints "perfkit CMD: message" to stderr and returns 1.
int fail(std::string_view cmd, const Error& e);

// --jobs N (long only: perf's -j is another option in each command): the
// threads a command may use; 0, the default, is every core available. The
// output is the same for any N.
void add_jobs_option(CLI::App& app, unsigned& jobs);
// What --jobs' `jobs` comes to: the cores available for 0, else `jobs`.
unsigned jobs_to_use(unsigned jobs);

// --switch-on, --switch-off, --show-on-off-events (report and script).
void add_event_switch_options(CLI::App& app, session::EventSwitchOptions& o);

}  // namespace perfkit::cli
