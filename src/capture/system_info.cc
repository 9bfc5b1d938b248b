#include "capture/system_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "base/mapped_file.h"
#include "base/text.h"

namespace perfkit::capture {

namespace fs = std::filesystem;
using perfdata::CacheInfo;
using perfdata::CacheLevel;
using perfdata::CpuTopology;
using perfdata::MemTopology;
using perfdata::NumaNode;

namespace {

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  if (!in || !std::getline(in, s)) return std::nullopt;
  return std::string(trim(s));
}

std::optional<std::uint64_t> read_number(const std::string& path, int base = 10) {
  auto s = read_line(path);
  std::uint64_t v = 0;
  if (!s || !parse_u64(*s, v, base)) return std::nullopt;
  return v;
}

std::string slurp(const std::string& path) {
  // (not through an ifstream: a read that fails, as one of a process that
  // has just exited does with ESRCH, throws out of its iterator)
  Expected<std::string> text = read_text_file(path);
  return text ? std::move(*text) : std::string{};
}

std::string cpu_dir(const SystemPaths& p, int cpu) {
  return fmt::format("{}/devices/system/cpu/cpu{}", p.sysfs, cpu);
}

// The first of `names` that exists in `dir`, read as one trimmed line.
std::optional<std::string> first_file(const std::string& dir,
                                      std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto s = read_line(dir + "/" + n)) return s;
  return std::nullopt;
}

void add_unique(std::vector<std::string>& list, const std::string& s) {
  if (std::find(list.begin(), list.end(), s) == list.end()) list.push_back(s);
}

}  // namespace

std::vector<int> online_cpus(const SystemPaths& paths) {
  if (auto s = read_line(paths.sysfs + "/devices/system/cpu/online"))
    if (auto l = parse_cpu_list(*s); l && !l->empty()) return *l;
  std::vector<int> cpus;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 0; i < std::max(1L, n); ++i) cpus.push_back(i);
  return cpus;
}

std::optional<perfdata::NrCpus> read_nrcpus(const SystemPaths& paths) {
  perfdata::NrCpus n;
  n.online = static_cast<std::uint32_t>(online_cpus(paths).size());
  auto present = read_line(paths.sysfs + "/devices/system/cpu/present");
  auto list = present ? parse_cpu_list(*present) : Expected<std::vector<int>>(make_error(""));
  n.available = list && !list->empty() ? static_cast<std::uint32_t>(list->back() + 1) : n.online;
  return n;
}

