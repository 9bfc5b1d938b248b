// A perf.data file built record by record with every record type perf report
// -D prints something for, and every sample field, so that perf itself is the
// oracle for the printing of records that no recording here produces.
#pragma once

#include <string>

namespace perfkit::test {

// Writes the file (native byte order, file mode) to `path`. Returns "" or an
// error. Without `all_records` it leaves out what perf 6.1 misreads in a
// cross-endian file: KSYMBOL and BPF_EVENT (not swapped), EVENT_UPDATE of a
// scale or cpus (only type and id swapped), READ with a partial read_format
// (swapped as if it had every field), branch flags past the type field, an
// attr's sample_regs_intr.
std::string write_synthetic_recording(const std::string& path, bool all_records = true);

}  // namespace perfkit::test
