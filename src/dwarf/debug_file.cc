#include "dwarf/debug_file.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

namespace perfkit::dwarf {

namespace {

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string canonical_directory_of(const std::string& path) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf)) return directory_of(path);
  return directory_of(buf);
}

}  // namespace

bool has_debug_info(const elf::ElfFile& f) {
  return f.section(".debug_info") || f.section(".zdebug_info");
}

std::optional<elf::ElfFile> find_separate_debug_file(const elf::ElfFile& f,
                                                     const std::string& debug_dir) {
  auto accept = [](const std::string& path, auto&& check) -> std::optional<elf::ElfFile> {
    if (!is_file(path)) return std::nullopt;
    auto e = elf::ElfFile::open(path);
    if (!e || !check(*e) || !has_debug_info(*e)) return std::nullopt;
    return std::move(*e);
  };
  if (!f.build_id().empty()) {
    std::string hex = f.build_id().hex();
    std::string base = ".build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
    auto same_id = [&](const elf::ElfFile& e) { return e.build_id() == f.build_id(); };
    for (const std::string& p : {base, ".debug/" + base, "/usr/lib/debug/" + base,
                                 "/usr/lib/debug/usr/" + base, debug_dir + "/" + base})
      if (auto e = accept(p, same_id)) return e;
  }
  if (auto link = f.debuglink()) {
    const std::string dir = directory_of(f.path());
    const std::string canon = canonical_directory_of(f.path());
    auto same_crc = [&](const elf::ElfFile& e) {
      auto crc = elf::file_crc32(e.path());
      return crc && *crc == link->crc;
    };
    for (const std::string& p :
         {dir + link->name, dir + ".debug/" + link->name, "/usr/lib/debug" + canon + link->name,
          "/usr/lib/debug/usr" + canon + link->name, debug_dir + canon + link->name})
      if (auto e = accept(p, same_crc)) return e;
  }
  return std::nullopt;
}

}  // namespace perfkit::dwarf
