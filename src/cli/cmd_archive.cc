// perfkit archive: packs the build-id-named DSOs a recording has hits in
// (from the build-id cache) into FILE.tar.bz2, so that another machine can
// report it after unpacking into its ~/.debug, as 'perf archive' does.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "buildid/archive.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace perfkit::cli {

int cmd_archive(int argc, char** argv) {
  CLI::App app("Pack the DSOs a perf.data file needs into FILE.tar.bz2, as 'perf archive' does.",
               "archive");
  std::string input = "perf.data";
  app.add_option("file", input, "The recording")->capture_default_str();
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  session::SessionOptions so;
  so.symbols = symbol::symbolizer_options_from_env();
  so.warn = [](const std::string&) {};
  so.prefetch_kernel = false;  // (no symbol is looked up)
  if (so.symbols.buildid_dir.empty())
    return fail("archive", make_error("no build-id cache directory"));
  auto session = session::Session::open(input, so);
  if (!session) return fail("archive", session.error());
  symbol::BuildIdCache cache(so.symbols.buildid_dir);
  auto manifest = buildid::archive_manifest(cache, **session);
  if (!manifest) return fail("archive", manifest.error());
  if (manifest->empty()) {
    fmt::print("perf archive: no build-ids found\n");
    return 1;
  }
  char tmpl[] = "/tmp/perfkit-archive-manifest.XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) return fail("archive", make_error("cannot create a manifest file"));
  std::string text;
  for (const auto& m : *manifest) text += m + "\n";
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    ::close(fd);
    return fail("archive", make_error("cannot write the manifest"));
  }
  ::close(fd);
  std::string out = input + ".tar.bz2";
  pid_t pid = fork();
  if (pid == 0) {
    execlp("tar", "tar", "cjf", out.c_str(), "-C", so.symbols.buildid_dir.c_str(), "-T", tmpl,
           static_cast<char*>(nullptr));
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ::unlink(tmpl);
  if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return fail("archive", make_error("tar failed writing {}", out));
  fmt::print(
      "Now please run:\n\n$ tar xvf {} -C ~/.debug\n\nwherever you need to run 'perf report' on.\n",
      out);
  return 0;
}

}  // namespace perfkit::cli
