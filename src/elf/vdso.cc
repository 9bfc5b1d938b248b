#include "elf/vdso.h"

#include <sys/auxv.h>

#include <charconv>
#include <fstream>
#include <string>
#include <string_view>

namespace perfkit::elf {

namespace {

// "start-end perms ..." of a /proc/PID/maps line; false when it is not one.
bool parse_range(std::string_view line, std::uint64_t& start, std::uint64_t& end) {
  const char* p = line.data();
  const char* e = p + line.size();
  auto a = std::from_chars(p, e, start, 16);
  if (a.ec != std::errc() || a.ptr == e || *a.ptr != '-') return false;
  auto b = std::from_chars(a.ptr + 1, e, end, 16);
  return b.ec == std::errc() && end > start;
}

}  // namespace

Expected<Bytes> own_vdso_image() {
  const std::uint64_t base = getauxval(AT_SYSINFO_EHDR);
  if (!base) return make_error("this process has no vdso (no AT_SYSINFO_EHDR)");
  std::ifstream maps("/proc/self/maps");
  if (!maps) return make_error("/proc/self/maps: cannot be read");
  std::string line;
  while (std::getline(maps, line)) {
    if (!std::string_view(line).ends_with("[vdso]")) continue;
    std::uint64_t start = 0, end = 0;
    if (!parse_range(line, start, end) || start != base) break;
    return Bytes(reinterpret_cast<const std::uint8_t*>(start),
                 static_cast<std::size_t>(end - start));
  }
  return make_error("/proc/self/maps: no [vdso] mapping at {:#x}", base);
}

Expected<ElfFile> own_vdso() {
  PK_ASSIGN(Bytes image, own_vdso_image());
  return ElfFile::from_image(std::vector<std::uint8_t>(image.begin(), image.end()), "[vdso]");
}

BuildId own_vdso_build_id() {
  auto v = own_vdso();
  return v ? v->build_id() : BuildId{};
}

}  // namespace perfkit::elf
