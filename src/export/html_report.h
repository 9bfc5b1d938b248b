// perfkit report --html: the profile as one self-contained page to look at,
// share and attach to a bug. Nothing is fetched (a Content-Security-Policy
// of default-src 'none' says so); the page carries the profile model's
// tables as compact JSON (interned strings, functions, frames, the stack
// prefix tree, per-thread sample columns with delta-coded times) and its
// own JavaScript (src/export/web/report.js) computes every view from them:
// summary, flame graph and icicle, top-down, bottom-up, functions and
// butterfly, a per-thread timeline whose selection filters the rest, with
// the view's state in the URL's fragment.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "base/output.h"
#include "profile/profile.h"

namespace perfkit::exports {

struct HtmlReportOptions {
  std::string title = "perfkit report";
  std::vector<std::string> warnings;  // what reading the recording warned of (missing files, ...)
  int max_stack = 127;                // stacks this deep may have been cut (shown as truncated)
};

// Errors: the output's.
Status write_html_report(const profile::Profile& p, const HtmlReportOptions& o, FdWriter& out);

}  // namespace perfkit::exports
