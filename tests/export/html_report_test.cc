// perfkit report --html in headless Chromium, driven through the DevTools
// protocol (tests/consumers/cdp.py, one Chromium per test for all its
// pages): the page loads under its CSP with no console error, its numbers
// are perfkit report's, and searching, zooming and selecting a time range
// change what it shows. Screenshots of each view are kept under
// build/screenshots for people to look at.
#include <fmt/format.h>
#include <fmt/printf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

std::string screenshot_dir() {
  const std::string dir = std::string(PERFKIT_FIXTURES_DIR) + "/../screenshots";
  std::filesystem::create_directories(dir);
  return dir;
}

// What cdp.py printed: one value per step, and the console's errors.
struct Drive {
  std::vector<std::string> values;
  std::vector<std::string> errors;
  std::string failed, out;
};

std::string json_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

Drive drive(const std::string& chromium, const std::string& steps, const std::string& scratch) {
  const std::string file = scratch + "/steps.json";
  std::ofstream(file) << steps;
  auto r =
      run("timeout 180 python3 " + sh(std::string(PERFKIT_SOURCE_DIR) + "/tests/consumers/cdp.py") +
          " " + sh(chromium) + " " + sh(scratch) + " < " + sh(file) + " 2>&1");
  Drive d;
  d.out = r.out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("step ")) d.values.push_back(line.substr(line.find(": ") + 2));
    if (line.starts_with("error: ")) d.errors.push_back(line.substr(7));
    if (line.starts_with("failed: ")) d.failed = line.substr(8);
  }
  if (r.status != 0 && d.failed.empty()) d.failed = "cdp.py: status " + std::to_string(r.status);
  return d;
}

std::string page_url(const std::string& page, const std::string& fragment = "") {
  return "file://" + std::filesystem::absolute(page).string() +
         (fragment.empty() ? "" : "#" + fragment);
}

// Writes the page of `data` (extra: report's options).
std::string write_page(const std::string& data, const std::string& dir, const std::string& name,
                       const std::string& extra = "") {
  const std::string page = dir + "/" + name;
  auto r = run(perfkit_bin() + " report -q --html " + sh(page) + " -i " + sh(data) + " " + extra +
               " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  return page;
}

// perfkit report's top entries: "12.34%|name" for each of the first `n`.
std::vector<std::string> report_top(const std::string& data, const std::string& mode, int n) {
  auto r = run(perfkit_bin() + " report -q --stdio " + mode + " --sort sym -g none -i " + sh(data) +
               " 2>/dev/null | grep -v '^#' | grep '%'");
  std::vector<std::string> top;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line) && static_cast<int>(top.size()) < n;) {
    std::istringstream row(line);
    std::string first, second, kind, name;
    row >> first;
    if (mode == "--children") row >> second;  // Children, Self: the first is the total
    row >> kind;
    std::getline(row, name);
    name.erase(0, name.find_first_not_of(' '));
    top.push_back(first + "|" + name);
  }
  return top;
}

// The first `n` rows of a table in the page: "total%|function".
std::string rows_js(const std::string& table, int n, int pct_col) {
  return "[...document.querySelectorAll('#" + table + " tr')].slice(1, " + std::to_string(n + 1) +
         ").map(r => r.cells[" + std::to_string(pct_col) +
         "].textContent + '|' + r.querySelector('a').textContent).join('\\t')";
}

// "pct|name" rows cut before the last row's percentage (ties there are
// ordered by perf's internal keys), each percentage's names sorted.
std::vector<std::string> above_last(std::vector<std::string> rows) {
  if (rows.empty()) return rows;
  const std::string last = rows.back().substr(0, rows.back().find('|'));
  std::erase_if(rows, [&](const std::string& r) { return r.substr(0, r.find('|')) == last; });
  const auto pct = [](const std::string& r) { return r.substr(0, r.find('|')); };
  for (auto run = rows.begin(); run != rows.end();) {
    auto end =
        std::find_if(run, rows.end(), [&](const std::string& r) { return pct(r) != pct(*run); });
    std::sort(run, end);
    run = end;
  }
  return rows;
}

