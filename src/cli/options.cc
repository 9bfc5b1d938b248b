#include "cli/options.h"

namespace perfkit::cli {

bool parse_options(CLI::App& app, int argc, char** argv, int& exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    exit_code = 0;
    return false;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "perfkit {}: {}\n", app.get_name(), e.what());
    fmt::print(stderr, "Run 'perfkit {} --help' for usage.\n", app.get_name());
    exit_code = 1;
    return false;
  }
  return true;
}

int fail(std::string_view cmd, const Error& e) {
  fmt::print(stderr, "perfkit {}: {}\n", cmd, e.message());
  return 1;
}

}  // namespace perfkit::cli
