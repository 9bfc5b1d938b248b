// `-i -` with Intel PT: perf writes a trace's AUXTRACE_INFO among the header
// records a stream starts with. The decoder reads a trace twice (side-band,
// then the trace), so such a stream is copied into memory (a memfd, opened
// by path) and decoded from there; any other stream goes on being read from
// stdin, with the bytes looked at handed to the reader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

namespace perfkit::cli {

struct StdinPeek {
  std::vector<std::uint8_t> prefix;  // bytes read: SessionOptions::stream_prefix
  std::string spooled;               // the path of an Intel PT stream's copy, or ""
  int memfd = -1;                    // the copy's memfd
  bool temporary = false;            // the copy is a temporary file (no memfd here)
  StdinPeek() = default;
  StdinPeek(const StdinPeek&) = delete;
  StdinPeek& operator=(const StdinPeek&) = delete;
  ~StdinPeek();
};

// Reads stdin's pipe header and its header records up to the first other
// record. Errors: read and write failures, naming the copy.
Status peek_stdin_for_intel_pt(StdinPeek& out);

}  // namespace perfkit::cli
