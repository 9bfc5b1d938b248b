#include "buildid/archive.h"

#include <filesystem>

#include "elf/build_id.h"
#include "symbol/symbolizer.h"

namespace perfkit::buildid {

namespace fs = std::filesystem;

Expected<std::vector<std::string>> archive_manifest(symbol::BuildIdCache& cache,
                                                    session::Session& session) {
  const std::string& dir = cache.dir();
  std::vector<std::string> manifest;
  struct Marker : session::SampleVisitor {
    Status on_sample(const session::ResolvedSample& s) override {
      if (s.loc.dso) s.loc.dso->hit = true;
      return ok();
    }
  } marker;
  session.set_callchains(false, false, 0);
  PK_TRY(session.run(marker));
  for (auto& d : session.machine().dsos()) {
    if (!d.hit) continue;
    if (d.build_id.empty() && d.long_name.starts_with("/")) {
      if (auto id = elf::read_build_id(d.long_name)) d.build_id = *id;
    }
    if (d.build_id.empty()) continue;
    std::string link = symbol::buildid_link_path(dir, d.build_id);
    std::error_code ec;
    if (!fs::exists(link, ec) && d.long_name.starts_with("/")) {
      auto now = elf::read_build_id(d.long_name);
      if (now && *now == d.build_id) (void)cache.add(d.long_name);
    }
    if (!fs::exists(link, ec)) continue;
    std::string rel_link = link.substr(dir.size() + 1);
    std::string target = fs::canonical(link, ec).string();
    std::string base = fs::canonical(dir, ec).string();
    if (target.starts_with(base + "/")) target = target.substr(base.size() + 1);
    manifest.push_back(rel_link);
    manifest.push_back(target);
  }
  return manifest;
}

}  // namespace perfkit::buildid
