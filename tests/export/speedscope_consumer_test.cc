// perfkit data convert --to-speedscope, opened by its real consumer: the
// speedscope npm package's file-format-schema.json validates every file
// (ajv), the self weight of each leaf function per event equals perfkit
// report's self period (`--no-children -g none --sort sym`), and
// speedscope's own index.html loads a file in headless Chromium and shows
// its name as the title.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "export/browser.h"
#include "export/export_compare.h"
#include "support/test_support.h"

namespace perfkit::test {
namespace {

const char* const kSchema = "speedscope/dist/release/file-format-schema.json";

TEST(SpeedscopeExport, SchemaValidAndSelfWeightsEqualReport) {
  PK_TOOL_OR_SKIP(node, "node");
  PK_NPM_OR_SKIP(schema, kSchema);
  TempDir tmp;
  const std::string check =
      std::string(PERFKIT_SOURCE_DIR) + "/tests/consumers/speedscope_check.js";
  int compared = 0;
  // `f` converted with `extra` (an Intel PT recording's --itrace), its
  // self weights against `binary`'s report with the same options.
  auto check_file = [&](const std::string& name, const std::string& f, const std::string& extra,
                        const std::string& binary) {
    const std::string out = tmp.path(name + ".speedscope.json");
    auto conv = run(perfkit_bin() + " data convert --no-inline -i " + sh(f) + " " + extra +
                    " --to-speedscope " + sh(out) + " 2>&1");
    ASSERT_EQ(conv.status, 0) << name << ": " << conv.out;
    auto r = run("NODE_PATH=" + sh(std::string(PERFKIT_CONSUMERS_DIR) + "/node_modules") + " " +
                 sh(node) + " " + sh(check) + " " + sh(schema) + " " + sh(out));
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    std::map<std::string, std::map<std::string, std::uint64_t>> self;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      const auto a = line.find('\t'), b = line.rfind('\t');
      self[line.substr(0, a)][line.substr(a + 1, b - a - 1)] += std::stoull(line.substr(b + 1));
    }
    const ReportTotals report = report_totals(f, extra, binary);
    ASSERT_FALSE(report.empty());
    for (const auto& [event, symbols] : report) {
      for (const auto& [sym, t] : symbols) {
        EXPECT_EQ(self[event][sym], t.period) << name << " " << event << " " << sym;
        ++compared;
      }
      for (const auto& [sym, w] : self[event])
        EXPECT_TRUE(symbols.count(sym)) << name << " " << event << " " << sym;
    }
  };
  for (std::string name :
       {"fp.data", "dwarf.data", "syswide_g.data", "multi.data", "tracepoint.data", "pipe.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    check_file(name, f, "", "");
  }
  // Intel PT: the samples --itrace makes, against perf report's.
  if (have_perf() || in_ci()) check_file("pt", pt_recording(tmp.dir()), kPtItrace, "perf");
  EXPECT_GT(compared, 20);
}

TEST(SpeedscopeExport, SpeedscopeLoadsItInChromium) {
  PK_TOOL_OR_SKIP(chromium, "chromium");
  PK_NPM_OR_SKIP(schema, kSchema);
  PK_FIXTURE_OR_SKIP(f, "syswide_g.data");
  TempDir tmp;
  // speedscope's page fetch()es #profileURL=, which needs http://.
  const auto release = std::filesystem::path(schema).parent_path();
  std::filesystem::copy(release, tmp.path("site"), std::filesystem::copy_options::recursive);
  auto conv = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-speedscope " +
                  sh(tmp.path("site/profile.json")) + " 2>&1");
  ASSERT_EQ(conv.status, 0) << conv.out;
  HttpServer server(tmp.path("site"));
  ASSERT_FALSE(server.url().empty());
  PageLoad page = load_url(
      chromium, server.url() + "index.html#profileURL=" + server.url() + "profile.json", tmp.dir());
  ASSERT_TRUE(page.ok) << page.log;
  EXPECT_NE(page.dom.find("<title>syswide_g.data - speedscope</title>"), std::string::npos)
      << page.dom.substr(0, 400);
  EXPECT_TRUE(page.errors.empty()) << page.errors.front();
}

}  // namespace
}  // namespace perfkit::test
