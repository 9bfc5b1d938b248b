#include "export/browser.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
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

PageLoad load(const std::string& chromium, const std::string& url, const std::string& scratch,
              bool file_access) {
  auto r =
      run(base_command(chromium, scratch) + (file_access ? "--allow-file-access-from-files " : "") +
          "--enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom " + sh(url));
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

}  // namespace

PageLoad load_page(const std::string& chromium, const std::string& path, const std::string& scratch,
                   bool file_access) {
  return load(chromium, "file://" + std::filesystem::absolute(path).string(), scratch, file_access);
}

PageLoad load_url(const std::string& chromium, const std::string& url, const std::string& scratch) {
  return load(chromium, url, scratch, false);
}

HttpServer::HttpServer(const std::string& dir) {
  const std::string log = dir + "/.http-server.log";
  auto r = run("cd " + sh(dir) + " && { python3 -u -m http.server 0 --bind 127.0.0.1 >" + sh(log) +
               " 2>&1 & echo $!; }");
  if (r.status != 0 || r.out.empty()) return;
  pid_ = std::stoi(r.out);
  const std::regex port("port ([0-9]+)");
  for (int i = 0; i < 100 && url_.empty(); ++i) {
    std::smatch m;
    const std::string text = read_file(log);
    if (std::regex_search(text, m, port))
      url_ = "http://127.0.0.1:" + m[1].str() + "/";
    else
      usleep(50000);
  }
}

HttpServer::~HttpServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
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
