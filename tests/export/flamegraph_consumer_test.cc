// Flame graphs: perfkit script report flamegraph against perf's
// flamegraph.py (-f json, byte for byte, on every fixture), its
// self-contained HTML page and data convert --to-flamegraph's SVG loaded in
// headless Chromium (no console errors or CSP refusals, the frames drawn
// with the right counts), and the SVG well-formed XML whose frame counts
// add up to the folded stacks of the same recording.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "export/browser.h"
#include "export/export_compare.h"
#include "support/test_support.h"

namespace perfkit::test {
namespace {

const char* const kFixtures[] = {
    "fp.data",      "dwarf.data",      "nocg.data", "syswide_g.data",  "multi.data",
    "mixedcg.data", "tracepoint.data", "pipe.data", "compressed.data", "tponly.data"};

// Screenshots are kept in the build tree for people to look at.
std::string screenshot_path(const std::string& name) {
  const std::string dir = std::string(PERFKIT_FIXTURES_DIR) + "/../screenshots";
  std::filesystem::create_directories(dir);
  return dir + "/" + name;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

TEST(FlamegraphReport, JsonMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  TempDir tmp;
  int compared = 0;
  for (const char* name : kFixtures) {
    PK_FIXTURE_OR_SKIP(f, name);
    // perf's flamegraph-report passes everything after the script to
    // flamegraph.py, -i included, so perf script itself is given the file.
    auto theirs = run("cd " + sh(tmp.dir()) + " && perf script -i " + sh(f) +
                      " -s /usr/lib/perf-core/scripts/python/flamegraph.py -- -f json -o " +
                      sh(tmp.path("theirs.json")) + " 2>&1");
    ASSERT_EQ(theirs.status, 0) << name << theirs.out;
    auto ours = run(perfkit_bin() + " script report flamegraph -i " + sh(f) + " -f json -o " +
                    sh(tmp.path("ours.json")) + " 2>/dev/null");
    EXPECT_EQ(ours.status, 0) << name;
    EXPECT_EQ(ours.out, "dumping data to " + tmp.path("ours.json") + "\n");
    const std::string want = read_file(tmp.path("theirs.json"));
    ASSERT_GT(want.size(), 40u) << name;
    EXPECT_EQ(read_file(tmp.path("ours.json")), want) << name;
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(std::size(kFixtures)));
}

// An Intel PT recording decoded with --itrace (call chains too with g):
// the folded stacks, perfkit's stackcollapse and its flamegraph.py JSON are
// perf's.
TEST(FlamegraphReport, IntelPtItraceAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  TempDir tmp;
  const std::string pt = pt_recording(tmp.dir());
  ASSERT_FALSE(HasFailure());
  for (std::string itrace : {std::string(kPtItrace), std::string(kPtItrace) + "g"}) {
    auto theirs = run("perf script report stackcollapse -i " + sh(pt) + " " + itrace + " 2>&1");
    ASSERT_EQ(theirs.status, 0) << theirs.out;
    ASSERT_GT(theirs.out.size(), 10u) << itrace;
    auto folded =
        run(perfkit_bin() + " data convert -q -i " + sh(pt) + " " + itrace + " --to-folded -");
    EXPECT_EQ(folded.status, 0) << folded.err;
    EXPECT_EQ(folded.out, theirs.out) << itrace;
    auto ours = run(perfkit_bin() + " script report stackcollapse -i " + sh(pt) + " " + itrace);
    EXPECT_EQ(ours.out, theirs.out) << itrace;
    auto perf_json = run("cd " + sh(tmp.dir()) + " && perf script -i " + sh(pt) + " " + itrace +
                         " -s /usr/lib/perf-core/scripts/python/flamegraph.py -- -f json -o " +
                         sh(tmp.path("theirs.json")) + " 2>&1");
    ASSERT_EQ(perf_json.status, 0) << perf_json.out;
    auto our_json = run(perfkit_bin() + " script report flamegraph -i " + sh(pt) + " " + itrace +
                        " -f json -o " + sh(tmp.path("ours.json")) + " 2>&1");
    EXPECT_EQ(our_json.status, 0) << our_json.out;
    EXPECT_EQ(read_file(tmp.path("ours.json")), read_file(tmp.path("theirs.json"))) << itrace;
  }
}

TEST(FlamegraphReport, OptionsAsArgparse) {
  PK_FIXTURE_OR_SKIP(f, "nocg.data");
  const std::string usage =
      "usage: flamegraph.py [-h] [-f {json,html}] [-o OUTPUT] [--template TEMPLATE]\n"
      "                     [--colorscheme {blue-green,orange}]\n";
  auto bad = run(perfkit_bin() + " script report flamegraph -i " + sh(f) + " -f svg");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, usage +
                         "flamegraph.py: error: argument -f/--format: invalid choice: 'svg' "
                         "(choose from 'json', 'html')\n");
  auto missing = run(perfkit_bin() + " script report flamegraph -i " + sh(f) + " -o");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err,
            usage + "flamegraph.py: error: argument -o/--output: expected one argument\n");
  // "-o -" writes to stdout, without the "dumping" line.
  auto out = run(perfkit_bin() + " script report flamegraph -i " + sh(f) + " -f json -o -");
  EXPECT_EQ(out.status, 0);
  EXPECT_EQ(out.out.rfind("{\"n\": \"all\", \"l\": \"root\"", 0), 0u) << out.out.substr(0, 80);
  // An output that cannot be written: an error naming it, nothing left.
  auto unwritable =
      run(perfkit_bin() + " script report flamegraph -i " + sh(f) + " -o /nonexistent/dir/fg.html");
  EXPECT_NE(unwritable.status, 0);
  EXPECT_NE(unwritable.err.find("/nonexistent/dir/fg.html"), std::string::npos) << unwritable.err;
}

TEST(FlamegraphReport, HtmlDrawsInChromium) {
  PK_TOOL_OR_SKIP(chromium, "chromium");
  PK_FIXTURE_OR_SKIP(f, "syswide_g.data");
  TempDir tmp;
  const std::string page = tmp.path("flamegraph.html");
  auto r = run(perfkit_bin() + " script report flamegraph -i " + sh(f) + " -o " + sh(page) +
               " --colorscheme orange 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string html = read_file(page);
  // Self-contained: nothing fetched from anywhere, and the CSP says so.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  auto json = run(perfkit_bin() + " script report flamegraph -i " + sh(f) + " -f json -o - | " +
                  "python3 -c 'import json,sys\n"
                  "def t(n): return n[\"v\"] + sum(t(c) for c in n[\"c\"])\n"
                  "root = json.load(sys.stdin)\n"
                  "print(t(root))\n"
                  "print(max(root[\"c\"], key=t)[\"n\"])'");
  ASSERT_EQ(json.status, 0);
  // The total, then the busiest process: what the recording holds varies with the machine's load
  // (swapper is tiny on a busy one, and frames under a pixel are not drawn).
  const std::string total = json.out.substr(0, json.out.find('\n'));
  std::string busiest = json.out.substr(json.out.find('\n') + 1);
  busiest = busiest.substr(0, busiest.find('\n'));
  ASSERT_FALSE(busiest.empty()) << json.out;
  PageLoad load = load_page(chromium, page, tmp.dir());
  ASSERT_TRUE(load.ok) << load.log;
  EXPECT_TRUE(load.errors.empty()) << joined(load.errors);
  // The root frame drawn with every sample; perf's process frames under it.
  std::string commas = total;
  for (int i = static_cast<int>(commas.size()) - 3; i > 0; i -= 3)
    commas.insert(static_cast<std::size_t>(i), ",");
  EXPECT_NE(load.dom.find("title=\"all (" + commas + " samples, 100.00%)\""), std::string::npos)
      << total;
  EXPECT_NE(load.dom.find("title=\"" + busiest + " ("), std::string::npos) << busiest;
  EXPECT_NE(load.dom.find("hostname : "), std::string::npos);
  EXPECT_TRUE(screenshot(chromium, page, screenshot_path("flamegraph_html.png"), tmp.dir()));
}

// The folded stacks of `file` (FlameGraph's input: comm;frames COUNT).
std::map<std::string, std::uint64_t> folded_by_comm(const std::string& file, std::uint64_t& total) {
  auto r = run(perfkit_bin() + " data convert -i " + sh(file) + " --to-folded - 2>/dev/null");
  EXPECT_EQ(r.status, 0);
  std::map<std::string, std::uint64_t> comms;
  total = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const auto space = line.rfind(' ');
    const std::uint64_t n = std::stoull(line.substr(space + 1));
    comms[line.substr(0, std::min(line.find(';'), space))] += n;
    total += n;
  }
  return comms;
}

