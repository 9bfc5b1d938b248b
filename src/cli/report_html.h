// perfkit report --html OUT: the recording read into the profile model and
// written as one self-contained page (export/html_report.h).
#pragma once

#include <string>

#include "cli/profile_options.h"

namespace perfkit::cli {

// Reads `a`'s input (its filters, --itrace, symbols) and writes the page to
// `path` (nothing under that name unless whole). Returns the exit status.
int report_html(ProfileArgs& a, const std::string& path);

}  // namespace perfkit::cli
