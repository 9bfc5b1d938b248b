// The CI gate of perfkit diff: whether a NEW recording (or a set of runs)
// grew against the baseline (or the baseline's runs) by more than a limit.
//
//   entry gate  an entry's self share (perf diff's percentages: its period
//               over the event's total in that file) grew by more than
//               `entry_points` percentage points;
//   total gate  an event's total count (task-clock, cycles...) grew by more
//               than `total_percent` percent.
//
// With several runs on a side, the shares and totals are compared by their
// means, and a change fails the gate only when the two sets' ranges (min to
// max) do not overlap either: noise that one run shows and the others do
// not passes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/diff.h"

namespace perfkit::report {

struct GateLimits {
  std::optional<double> entry_points;   // --fail-above PCT
  std::optional<double> total_percent;  // --fail-total-above PCT
};

struct GateViolation {
  bool total = false;  // the total gate (else an entry's)
  std::string event;
  std::size_t new_set = 0;       // which NEW set (a file, or the runs)
  const DiffRow* row = nullptr;  // the entry (entry gate)
  double base = 0, now = 0;      // means: shares in percent, or totals
  double base_min = 0, base_max = 0, now_min = 0, now_max = 0;
  double change = 0;  // points (entry) or percent (total)
};

// `files` by set: base_set are the baseline's runs (file indexes of the
// Diff), new_sets each NEW set's. Violations in event order, then by the
// size of the change.
std::vector<GateViolation> check_gate(const std::vector<DiffEvent>& events,
                                      const std::vector<std::size_t>& base_set,
                                      const std::vector<std::vector<std::size_t>>& new_sets,
                                      const GateLimits& limits);

// A row's name for people: "dso [.] symbol" (with comm / pid where keys).
std::string row_label(const DiffRow& r);

}  // namespace perfkit::report
