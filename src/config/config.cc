#include "config/config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/text.h"

namespace perfkit::config {

namespace {

constexpr std::size_t kMaxName = 1024;   // perf's MAXNAME
constexpr std::size_t kMaxValue = 1023;  // perf's value buffer, less its NUL

bool key_char(int c) { return std::isalnum(c) || c == '-' || c == '_'; }
char lower(int c) { return static_cast<char>(std::tolower(c)); }

// perf's reader: one character at a time, "\r\n" read as '\n', the end of
// the text read as a last '\n' (and `eof` set), lines counted from 1.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  int next() {
    if (at_ >= text_.size()) {
      eof = true;
      return '\n';
    }
    int c = static_cast<unsigned char>(text_[at_++]);
    if (c == '\r' && at_ < text_.size() && text_[at_] == '\n') c = text_[at_++];
    if (c == '\n') ++line;
    return c;
  }

  // A value after '=': blanks outside quotes collapse into one and are
  // dropped at either end, comments end it, escapes and quotes as perf's.
  std::optional<std::string> value() {
    std::string v;
    bool quote = false, comment = false, space = false;
    for (;;) {
      int c = next();
      if (v.size() >= kMaxValue) return std::nullopt;
      if (c == '\n') {
        if (quote) return std::nullopt;
        return v;
      }
      if (comment) continue;
      if (std::isspace(c) && !quote) {
        space = true;
        continue;
      }
      if (!quote && (c == ';' || c == '#')) {
        comment = true;
        continue;
      }
      if (space) {
        if (!v.empty()) v += ' ';
        space = false;
      }
      if (c == '\\') {
        switch (c = next()) {
          case '\n':
            continue;
          case 't':
            c = '\t';
            break;
          case 'b':
            c = '\b';
            break;
          case 'n':
            c = '\n';
            break;
          case '\\':
          case '"':
            break;
          default:
            return std::nullopt;
        }
        v += static_cast<char>(c);
        continue;
      }
      if (c == '"') {
        quote = !quote;
        continue;
      }
      v += static_cast<char>(c);
    }
  }

  // The rest of a section header after '[': "name]" or `name "sub"]`.
  std::optional<std::string> section() {
    std::string name;
    for (;;) {
      int c = next();
      if (eof) return std::nullopt;
      if (c == ']') return name;
      if (std::isspace(c)) return subsection(std::move(name), c);
      if (!key_char(c) && c != '.') return std::nullopt;
      if (name.size() > kMaxName / 2) return std::nullopt;
      name += lower(c);
    }
  }

  bool eof = false;
  int line = 1;

