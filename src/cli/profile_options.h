// The options of the commands that read a recording into the profile model
// (data convert, script report): input, perf script's filters, call chains.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/error.h"
#include "cli/options.h"
#include "profile/builder.h"
#include "profile/profile.h"

namespace perfkit::cli {

struct ProfileArgs {
  std::string input;
  std::string cpus, pids, tids, comms, dsos, symbols;
  SymbolArgs lookup;
  profile::ProfileOptions opts;
  bool no_inline = false, hide_callchain = false, quiet = false;
};

// -i, the filters (-C, --pid, --tid, -c, --dsos, -S, --time), --max-stack,
// --no-inline, -G, the symbol options, -q.
void add_profile_options(CLI::App& app, ProfileArgs& a);

// Opens the input and reads it into a profile, with a progress bar on a
// terminal's stderr. Errors: bad option values, the session's.
Expected<profile::Profile> read_profile(ProfileArgs& a);

}  // namespace perfkit::cli