// The "pct" of each "pct|name" row, in order.
// "pct|name" rows without those of frames in no symbol (named "0x...").
std::vector<std::string> without_addresses(std::vector<std::string> rows) {
  std::erase_if(rows, [](const std::string& r) { return r.find("|0x") != std::string::npos; });
  return rows;
}

std::vector<std::string> percentages(const std::vector<std::string>& rows) {
  std::vector<std::string> out;
  for (const std::string& r : rows) out.push_back(r.substr(0, r.find('|')));
  return out;
}

std::vector<std::string> split_lines(const std::string& s, char sep = '\n') {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line, sep);) v.push_back(line);
  return v;
}

TEST(HtmlReport, TreesEqualPerfkitReport) {
  PK_TOOL_OR_SKIP(chromium, "chromium");
  TempDir tmp;
  // fp: one program; syswide_g: -a, with kernel frames and frames in no
  // symbol (which report names by address, and so does the page).
  std::vector<std::string> files;
  for (const char* name : {"fp.data", "syswide_g.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    files.push_back(f);
  }
  const int n = 8;
  const std::string ready = R"({"wait": "document.body && document.body.dataset.ready === '1'"})";
  // The bottom-up tree's roots by their totals: report --no-children.
  // The functions by total: report --children.
  std::string steps = "[";
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string page = write_page(files[i], tmp.dir(), std::to_string(i) + ".html");
    steps += std::string(i ? ", " : "") +
             "{\"open\": " + json_quote(page_url(page, "view=bottomup")) + "}, " + ready +
             ", {\"eval\": " + json_quote(rows_js("tree-table", n, 0)) +
             "}, {\"open\": " + json_quote(page_url(page, "view=functions&sort=total")) + "}, " +
             ready + ", {\"eval\": " + json_quote(rows_js("functions-table", n, 1)) + "}";
  }
  steps += "]";
  const Drive d = drive(chromium, steps, tmp.dir());
  ASSERT_TRUE(d.failed.empty()) << d.failed << "\n" << d.out;
  EXPECT_TRUE(d.errors.empty()) << d.out;
  ASSERT_EQ(d.values.size(), 6 * files.size()) << d.out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(files[i]);
    const auto self = report_top(files[i], "--no-children", n);
    const auto children = report_top(files[i], "--children", n);
    // A short run may have fewer than n functions: the page then shows as
    // many rows as the report has.
    ASSERT_GE(self.size(), 3u);
    ASSERT_LE(self.size(), static_cast<std::size_t>(n));
    ASSERT_GE(children.size(), 3u);
    ASSERT_LE(children.size(), static_cast<std::size_t>(n));
    // Every row's percentage in order; the names where no tie with the
    // last row leaves their order to perf's internal keys.
    const auto page_self = split_lines(d.values[6 * i + 2], '\t');
    EXPECT_EQ(percentages(page_self), percentages(self)) << d.values[6 * i + 2];
    EXPECT_EQ(above_last(page_self), above_last(self)) << d.values[6 * i + 2];
    // perf names a frame in no symbol by its raw address in its --children
    // entry and by its DSO-relative one in its self entry: two rows where
    // the page has the one function (e.g. a [vdso] address with no symbol).
    // Those rows aside, the rows both show.
    auto page_children = without_addresses(split_lines(d.values[6 * i + 5], '\t'));
    auto report_children = without_addresses(children);
    const std::size_t common = std::min(page_children.size(), report_children.size());
    ASSERT_GE(common, 3u) << d.values[6 * i + 5];
    page_children.resize(common);
    report_children.resize(common);
    EXPECT_EQ(percentages(page_children), percentages(report_children)) << d.values[6 * i + 5];
    EXPECT_EQ(above_last(page_children), above_last(report_children)) << d.values[6 * i + 5];
  }
}

