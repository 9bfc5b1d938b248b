#include "recorder/record_buildids.h"

#include <algorithm>

#include "abi/perf_event.h"
#include "elf/build_id.h"
#include "elf/vdso.h"

namespace perfkit::recorder {

namespace {

std::optional<std::vector<std::uint8_t>> bytes_of(const elf::BuildId& id) {
  if (id.empty()) return std::nullopt;
  return std::vector<std::uint8_t>(id.view().begin(), id.view().end());
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

std::optional<std::vector<std::uint8_t>> dso_build_id(const std::string& filename, bool kernel,
                                                      const std::string& sysfs_root) {
  if (filename == "[kernel.kallsyms]") {
    auto id = elf::kernel_build_id(sysfs_root);
    return id ? bytes_of(*id) : std::nullopt;
  }
  if (filename == "[vdso]") return bytes_of(elf::own_vdso_build_id());
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

}  // namespace perfkit::recorder
