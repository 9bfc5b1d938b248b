#include "cli/progress.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace perfkit::cli {

ProgressBar::ProgressBar(std::string title, Write write, Clock clock)
    : title_(std::move(title)), write_(std::move(write)), clock_(std::move(clock)) {
  if (!write_)
    write_ = [](std::string_view s) {
      std::fwrite(s.data(), 1, s.size(), stderr);
      std::fflush(stderr);
    };
  if (!clock_) clock_ = [] { return std::chrono::steady_clock::now(); };
  start_ = clock_();
}

void ProgressBar::update(std::uint64_t done, std::uint64_t total) {
  if (!total) return;
  const auto now = clock_();
  if (now - start_ < kDelay) return;
  if (shown_ && now - last_draw_ < kInterval) return;
  const int percent = static_cast<int>(static_cast<double>(std::min(done, total)) * 100.0 /
                                       static_cast<double>(total));
  if (shown_ && percent == percent_) return;
  std::string text = fmt::format("{} {:3d}%", title_, percent);
  width_ = std::max(width_, text.size());
  write_("\r" + text);
  shown_ = true;
  percent_ = percent;
  last_draw_ = now;
}

void ProgressBar::clear() {
  if (!shown_) return;
  write_("\r" + std::string(width_, ' ') + "\r");
  shown_ = false;
  percent_ = -1;
}

bool stderr_progress_wanted(bool quiet, bool output_meanwhile) {
  if (quiet || !isatty(STDERR_FILENO)) return false;
  if (!output_meanwhile || !isatty(STDOUT_FILENO)) return true;
  struct stat out {
  }, err{};
  if (fstat(STDOUT_FILENO, &out) != 0 || fstat(STDERR_FILENO, &err) != 0) return false;
  return out.st_rdev != err.st_rdev;
}

}  // namespace perfkit::cli
