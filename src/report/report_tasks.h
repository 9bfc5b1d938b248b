// perf report --tasks and --mmaps: the machine's threads as a tree (each
// under the thread its FORK named as parent), with their process's maps.
#pragma once

#include "base/output.h"
#include "machine/machine.h"

namespace perfkit::report {

// Prints `machine`'s threads as perf report --tasks does, and with `maps`
// each thread's maps under it (--mmaps). Errors: a thread whose parent is
// not in the table (perf's "failed to process tasks").
Status print_tasks(const machine::Machine& machine, bool maps, FdWriter& out);

}  // namespace perfkit::report
