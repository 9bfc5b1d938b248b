// perfkit diff's exports of a baseline and a NEW recording.
#pragma once

#include <string>

#include "base/error.h"

namespace perfkit::cli {

struct DiffExportArgs {
  std::string folded;  // --to-folded OUT: "stack BEFORE AFTER" (difffolded.pl)
  std::string pprof;   // --to-pprof OUT: NEW's profile; the baseline's beside it
  std::string html;    // --html OUT: the differential flame graph page
  bool quiet = false;
};

// Where --to-pprof OUT puts the baseline's profile: "x.base.pb.gz" for
// "x.pb.gz", else "OUT.base".
std::string pprof_base_path(const std::string& out);

// Reads `base` and `now` into profiles and writes what `a` asks for (each
// file under a temporary name until complete). Errors: the recordings',
// the outputs'.
Status write_diff_exports(const DiffExportArgs& a, const std::string& base, const std::string& now);

}  // namespace perfkit::cli
