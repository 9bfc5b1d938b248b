// perfkit report folds repeated samples before resolving them
// (analysis/report_fold.h). Folded or not, and however often the fold is
// drained on the way, the report must print the same bytes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/output.h"
#include "report/report.h"
#include "session/session.h"
#include "support/test_support.h"

namespace perfkit::report {
namespace {

// `kallsyms`: a copy of /proc/kallsyms, read faster than the kernel writes it.
std::string report_text(const std::string& path, ReportOptions opts, const std::string& kallsyms,
                        const std::string& out, std::uint64_t* folded = nullptr) {
  session::SessionOptions so;
  so.symbols.kallsyms = kallsyms;
  auto session = session::Session::open(path, so);
  if (!session) return "open failed: " + session.error().message();
  ReportBuilder builder(opts);
  auto st = builder.build(**session);
  if (!st) return "build failed: " + st.error().message();
  if (folded) *folded += builder.folded_samples();
  auto w = FdWriter::create(out);
  if (!w) return "create failed";
  builder.print(**session, *w);
  (void)w->flush();
  return test::read_file(out);
}

struct Case {
  const char* name;
  void (*set)(ReportOptions&);
};

const Case kCases[] = {
    {"default", [](ReportOptions&) {}},
    {"no-children -g none",
     [](ReportOptions& o) { o.children = 0, o.chain_mode = ChainMode::kNone; }},
    {"-g none", [](ReportOptions& o) { o.chain_mode = ChainMode::kNone; }},
    {"caller", [](ReportOptions& o) { o.caller_order = o.order_given = true; }},
    {"sort cpu,sym",
     [](ReportOptions& o) {
       o.sort = {SortKey::kCpu, SortKey::kSym};
     }},
    {"sort pid,dso",
     [](ReportOptions& o) {
       o.sort = {SortKey::kPid, SortKey::kDso};
     }},
    {"max-stack 2", [](ReportOptions& o) { o.max_stack = 2; }},
    {"comm filter", [](ReportOptions& o) { o.comms = {"cpuloop"}; }},
};

TEST(ReportFold, FoldedReportsEqualUnfoldedOnes) {
  test::TempDir tmp;
  const std::string kallsyms = tmp.path("kallsyms");
  test::write_file(kallsyms, test::read_file("/proc/kallsyms"));
  int compared = 0;
  std::uint64_t folded = 0;
  for (const char* f : {"fp.data", "syswide_g.data", "syswide.data", "multi.data", "group.data",
                        "nocg.data", "pipe.data", "faults.data", "switch.data"}) {
    std::string path = test::fixture(f);
    if (path.empty()) continue;
    for (const Case& c : kCases) {
      ReportOptions base;
      c.set(base);
      ReportOptions off = base;
      off.fold_max_kept = 0;
      const std::string want = report_text(path, off, kallsyms, tmp.path("off"));
      ASSERT_FALSE(want.empty()) << f << " " << c.name;
      // The default size, and sizes small enough to drain (and to give up
      // folding where it does not pay) many times on the way.
      for (std::size_t kept : {std::size_t{1} << 14, std::size_t{64}, std::size_t{3}}) {
        ReportOptions on = base;
        on.fold_max_kept = kept;
        EXPECT_EQ(report_text(path, on, kallsyms, tmp.path("on"), &folded), want)
            << f << " " << c.name << " fold_max_kept=" << kept;
        ++compared;
      }
    }
  }
  if (compared == 0) GTEST_SKIP() << "no fixtures";
  // The comparison means something only if samples were folded.
  EXPECT_GT(folded, 0u);
}

}  // namespace
}  // namespace perfkit::report
