// The configuration file parser on its own: what perf's (git's) syntax
// gives, the bad lines it refuses with their numbers, and the file perf
// config writes back.
#include "config/config.h"

#include <gtest/gtest.h>

namespace perfkit::config {
namespace {

std::string listing(const ConfigSet& set) {
  std::string out;
  for (const Section& s : set.sections())
    for (const Item& i : s.items) out += s.name + "." + i.name + "=" + i.value + "\n";
  return out;
}

TEST(ConfigParse, SectionsValuesAndComments) {
  ConfigSet set;
  ASSERT_TRUE(set.parse(
      "# c\n; c\n[Report]\n\tChildren = \"fa\\\"lse\" ; trailing\n  percent-limit=  5  # c\n"
      "[call-graph \"Sub\"]\nx = 1\n[ui]\nheaders = a \\\n b\nq = \"  sp  \"\nm =  a   b \n"
      "t = \"x\\ty\"\n",
      "f", false));
  EXPECT_EQ(listing(set),
            "report.children=fa\"lse\nreport.percent-limit=5\ncall-graph.Sub.x=1\n"
            "ui.headers=a  b\nui.q=  sp  \nui.m=a b\nui.t=x\ty\n");
  ASSERT_NE(set.get("call-graph.Sub.x"), nullptr);
  EXPECT_EQ(*set.get("report.percent-limit"), "5");
  EXPECT_EQ(set.get("report.nothing"), nullptr);
  EXPECT_EQ(set.get("report"), nullptr);
}

TEST(ConfigParse, LaterValuesReplaceEarlierOnes) {
  ConfigSet set;
  ASSERT_TRUE(set.parse("[a]\nx = 1\n[b]\ny = 2\n[a]\nx = 3\nz = 4\n", "f", false));
  EXPECT_EQ(listing(set), "a.x=3\na.z=4\nb.y=2\n");
}

TEST(ConfigParse, BadLinesAreNumberedAndEndTheFile) {
  struct Case {
    const char* text;
    int line;
    const char* kept;
  };
  const Case cases[] = {
      {"[r]\na = 1\nflag\nb = 2\n", 3, "r.a=1\n"},
      {"[r]\na = \"open\nb = 2\n", 2, ""},
      {"[r]\na = x\\qy\n", 2, ""},
      {"[]\na = 1\n", 1, ""},
      {"a = 1\n", 1, ""},
      {"[r]\n9 = 1\n", 2, ""},
      {"[r \"x\"\na = 1\n", 2, ""},
      {"[r]\na.b = 1\n", 2, ""},
      {"[r]\na = 1\r\nb", 3, "r.a=1\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ConfigSet set;
    Status st = set.parse(c.text, "/p/f", false);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().message(), "bad config file line " + std::to_string(c.line) + " in /p/f");
    EXPECT_EQ(listing(set), c.kept);
  }
}

TEST(ConfigRender, PerfsLayoutWithoutTheSystemsVariables) {
  ConfigSet set;
  ASSERT_TRUE(set.parse("[core]\nx = 1\n", "/etc/perfconfig", true));
  set.set("report.children", "false", false);
  set.set("a.b.c", "1", false);
  set.set("core.y", "2", false);
  EXPECT_EQ(set.render(false),
            "# this file is auto-generated.\n[report]\n\tchildren = false\n[a]\n\tb.c = 1\n");
  EXPECT_EQ(set.render(true),
            "# this file is auto-generated.\n[core]\n\tx = 1\n\ty = 2\n[report]\n"
            "\tchildren = false\n[a]\n\tb.c = 1\n");
}

TEST(ConfigBool, PerfsWords) {
  for (const char* t : {"true", "YES", "On", "1", "-3"}) EXPECT_EQ(parse_bool(t), true) << t;
  for (const char* f : {"false", "no", "OFF", "0", ""}) EXPECT_EQ(parse_bool(f), false) << f;
  EXPECT_EQ(parse_bool("maybe"), std::nullopt);
}

}  // namespace
}  // namespace perfkit::config