 private:
  std::optional<std::string> subsection(std::string name, int c) {
    do {
      if (c == '\n') return std::nullopt;
      c = next();
    } while (std::isspace(c));
    if (c != '"') return std::nullopt;
    name += '.';
    for (;;) {
      int ch = next();
      if (ch == '\n') return std::nullopt;
      if (ch == '"') break;
      if (ch == '\\' && (ch = next()) == '\n') return std::nullopt;
      name += static_cast<char>(ch);
      if (name.size() > kMaxName / 2) return std::nullopt;
    }
    if (next() != ']') return std::nullopt;
    return name;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace

Status ConfigSet::parse(std::string_view text, std::string_view path, bool from_system) {
  Reader in(text);
  std::string base;  // "section." of the current header
  bool comment = false;
  // The name's first letter was read; reads the rest and its value.
  auto variable = [&](int first) -> bool {
    std::string var = base;
    var += lower(first);
    int c;
    for (;;) {
      c = in.next();
      if (in.eof || !key_char(c)) break;
      var += lower(c);
      if (var.size() >= kMaxName) return false;
    }
    while (c == ' ' || c == '\t') c = in.next();
    if (c == '\n') return false;  // no value: perf refuses it
    if (c != '=') return false;
    std::optional<std::string> value = in.value();
    if (!value) return false;
    const std::size_t dot = var.find('.');
    if (dot == std::string::npos) return false;  // no section
    set(var, *value, from_system);
    return true;
  };
  for (;;) {
    int c = in.next();
    if (c == '\n') {
      if (in.eof) return ok();
      comment = false;
      continue;
    }
    if (comment || std::isspace(c)) continue;
    if (c == '#' || c == ';') {
      comment = true;
      continue;
    }
    if (c == '[') {
      std::optional<std::string> name = in.section();
      if (!name || name->empty()) break;
      base = *name + '.';
      continue;
    }
    if (!std::isalpha(c)) break;
    const int line = in.line;
    if (!variable(c)) {
      in.line = line;
      break;
    }
  }
  return make_error("bad config file line {} in {}", in.line, path);
}

void ConfigSet::set(std::string_view key, std::string_view value, bool from_system) {
  const std::size_t dot = key.find('.');
  const std::string_view section = key.substr(0, dot);
  const std::string_view name = dot == std::string_view::npos ? "" : key.substr(dot + 1);
  auto s = std::find_if(sections_.begin(), sections_.end(),
                        [&](const Section& x) { return x.name == section; });
  if (s == sections_.end()) {
    sections_.push_back({std::string(section), from_system, {}});
    s = sections_.end() - 1;
  }
  auto it =
      std::find_if(s->items.begin(), s->items.end(), [&](const Item& x) { return x.name == name; });
  if (it == s->items.end()) {
    s->items.push_back({std::string(name), std::string(value), from_system});
    return;
  }
  it->value = value;
  it->from_system = from_system;
}

const std::string* ConfigSet::get(std::string_view key) const {
  for (const Section& s : sections_) {
    if (!key.starts_with(s.name) || key.size() <= s.name.size() || key[s.name.size()] != '.')
      continue;
    const std::string_view name = key.substr(s.name.size() + 1);
    for (const Item& i : s.items)
      if (i.name == name) return &i.value;
  }
  return nullptr;
}

std::string ConfigSet::render(bool system_file) const {
  std::string out = "# this file is auto-generated.\n";
  for (const Section& s : sections_) {
    if (!system_file && s.from_system) continue;
    out += "[" + s.name + "]\n";
    for (const Item& i : s.items) {
      if (!system_file && i.from_system) continue;
      out += "\t" + i.name + " = " + i.value + "\n";
    }
  }
  return out;
}

namespace {

// Reads one file into `set`; false when it had a bad line (perf then
// reads no further file).
bool read_file(ConfigSet& set, const std::string& path, bool from_system,
               std::vector<std::string>& warnings) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return true;
  std::ostringstream text;
  text << in.rdbuf();
  if (Status st = set.parse(text.str(), path, from_system); !st) {
    warnings.push_back(st.error().message());
    return false;
  }
  return true;
}

}  // namespace

ConfigSet load(const Files& files, std::vector<std::string>& warnings) {
  ConfigSet set;
  if (!files.exclusive.empty()) {
    read_file(set, files.exclusive, files.exclusive == files.system, warnings);
    return set;
  }
  if (files.read_system && ::access(files.system.c_str(), R_OK) == 0 &&
      !read_file(set, files.system, true, warnings))
    return set;
  if (files.read_user && !files.user.empty()) {
    struct stat st {};
    if (::stat(files.user.c_str(), &st) != 0 || st.st_size == 0) return set;
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
      warnings.push_back(
          fmt::format("File {} not owned by current user or root, ignoring it.", files.user));
      return set;
    }
    read_file(set, files.user, false, warnings);
  }
  return set;
}

std::optional<bool> parse_bool(std::string_view value) {
  if (value.empty()) return false;
  if (iequals(value, "true") || iequals(value, "yes") || iequals(value, "on")) return true;
  if (iequals(value, "false") || iequals(value, "no") || iequals(value, "off")) return false;
  std::int64_t n = 0;
  if (parse_i64(value, n)) return n != 0;
  return std::nullopt;
}

}  // namespace perfkit::config
