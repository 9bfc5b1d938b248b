#include "export/svg.h"

#include <algorithm>
#include <vector>

#include "export/json.h"
#include "export/web/web.h"

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

constexpr int kFrameHeight = 16, kFontSize = 12, kXPad = 10;
constexpr int kYPadTop = kFontSize * 4, kYPadBottom = kFontSize * 2 + 10;
constexpr double kCharWidth = 0.59;

double unit_hash(std::string_view s, std::uint32_t seed) {
  std::uint32_t h = 2166136261u ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  h ^= h >> 15;
  h *= 0x2c1b3c6dU;
  h ^= h >> 12;
  return (h & 0xFFFFFF) / double(0x1000000);
}

// FlameGraph's palettes: "hot" for user code, orange for the kernel; grey
// for frames in no DSO ("[unknown]" addresses).
std::string colour(const FlameTree& tree, const FlameNode& n) {
  const std::string_view name = tree.name(n);
  const double a = unit_hash(name, 1), b = unit_hash(name, 2), c = unit_hash(name, 3);
  int r, g, bl;
  if (n.kind == FlameKind::kKernel) {
    r = 215 + int(40 * a), g = 110 + int(60 * b), bl = int(40 * c);
  } else if (n.kind == FlameKind::kUser && n.dso == kNone) {
    r = g = bl = 160 + int(40 * a);
  } else {
    r = 205 + int(50 * a), g = int(230 * b), bl = int(55 * c);
  }
  return fmt::format("rgb({},{},{})", r, g, bl);
}

struct Box {
  Index node;
  double x, w;
  int depth;
};

// Lays the tree out depth first: siblings sorted by name, boxes under
// min_width left out with everything above them.
std::vector<Box> layout(const FlameTree& tree, const SvgOptions& o, int& max_depth) {
  const auto& nodes = tree.nodes();
  const double scale = nodes[0].total ? (o.width - 2.0 * kXPad) / double(nodes[0].total) : 0;
  std::vector<Box> boxes;
  std::vector<Box> todo{{0, kXPad, nodes[0].total * scale, 0}};
  std::vector<Index> kids;
  max_depth = 0;
  while (!todo.empty()) {
    const Box b = todo.back();
    todo.pop_back();
    if (b.w < o.min_width) continue;
    boxes.push_back(b);
    max_depth = std::max(max_depth, b.depth);
    kids.clear();
    for (Index c = nodes[b.node].first_child; c != kNone; c = nodes[c].next) kids.push_back(c);
    std::sort(kids.begin(), kids.end(),
              [&](Index l, Index r) { return tree.name(nodes[l]) < tree.name(nodes[r]); });
    double x = b.x;
    const std::size_t first = todo.size();
    for (Index c : kids) {
      const double w = nodes[c].total * scale;
      todo.push_back({c, x, w, b.depth + 1});
      x += w;
    }
    std::reverse(todo.begin() + static_cast<std::ptrdiff_t>(first), todo.end());
  }
  return boxes;
}

std::string fit_label(std::string_view name, double w) {
  const int fit = int((w - 6) / (kFontSize * kCharWidth));
  if (fit < 3) return {};
  if (static_cast<int>(name.size()) <= fit) return std::string(name);
  // Cut at a character boundary of UTF-8.
  std::size_t cut = static_cast<std::size_t>(fit - 2);
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return std::string(name.substr(0, cut)) + "..";
}

