#include "export/json.h"

#include <cstdint>

namespace perfkit::exports {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// The code point at s[i] and its length in bytes; a byte that does not start
// a valid (shortest-form, non-surrogate) UTF-8 sequence is U+FFFD, length 1.
std::pair<char32_t, std::size_t> decode(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<std::uint8_t>(s[i + k]); };
  const std::uint8_t c = b(0);
  if (c < 0x80) return {c, 1};
  std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return {kReplacement, 1};
  char32_t cp = c & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return {kReplacement, 1};
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  const char32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {kReplacement, 1};
  return {cp, n};
}

void append_utf8(fmt::memory_buffer& out, char32_t cp) {
  char b[4];
  std::size_t n = 0;
  if (cp < 0x80) {
    b[n++] = static_cast<char>(cp);
  } else if (cp < 0x800) {
    b[n++] = static_cast<char>(0xC0 | (cp >> 6));
    b[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    b[n++] = static_cast<char>(0xE0 | (cp >> 12));
    b[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    b[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    b[n++] = static_cast<char>(0xF0 | (cp >> 18));
    b[n++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    b[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    b[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  }
  out.append(b, b + n);
}

void escape_u(fmt::memory_buffer& out, char32_t cp) {
  if (cp >= 0x10000) {  // a surrogate pair, as Python writes it
    cp -= 0x10000;
    fmt::format_to(std::back_inserter(out), "\\u{:04x}\\u{:04x}", 0xD800 + (cp >> 10),
                   0xDC00 + (cp & 0x3FF));
  } else {
    fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<std::uint32_t>(cp));
  }
}

}  // namespace

void json_string(fmt::memory_buffer& out, std::string_view s, JsonStyle style) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    // The common case: printable ASCII that needs nothing.
    if (c >= ' ' && c <= '~' && c != '"' && c != '\\' &&
        (style != JsonStyle::kScript || (c != '<' && c != '>' && c != '&'))) {
      out.push_back(c);
      ++i;
      continue;
    }
    auto [cp, n] = decode(s, i);
    i += n;
    switch (cp) {
      case '"':
        out.append(std::string_view("\\\""));
        continue;
      case '\\':
        out.append(std::string_view("\\\\"));
        continue;
      case '\n':
        out.append(std::string_view("\\n"));
        continue;
      case '\r':
        out.append(std::string_view("\\r"));
        continue;
      case '\t':
        out.append(std::string_view("\\t"));
        continue;
      case '\b':
        out.append(std::string_view("\\b"));
        continue;
      case '\f':
        out.append(std::string_view("\\f"));
        continue;
      default:
        break;
    }
    const bool escape = cp < 0x20 || style == JsonStyle::kAscii && cp >= 0x7F ||
                        style == JsonStyle::kScript &&
                            (cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 || cp == 0x2029);
    if (escape)
      escape_u(out, cp);
    else
      append_utf8(out, cp);
  }
  out.push_back('"');
}

void xml_text(fmt::memory_buffer& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto [cp, n] = decode(s, i);
    i += n;
    switch (cp) {
      case '<':
        out.append(std::string_view("&lt;"));
        continue;
      case '>':
        out.append(std::string_view("&gt;"));
        continue;
      case '&':
        out.append(std::string_view("&amp;"));
        continue;
      case '"':
        out.append(std::string_view("&quot;"));
        continue;
      case '\'':
        out.append(std::string_view("&apos;"));
        continue;
      default:
        break;
    }
    // XML 1.0 allows no control characters but tab, newline and return.
    if (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') continue;
    if (cp == 0xFFFE || cp == 0xFFFF) cp = kReplacement;
    append_utf8(out, cp);
  }
}

}  // namespace perfkit::exports