std::optional<std::string> read_cpudesc(const SystemPaths& paths) {
  std::string text = slurp(paths.procfs + "/cpuinfo");
  for (auto line : split(text, '\n')) {
    if (!line.starts_with("model name")) continue;
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string out;
    for (char c : trim(line.substr(colon + 1))) {
      bool space = std::isspace(static_cast<unsigned char>(c));
      if (space && !out.empty() && out.back() == ' ') continue;
      out += space ? ' ' : c;
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::string> read_cpuid() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return std::nullopt;
  char vendor[13];
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  vendor[12] = 0;
  unsigned family = 0, model = 0, stepping = 0;
  if (a >= 1 && __get_cpuid(1, &a, &b, &c, &d)) {
    family = (a >> 8) & 0xf;
    model = (a >> 4) & 0xf;
    stepping = a & 0xf;
    if (family == 0xf) family += (a >> 20) & 0xff;
    if (family >= 0x6) model += ((a >> 16) & 0xf) << 4;
  }
  return fmt::format("{},{},{},{}", vendor, family, model, stepping);
#else
  return std::nullopt;
#endif
}

std::optional<std::uint64_t> read_total_mem_kb(const SystemPaths& paths) {
  std::string text = slurp(paths.procfs + "/meminfo");
  for (auto line : split(text, '\n')) {
    if (!line.starts_with("MemTotal:")) continue;
    auto v = trim(line.substr(9));
    std::uint64_t kb = 0;
    if (parse_u64(v.substr(0, v.find(' ')), kb, 10)) return kb;
  }
  return std::nullopt;
}

std::optional<CpuTopology> read_cpu_topology(const SystemPaths& paths, std::uint32_t nr_cpus) {
  CpuTopology t;
  bool dies = true;
  for (int cpu : online_cpus(paths)) {
    const std::string dir = cpu_dir(paths, cpu) + "/topology";
    auto package = first_file(dir, {"package_cpus_list", "core_siblings_list"});
    auto core = first_file(dir, {"core_cpus_list", "thread_siblings_list"});
    if (!package || !core) return std::nullopt;
    add_unique(t.package_cpus_lists, *package);
    add_unique(t.core_cpus_lists, *core);
    if (auto die = read_line(dir + "/die_cpus_list"))
      add_unique(t.die_cpus_lists, *die);
    else
      dies = false;
  }
  if (!dies) t.die_cpus_lists.clear();
  t.has_cpu_ids = true;
  for (std::uint32_t cpu = 0; cpu < nr_cpus; ++cpu) {
    const std::string dir = cpu_dir(paths, static_cast<int>(cpu)) + "/topology";
    perfdata::CpuTopologyIds ids;
    // perf stores -1 for a cpu it cannot read (offline).
    auto core = read_line(dir + "/core_id");
    auto socket = read_line(dir + "/physical_package_id");
    auto die = read_line(dir + "/die_id");
    std::int64_t v = -1;
    ids.core_id = core && parse_i64(*core, v) ? static_cast<std::int32_t>(v) : -1;
    ids.socket_id = socket && parse_i64(*socket, v) ? static_cast<std::int32_t>(v) : -1;
    ids.die_id = die && parse_i64(*die, v) ? static_cast<std::int32_t>(v) : -1;
    t.cpus.push_back(ids);
  }
  return t;
}

std::optional<std::vector<NumaNode>> read_numa_topology(const SystemPaths& paths) {
  const std::string root = paths.sysfs + "/devices/system/node";
  auto online = read_line(root + "/online");
  if (!online) return std::nullopt;
  auto nodes = parse_cpu_list(*online);
  if (!nodes) return std::nullopt;
  std::vector<NumaNode> out;
  for (int n : *nodes) {
    NumaNode node;
    node.node = static_cast<std::uint32_t>(n);
    std::string text = slurp(fmt::format("{}/node{}/meminfo", root, n));
    for (auto line : split(text, '\n')) {
      // "Node 0 MemTotal:        9005272 kB"
      auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view key = line.substr(0, colon);
      auto value = trim(line.substr(colon + 1));
      std::uint64_t kb = 0;
      if (!parse_u64(value.substr(0, value.find(' ')), kb, 10)) continue;
      if (key.ends_with("MemTotal")) node.mem_total_kb = kb;
      if (key.ends_with("MemFree")) node.mem_free_kb = kb;
    }
    node.cpus = read_line(fmt::format("{}/node{}/cpulist", root, n)).value_or("");
    out.push_back(std::move(node));
  }
  return out;
}

std::vector<perfdata::PmuMapping> read_pmu_mappings(const SystemPaths& paths) {
  std::vector<perfdata::PmuMapping> out;
  std::error_code ec;
  for (fs::directory_iterator it(paths.pmu_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    auto type = read_number(it->path().string() + "/type");
    if (!type) continue;
    out.push_back({static_cast<std::uint32_t>(*type), it->path().filename().string()});
  }
  return out;
}

std::optional<CacheInfo> read_caches(const SystemPaths& paths, std::uint32_t nr_cpus) {
  CacheInfo info;
  for (std::uint32_t cpu = 0; cpu < nr_cpus; ++cpu) {
    for (int index = 0; index < 10; ++index) {
      const std::string dir =
          fmt::format("{}/cache/index{}", cpu_dir(paths, static_cast<int>(cpu)), index);
      auto level = read_number(dir + "/level");
      if (!level) break;
      CacheLevel c;
      c.level = static_cast<std::uint32_t>(*level);
      c.line_size =
          static_cast<std::uint32_t>(read_number(dir + "/coherency_line_size").value_or(0));
      c.sets = static_cast<std::uint32_t>(read_number(dir + "/number_of_sets").value_or(0));
      c.ways = static_cast<std::uint32_t>(read_number(dir + "/ways_of_associativity").value_or(0));
      c.type = read_line(dir + "/type").value_or("");
      c.size = read_line(dir + "/size").value_or("");
      c.map = read_line(dir + "/shared_cpu_list").value_or("");
      if (std::find(info.levels.begin(), info.levels.end(), c) == info.levels.end())
        info.levels.push_back(std::move(c));
    }
  }
  // No cache directories (a VM that shows none): perf still writes the
  // feature, with no levels.
  std::stable_sort(info.levels.begin(), info.levels.end(),
                   [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
  return info;
}

std::optional<MemTopology> read_mem_topology(const SystemPaths& paths) {
  MemTopology m;
  auto block = read_number(paths.sysfs + "/devices/system/memory/block_size_bytes", 16);
  if (!block) return std::nullopt;
  m.block_size = *block;
  const std::string root = paths.sysfs + "/devices/system/node";
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::uint64_t node = 0;
    if (!name.starts_with("node") || !parse_u64(std::string_view(name).substr(4), node, 10))
      continue;
    std::vector<std::uint64_t> blocks;
    std::error_code ec2;
    for (fs::directory_iterator m2(it->path(), ec2), e2; !ec2 && m2 != e2; m2.increment(ec2)) {
      std::string f = m2->path().filename().string();
      std::uint64_t b = 0;
      if (f.starts_with("memory") && parse_u64(std::string_view(f).substr(6), b, 10))
        blocks.push_back(b);
    }
    perfdata::MemoryNode n;
    n.node = node;
    n.size = blocks.empty() ? 1 : *std::max_element(blocks.begin(), blocks.end()) + 1;
    n.set.assign((n.size + 63) / 64, 0);
    for (auto b : blocks) n.set[b / 64] |= 1ULL << (b % 64);
    m.nodes.push_back(std::move(n));
  }
  if (m.nodes.empty()) return std::nullopt;
  std::sort(m.nodes.begin(), m.nodes.end(),
            [](const auto& a, const auto& b) { return a.node < b.node; });
  return m;
}

void collect_system_info(const SystemPaths& paths, const std::string& version,
                         perfdata::Features& f) {
  utsname u{};
  if (uname(&u) == 0) {
    f.hostname = u.nodename;
    f.osrelease = u.release;
    f.arch = u.machine;
  }
  f.version = version;
  f.nrcpus = read_nrcpus(paths);
  f.cpudesc = read_cpudesc(paths);
  f.cpuid = read_cpuid();
  f.total_mem_kb = read_total_mem_kb(paths);
  const std::uint32_t nr = f.nrcpus ? f.nrcpus->available : 0;
  f.cpu_topology = read_cpu_topology(paths, nr);
  f.numa_topology = read_numa_topology(paths);
  f.pmu_mappings = read_pmu_mappings(paths);
  f.cache = read_caches(paths, nr);
  f.mem_topology = read_mem_topology(paths);
  // perf writes these even when empty (no BPF programs, no PMU capabilities).
  f.bpf_prog_info.emplace();
  f.bpf_btf.emplace();
  f.pmu_caps.emplace();
  // PMU capabilities (caps/ directories): the core PMU's in CPU_PMU_CAPS,
  // the others' in PMU_CAPS.
  std::error_code ec;
  for (fs::directory_iterator it(paths.pmu_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    std::vector<perfdata::PmuCapability> caps;
    std::error_code ec2;
    for (fs::directory_iterator c(it->path() / "caps", ec2), e2; !ec2 && c != e2; c.increment(ec2))
      if (auto v = read_line(c->path().string()))
        caps.push_back({c->path().filename().string(), *v});
    if (caps.empty()) continue;
    std::string name = it->path().filename().string();
    if (name == "cpu")
      f.cpu_pmu_caps = std::move(caps);
    else
      f.pmu_caps->push_back({std::move(caps), name});
  }
}

}  // namespace perfkit::capture