std::string with_commas(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

void write_head(const SvgOptions& o, int height, std::uint64_t total, FdWriter& out) {
  auto& buf = out.buffer();
  fmt::format_to(
      std::back_inserter(buf),
      "<?xml version=\"1.0\" standalone=\"no\"?>\n"
      "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
      "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
      "<svg version=\"1.1\" width=\"{0}\" height=\"{1}\" onload=\"fg.init()\" "
      "viewBox=\"0 0 {0} {1}\" xmlns=\"http://www.w3.org/2000/svg\">\n"
      "<style type=\"text/css\">\n"
      "text {{ font-family: Verdana, sans-serif; font-size: {2}px; fill: rgb(0,0,0); }}\n"
      "#title {{ text-anchor: middle; font-size: {3}px; }}\n"
      "#subtitle {{ text-anchor: middle; fill: rgb(160,160,160); }}\n"
      "#search, #unzoom {{ cursor: pointer; }}\n"
      "#frames > g {{ cursor: pointer; }}\n"
      "#frames > g:hover rect {{ stroke: black; stroke-width: 0.5; }}\n"
      ".hide {{ display: none; }}\n.faded {{ opacity: 0.5; }}\n"
      "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n",
      o.width, height, kFontSize, kFontSize + 5);
  out.write(web::kFixedJs);
  out.write(web::kFlamegraphSvgJs);
  fmt::format_to(std::back_inserter(buf),
                 "]]></script>\n<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" "
                 "x2=\"0\"><stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop "
                 "stop-color=\"#eeeeb0\" offset=\"95%\"/></linearGradient></defs>\n"
                 "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"url(#background)\"/>\n"
                 "<text id=\"title\" x=\"{2}\" y=\"{3}\">",
                 o.width, height, o.width / 2, kFontSize * 2);
  xml_text(buf, o.title);
  buf.append(std::string_view("</text>\n"));
  if (!o.subtitle.empty()) {
    fmt::format_to(std::back_inserter(buf), "<text id=\"subtitle\" x=\"{}\" y=\"{}\">", o.width / 2,
                   kFontSize * 2 + 16);
    xml_text(buf, o.subtitle);
    buf.append(std::string_view("</text>\n"));
  }
  fmt::format_to(std::back_inserter(buf),
                 "<text id=\"details\" x=\"{0}\" y=\"{1}\"> </text>\n"
                 "<text id=\"unzoom\" class=\"hide\" x=\"{0}\" y=\"{2}\">Reset Zoom</text>\n"
                 "<text id=\"search\" x=\"{3}\" y=\"{2}\">Search</text>\n"
                 "<text id=\"matched\" x=\"{3}\" y=\"{1}\"> </text>\n"
                 "<g id=\"frames\" data-total=\"{4}\">\n",
                 kXPad, height - kYPadBottom / 2, kFontSize * 2, o.width - kXPad - 100, total);
}

}  // namespace

Status write_svg(const FlameTree& tree, const SvgOptions& o, FdWriter& out) {
  int max_depth = 0;
  const std::vector<Box> boxes = layout(tree, o, max_depth);
  const int height = (max_depth + 1) * kFrameHeight + kYPadTop + kYPadBottom;
  const std::uint64_t total = tree.nodes()[0].total;
  write_head(o, height, total, out);
  auto& buf = out.buffer();
  for (const Box& b : boxes) {
    const FlameNode& n = tree.nodes()[b.node];
    const std::string_view name = tree.name(n);
    const int y = o.inverted ? kYPadTop + b.depth * kFrameHeight
                             : height - kYPadBottom - (b.depth + 1) * kFrameHeight;
    const std::string fill = colour(tree, n);
    buf.append(std::string_view("<g data-name=\""));
    xml_text(buf, name);
    fmt::format_to(std::back_inserter(buf),
                   "\" data-x=\"{:.2f}\" data-w=\"{:.2f}\" data-depth=\"{}\" data-value=\"{}\">"
                   "<title>",
                   b.x, b.w, b.depth, n.total);
    xml_text(buf, name);
    fmt::format_to(std::back_inserter(buf),
                   " ({} {}, {:.2f}%)</title><rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" "
                   "height=\"{}\" rx=\"2\" ry=\"2\" fill=\"{}\" data-fill=\"{}\"/>"
                   "<text x=\"{:.1f}\" y=\"{:.1f}\">",
                   with_commas(n.total), o.count_name, total ? 100.0 * n.total / total : 0.0, b.x,
                   y, b.w, kFrameHeight - 1, fill, fill, b.x + 3, y + 10.5);
    xml_text(buf, fit_label(name, b.w));
    buf.append(std::string_view("</text></g>\n"));
    out.maybe_flush();
  }
  buf.append(std::string_view("</g>\n</svg>\n"));
  return out.flush();
}

}  // namespace perfkit::exports
