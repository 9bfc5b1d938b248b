#include "analysis/record_buildids.h"

#include <sys/auxv.h>

#include <algorithm>
#include <fstream>

#include "abi/perf_event.h"
#include "elf/build_id.h"

namespace perfkit::analysis {

namespace {

std::optional<std::vector<std::uint8_t>> bytes_of(const elf::BuildId& id) {
  if (id.empty()) return std::nullopt;
  return std::vector<std::uint8_t>(id.view().begin(), id.view().end());
}

// [start, end) of this process's [vdso] mapping.
std::optional<std::pair<std::uint64_t, std::uint64_t>> vdso_range() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.size() < 6 || line.compare(line.size() - 6, 6, "[vdso]") != 0) continue;
    auto dash = line.find('-'), sp = line.find(' ');
    if (dash == std::string::npos || sp == std::string::npos) return std::nullopt;
    return std::make_pair(std::stoull(line.substr(0, dash), nullptr, 16),
                          std::stoull(line.substr(dash + 1, sp - dash - 1), nullptr, 16));
  }
  return std::nullopt;
}

// "foo-bar.ko.xz" -> "foo_bar": the name /sys/module knows a module by.
std::string module_name(const std::string& filename) {
  std::string base = filename;
  if (base.size() > 2 && base.front() == '[' && base.back() == ']') {
    base = base.substr(1, base.size() - 2);
  } else {
    base = base.substr(base.rfind('/') + 1);
    base = base.substr(0, base.find(".ko"));
  }
  std::replace(base.begin(), base.end(), '-', '_');
  return base;
}

}  // namespace

std::optional<std::vector<std::uint8_t>> vdso_build_id() {
  auto range = vdso_range();
  const auto base = getauxval(AT_SYSINFO_EHDR);
  if (!range || base != range->first) return std::nullopt;
  // The vDSO is a complete ELF image in memory: its PT_NOTE segments sit at
  // their file offsets from the start.
  Bytes image(reinterpret_cast<const std::uint8_t*>(base),
              static_cast<std::size_t>(range->second - range->first));
  if (image.size() < 64 || image[4] != 2) return std::nullopt;  // ELFCLASS64
  const std::uint64_t phoff = load<std::uint64_t>(image.data() + 32, false);
  const std::uint16_t phentsize = load<std::uint16_t>(image.data() + 54, false);
  const std::uint16_t phnum = load<std::uint16_t>(image.data() + 56, false);
  for (std::uint16_t i = 0; i < phnum; ++i) {
    std::uint64_t ph = phoff + std::uint64_t{i} * phentsize;
    if (ph + 56 > image.size()) break;
    if (load<std::uint32_t>(image.data() + ph, false) != 4) continue;  // PT_NOTE
    std::uint64_t off = load<std::uint64_t>(image.data() + ph + 8, false);
    std::uint64_t size = load<std::uint64_t>(image.data() + ph + 32, false);
    if (off > image.size() || size > image.size() - off) continue;
    if (auto id = bytes_of(elf::find_build_id_note(image.subspan(off, size)))) return id;
  }
  return std::nullopt;
}

std::optional<std::vector<std::uint8_t>> dso_build_id(const std::string& filename, bool kernel,
                                                      const std::string& sysfs_root) {
  if (filename == "[kernel.kallsyms]") {
    auto id = elf::kernel_build_id(sysfs_root);
    return id ? bytes_of(*id) : std::nullopt;
  }
  if (filename == "[vdso]") return vdso_build_id();
  if (kernel) {
    auto id = elf::module_build_id(module_name(filename), sysfs_root);
    if (id && !id->empty()) return bytes_of(*id);
    if (filename.empty() || filename[0] != '/') return std::nullopt;
  }
  // Anonymous and special maps, and files that are gone, have no build-id.
  if (filename.empty() || filename[0] != '/' || filename.ends_with(" (deleted)"))
    return std::nullopt;
  auto id = elf::read_build_id(filename);
  return id ? bytes_of(*id) : std::nullopt;
}

perfdata::BuildIdTable build_id_table(const std::vector<capture::HitDso>& dsos, bool all,
                                      const std::string& sysfs_root) {
  perfdata::BuildIdTable table;
  for (const auto& d : dsos) {
    if (!d.hit && !all) continue;
    auto id = dso_build_id(d.filename, d.kernel, sysfs_root);
    if (!id) continue;
    perfdata::BuildIdEntry e;
    e.pid = perfdata::kHostKernelPid;
    e.misc = static_cast<std::uint16_t>((d.kernel ? abi::kMiscKernel : abi::kMiscUser) |
                                        perfdata::kBuildIdMiscSize);
    e.build_id = std::move(*id);
    e.filename = d.filename;
    table.entries.push_back(std::move(e));
  }
  return table;
}

}  // namespace perfkit::analysis
