#include "export/browser.h"

#include <filesystem>
#include <sstream>

#include "support/test_support.h"

namespace perfkit::test {

namespace {

std::string base_command(const std::string& chromium, const std::string& scratch) {
  return "timeout 120 " + sh(chromium) +
         " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions "
         "--user-data-dir=" +
         sh(scratch + "/chromium-profile") + " ";
}

}  // namespace

PageLoad load_page(const std::string& chromium, const std::string& path, const std::string& scratch,
                   bool file_access) {
  auto r =
      run(base_command(chromium, scratch) + (file_access ? "--allow-file-access-from-files " : "") +
          "--enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom " +
          sh("file://" + std::filesystem::absolute(path).string()));
  PageLoad page;
  page.dom = r.out;
  page.log = r.err;
  page.ok = r.status == 0 && r.out.find("<html") != std::string::npos;
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);) {
    // Console messages come as ":INFO:CONSOLE(N)] "text", source: ..." lines.
    const bool console = line.find("CONSOLE") != std::string::npos;
    if ((console &&
         (line.find("Error") != std::string::npos || line.find("Uncaught") != std::string::npos ||
          line.find("Refused") != std::string::npos)) ||
        line.find("Content Security Policy") != std::string::npos)
      page.errors.push_back(line);
  }
  return page;
}

bool screenshot(const std::string& chromium, const std::string& path, const std::string& png,
                const std::string& scratch, int width, int height) {
  auto r = run(base_command(chromium, scratch) + "--hide-scrollbars --window-size=" +
               std::to_string(width) + "," + std::to_string(height) + " --screenshot=" + sh(png) +
               " " + sh("file://" + std::filesystem::absolute(path).string()) + " 2>&1");
  std::error_code ec;
  return r.status == 0 && std::filesystem::file_size(png, ec) > 1000;
}

}  // namespace perfkit::test
