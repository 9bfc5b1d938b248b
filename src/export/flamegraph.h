// perf's flamegraph.py report (`perf script report flamegraph`): the samples
// as a tree of {"n": name, "l": libtype, "v": samples, "c": children}.
//   -f json   exactly the JSON perf writes (json.dumps of that tree)
//   -f html   a page that draws it: self-contained (perf 6.1's needs the
//             d3-flame-graph template from the web), with the recording's
//             header as its context, in the blue-green or orange scheme
#pragma once

#include <string>

#include "base/error.h"
#include "base/output.h"
#include "export/flame_tree.h"

namespace perfkit::exports {

// Errors: the output's.
Status write_flamegraph_json(const FlameTree& tree, FdWriter& out);

struct FlamegraphHtmlOptions {
  std::string colorscheme = "blue-green";  // or "orange"
  std::string context;                     // text shown with the graph (the header)
  std::string title = "perfkit flame graph";
};

// Errors: the output's.
Status write_flamegraph_html(const FlameTree& tree, const FlamegraphHtmlOptions& o, FdWriter& out);

}  // namespace perfkit::exports
