// perfkit config: get and set variables of perf's configuration files, as
// 'perf config' does. `-l` (or no argument) lists every variable,
// "section.name" prints one, "section.name=value" sets one in the user's
// file (~/.perfconfig, or the file $PERF_CONFIG names; --system:
// /etc/perfconfig), which is written whole, perf's way.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/perfconfig.h"

namespace perfkit::cli {

namespace {

constexpr int kFailed = 255;  // perf's status for what it refuses here

struct Args {
  bool list = false, user = false, system = false;
  std::vector<std::string> vars;
};

void print_usage_lines(const char* which) {
  fmt::print(stderr,
             "\n Usage: perfkit config [<file-option>] [options] [section.name[=value] ...]\n\n");
  if (std::string_view(which) == "l")
    fmt::print(stderr, "    -l, --list            show current config variables\n");
  if (std::string_view(which) == "files")
    fmt::print(stderr,
               "        --user            use user config file\n"
               "        --system          use system config file\n");
  fmt::print(stderr, "\n");
}

// Splits "section.name[=value]" as perf's parse_config_arg, with its
// messages; `value` is nullopt for a get.
bool parse_arg(const std::string& arg, std::string& var, std::optional<std::string>& value) {
  const std::size_t dot = arg.find('.');
  if (dot == std::string::npos || dot == 0) {
    fmt::print(stderr, "The config variable does not contain a section name: {}\n", arg);
    return false;
  }
  if (dot + 1 == arg.size()) {
    fmt::print(stderr, "The config variable does not contain a variable name: {}\n", arg);
    return false;
  }
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos) {
    var = arg;
    value.reset();
    return true;
  }
  if (eq + 1 == arg.size()) {
    fmt::print(stderr, "The config variable does not contain a value: {}\n", arg);
    return false;
  }
  var = arg.substr(0, eq);
  value = arg.substr(eq + 1);
  return true;
}

// Writes `text` to `path` as perf's file: a regular file (or none yet)
// through a temporary file renamed over it, through a symbolic link to
// where it points; anything else ($PERF_CONFIG=/dev/null) written in place.
bool write_whole(std::string path, const std::string& text) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      path = real;
      std::free(real);
    }
  }
  const bool in_place = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  const std::string tmp = in_place ? path : path + ".perfkit-tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  const bool written = done == text.size() && (in_place || ::fsync(fd) == 0);
  ::close(fd);
  if (in_place) return written;
  if (!written || std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

void list(const config::ConfigSet& set) {
  for (const config::Section& s : set.sections())
    for (const config::Item& i : s.items) fmt::print("{}.{}={}\n", s.name, i.name, i.value);
}

int get_and_set(const Args& a, config::ConfigSet& set, const std::string& file) {
  bool changed = false;
  for (const std::string& arg : a.vars) {
    std::string var;
    std::optional<std::string> value;
    if (!parse_arg(arg, var, value)) return kFailed;
    if (!value) {
      if (const std::string* v = set.get(var)) fmt::print("{}={}\n", var, *v);
      continue;
    }
    set.set(var, *value, a.system);
    changed = true;
  }
  if (!changed) return 0;
  std::fflush(stdout);
  if (!write_whole(file, set.render(a.system))) {
    fmt::print(stderr, "Failed to set the configs on {}\n", file);
    return kFailed;
  }
  return 0;
}

}  // namespace

int cmd_config(int argc, char** argv) {
  Args a;
  CLI::App app{
      "Get and set variables of perf's configuration files, as 'perf config' does.\n\n"
      " usage: perfkit config [<file-option>] [options] [section.name[=value] ...]",
      "config"};
  app.add_flag("-l,--list", a.list, "show current config variables");
  app.add_flag("--system", a.system, "use system config file");
  app.add_flag("--user", a.user, "use user config file");
  app.add_option("vars", a.vars, "section.name to print, section.name=value to set");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  if (a.user && a.system) {
    fmt::print(stderr, "Error: only one config file at a time\n");
    print_usage_lines("files");
    return kFailed;
  }
  config::Files files = config_files();
  if (a.system)
    files.exclusive = files.system;
  else if (a.user)
    files.exclusive = files.user;
  const std::string file = files.exclusive.empty() ? files.user : files.exclusive;
  // (read again, as perf does, from the files the options name)
  std::vector<std::string> warnings;
  config::ConfigSet set = config::load(files, warnings);
  for (const std::string& w : warnings) fmt::print(stderr, "{}\n", w);
  if (a.list && !a.vars.empty()) {
    fmt::print(stderr, "Error: takes no arguments\n");
    print_usage_lines("l");
    return 0;  // (perf's status here)
  }
  if (a.list || a.vars.empty()) {
    list(set);
    return 0;
  }
  if (file.empty()) {
    fmt::print(stderr, "Failed to set the configs on {}\n", "$HOME/.perfconfig");
    return kFailed;
  }
  return get_and_set(a, set, file);
}

}  // namespace perfkit::cli
