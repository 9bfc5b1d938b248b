// ProgressBar: how far a long piece of work has got, the way perf shows it
// on a terminal: "Processing Intel PT trace...  42%" redrawn in place on
// stderr with a carriage return. It appears only once the work has taken a
// second, is redrawn at most a few times a second (and only when the
// percentage changes), and clear() wipes the line (\r, spaces, \r) so that
// nothing of it stays between the lines the command prints.
//
// The library never prints: commands hand its update() to the library's
// progress callbacks (e.g. ItraceDecodeOptions::progress) when
// stderr_progress_wanted() says a bar may be drawn.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace perfkit::cli {

class ProgressBar {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  using Write = std::function<void(std::string_view)>;
  static constexpr std::chrono::milliseconds kDelay{1000};    // before it first shows
  static constexpr std::chrono::milliseconds kInterval{200};  // between redraws

  // `write` and `clock` default to stderr and the steady clock; tests give
  // their own. The work is taken to start now.
  explicit ProgressBar(std::string title, Write write = {}, Clock clock = {});
  ~ProgressBar() { clear(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `done` of `total` (bytes, records, ...); a total of 0 shows nothing.
  void update(std::uint64_t done, std::uint64_t total);
  // Wipes the bar if it is shown; a later update() may show it again.
  void clear();
  bool shown() const { return shown_; }

 private:
  std::string title_;
  Write write_;
  Clock clock_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  int percent_ = -1;  // the one on screen
  bool shown_ = false;
  std::size_t width_ = 0;  // of the text on screen
};

// Whether a progress bar may be drawn on stderr: it is a terminal and
// `quiet` is not set; and, when the command writes its output while the
// work goes on (`output_meanwhile`), stdout is not that same terminal (the
// bar would land between the output's lines).
bool stderr_progress_wanted(bool quiet, bool output_meanwhile);

}  // namespace perfkit::cli
