// perfkit data convert --to-pprof, opened by its real consumer: go tool
// pprof reads every file, and per event its flat numbers per function
// (samples and period) and totals equal perfkit report's self numbers
// (`--no-children -g none --sort sym`) on the same recording.
#include <gtest/gtest.h>

#include <sstream>

#include "export/export_compare.h"
#include "support/test_support.h"

namespace perfkit::test {
namespace {

// `go tool pprof -top` of `sample_index`: function -> flat value, and the
// total it states.
struct PprofTop {
  std::map<std::string, std::uint64_t> flat;
  std::uint64_t total = 0;
  bool ok = false;
};

PprofTop pprof_top(const std::string& go, const TempDir& home, const std::string& file,
                   const std::string& sample_index) {
  auto r = run("HOME=" + sh(home.dir()) + " GOCACHE=" + sh(home.path("gocache")) + " " + sh(go) +
               " tool pprof -symbolize=none -top -nodefraction=0 -nodecount=1000000 "
               "-sample_index=" +
               sh(sample_index) + " " + sh(file) + " 2>&1");
  PprofTop top;
  EXPECT_EQ(r.status, 0) << r.out;
  std::istringstream in(r.out);
  bool rows = false;
  for (std::string line; std::getline(in, line);) {
    if (auto at = line.find("% of "); at != std::string::npos && line.find(" total") != line.npos)
      top.total = std::stoull(line.substr(at + 5));
    if (line.find("flat  flat%") != std::string::npos) {
      rows = true;
      continue;
    }
    if (!rows) continue;
    std::istringstream row(line);
    std::string flat, flat_pct, sum_pct, cum, cum_pct, name;
    row >> flat >> flat_pct >> sum_pct >> cum >> cum_pct;
    std::getline(row, name);
    name = name.substr(name.find_first_not_of(' '));
    top.flat[name] += std::stoull(flat);
  }
  top.ok = rows;
  return top;
}

TEST(PprofExport, GoToolPprofTotalsEqualReport) {
  PK_TOOL_OR_SKIP(go, "go");
  TempDir tmp;
  int compared = 0;
  // DWARF call chains with their inlined frames: pprof's flat goes to the
  // innermost inlined function, report's to the symbol, so --no-inline.
  for (std::string name :
       {"fp.data", "dwarf.data", "syswide_g.data", "multi.data", "tracepoint.data", "pipe.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    const std::string out = tmp.path(name + ".pb.gz");
    auto conv = run(perfkit_bin() + " data convert --no-inline -i " + sh(f) + " --to-pprof " +
                    sh(out) + " 2>&1");
    ASSERT_EQ(conv.status, 0) << name << ": " << conv.out;
    const ReportTotals report = report_totals(f);
    ASSERT_FALSE(report.empty()) << name;
    for (const auto& [event, symbols] : report) {
      const SymbolTotals want = event_totals(symbols);
      const PprofTop samples = pprof_top(go, tmp, out, event + "_sample");
      const PprofTop period = pprof_top(go, tmp, out, event + "_event");
      ASSERT_TRUE(samples.ok && period.ok) << name << " " << event;
      EXPECT_EQ(samples.total, want.samples) << name << " " << event;
      EXPECT_EQ(period.total, want.period) << name << " " << event;
      for (const auto& [sym, t] : symbols) {
        EXPECT_EQ(samples.flat.count(sym) ? samples.flat.at(sym) : 0, t.samples)
            << name << " " << event << " " << sym;
        EXPECT_EQ(period.flat.count(sym) ? period.flat.at(sym) : 0, t.period)
            << name << " " << event << " " << sym;
        ++compared;
      }
      // Nothing in pprof that report does not have.
      for (const auto& [sym, v] : period.flat)
        if (v) EXPECT_TRUE(symbols.count(sym)) << name << " " << event << " " << sym;
    }
  }
  EXPECT_GT(compared, 20);
}

}  // namespace
}  // namespace perfkit::test

namespace perfkit::test {
namespace {

// The source lines pprof shows (-lines) for a function's hottest location
// are perf report's srcline for it (the basename; perf's is short).
TEST(PprofExport, SourceLinesAsPerfReports) {
  PK_SKIP_WITHOUT_PERF();
  PK_TOOL_OR_SKIP(go, "go");
  PK_FIXTURE_OR_SKIP(f, "dwarf.data");
  TempDir tmp;
  const std::string out = tmp.path("lines.pb.gz");
  ASSERT_EQ(
      run(perfkit_bin() + " data convert -i " + sh(f) + " --to-pprof " + sh(out) + " 2>/dev/null")
          .status,
      0);
  auto perf = run("perf report -i " + sh(f) +
                  " --no-children -g none --sort sym,srcline -F period,sym,srcline --stdio "
                  "--percent-limit 1 2>/dev/null | grep -v '^#' | grep ' spin '");
  ASSERT_EQ(perf.status, 0) << perf.out;
  std::istringstream row(perf.out);
  std::string period, level, sym, srcline;
  row >> period >> level >> sym >> srcline;
  ASSERT_NE(srcline.find(':'), std::string::npos) << perf.out;
  auto pprof = run("HOME=" + sh(tmp.dir()) + " GOCACHE=" + sh(tmp.path("gocache")) + " " + sh(go) +
                   " tool pprof -symbolize=none -lines -top -nodecount=1 " + sh(out) + " 2>&1");
  ASSERT_EQ(pprof.status, 0) << pprof.out;
  // "  88000000 96.17% 96.17%   90500000 98.91%  spin /path/cpuloop.c:12"
  EXPECT_NE(pprof.out.find(" spin "), std::string::npos) << pprof.out;
  EXPECT_NE(pprof.out.find("/" + srcline + "\n"), std::string::npos) << srcline << "\n"
                                                                     << pprof.out;
}

}  // namespace
}  // namespace perfkit::test

namespace perfkit::test {
namespace {

// An Intel PT recording (pt-synth's, of ptflow): the samples --itrace
// synthesizes go into the profile, and pprof's totals per function equal
// perf report's with the same --itrace.
TEST(PprofExport, IntelPtItraceSamplesAsPerfReport) {
  PK_SKIP_WITHOUT_PERF();
  PK_TOOL_OR_SKIP(go, "go");
  TempDir tmp;
  const std::string pt = pt_recording(tmp.dir());
  ASSERT_FALSE(HasFailure());
  const std::string itrace = kPtItrace;
  const std::string out = tmp.path("pt.pb.gz");
  auto conv = run(perfkit_bin() + " data convert -i " + sh(pt) + " " + itrace + " --to-pprof " +
                  sh(out) + " 2>&1");
  ASSERT_EQ(conv.status, 0) << conv.out;
  const ReportTotals perf = report_totals(pt, itrace, "perf");
  ASSERT_EQ(perf.size(), 1u);
  const auto& [event, symbols] = *perf.begin();
  const SymbolTotals want = event_totals(symbols);
  ASSERT_GT(want.samples, 10u);
  const PprofTop samples = pprof_top(go, tmp, out, event + "_sample");
  ASSERT_TRUE(samples.ok);
  EXPECT_EQ(samples.total, want.samples);
  int compared = 0;
  for (const auto& [sym, t] : symbols) {
    EXPECT_EQ(samples.flat.count(sym) ? samples.flat.at(sym) : 0, t.samples) << sym;
    ++compared;
  }
  EXPECT_GT(compared, 2);
}

}  // namespace
}  // namespace perfkit::test
