// The options of the commands that read a recording into the profile model
// (data convert, script report): input, perf script's filters, call chains.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/options.h"
#include "profile/builder.h"
#include "profile/profile.h"
#include "session/session.h"

namespace perfkit::cli {

struct ProfileArgs {
  std::string input;
  std::string cpus, pids, tids, comms, dsos, symbols;
  SymbolArgs lookup;
  profile::ProfileOptions opts;
  bool no_inline = false, hide_callchain = false, quiet = false;
  unsigned jobs = 0;  // --jobs
  // Intel PT recordings: what to synthesize (perf's --itrace grammar; each
  // given on top of the ones before; report's defaults when none is).
  std::vector<std::string> itrace;
  bool no_itrace = false;
  // What reading the recording warned of (also printed unless quiet).
  std::vector<std::string> warnings;
};

// -i, the filters (-C, --pid, --tid, -c, --dsos, -S, --time), --max-stack,
// --no-inline, -G, --itrace, --no-itrace, the symbol options, -q, --jobs.
void add_profile_options(CLI::App& app, ProfileArgs& a);

class ProgressBar;

// Checks the options and opens the input (the filters set in a.opts); the
// session reports progress to `bar` on a terminal's stderr.
Expected<std::unique_ptr<session::Session>> open_profile_session(ProfileArgs& a, ProgressBar& bar);

// Opens the input and reads it into a profile, with a progress bar on a
// terminal's stderr. Errors: bad option values, the session's.
Expected<profile::Profile> read_profile(ProfileArgs& a);

}  // namespace perfkit::cli
