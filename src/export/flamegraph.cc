#include "export/flamegraph.h"

#include <vector>

#include "export/json.h"
#include "export/web/web.h"

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

const char* libtype(FlameKind k) {
  switch (k) {
    case FlameKind::kRoot:
      return "root";
    case FlameKind::kKernel:
      return "kernel";
    default:
      return "";
  }
}

// The tree as json.dumps writes perf's Node objects: {"n": .., "l": ..,
// "v": .., "c": [..]}, ", " and ": " between items, ASCII only. Depth-first
// without recursion; the buffer is flushed as it fills.
void tree_json(const FlameTree& tree, JsonStyle style, FdWriter& out) {
  const auto& nodes = tree.nodes();
  std::vector<Index> open;  // nodes whose children are being written
  Index n = 0;
  auto& buf = out.buffer();
  while (true) {
    const FlameNode& node = nodes[n];
    buf.append(std::string_view("{\"n\": "));
    json_string(buf, tree.name(node), style);
    fmt::format_to(std::back_inserter(buf), ", \"l\": \"{}\", \"v\": {}, \"c\": [",
                   libtype(node.kind), node.self);
    out.maybe_flush();
    if (node.first_child != kNone) {
      open.push_back(n);
      n = node.first_child;
      continue;
    }
    buf.append(std::string_view("]}"));
    // Close finished parents until one has a next sibling.
    while (nodes[n].next == kNone && !open.empty()) {
      n = open.back();
      open.pop_back();
      buf.append(std::string_view("]}"));
    }
    if (nodes[n].next == kNone) break;
    buf.append(std::string_view(", "));
    n = nodes[n].next;
  }
}

}  // namespace

Status write_flamegraph_json(const FlameTree& tree, FdWriter& out) {
  tree_json(tree, JsonStyle::kAscii, out);
  return out.flush();
}

Status write_flamegraph_html(const FlameTree& tree, const FlamegraphHtmlOptions& o, FdWriter& out) {
  const std::string_view page = web::kFlamegraphHtml;
  std::size_t at = web::emit_until(page, 0, "@TITLE@", out);
  fmt::memory_buffer text;
  xml_text(text, o.title);
  out.write(std::string_view(text.data(), text.size()));
  at = web::emit_until(page, at, "@CSS@", out);
  out.write(web::kFlamegraphCss);
  at = web::emit_until(page, at, "@OPTIONS@", out);
  fmt::memory_buffer opts;
  opts.append(std::string_view("{\"colorscheme\": "));
  json_string(opts, o.colorscheme, JsonStyle::kScript);
  opts.append(std::string_view(", \"context\": "));
  json_string(opts, o.context, JsonStyle::kScript);
  opts.push_back('}');
  out.write(std::string_view(opts.data(), opts.size()));
  at = web::emit_until(page, at, "@DATA@", out);
  tree_json(tree, JsonStyle::kScript, out);
  at = web::emit_until(page, at, "@JS@", out);
  out.write(web::kFixedJs);
  out.write(web::kFlamegraphJs);
  out.write(page.substr(at));
  return out.flush();
}

}  // namespace perfkit::exports
