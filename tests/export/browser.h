// Headless Chromium for the page and picture checks: the DOM after the
// page's scripts ran, and what the console said (errors, CSP refusals).
#pragma once

#include <string>
#include <vector>

namespace perfkit::test {

struct PageLoad {
  bool ok = false;                  // Chromium ran and printed a DOM
  std::string dom;                  // document.documentElement.outerHTML after load
  std::vector<std::string> errors;  // console errors, uncaught exceptions, CSP refusals
  std::string log;                  // Chromium's stderr, for failure messages
};

// Loads file://`path` in headless Chromium (`chromium`, the binary's path),
// with its own profile directory under `scratch`. `file_access`: the page
// may read other file:// documents (an SVG in an <object>).
PageLoad load_page(const std::string& chromium, const std::string& path, const std::string& scratch,
                   bool file_access = false);
// The same for any URL (an http:// one).
PageLoad load_url(const std::string& chromium, const std::string& url, const std::string& scratch);

// Renders file://`path` into the PNG `png` at width x height. Returns
// whether Chromium wrote a non-empty picture.
bool screenshot(const std::string& chromium, const std::string& path, const std::string& png,
                const std::string& scratch, int width = 1280, int height = 900);

// A static HTTP server (python3 -m http.server) on 127.0.0.1 serving
// `dir`, for pages that fetch() their data (speedscope's #profileURL=),
// which file:// pages cannot. Stopped when destroyed.
class HttpServer {
 public:
  explicit HttpServer(const std::string& dir);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  // "http://127.0.0.1:PORT/", or "" when the server did not start.
  const std::string& url() const { return url_; }

 private:
  int pid_ = -1;
  std::string url_;
};

}  // namespace perfkit::test
