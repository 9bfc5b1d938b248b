#include "recorder/record_cache.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "elf/build_id.h"
#include "elf/vdso.h"
#include "symbol/buildid_cache.h"
#include "symbol/symbolizer.h"

namespace perfkit::recorder {

namespace {

// /proc/kallsyms when it shows addresses (not when kptr_restrict hides
// them: perf caches no such copy).
std::string readable_kallsyms(const std::string& procfs) {
  std::ifstream in(procfs + "/kallsyms");
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  if (s.empty() || s.find_first_not_of('0') == 0 || s.starts_with("0000000000000000 ")) return {};
  return s;
}

}  // namespace

void cache_build_ids(const perfdata::BuildIdTable& table, const std::string& dir,
                     const std::string& procfs) {
  if (dir.empty() || dir == "/dev/null") return;  // (perf's way to turn the cache off)
  symbol::BuildIdCache cache(dir);
  for (const perfdata::BuildIdEntry& e : table.entries) {
    const elf::BuildId id = elf::BuildId::from_bytes(Bytes(e.build_id.data(), e.build_id.size()));
    if (e.build_id.empty()) continue;
    std::error_code ec;
    if (std::filesystem::exists(symbol::buildid_cache_file(dir, e.filename, id), ec)) continue;
    if (e.filename == "[kernel.kallsyms]") {
      if (std::string k = readable_kallsyms(procfs); !k.empty())
        (void)cache.add_bytes(e.filename, id, k, "kallsyms");
    } else if (e.filename == "[vdso]") {
      if (auto image = elf::own_vdso_image(); image && elf::own_vdso_build_id() == id)
        (void)cache.add_bytes(
            e.filename, id,
            std::string_view(reinterpret_cast<const char*>(image->data()), image->size()), "vdso");
    } else if (e.filename.starts_with("/")) {
      // (the file as it is now: added only while its build-id still matches)
      if (auto now = elf::read_build_id(e.filename); now && *now == id) (void)cache.add(e.filename);
    }
  }
}

}  // namespace perfkit::recorder
