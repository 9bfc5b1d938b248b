// The page parts the exporters write, embedded by the build from the files
// beside this header (cmake/embed.cmake).
#pragma once

#include <string_view>

namespace perfkit::exports::web {

extern const std::string_view kFlamegraphHtml;  // flamegraph.html: @TITLE@ @CSS@ ... @JS@
extern const std::string_view kFlamegraphCss;
extern const std::string_view kFlamegraphJs;
extern const std::string_view kFlamegraphSvgJs;  // flamegraph_svg.js, inside the SVG's CDATA
extern const std::string_view kReportHtml;       // report.html: @TITLE@ @CSS@ @DATA@ @JS@
extern const std::string_view kReportCss;
extern const std::string_view kReportJs;

}  // namespace perfkit::exports::web
