// The page parts the exporters write, embedded by the build from the files
// beside this header (cmake/embed.cmake).
#pragma once

#include <cstddef>
#include <string_view>

#include "base/output.h"

namespace perfkit::exports::web {

// Writes `page` from `from` up to its next "@KEY@" `key`; returns where the
// text after the key starts (the caller writes what replaces the key).
std::size_t emit_until(std::string_view page, std::size_t from, std::string_view key,
                       FdWriter& out);

extern const std::string_view kFlamegraphHtml;  // flamegraph.html: @TITLE@ @CSS@ ... @JS@
extern const std::string_view kFlamegraphCss;
extern const std::string_view kFlamegraphJs;
extern const std::string_view kFlamegraphSvgJs;  // flamegraph_svg.js, inside the SVG's CDATA
extern const std::string_view kReportHtml;       // report.html: @TITLE@ @CSS@ @DATA@ @JS@
extern const std::string_view kReportCss;
extern const std::string_view kReportJs;
extern const std::string_view kDiffHtml;  // diff.html: @TITLE@ @CSS@ (report's) @DATA@ @JS@
extern const std::string_view kDiffJs;
// fixed.js: pkFixed, printf's %.Nf, written before each page's script.
extern const std::string_view kFixedJs;

}  // namespace perfkit::exports::web
