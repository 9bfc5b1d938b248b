#include "cli/report_html.h"

#include <fmt/format.h>

#include "base/output.h"
#include "cli/options.h"
#include "export/html_report.h"

namespace perfkit::cli {

int report_html(ProfileArgs& a, const std::string& path) {
  a.opts.source_lines = true;  // shown when hovering a frame
  auto p = read_profile(a);
  if (!p) return fail("report", p.error());
  if (p->summary.samples == 0)
    return fail("report", make_error("{}: the recording has no samples to show",
                                     a.input.empty() ? "perf.data" : a.input));
  exports::HtmlReportOptions o;
  o.title = "perfkit report: " +
            (p->summary.hostname.empty() ? a.input : a.input + " (" + p->summary.hostname + ")");
  o.warnings = a.warnings;
  o.max_stack = a.opts.max_stack;
  auto out = OutputFile::create(path);
  if (!out) return fail("report", out.error());
  Status st = exports::write_html_report(*p, o, out->writer());
  if (st) st = out->commit();
  if (!st) return fail("report", st.error());
  return 0;
}

}  // namespace perfkit::cli