// The page's numbers are printf's: a value exactly halfway between two
// shown decimals (36.625% is 586 of 1600 samples) rounds to the even digit,
// as perf report prints it, where JavaScript's toFixed rounds it up.
TEST(HtmlReport, NumbersRoundAsPrintfDoes) {
  PK_TOOL_OR_SKIP(chromium, "chromium");
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  TempDir tmp;
  std::vector<std::pair<double, int>> values;  // value, digits
  for (int n : {1600, 800, 1000, 7, 1234})
    for (int i = 0; i <= n; ++i) values.emplace_back(100.0 * i / n, 2);
  for (int i = -64; i <= 64; ++i) {
    values.emplace_back(i / 8.0, 2);
    values.emplace_back(i / 32.0, 3);
    values.emplace_back(i / 2.0, 0);
    values.emplace_back(i * 1.0e-6 / 16, 3);  // below every shown digit
  }
  std::string list = "[", expected;
  for (const auto& [v, digits] : values) {
    list += fmt::format("{}[{:.17g}, {}]", list.size() > 1 ? ", " : "", v, digits);
    expected += fmt::format("{}{}", expected.empty() ? "" : " ", fmt::sprintf("%.*f", digits, v));
  }
  list += "]";
  const std::string page = write_page(f, tmp.dir(), "r.html");
  const std::string js = list + ".map(([v, d]) => pkFixed(v, d)).join(' ')";
  const Drive d = drive(chromium,
                        "[{\"open\": " + json_quote(page_url(page)) +
                            "}, {\"wait\": \"document.body && document.body.dataset.ready === "
                            "'1'\"}, {\"eval\": " +
                            json_quote(js) + "}]",
                        tmp.dir());
  ASSERT_TRUE(d.failed.empty()) << d.failed << "\n" << d.out;
  ASSERT_EQ(d.values.size(), 3u) << d.out;
  const auto page_numbers = split_lines(d.values[2], ' ');
  const auto printf_numbers = split_lines(expected, ' ');
  ASSERT_EQ(page_numbers.size(), printf_numbers.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(page_numbers[i], printf_numbers[i]) << fmt::format("{:.17g}", values[i].first);
}

// An output that cannot be written, an input that is not a recording: one
// line naming it, a failing status, and no page left behind.
TEST(HtmlReport, BadInputsAndOutputsFailCleanly) {
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  TempDir tmp;
  auto unwritable = run(perfkit_bin() + " report --html /nonexistent/dir/r.html -i " + sh(f));
  EXPECT_NE(unwritable.status, 0);
  EXPECT_NE(unwritable.err.find("/nonexistent/dir/r.html"), std::string::npos) << unwritable.err;
  const std::string cut = tmp.path("cut.data");
  std::ofstream(cut) << read_file(f).substr(0, 100);
  const std::string page = tmp.path("r.html");
  auto truncated = run(perfkit_bin() + " report --html " + sh(page) + " -i " + sh(cut));
  EXPECT_NE(truncated.status, 0);
  EXPECT_NE(truncated.err.find("cut.data"), std::string::npos) << truncated.err;
  EXPECT_FALSE(std::filesystem::exists(page));
}

// (document.body first: the wait may start before the new page's body exists)
const char* const kReady = R"({"wait": "document.body && document.body.dataset.ready === '1'"})";
// What a loaded page shows: its frames drawn, and its totals line.
const char* const kShown =
    "document.querySelectorAll('.frame').length + ' frames; ' + "
    "document.getElementById('totals').textContent + ' | ' + "
    "document.getElementById('timeline-legend').textContent";

// The suite's kinds of recording and some of perf-corpus's, each loaded
// (one Chromium for all) with no console error and its flame graph drawn.
TEST(HtmlReport, LoadsEveryKindOfRecording) {
  PK_TOOL_OR_SKIP(chromium, "chromium");
  TempDir tmp;
  std::vector<std::string> pages;
  for (const char* name : {"fp.data", "dwarf.data", "syswide_g.data", "multi.data",
                           "tracepoint.data", "pipe.data", "switch.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    pages.push_back(write_page(f, tmp.dir(), std::string(name) + ".html"));
  }
  const std::size_t switches = 6, lost = 8;  // switch.data; quipper's lost samples
  // Intel PT: pt-synth's recording of ptflow, its samples synthesized.
  const std::string pt = tmp.path("pt.data");
  auto rec = run(perfkit_bin() + " pt-synth -o " + sh(pt) + " -- " +
                 sh(std::string(PERFKIT_PT_WORKLOAD_DIR) + "/ptflow-static") + " 5 2>&1");
  ASSERT_EQ(rec.status, 0) << rec.out;
  pages.push_back(write_page(pt, tmp.dir(), "pt.html", "--itrace=i1000i"));
  PK_SKIP_WITHOUT_CORPUS();
  for (const char* rel :
       {"quipper/perf.data.lost_samples-4.4", "linux-perf-data/fibo.compressed2.pipe.data",
        "LinuxTracepoints/perf.data", "hotspot/perf.data.PerfFormatLost"})
    pages.push_back(
        write_page(corpus_dir() + "/" + rel, tmp.dir(), std::to_string(pages.size()) + ".html"));
  std::string steps = "[";
  for (const std::string& page : pages)
    steps += "{\"open\": " + json_quote(page_url(page)) + "}, " + kReady +
             ", {\"eval\": " + json_quote(kShown) + "}, ";
  // Every view of the -a recording, pictured.
  const std::string shots = screenshot_dir();
  steps += "{\"open\": " + json_quote(page_url(pages[2])) + "}, " + kReady;
  const char* const views[] = {"flame", "icicle", "topdown", "bottomup", "functions", "butterfly"};
  for (const char* v : views)
    steps += std::string(", {\"click\": \"[data-view=") + v +
             "]\"}, {\"screenshot\": " + json_quote(shots + "/report_html_" + v + ".png") + "}";
  steps += "]";
  const Drive d = drive(chromium, steps, tmp.dir());
  ASSERT_TRUE(d.failed.empty()) << d.failed << "\n" << d.out;
  EXPECT_TRUE(d.errors.empty()) << d.out;
  ASSERT_EQ(d.values.size(), 3 * pages.size() + 2 + 2 * std::size(views)) << d.out;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const std::string& shown = d.values[3 * i + 2];
    EXPECT_GE(std::stoi(shown), 2) << pages[i] << ": " << shown;  // the root and a function
    EXPECT_NE(shown.find(" samples"), std::string::npos) << pages[i] << ": " << shown;
  }
  // The lost samples of quipper's file are shown, not hidden.
  EXPECT_NE(d.values[3 * lost + 2].find("samples lost"), std::string::npos)
      << d.values[3 * lost + 2];
  // A recording with --switch-events draws when its thread was switched
  // out; one without says nothing of it.
  EXPECT_NE(d.values[3 * switches + 2].find("switched out"), std::string::npos)
      << d.values[3 * switches + 2];
  EXPECT_EQ(d.values[2].find("switched out"), std::string::npos) << d.values[2];
  // Each picture holds more than a blank page's few bytes.
  for (std::size_t v = 0; v < std::size(views); ++v)
    EXPECT_GT(std::stoul(d.values[3 * pages.size() + 3 + 2 * v]), 20000u) << views[v];
}

// Searching, zooming and selecting a time range, as a person does them
// (typed, clicked, dragged): each changes what the page shows, lands in the
// URL's fragment, and that URL opened again shows the same.
TEST(HtmlReport, SearchZoomAndRangeChangeTheViews) {
  PK_TOOL_OR_SKIP(chromium, "chromium");
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  TempDir tmp;
  const std::string page = write_page(f, tmp.dir(), "fp.html");
  const auto children = report_top(f, "--children", 20);
  std::string spin_total;
  for (const std::string& row : children)
    if (row.ends_with("|spin")) spin_total = row.substr(0, row.find('|'));
  ASSERT_FALSE(spin_total.empty());
  const std::string matched = "document.getElementById('matched').textContent";
  const std::string totals = "document.getElementById('totals').textContent";
  const std::string frames = "document.querySelectorAll('.frame:not(.faded)').length";
  const std::string steps =
      "[{\"open\": " + json_quote(page_url(page)) + "}, " + kReady +                        // 0 1
      ", {\"eval\": " + json_quote(totals) + "}, {\"eval\": " + json_quote(frames) + "}" +  // 2 3
      ", {\"type\": [\"#search\", \"^spin$\"]}, {\"eval\": " + json_quote(matched) + "}" +  // 4 5
      ", {\"click\": \".frame[title^='run ']\"}, {\"eval\": " + json_quote(frames) + "}" +  // 6 7
      ", {\"eval\": \"location.hash\"}" +                                                   // 8
      ", {\"drag\": [\"#timeline canvas\", 0.25, 0.5]}, {\"eval\": " + json_quote(totals) +
      "}" +  // 9 10
      ", {\"eval\": \"location.href\"}, {\"eval\": "
      "\"document.getElementById('range').textContent\"}" +  // 11 12
      ", {\"click\": \"#clear-range\"}, {\"eval\": " +
      json_quote(totals) + "}" +  // 13 14
      "]";
  Drive d = drive(chromium, steps, tmp.dir());
  ASSERT_TRUE(d.failed.empty()) << d.failed << "\n" << d.out;
  EXPECT_TRUE(d.errors.empty()) << d.out;
  ASSERT_EQ(d.values.size(), 15u) << d.out;
  const std::string all = d.values[2];
  // The search: the share of samples with spin on their stack, which is
  // spin's total in perfkit report --children.
  EXPECT_EQ(d.values[5], "Matched: " + spin_total) << d.out;
  // Zoomed into run: fewer frames drawn in full, the zoom in the fragment.
  EXPECT_LT(std::stoi(d.values[7]), std::stoi(d.values[3])) << d.out;
  EXPECT_NE(d.values[8].find("zoom="), std::string::npos) << d.values[8];
  EXPECT_NE(d.values[8].find("search="), std::string::npos) << d.values[8];
  // A quarter of the timeline: fewer samples, and back to all when cleared.
  const auto samples = [](std::string t) {
    std::erase(t, ',');
    return std::stol(t.substr(0, t.find(' ')));
  };
  const std::string in_range = d.values[10];
  EXPECT_LT(samples(in_range), samples(all) / 2) << in_range << " / " << all;
  EXPECT_GT(samples(in_range), samples(all) / 8) << in_range << " / " << all;
  EXPECT_NE(d.values[12].find("Selected"), std::string::npos) << d.values[12];
  EXPECT_EQ(d.values[14], all);
  // The URL with the range, opened afresh, shows the same selection.
  const std::string url = d.values[11];
  EXPECT_NE(url.find("range="), std::string::npos) << url;
  d = drive(chromium,
            "[{\"open\": " + json_quote(url) + "}, " + kReady + ", {\"eval\": " +
                json_quote(totals) + "}, {\"eval\": " + json_quote(matched) + "}]",
            tmp.dir());
  ASSERT_TRUE(d.failed.empty()) << d.failed << "\n" << d.out;
  ASSERT_EQ(d.values.size(), 4u) << d.out;
  EXPECT_EQ(d.values[2], in_range);
  EXPECT_NE(d.values[3].find("Matched: "), std::string::npos) << d.values[3];
}

// A program that names itself with markup: the page shows the name as text
// and gains no element from it.
TEST(HtmlReport, MarkupInNamesStaysText) {
  PK_SKIP_WITHOUT_PERF();
  PK_TOOL_OR_SKIP(chromium, "chromium");
  TempDir tmp;
  // perl sets its comm (prctl PR_SET_NAME) when $0 is assigned.
  const std::string name = "<b>x</b><i>";
  const std::string data = tmp.path("markup.data");
  auto rec = run("perf record -q -o " + sh(data) +
                 " -- timeout 0.4 perl -e '$0 = \"<b>x</b><i>\"; $x++ while 1' 2>&1");
  // (perf record exits with the workload's status: timeout's 124.)
  ASSERT_TRUE(std::filesystem::exists(data)) << rec.out;
  const std::string page = write_page(data, tmp.dir(), "markup.html");
  const std::string steps = "[{\"open\": " + json_quote(page_url(page)) + "}, " + kReady +
                            ", {\"eval\": \"document.querySelectorAll('b, i').length\"}" +
                            ", {\"eval\": \"[...document.querySelectorAll('#process "
                            "option')].map(o => o.textContent).join('|')\"}" +
                            ", {\"eval\": \"document.getElementById('summary').textContent\"}]";
  const Drive d = drive(chromium, steps, tmp.dir());
  ASSERT_TRUE(d.failed.empty()) << d.failed << "\n" << d.out;
  EXPECT_TRUE(d.errors.empty()) << d.out;
  ASSERT_EQ(d.values.size(), 5u) << d.out;
  EXPECT_EQ(d.values[2], "0");
  EXPECT_NE(d.values[3].find(name), std::string::npos) << d.values[3];
  EXPECT_NE(d.values[4].find(name), std::string::npos) << d.values[4];
}

}  // namespace
}  // namespace perfkit::test

