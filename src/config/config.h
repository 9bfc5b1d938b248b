// perf's configuration files (perf-config(1)): /etc/perfconfig, then
// ~/.perfconfig, or only the file $PERF_CONFIG names. Sections hold
// "name = value" lines; a key is "section.name". The parser reads perf's
// (git's) syntax: `[section]` and `[section "sub"]` headers, `#` and `;`
// comments, quoted values with \t \b \n \\ \" escapes and a trailing
// backslash joining lines; section and variable names are lower-cased.
// A bad line ends the file (and the files after it); what came before is
// kept, as perf keeps it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace perfkit::config {

struct Item {
  std::string name;  // what follows the section's first dot: "children", "sub.x"
  std::string value;
  bool from_system = false;  // read from (or set in) the system file
};

struct Section {
  std::string name;
  bool from_system = false;
  std::vector<Item> items;
};

// The variables of one or more files, in the order they first appear.
class ConfigSet {
 public:
  // Parses `text` (the file `path`) into the set: a variable seen again
  // takes the later value. On a bad line: perf's "bad config file line N
  // in PATH", with the variables before it kept.
  Status parse(std::string_view text, std::string_view path, bool from_system);

  // Sets "section.name" (split at the first dot) to `value`.
  void set(std::string_view key, std::string_view value, bool from_system);
  // The value of "section.name", if set.
  const std::string* get(std::string_view key) const;

  const std::vector<Section>& sections() const { return sections_; }
  bool empty() const { return sections_.empty(); }

  // The file perf config writes: its first line, then each section's
  // header and "\tname = value" lines; system variables only into the
  // system file (`system_file`).
  std::string render(bool system_file) const;

 private:
  std::vector<Section> sections_;
};

// Which files to read: `exclusive` alone when set ($PERF_CONFIG, or
// perf config's --user / --system), else the system file and the user's.
struct Files {
  std::string exclusive;
  std::string system = "/etc/perfconfig";
  std::string user;         // $HOME/.perfconfig; empty without a home
  bool read_system = true;  // not with $PERF_CONFIG_NOSYSTEM
  bool read_user = true;    // not with $PERF_CONFIG_NOGLOBAL
};

// Reads the files `files` names into one set. Missing files are skipped;
// a user file owned by someone else is skipped with perf's warning. Each
// message (a bad line, a skipped file) is appended to `warnings`.
ConfigSet load(const Files& files, std::vector<std::string>& warnings);

// perf's perf_config_bool: true/yes/on, false/no/off (any case), an empty
// value false, a number true when not zero. nullopt for anything else
// (perf warns "bad config value for 'KEY', ignoring..." and reads false).
std::optional<bool> parse_bool(std::string_view value);

}  // namespace perfkit::config
