// Folded stacks: one line per distinct stack, "frame;frame;...;leaf COUNT",
// callers first, lines sorted. Two writers over one folding:
// - write_stackcollapse: exactly what perf's stackcollapse.py prints
//   (`perf script report stackcollapse`), every event's samples counted;
// - write_folded: FlameGraph's input (stackcollapse-perf.pl's conventions)
//   for one event, weighted by samples or by period: for an event with call
//   chains the same lines as stackcollapse.py's of that event alone, and as
//   both of them a sample without a chain folds to its process alone.
// (The module is export/; `export` being a keyword, its namespace is exports.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/output.h"
#include "profile/profile.h"

namespace perfkit::exports {

// stackcollapse.py's options, with its defaults.
struct StackcollapseOptions {
  bool include_tid = false;      // --include-tid: "comm-PID/TID" (with --include-pid)
  bool include_pid = false;      // --include-pid
  bool include_comm = true;      // --no-comm clears it
  bool tidy_java = false;        // --tidy-java
  bool annotate_kernel = false;  // --kernel: "_[k]" after [kernel.kallsyms] functions
};

// Errors: the output's.
Status write_stackcollapse(const profile::Profile& p, const StackcollapseOptions& o, FdWriter& out);

struct FoldedOptions {
  std::size_t event = 0;         // the event whose samples are folded
  bool weight_period = false;    // --folded-weight period (else samples)
  bool include_comm = true;      // the process name as the root frame, as FlameGraph's
  bool annotate_kernel = false;  // "_[k]" after kernel functions
  // The lines' texts are made and sorted on this many threads (--jobs);
  // the output is the same.
  unsigned threads = 1;
};

// Errors: an event the profile does not have, the output's.
Status write_folded(const profile::Profile& p, const FoldedOptions& o, FdWriter& out);

// FlameGraph's difffolded.pl format: "stack BEFORE AFTER" for every stack
// of either profile (0 where one has none), lines sorted: what
// flamegraph.pl draws as a differential flame graph (NEW's shape, coloured
// by the change). `o.event` is ignored: the events are given per profile.
struct FoldedPairLine {
  std::string stack;  // "comm;caller;...;leaf"
  std::uint64_t before = 0, after = 0;
};
// The lines write_folded_pair writes. Errors: an event a profile lacks.
Expected<std::vector<FoldedPairLine>> folded_pair_lines(const profile::Profile& before,
                                                        std::size_t before_event,
                                                        const profile::Profile& after,
                                                        std::size_t after_event,
                                                        const FoldedOptions& o);
Status write_folded_pair(const profile::Profile& before, std::size_t before_event,
                         const profile::Profile& after, std::size_t after_event,
                         const FoldedOptions& o, FdWriter& out);

}  // namespace perfkit::exports
