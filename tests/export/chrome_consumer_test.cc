// perfkit data convert --to-chrome: Chrome Trace Event JSON whose slices
// nest per thread (tests/consumers/chrome_trace_check.py, as trace viewers
// need them), whose context-switch instants are the recording's switches
// (as perf script --show-switch-events lists them), and which speedscope,
// a real consumer of the format, imports in headless Chromium.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "export/browser.h"
#include "export/export_compare.h"
#include "support/test_support.h"

namespace perfkit::test {
namespace {

std::string checker() {
  return std::string(PERFKIT_SOURCE_DIR) + "/tests/consumers/chrome_trace_check.py";
}

int count_lines(const std::string& text, const std::string& needle) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

TEST(ChromeTrace, SlicesNestAndSwitchesMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  TempDir tmp;
  int checked = 0;
  for (std::string name :
       {"fp.data", "dwarf.data", "syswide_g.data", "multi.data", "pipe.data", "switch.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    const std::string out = tmp.path(name + ".json");
    auto conv =
        run(perfkit_bin() + " data convert -i " + sh(f) + " --to-chrome " + sh(out) + " 2>&1");
    ASSERT_EQ(conv.status, 0) << name << conv.out;
    auto r = run("python3 " + sh(checker()) + " " + sh(out) + " 2>&1");
    ASSERT_EQ(r.status, 0) << name << ": " << r.out;
    std::istringstream in(r.out);
    int threads = 0, slices = 0;
    in >> threads >> slices;
    EXPECT_GT(slices, threads) << name;
    auto perf = run("perf script --show-switch-events -i " + sh(f) + " 2>/dev/null");
    ASSERT_EQ(perf.status, 0);
    const int outs = count_lines(perf.out, "PERF_RECORD_SWITCH OUT");
    const int ins = count_lines(perf.out, "PERF_RECORD_SWITCH IN");
    const std::string text = read_file(out);
    EXPECT_EQ(count_lines(r.out, "instant switch out"), outs ? 1 : 0) << name << r.out;
    std::size_t switch_outs = 0, switch_ins = 0;
    for (std::size_t at = 0; (at = text.find("\"name\":\"switch out", at)) != std::string::npos;
         ++at)
      ++switch_outs;
    for (std::size_t at = 0; (at = text.find("\"name\":\"switch in\"", at)) != std::string::npos;
         ++at)
      ++switch_ins;
    EXPECT_EQ(switch_outs, static_cast<std::size_t>(outs)) << name;
    EXPECT_EQ(switch_ins, static_cast<std::size_t>(ins)) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

// An Intel PT recording: the samples --itrace makes become each thread's
// slices, nested, under the synthesized event's name.
TEST(ChromeTrace, IntelPtItraceSamplesNest) {
  PK_SKIP_WITHOUT_PERF();
  TempDir tmp;
  const std::string pt = pt_recording(tmp.dir());
  ASSERT_FALSE(HasFailure());
  const std::string out = tmp.path("pt.json");
  auto conv = run(perfkit_bin() + " data convert -i " + sh(pt) + " " + kPtItrace + " --to-chrome " +
                  sh(out) + " 2>&1");
  ASSERT_EQ(conv.status, 0) << conv.out;
  auto r = run("python3 " + sh(checker()) + " " + sh(out) + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  std::istringstream in(r.out);
  int threads = 0, slices = 0;
  in >> threads >> slices;
  EXPECT_GE(threads, 1);
  EXPECT_GT(slices, threads);
  const ReportTotals perf = report_totals(pt, kPtItrace, "perf");
  ASSERT_EQ(perf.size(), 1u);
  EXPECT_NE(read_file(out).find("\"event\":\"" + perf.begin()->first + "\""), std::string::npos);
}

TEST(ChromeTrace, SpeedscopeImportsIt) {
  PK_TOOL_OR_SKIP(chromium, "chromium");
  PK_NPM_OR_SKIP(schema, "speedscope/dist/release/file-format-schema.json");
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  TempDir tmp;
  std::filesystem::copy(std::filesystem::path(schema).parent_path(), tmp.path("site"),
                        std::filesystem::copy_options::recursive);
  auto conv = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-chrome " +
                  sh(tmp.path("site/trace.json")) + " 2>&1");
  ASSERT_EQ(conv.status, 0) << conv.out;
  HttpServer server(tmp.path("site"));
  ASSERT_FALSE(server.url().empty());
  PageLoad page = load_url(
      chromium, server.url() + "index.html#profileURL=" + server.url() + "trace.json", tmp.dir());
  ASSERT_TRUE(page.ok) << page.log;
  // speedscope titles a chrome trace after its file, and draws the thread.
  EXPECT_NE(page.dom.find("<title>trace.json - speedscope</title>"), std::string::npos)
      << page.dom.substr(0, 400);
  EXPECT_TRUE(page.errors.empty()) << page.errors.front();
}

}  // namespace
}  // namespace perfkit::test
