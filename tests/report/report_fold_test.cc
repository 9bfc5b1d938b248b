// perfkit report folds repeated samples before resolving them
// (analysis/report_fold.h). Folded or not, and however often the fold is
// drained on the way, the report must print the same bytes.
#include "report/report_fold.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/output.h"
#include "machine/machine.h"
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

// The fold keeps its samples' frames packed (their rare names aside): each
// comes back with every field it was kept with, names included, in the
// order the samples were first seen, repeats counted with the first.
TEST(ReportFold, DrainGivesBackEachKeptFrame) {
  symbol::Symbolizer sym({});
  machine::Machine m(sym);
  machine::Dso& dso = m.findnew_dso("/tmp/libfold.so", machine::DsoKind::kUser);
  static const char* const kLine = "fold.c:12";
  static const char* const kInlined = "inlined_here";
  constexpr int kSamples = 3, kFrames = 4;
  std::vector<record::Sample> samples(kSamples);
  std::vector<std::vector<session::Frame>> chains(kSamples);
  SampleFold fold(false, false, 1024);
  auto raw = [&](int i) {
    session::RawSample r;
    r.sample = &samples[i];
    r.cpumode = 2;
    return r;
  };
  for (int i = 0; i < kSamples; ++i) {
    samples[i].ip = 0x1000 + i;
    for (int j = 0; j < kFrames; ++j) {
      session::Frame f;
      f.ip = 0x2000 + 0x10 * i + j;
      f.loc.dso = j == 3 ? nullptr : &dso;
      f.loc.symbol = j == 3 ? -1 : 7 * i + j;
      f.loc.addr = 0x500 + 0x10 * i + j;
      f.loc.level = j == 0 ? machine::kLevelKernel : machine::kLevelUser;
      f.loc.kernel_maps = j == 0;
      f.srcline = (i + j) % 2 ? kLine : nullptr;
      f.inlined = j == 1 && i != 1 ? kInlined : nullptr;
      chains[i].push_back(f);
    }
    ASSERT_FALSE(fold.fold(raw(i), 10, 1));
    session::ResolvedSample s;
    s.sample = &samples[i];
    s.cpumode = 2;
    s.loc.symbol = -1;
    s.callchain = chains[i];
    fold.keep(s, 1);
  }
  EXPECT_TRUE(fold.fold(raw(1), 5, 1));   // a repeat of the second
  EXPECT_FALSE(fold.fold(raw(1), 5, 2));  // not in another generation
  int n = 0;
  auto st = fold.drain(
      m,
      [&](const session::ResolvedSample& s, std::uint64_t period, std::uint32_t count) -> Status {
        const int i = n++;
        EXPECT_EQ(s.sample->ip, samples[i].ip);
        EXPECT_EQ(period, i == 1 ? 15u : 10u);
        EXPECT_EQ(count, i == 1 ? 2u : 1u);
        EXPECT_EQ(s.callchain.size(), std::size_t{kFrames});
        for (std::size_t j = 0; j < s.callchain.size() && j < kFrames; ++j) {
          const session::Frame& got = s.callchain[j];
          const session::Frame& want = chains[i][j];
          EXPECT_EQ(got.ip, want.ip);
          EXPECT_EQ(got.loc.map, want.loc.map);
          EXPECT_EQ(got.loc.dso, want.loc.dso);
          EXPECT_EQ(got.loc.symbol, want.loc.symbol);
          EXPECT_EQ(got.loc.addr, want.loc.addr);
          EXPECT_EQ(got.loc.level, want.loc.level);
          EXPECT_EQ(got.loc.kernel_maps, want.loc.kernel_maps);
          EXPECT_EQ(got.srcline, want.srcline) << "sample " << i << " frame " << j;
          EXPECT_EQ(got.inlined, want.inlined) << "sample " << i << " frame " << j;
        }
        return ok();
      });
  EXPECT_TRUE(st);
  EXPECT_EQ(n, kSamples);
}

}  // namespace
}  // namespace perfkit::report
