#include "export/diff_page.h"

#include "export/folded.h"
#include "export/json.h"
#include "export/web/web.h"

namespace perfkit::exports {

namespace {

void side(fmt::memory_buffer& buf, const profile::Profile& p, std::size_t event,
          const std::string& file) {
  buf.append(std::string_view("{\"file\":"));
  json_string(buf, file, JsonStyle::kScript);
  buf.append(std::string_view(",\"event\":"));
  json_string(buf, p.strings.at(p.events[event].name), JsonStyle::kScript);
  fmt::format_to(std::back_inserter(buf), ",\"samples\":{}}}", p.events[event].samples);
}

}  // namespace

Status write_diff_page(const profile::Profile& before, std::size_t before_event,
                       const profile::Profile& after, std::size_t after_event,
                       const DiffPageOptions& o, FdWriter& out) {
  PK_ASSIGN(auto lines, folded_pair_lines(before, before_event, after, after_event, {}));
  const std::string_view page = web::kDiffHtml;
  std::size_t at = web::emit_until(page, 0, "@TITLE@", out);
  fmt::memory_buffer buf;
  xml_text(buf, o.title);
  out.write(std::string_view(buf.data(), buf.size()));
  at = web::emit_until(page, at, "@CSS@", out);
  out.write(web::kReportCss);
  at = web::emit_until(page, at, "@DATA@", out);
  buf.clear();
  buf.append(std::string_view("{\"title\":"));
  json_string(buf, o.title, JsonStyle::kScript);
  buf.append(std::string_view(",\"unit\":\"samples\",\"before\":"));
  side(buf, before, before_event, o.before_file);
  buf.append(std::string_view(",\"after\":"));
  side(buf, after, after_event, o.after_file);
  buf.append(std::string_view(",\"stacks\":["));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) buf.push_back(',');
    buf.push_back('[');
    json_string(buf, lines[i].stack, JsonStyle::kScript);
    fmt::format_to(std::back_inserter(buf), ",{},{}]", lines[i].before, lines[i].after);
    if (buf.size() > (1 << 20)) {
      out.write(std::string_view(buf.data(), buf.size()));
      buf.clear();
    }
  }
  buf.append(std::string_view("]}"));
  out.write(std::string_view(buf.data(), buf.size()));
  at = web::emit_until(page, at, "@JS@", out);
  out.write(web::kFixedJs);
  out.write(web::kDiffJs);
  out.write(page.substr(at));
  return out.flush();
}

}  // namespace perfkit::exports
