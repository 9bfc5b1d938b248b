#include "capture/tracefs.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/mapped_file.h"
#include "base/text.h"

namespace perfkit::capture {

namespace fs = std::filesystem;

namespace {

bool is_dir(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::vector<std::string> subdirs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2)) out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Expected<Tracefs> Tracefs::locate(const SystemPaths& paths) {
  std::vector<std::string> candidates;
  if (!paths.tracefs.empty()) {
    candidates.push_back(paths.tracefs);
  } else {
    candidates.push_back(paths.sysfs + "/kernel/tracing");
    candidates.push_back(paths.sysfs + "/kernel/debug/tracing");
  }
  for (const auto& c : candidates)
    if (is_dir(c + "/events")) return Tracefs(c);
  return make_error("tracefs not found (looked in {}); mount it with 'mount -t tracefs nodev {}'",
                    fmt::join(candidates, " and "), candidates.front());
}

Tracefs Tracefs::at(std::string root) { return Tracefs(std::move(root)); }

Expected<std::uint64_t> Tracefs::event_id(std::string_view system, std::string_view name) const {
  const std::string dir = fmt::format("{}/events/{}/{}", root_, system, name);
  auto text = read_text_file(dir + "/id");
  std::uint64_t id = 0;
  if (!text) {
    if (!is_dir(dir)) return make_error("File {} not found", dir);
    return make_error("cannot read {}/id (permission?)", dir);
  }
  if (!parse_u64(trim(*text), id, 10)) return make_error("{}/id: not a number", dir);
  return id;
}

Expected<std::string> Tracefs::event_format(std::string_view system, std::string_view name) const {
  return read_text_file(fmt::format("{}/events/{}/{}/format", root_, system, name));
}

Expected<std::string> Tracefs::read(std::string_view relative) const {
  return read_text_file(fmt::format("{}/{}", root_, relative));
}

std::vector<std::string> Tracefs::systems() const { return subdirs(root_ + "/events"); }

std::vector<Tracepoint> Tracefs::match(std::string_view system_glob,
                                       std::string_view name_glob) const {
  std::vector<Tracepoint> out;
  for (const auto& sys : systems()) {
    if (!glob_match(system_glob, sys)) continue;
    // Only events with an id can be opened (ftrace's internal ones have none).
    for (const auto& name : subdirs(root_ + "/events/" + sys)) {
      std::error_code ec;
      if (glob_match(name_glob, name) &&
          fs::exists(root_ + "/events/" + sys + "/" + name + "/id", ec))
        out.push_back({sys, name});
    }
  }
  return out;
}

std::vector<Tracepoint> Tracefs::list() const { return match("*", "*"); }

}  // namespace perfkit::capture
