// LineWorker: the source lines of a profile's frames, looked up on another
// thread while the recording is still being read.
//
// Reading DWARF line tables is most of what source lines cost (a libc's
// compressed .debug_* sections alone inflate to tens of megabytes), and it
// needs nothing but the DSO and the address: the builder asks as it meets
// each new frame and goes on; the answers come back in the order asked, so
// the profile is the same whichever thread did the work (or none could be
// started, and this one does it at the end).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "elf/build_id.h"
#include "symbol/source_lines.h"

namespace perfkit::profile {

class LineWorker {
 public:
  explicit LineWorker(symbol::Symbolizer& symbolizer);
  ~LineWorker();
  LineWorker(const LineWorker&) = delete;
  LineWorker& operator=(const LineWorker&) = delete;

  // The handle of a DSO (its file found now, on this thread); `index`
  // identifies it (machine::Dso::index).
  symbol::SourceLines::Dso* dso(std::size_t index, std::string_view long_name,
                                std::string_view short_name, const elf::BuildId& id);
  // Asks for the "file:line" text of `addr` (map-relative) in `dso`.
  void ask(symbol::SourceLines::Dso* dso, std::uint64_t addr);
  // A text known already (an inlined frame's, from the unwinder), answered
  // in its turn.
  void ask_known(std::string_view text);
  // Every answer, in the order asked. Call once.
  std::vector<std::string> finish();

 private:
  struct Ask {
    symbol::SourceLines::Dso* dso = nullptr;  // nullptr: `known` is the answer
    std::uint64_t addr = 0;
    std::string known;
  };
  void run();
  void answer(std::vector<Ask>& batch);
  void hand_over();

  symbol::SourceLines lines_;
  std::vector<symbol::SourceLines::Dso*> dsos_;  // by machine::Dso::index
  std::vector<Ask> batch_;                       // this thread's, not handed over yet
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Ask> shared_;  // handed over, not taken by the worker yet
  bool done_ = false;
  std::vector<std::string> answers_;  // the worker's
  std::thread worker_;                // not joinable: none could be started
};

}  // namespace perfkit::profile