TEST(SvgFlamegraph, WellFormedWithTheFoldedCounts) {
  TempDir tmp;
  int compared = 0;
  for (const char* name : {"fp.data", "dwarf.data", "syswide_g.data", "multi.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    const std::string svg = tmp.path(std::string(name) + ".svg");
    auto r = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-flamegraph " + sh(svg) +
                 " --flame-title 'a <b> & \"c\"' 2>&1");
    ASSERT_EQ(r.status, 0) << r.out;
    auto xml = run("python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' " +
                   sh(svg) + " 2>&1");
    EXPECT_EQ(xml.status, 0) << name << ": " << xml.out;
    const std::string text = read_file(svg);
    EXPECT_NE(text.find(">a &lt;b&gt; &amp; &quot;c&quot;</text>"), std::string::npos);
    std::uint64_t total = 0;
    const auto comms = folded_by_comm(f, total);
    // Each process frame (at depth 1) with the count of its folded lines.
    std::map<std::string, std::uint64_t> drawn;
    const std::regex frame(
        "<g data-name=\"([^\"]*)\"[^>]*data-depth=\"([0-9]+)\" data-value=\"([0-9]+)\"");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), frame);
         it != std::sregex_iterator(); ++it) {
      if ((*it)[2] == "0") EXPECT_EQ(std::stoull((*it)[3]), total) << name;
      if ((*it)[2] == "1") drawn[(*it)[1]] += std::stoull((*it)[3]);
    }
    for (const auto& [comm, n] : comms)
      if (n * 1180 >= total) {  // wide enough to be drawn (0.1 px of 1180)
        EXPECT_EQ(drawn[comm], n) << name << " " << comm;
        ++compared;
      }
  }
  EXPECT_GE(compared, 4);
}

