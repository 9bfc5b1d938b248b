// JSON string literals for the exporters. Names in a recording (comms,
// symbols, paths) are untrusted bytes: every writer quotes them here, so a
// crafted name cannot end a string, break the file or, in a page, end the
// <script> element it is embedded in.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace perfkit::exports {

enum class JsonStyle {
  kUtf8,    // valid UTF-8 kept as is; '"', '\\' and control characters escaped
  kAscii,   // everything outside ' '..'~' as \uXXXX, as Python's json.dumps
  kScript,  // kUtf8, and '<', '>', '&', U+2028, U+2029 escaped (inside <script>)
};

// Appends `s` as a quoted JSON string. Bytes that are not UTF-8 become
// U+FFFD, so the output is always valid JSON.
void json_string(fmt::memory_buffer& out, std::string_view s, JsonStyle style = JsonStyle::kUtf8);

// Appends `s` with XML's five special characters as entities, control
// characters dropped and bytes that are not UTF-8 as U+FFFD (SVG text).
void xml_text(fmt::memory_buffer& out, std::string_view s);

}  // namespace perfkit::exports
