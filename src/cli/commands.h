// The subcommands of the perfkit binary. Each lives in cmd_<name>.cc and
// takes the arguments after its name (argv[0] is the command name).
#pragma once

#include <span>
#include <string_view>

namespace perfkit::cli {

using CommandFn = int (*)(int argc, char** argv);

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandFn run;
};

int cmd_dump(int argc, char** argv);
int cmd_inject(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_buildid_list(int argc, char** argv);
int cmd_buildid_cache(int argc, char** argv);
int cmd_archive(int argc, char** argv);
int cmd_record(int argc, char** argv);
int cmd_list(int argc, char** argv);
int cmd_stat(int argc, char** argv);
int cmd_pt_synth(int argc, char** argv);
int cmd_script(int argc, char** argv);
// perfkit script report NAME: argv[0] is "report".
int cmd_script_report(int argc, char** argv);
int cmd_data(int argc, char** argv);
int cmd_diff(int argc, char** argv);
int cmd_evlist(int argc, char** argv);
int cmd_config(int argc, char** argv);

// Every command, in the order `perfkit help` lists them.
std::span<const Command> commands();

}  // namespace perfkit::cli
