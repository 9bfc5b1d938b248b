// perfkit diff --html: a differential flame graph of two profiles in one
// self-contained page (web/diff.html, web/diff.js): the new profile's
// stacks drawn, each frame coloured by how its share changed against the
// baseline (red grew, blue shrank), both shares and the change on hover,
// and a table of the functions whose self share changed most.
#pragma once

#include <cstddef>
#include <string>

#include "base/error.h"
#include "base/output.h"
#include "profile/profile.h"

namespace perfkit::exports {

struct DiffPageOptions {
  std::string title = "perfkit diff";
  std::string before_file, after_file;  // the recordings' names, as given
};

// The stacks of event `before_event` of `before` and `after_event` of
// `after`, weighted by samples. Errors: an event a profile lacks, the
// output's.
Status write_diff_page(const profile::Profile& before, std::size_t before_event,
                       const profile::Profile& after, std::size_t after_event,
                       const DiffPageOptions& o, FdWriter& out);

}  // namespace perfkit::exports
