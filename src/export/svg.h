// An SVG flame graph in the manner of Brendan Gregg's FlameGraph
// (flamegraph.pl), written by perfkit from a FlameTree: frames as boxes,
// widths by samples (or period), siblings in alphabetical order, root at
// the bottom (at the top with `inverted`, an icicle graph), with a title,
// Search, Reset Zoom and a details line; tooltips give each frame's count
// and share. User frames take the "hot" palette, kernel frames orange and
// frames of no DSO grey. Names are XML-escaped.
#pragma once

#include <string>

#include "base/error.h"
#include "base/output.h"
#include "export/flame_tree.h"

namespace perfkit::exports {

struct SvgOptions {
  std::string title = "Flame Graph";   // --flame-title
  std::string subtitle;                // e.g. the event
  std::string count_name = "samples";  // what a frame's number counts
  bool inverted = false;               // --inverted: root on top
  int width = 1200;
  double min_width = 0.1;  // frames narrower (in pixels) are left out, as FlameGraph's
};

// Errors: the output's.
Status write_svg(const FlameTree& tree, const SvgOptions& o, FdWriter& out);

}  // namespace perfkit::exports