namespace perfkit::test {
namespace {

// perfkit diff --html on runs of the shares workload, the second with
// hot's work doubled: hot's frame is drawn red and leads the table of
// changes, warm's (its share fell) blue; hovering says both shares; a
// search matches; no console error. The page is pictured.
TEST(DiffPage, HotGrowsRedAndLeadsTheChanges) {
  PK_TOOL_OR_SKIP(chromium, "chromium");
  PK_FIXTURE_OR_SKIP(base, "shares_base1.data");
  PK_FIXTURE_OR_SKIP(hot, "shares_hot1.data");
  TempDir tmp;
  const std::string page = tmp.path("diff.html");
  auto r = run(perfkit_bin() + " diff -q --html " + sh(page) + " " + sh(base) + " " + sh(hot));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string frame = "[...document.querySelectorAll('.frame')].find(f => f.textContent === ";
  const std::string steps =
      "[{\"open\": " + json_quote(page_url(page)) + "}, " + kReady +
      ", {\"eval\": " + json_quote("[...document.querySelectorAll('#changes tr')][1].textContent") +
      "}, {\"eval\": " + json_quote(frame + "'hot').style.background") +
      "}, {\"eval\": " + json_quote(frame + "'warm').style.background") +
      "}, {\"eval\": " + json_quote(frame + "'hot').title") +
      "}, {\"screenshot\": " + json_quote(screenshot_dir() + "/diff_html.png") +
      "}, {\"type\": [\"#search\", \"^hot$\"]}, " + kReady +
      ", {\"eval\": " + json_quote("document.getElementById('matched').textContent") + "}]";
  const Drive d = drive(chromium, steps, tmp.dir());
  ASSERT_TRUE(d.failed.empty()) << d.failed << "\n" << d.out;
  EXPECT_TRUE(d.errors.empty()) << d.out;
  ASSERT_EQ(d.values.size(), 10u) << d.out;
  EXPECT_GT(std::stoul(d.values[6]), 20000u);  // the picture is more than a blank page
  EXPECT_NE(d.values[2].find("hot"), std::string::npos) << d.values[2];
  EXPECT_NE(d.values[2].find("%+"), std::string::npos) << d.values[2];  // "...%" then "+12.34"
  const std::regex rgb(R"(rgb\((\d+), (\d+), (\d+)\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(d.values[3], m, rgb)) << d.values[3];
  EXPECT_EQ(m[1], "255");
  EXPECT_LT(std::stoi(m[2]), 200) << d.values[3];  // a clear red
  ASSERT_TRUE(std::regex_search(d.values[4], m, rgb)) << d.values[4];
  EXPECT_EQ(m[3], "255");
  EXPECT_LT(std::stoi(m[1]), 235) << d.values[4];                                 // blue
  EXPECT_NE(d.values[5].find("\xe2\x86\x92"), std::string::npos) << d.values[5];  // "→"
  EXPECT_NE(d.values[5].find("points"), std::string::npos) << d.values[5];
  // hot's new share: 12 of 16 units of work
  const std::string matched = d.values[9].substr(d.values[9].find_first_of("0123456789"));
  EXPECT_NEAR(std::stod(matched), 75.0, 8.0) << d.values[9];
  EXPECT_NE(d.values[9].find("of the new samples match"), std::string::npos) << d.values[9];
}

}  // namespace
}  // namespace perfkit::test
