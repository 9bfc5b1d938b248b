// perf inject --vm-time-correlation: the Intel PT trace of a recording made
// in and out of VM guests gets host time in its guest TSC packets, in place
// in the file (intelpt/vm_time.h has the pass; this file reads the
// recording, drives one pass per trace queue in the order perf decodes them,
// and writes the changed bytes back).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace perfkit::inject {

struct VmTimeOptions {
  // The option's value as given: "[dry-run] [<TSC Offset> [: <VMCS> [, <VMCS>]...]]...".
  std::string args;
  // --itrace's Z: timeless decoding, which has no time to correlate.
  bool timeless = false;
};

// Splits the option's value as perf does: a leading "dry-run" (after blanks;
// only its 7 letters are compared) and the rest.
void parse_vm_time_option(std::string_view value, bool& dry_run, std::string& args);

// Correlates `path` in place (nothing is written in a dry run). The pass's
// reports (perf's lines: "VMCS: ...", "ERROR: ...") go to `message` as they
// come. A recording without Intel PT is left as it is. Errors, as perf
// fails them at the AUXTRACE_INFO record ("0xOFF [0xSIZE]: failed to process
// type: 70 [REASON]", after its own line, with perf's exit status in
// `status`): no time information, no MTC packets, options that do not parse;
// and the reader's and the file's (naming the path).
Status run_vm_time_correlation(const std::string& path, bool dry_run, const VmTimeOptions& opts,
                               const std::function<void(std::string_view)>& message, int& status);

}  // namespace perfkit::inject
