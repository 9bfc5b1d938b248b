#include "capture/cgroup.h"

#include <fcntl.h>

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
