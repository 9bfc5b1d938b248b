#include "capture/thread_masks.h"

#include <algorithm>
#include <filesystem>

#include "base/mapped_file.h"
#include "base/text.h"
#include "capture/system_info.h"

namespace perfkit::capture {

namespace {

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The cpu list in `path` (a sysfs topology file), or empty.
std::vector<int> cpu_list_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return {};
  auto cpus = parse_cpu_list(trim(*text));
  return cpus ? *cpus : std::vector<int>{};
}

// One mask per distinct group that a recorded cpu belongs to (`group_of`
// gives a cpu's group), each running where its cpus are.
template <class GroupOf>
std::vector<ThreadMask> by_topology(const std::vector<int>& recorded, GroupOf group_of) {
  std::vector<ThreadMask> out;
  for (int cpu : recorded) {
    std::vector<int> group = group_of(cpu);
    if (group.empty()) group = {cpu};
    bool seen = false;
    for (const ThreadMask& m : out) seen |= m.affinity == group;
    if (!seen) out.push_back({{}, group});
  }
  return out;
}

std::vector<int> first_of(const std::string& dir, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    std::vector<int> v = cpu_list_file(dir + "/" + n);
    if (!v.empty()) return v;
  }
  return {};
}

Expected<std::vector<ThreadMask>> user_masks(const std::string& spec,
                                             const std::vector<int>& online) {
  std::vector<ThreadMask> out;
  for (std::string_view part : split(spec, ':')) {
    const auto slash = part.find('/');
    if (slash == std::string_view::npos) return make_error("{}", kInvalidThreadSpec);
    auto cpus = parse_cpu_list(part.substr(0, slash));
    auto affinity = parse_cpu_list(part.substr(slash + 1));
    if (!cpus || !affinity || cpus->empty() || affinity->empty())
      return make_error("{}", kInvalidThreadSpec);
    for (int c : *cpus)
      if (!contains(online, c)) return make_error("{}", kBadThreadMask);
    for (int c : *affinity)
      if (!contains(online, c)) return make_error("Failed to initialize affinity thread mask");
    out.push_back({*cpus, *affinity});
  }
  if (out.empty()) return make_error("{}", kInvalidThreadSpec);
  return out;
}

}  // namespace

Expected<std::vector<ThreadMask>> thread_masks(const std::string& spec,
                                               const std::vector<int>& recorded,
                                               const SystemPaths& paths) {
  const std::string cpu_dir = paths.sysfs + "/devices/system/cpu/cpu";
  std::vector<ThreadMask> masks;
  if (spec.empty() || spec == "cpu") {
    for (int cpu : recorded) masks.push_back({{cpu}, {cpu}});
    return masks;
  }
  if (spec == "core") {
    masks = by_topology(recorded, [&](int cpu) {
      return first_of(cpu_dir + std::to_string(cpu) + "/topology",
                      {"core_cpus_list", "thread_siblings_list"});
    });
  } else if (spec == "package") {
    masks = by_topology(recorded, [&](int cpu) {
      return first_of(cpu_dir + std::to_string(cpu) + "/topology",
                      {"package_cpus_list", "core_siblings_list"});
    });
  } else if (spec == "numa") {
    std::vector<std::vector<int>> nodes;
    std::error_code ec;
    for (const auto& e :
         std::filesystem::directory_iterator(paths.sysfs + "/devices/system/node", ec))
      if (e.path().filename().string().starts_with("node"))
        nodes.push_back(cpu_list_file(e.path().string() + "/cpulist"));
    masks = by_topology(recorded, [&](int cpu) {
      for (const auto& n : nodes)
        if (contains(n, cpu)) return n;
      return std::vector<int>{};
    });
  } else {
    PK_ASSIGN(masks, user_masks(spec, online_cpus(paths)));
    for (ThreadMask& m : masks) {
      std::vector<int> kept;
      for (int c : m.cpus)
        if (contains(recorded, c)) kept.push_back(c);
      m.cpus = std::move(kept);
    }
    return masks;
  }
  for (ThreadMask& m : masks)
    for (int c : m.affinity)
      if (contains(recorded, c)) m.cpus.push_back(c);
  return masks;
}

}  // namespace perfkit::capture