TEST(SvgFlamegraph, DrawsInChromium) {
  PK_TOOL_OR_SKIP(chromium, "chromium");
  PK_FIXTURE_OR_SKIP(f, "syswide_g.data");
  TempDir tmp;
  const std::string svg = tmp.path("flame.svg");
  ASSERT_EQ(run(perfkit_bin() + " data convert -i " + sh(f) + " --to-flamegraph " + sh(svg) +
                " --inverted 2>/dev/null")
                .status,
            0);
  // The SVG inside a page that loads it as a document, so that its script
  // runs and the DOM shows; a script error would show on the console.
  const std::string page = tmp.path("page.html");
  write_file(page,
             "<!DOCTYPE html><html><body><object id=o type='image/svg+xml' data='flame.svg'>"
             "</object><script>document.getElementById('o').addEventListener('load', () => {"
             "const d = document.getElementById('o').contentDocument;"
             "const g = d.querySelectorAll('#frames > g');"
             "g[1].dispatchEvent(new MouseEvent('click'));"
             "document.body.setAttribute('data-frames', g.length);"
             "document.body.setAttribute('data-zoomed', "
             "d.getElementById('unzoom').classList.contains('hide') ? 'no' : 'yes');"
             "});</script></body></html>");
  PageLoad load = load_page(chromium, page, tmp.dir(), true);
  ASSERT_TRUE(load.ok) << load.log;
  EXPECT_TRUE(load.errors.empty()) << joined(load.errors);
  EXPECT_NE(load.dom.find("data-zoomed=\"yes\""), std::string::npos) << load.dom.substr(0, 300);
  EXPECT_EQ(load.dom.find("data-frames=\"0\""), std::string::npos);
  EXPECT_TRUE(
      screenshot(chromium, svg, screenshot_path("flamegraph_svg.png"), tmp.dir(), 1200, 1000));
}

}  // namespace
}  // namespace perfkit::test
