// Shared pieces of the commands' option handling (CLI11).
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>

#include "base/error.h"

namespace perfkit::cli {

// Parses argv with `app`; on --help prints usage and returns 0 through
// `exit_code`; on a bad option prints a one-line error and returns 1.
// Returns true when the command should go on.
bool parse_options(CLI::App& app, int argc, char** argv, int& exit_code);

// Prints "perfkit CMD: message" to stderr and returns 1.
int fail(std::string_view cmd, const Error& e);

}  // namespace perfkit::cli
