// perf's own JSON (`perf data convert --to-json`, perf 6.1): the recording's
// header, then every sample in time order with its timestamp, pid, tid, cpu
// (when sampled), comm and call chain (each raw address with the symbol and
// DSO it resolves to in its context), byte for byte as perf writes it
// (except that names which are not UTF-8 are written valid, with U+FFFD).
// This walks the session itself: perf's JSON keeps the raw call chain
// (zero addresses included), which the profile model does not.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"
#include "base/output.h"
#include "session/session.h"

namespace perfkit::exports {

struct PerfJsonStats {
  std::uint64_t samples = 0;
  std::uint64_t bytes = 0;
};

// Runs `session` (not run before). `captured_on`: the input's modification
// time as perf prints it ("2024-01-02T03:04:05Z"), "" for none.
// Errors: the session's, the output's.
Expected<PerfJsonStats> write_perf_json(session::Session& session, const std::string& captured_on,
                                        FdWriter& out);

}  // namespace perfkit::exports
