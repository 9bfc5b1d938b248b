#include "capture/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <regex.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace perfkit::capture {

Expected<std::string> cgroup_mountpoint(const SystemPaths& paths) {
  std::ifstream in(paths.procfs + "/mounts");
  std::string line, v1, v2;
  while (v1.empty() && std::getline(in, line)) {
    // "<device> <mount point> <type> <options> ..."
    std::istringstream f(line);
    std::string dev, mnt, type, options;
    if (!(f >> dev >> mnt >> type >> options)) continue;
    if (type == "cgroup2") {
      if (v2.empty()) v2 = mnt;
      continue;
    }
    if (type != "cgroup") continue;
    std::istringstream opts(options);
    for (std::string o; std::getline(opts, o, ',');)
      if (o == "perf_event") v1 = mnt;
  }
  if (!v1.empty()) return v1;
  if (!v2.empty()) return v2;
  return make_error("cannot find cgroup mount point");
}

Expected<std::shared_ptr<const Cgroup>> open_cgroup(const SystemPaths& paths,
                                                    const std::string& name) {
  PK_ASSIGN(std::string mnt, cgroup_mountpoint(paths));
  const std::string path = mnt + "/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("no access to cgroup {}", path);
  auto cg = std::make_shared<Cgroup>();
  cg->name = name;
  cg->dir = EventFd(fd);
  return std::shared_ptr<const Cgroup>(std::move(cg));
}

Expected<std::shared_ptr<const Cgroup>> CgroupSet::open(const std::string& name) {
  if (auto it = opened_.find(name); it != opened_.end()) return it->second;
  PK_ASSIGN(auto cg, open_cgroup(paths_, name));
  return opened_[name] = cg;
}

bool is_cgroup_pattern(std::string_view list) {
  return list.find_first_of("{}[]()|*+?^$") != std::string_view::npos;
}

namespace {

// Every directory under `dir` (named `rel` below the mount), itself first,
// then each entry in readdir's order with what is under it.
void walk_cgroups(const std::string& dir, const std::string& rel, int depth,
                  std::vector<std::string>& out) {
  out.push_back(rel);
  if (depth >= 64) return;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
    const std::string path = dir + "/" + name;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    }
    walk_cgroups(path, rel.empty() ? name : rel + "/" + name, depth + 1, out);
  }
  ::closedir(d);
}

}  // namespace

Expected<std::vector<std::string>> match_cgroups(const SystemPaths& paths, std::string_view list) {
  PK_ASSIGN(std::string mnt, cgroup_mountpoint(paths));
  std::vector<std::string> all;
  walk_cgroups(mnt, "", 0, all);
  std::vector<bool> used(all.size(), false);
  for (const std::string& pattern : split_cgroup_list(list)) {
    regex_t re;
    if (::regcomp(&re, pattern.c_str(), REG_NOSUB) != 0)
      return make_error("invalid cgroup pattern: {}", pattern);
    for (std::size_t i = 0; i < all.size(); ++i)
      if (::regexec(&re, all[i].c_str(), 0, nullptr, 0) == 0) used[i] = true;
    ::regfree(&re);
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (used[i]) out.push_back(all[i]);
  if (out.empty()) return make_error("no cgroup matched: {}", list);
  return out;
}

std::vector<std::string> split_cgroup_list(std::string_view list) {
  std::vector<std::string> out;
  for (;;) {
    const std::size_t comma = list.find(',');
    out.emplace_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace perfkit::capture
