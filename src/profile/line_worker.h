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

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace perfkit::elf {
struct BuildId;
}
namespace perfkit::symbol {
class Symbolizer;
}

namespace perfkit::profile {

class LineWorker {
 public:
  explicit LineWorker(symbol::Symbolizer& symbolizer);
  ~LineWorker();
  LineWorker(const LineWorker&) = delete;
  LineWorker& operator=(const LineWorker&) = delete;

  // Makes DSO `index` (machine::Dso::index) known, its file found now, on
  // this thread (the symbolizer is this thread's).
  void dso(std::size_t index, std::string_view long_name, std::string_view short_name,
           const elf::BuildId& id);
  // Asks for the "file:line" text of `addr` (map-relative) in DSO `index`.
  void ask(std::size_t index, std::uint64_t addr);
  // A text known already (an inlined frame's, from the unwinder), answered
  // in its turn.
  void ask_known(std::string_view text);
  // Every answer, in the order asked. Call once.
  std::vector<std::string> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfkit::profile
