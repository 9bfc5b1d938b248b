// The exporters' quoting of untrusted names: JSON as Python's json.dumps
// writes it (ensure_ascii), JSON safe inside a <script> element, UTF-8
// errors replaced, and XML text for SVG.
#include "export/json.h"

#include <gtest/gtest.h>

#include <string>

#include "export/firefox.h"

namespace perfkit::exports {
namespace {

std::string quote(std::string_view s, JsonStyle style) {
  fmt::memory_buffer b;
  json_string(b, s, style);
  return fmt::to_string(b);
}

std::string xml(std::string_view s) {
  fmt::memory_buffer b;
  xml_text(b, s);
  return fmt::to_string(b);
}

TEST(JsonString, AsciiAsPythonJsonDumps) {
  // json.dumps("a\"b\\c\n\t\x01\x7f") and non-ASCII, astral as a pair.
  EXPECT_EQ(quote("a\"b\\c\n\t\x01\x7f", JsonStyle::kAscii), R"("a\"b\\c\n\t\u0001\u007f")");
  EXPECT_EQ(quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", JsonStyle::kAscii),
            R"("caf\u00e9 \u20ac \ud83d\udd25")");
  EXPECT_EQ(quote("</script>", JsonStyle::kAscii), R"("</script>")");
}

TEST(JsonString, Utf8KeepsTextAndEscapesControls) {
  EXPECT_EQ(quote("caf\xc3\xa9\r\b\f", JsonStyle::kUtf8), "\"caf\xc3\xa9\\r\\b\\f\"");
  // Not UTF-8: a lone continuation byte, a truncated sequence, an overlong
  // form and a surrogate each become U+FFFD.
  EXPECT_EQ(quote("a\x80z", JsonStyle::kUtf8), "\"a\xef\xbf\xbdz\"");
  EXPECT_EQ(quote("a\xe2\x82", JsonStyle::kUtf8), "\"a\xef\xbf\xbd\xef\xbf\xbd\"");
  EXPECT_EQ(quote("\xc0\xaf", JsonStyle::kUtf8), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  EXPECT_EQ(quote("\xed\xa0\x80", JsonStyle::kUtf8), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

TEST(JsonString, ScriptCannotEndTheElement) {
  const std::string q =
      quote("</script><script>alert(1)</script>&\xe2\x80\xa8", JsonStyle::kScript);
  EXPECT_EQ(q.find('<'), std::string::npos);
  EXPECT_EQ(q.find('>'), std::string::npos);
  EXPECT_EQ(q, R"("\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e\u0026\u2028")");
}

TEST(XmlText, EscapesAndDropsWhatXmlRefuses) {
  EXPECT_EQ(xml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml("x\x01y\tz"), "xy\tz");
  EXPECT_EQ(xml("\xff"), "\xef\xbf\xbd");
}

TEST(BreakpadId, FromAnElfBuildId) {
  // The GUID's u32 and two u16 byte-swapped, 16 bytes upper case, age 0.
  EXPECT_EQ(breakpad_id("f0fc29165cbe6088c0e1adf03b0048fbecbc003a"),
            "1629FCF0BE5C8860C0E1ADF03B0048FB0");
  // A short id is padded with zeros; none gives none.
  EXPECT_EQ(breakpad_id("0102030405"),
            "04030201000500000000000000000000"
            "0");
  EXPECT_EQ(breakpad_id(""), "");
}

}  // namespace
}  // namespace perfkit::exports
