// perfkit buildid-cache: add, remove, purge and list the binaries of the
// build-id cache ($PERF_BUILDID_DIR or ~/.debug), as 'perf buildid-cache'.
#include "cli/commands.h"
#include "cli/options.h"
#include "symbol/buildid_cache.h"
#include "symbol/symbolizer.h"

namespace perfkit::cli {

int cmd_buildid_cache(int argc, char** argv) {
  CLI::App app("Manage the build-id cache, as 'perf buildid-cache' does.", "buildid-cache");
  std::vector<std::string> add, remove, purge;
  std::string kcore;
  bool list = false, force = false;
  app.add_option("-a,--add", add, "Add these files (comma separated)")->delimiter(',');
  app.add_option("-r,--remove", remove, "Remove these files")->delimiter(',');
  app.add_option("-p,--purge", purge, "Remove every cached version of these files")->delimiter(',');
  app.add_option("-k,--kcore", kcore, "Add kallsyms and modules of this /proc directory");
  app.add_flag("-l,--list", list, "List all cached files");
  app.add_flag("-f,--force", force, "Do not complain, do it");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  auto env = symbol::symbolizer_options_from_env();
  if (env.buildid_dir.empty())
    return fail("buildid-cache",
                make_error("no build-id cache directory (set HOME or PERF_BUILDID_DIR)"));
  symbol::BuildIdCache cache(env.buildid_dir);
  int rc = 0;
  for (const auto& f : add)
    if (auto st = cache.add(f); !st) rc = fail("buildid-cache", st.error());
  for (const auto& f : remove)
    if (auto st = cache.remove(f); !st) rc = fail("buildid-cache", st.error());
  for (const auto& f : purge)
    if (auto st = cache.purge(f); !st) rc = fail("buildid-cache", st.error());
  if (!kcore.empty()) {
    // perf takes the kcore file's directory (/proc for /proc/kcore).
    std::string dir = kcore;
    if (dir.ends_with("/kcore")) dir.resize(dir.size() - 6);
    if (auto st = cache.add_kcore(dir); !st) rc = fail("buildid-cache", st.error());
  }
  if (list)
    for (const auto& [bid, name] : cache.list()) fmt::print("{} {}\n", bid, name);
  return rc;
}

}  // namespace perfkit::cli
