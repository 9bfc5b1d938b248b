// perfkit: a perf-compatible profiling toolkit. Git-style subcommands.
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace perfkit::cli {

namespace {

constexpr Command kCommands[] = {
    {"dump", "Dump the header and every record of a perf.data file", cmd_dump},
    {"inject", "Read a perf.data file and write it back, filtering or augmenting it", cmd_inject},
    {"report", "Read perf.data and display the profile", cmd_report},
    {"buildid-list", "List the buildids in a perf.data file", cmd_buildid_list},
    {"buildid-cache", "Manage build-id cache", cmd_buildid_cache},
    {"archive", "Pack the DSOs a perf.data file needs for another machine", cmd_archive},
    {"script", "Read perf.data and display trace output", cmd_script},
    {"data", "Convert perf.data into the formats other tools read", cmd_data},
    {"record", "Run a command and record its profile into perf.data", cmd_record},
    {"list", "List all symbolic event types", cmd_list},
    {"stat", "Run a command and gather performance counter statistics", cmd_stat},
    {"pt-synth", "Run a command single-stepped and write its Intel PT trace (test tool)",
     cmd_pt_synth},
};

void print_usage(std::FILE* to = stdout) {
  fmt::print(to,
             "\n usage: perfkit [--version] [--help] COMMAND [ARGS]\n\n"
             " The most commonly used perfkit commands are:\n");
  for (const auto& c : kCommands) fmt::print(to, "   {:<14} {}\n", c.name, c.summary);
  fmt::print(to, "\n See 'perfkit help COMMAND' for more information on a specific command.\n\n");
}

const Command* find(std::string_view name) {
  for (const auto& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}

int run_help(int argc, char** argv) {
  if (argc < 2) {
    print_usage();
    return 0;
  }
  const Command* c = find(argv[1]);
  if (!c) {
    fmt::print(stderr, "perfkit: '{}' is not a perfkit command. See 'perfkit --help'.\n", argv[1]);
    return 1;
  }
  char help[] = "--help";
  char* args[] = {argv[1], help, nullptr};
  return c->run(2, args);
}

}  // namespace

std::span<const Command> commands() { return kCommands; }

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage();
    return 1;
  }
  std::string_view cmd = argv[1];
  if (cmd == "--help" || cmd == "-h") {
    print_usage();
    return 0;
  }
  if (cmd == "--version" || cmd == "version") {
    fmt::print("perfkit version {}\n", PERFKIT_VERSION);
    return 0;
  }
  if (cmd == "help") return run_help(argc - 1, argv + 1);
  if (cmd.size() > 1 && cmd[0] == '-') {
    // perf's words and status for an option it does not know.
    fmt::print(stderr, "Unknown option: {}\n", cmd);
    print_usage(stderr);
    return 129;
  }
  const Command* c = find(cmd);
  if (!c) {
    fmt::print(stderr, "perfkit: '{}' is not a perfkit command. See 'perfkit --help'.\n", cmd);
    return 1;
  }
  return c->run(argc - 1, argv + 1);
}

}  // namespace perfkit::cli

int main(int argc, char** argv) { return perfkit::cli::main(argc, argv); }
