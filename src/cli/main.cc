// perfkit: a perf-compatible profiling toolkit. Git-style subcommands.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/perfconfig.h"

namespace perfkit::cli {

namespace {

constexpr Command kCommands[] = {
    {"dump", "Dump the header and every record of a perf.data file", cmd_dump},
    {"inject", "Read a perf.data file and write it back, filtering or augmenting it", cmd_inject},
    {"report", "Read perf.data and display the profile", cmd_report},
    {"diff", "Read perf.data files and display the differential profile", cmd_diff},
    {"buildid-list", "List the buildids in a perf.data file", cmd_buildid_list},
    {"buildid-cache", "Manage build-id cache", cmd_buildid_cache},
    {"archive", "Pack the DSOs a perf.data file needs for another machine", cmd_archive},
    {"script", "Read perf.data and display trace output", cmd_script},
    {"data", "Convert perf.data into the formats other tools read", cmd_data},
    {"record", "Run a command and record its profile into perf.data", cmd_record},
    {"list", "List all symbolic event types", cmd_list},
    {"evlist", "List the event names in a perf.data file", cmd_evlist},
    {"stat", "Run a command and gather performance counter statistics", cmd_stat},
    {"config", "Get and set variables in a configuration file", cmd_config},
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

// Whether `man` is there and knows `page` (man -w finds its file).
bool has_man_page(const std::string& page) {
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    ::execlp("man", "man", "-w", page.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
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
  // As perf does: the manual page when man has it, else the usage.
  const std::string page = std::string("perfkit-") + argv[1];
  if (has_man_page(page)) {
    ::execlp("man", "man", page.c_str(), static_cast<char*>(nullptr));
  }
  char help[] = "--help";
  char* args[] = {argv[1], help, nullptr};
  return c->run(2, args);
}

// perf version --build-options: what this build has, in perf's layout.
int run_version(int argc, char** argv) {
  fmt::print("perfkit version {}\n", PERFKIT_VERSION);
  if (argc < 2 || std::string_view(argv[1]) != "--build-options") return 0;
  struct Part {
    const char* name;
    bool on;
    const char* what;
  };
  const Part parts[] = {
    {"dwarf", true, "libdw: DWARF call chains, source lines, inlined frames"},
    {"libelf", true, "symbols and build-ids"},
    {"libdebuginfod", true, "loaded when DEBUGINFOD_URLS is set"},
    {"libzstd", true, "perf record -z and compressed recordings"},
    {"libtraceevent", true, "tracepoint fields"},
    {"zydis", true, "Intel PT decoding (x86 instruction lengths and kinds)"},
    {"protobuf", true, "data convert --to-pprof"},
    {"libisal", true, "fast gzip (pprof) and compressed ELF sections"},
    {"libdeflate", true, "gzip output at higher levels (.gz)"},
    {"xxhash", true, "call-chain digests (XXH3-128, built in)"},
    {"html", true, "report --html, flame graphs"},
    {"libpython", false, "perf script -s PYTHON: not yet"},
    {"bpf", false, "BPF programs: not supported"},
    {"gtk2", false, "no GTK front end"},
    {"libslang", false, "no TUI; --stdio output"},
#if defined(__SANITIZE_ADDRESS__)
    {"asan", true, "built with AddressSanitizer"},
#endif
  };
  for (const Part& p : parts)
    fmt::print("{:>22}: [ {:<3} ]  # {}\n", p.name, p.on ? "on" : "OFF", p.what);
  return 0;
}

}  // namespace

std::span<const Command> commands() { return kCommands; }

// perf's global options before the command: --no-pager (no pager for
// report's output), --buildid-dir DIR (the build-id cache, as $PERF_BUILDID_DIR),
// --debug NAME[=N] (perf's debug variables; perfkit's commands take -v).
// Returns how many arguments they took, or -1 after perf's refusal.
int global_options(int argc, char** argv) {
  constexpr std::string_view kUsage =
      "\n Usage: perfkit [--version] [--help] [OPTIONS] COMMAND [ARGS]\n";
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--no-pager") {
      ::setenv("PERF_PAGER", "cat", 1);  // (the pager perfkit does not start)
      continue;
    }
    if (a == "--buildid-dir") {
      if (i + 1 >= argc) {
        fmt::print(stderr, "No directory given for --buildid-dir.\n{}", kUsage);
        return -1;
      }
      ::setenv("PERF_BUILDID_DIR", argv[++i], 1);
      continue;
    }
    if (a == "--debug") {
      if (i + 1 >= argc) {
        fmt::print(stderr, "No variable specified for --debug.\n{}", kUsage);
        return -1;
      }
      const std::string_view v = argv[++i];
      const std::string_view name = v.substr(0, v.find('='));
      if (name != "verbose" && name != "ordered-events" && name != "stderr" &&
          name != "data-convert" && name != "perf-event-open") {
        fmt::print(stderr, "Unknown option name '{}'\n{}", name, kUsage);
        return -1;
      }
      continue;
    }
    break;
  }
  return i - 1;
}

int main(int argc, char** argv) {
  // perf reads its configuration first; a bad value of a variable every
  // command reads stops any command (perf's status 255).
  if (!check_config(read_config(true))) return 255;
  const int globals = argc > 1 ? global_options(argc, argv) : 0;
  if (globals < 0) return 129;
  argc -= globals;
  argv += globals;
  if (argc < 2) {
    print_usage();
    return 1;
  }
  std::string_view cmd = argv[1];
  if (cmd == "--help" || cmd == "-h") {
    print_usage();
    return 0;
  }
  if (cmd == "--version" || cmd == "version") return run_version(argc - 1, argv + 1);
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
