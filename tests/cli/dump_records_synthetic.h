// A perf.data file built record by record with every record type perf report
// -D prints something for, and every sample field, so that perf itself is the
// oracle for the printing of records that no recording here produces.
#pragma once

#include <string>

namespace perfkit::test {

// Writes the file (native byte order, file mode) to `path`. Returns "" or an error.
std::string write_synthetic_recording(const std::string& path);

}  // namespace perfkit::test
