// perfkit diff against perf diff on pairs (and triples) of the suite's
// recordings: one program with different shares, the same program's runs,
// different programs and event lists; every -c mode, -p, -F, -b, -o, -q,
// sort keys and filters; then the gate on runs of a program whose hot
// function's work is doubled, on identical programs, and on noise.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

// The files of `names` (fixtures), or "" when one is missing.
std::string files(std::initializer_list<const char*> names) {
  std::string s;
  for (const char* n : names) {
    const std::string f = fixture(n);
    if (f.empty()) return "";
    s += " " + sh(f);
  }
  return s;
}

// perf diff and perfkit diff with `args`: the same text and status (with
// `fails`, perf's failure, no text).
int compare(const std::string& args, bool fails = false) {
  auto theirs = run("perf diff" + args + " 2>/dev/null");
  auto ours = run(perfkit_bin() + " diff" + args + " 2>/dev/null");
  EXPECT_EQ(ours.status, theirs.status) << args;
  EXPECT_EQ(theirs.out.empty(), fails) << args;
  EXPECT_EQ(ours.out, theirs.out) << args << "\n" << first_difference(ours.out, theirs.out);
  return 1;
}

TEST(Diff, TextMatchesPerfOnSharesThatChange) {
  PK_SKIP_WITHOUT_PERF();
  const std::string pair = files({"shares_base1.data", "shares_hot1.data"});
  PK_SKIP_IF_MISSING(pair.empty(), "a shares fixture");
  int compared = 0;
  for (const char* opts : {"",
                           "-c delta",
                           "-c delta-abs",
                           "-c ratio",
                           "-c wdiff:1,2",
                           "-c wdiff:3,1 -F",
                           "-p",
                           "-p -F -c ratio",
                           "-F",
                           "-b",
                           "-b -F",
                           "-q",
                           "-s dso,sym",
                           "-s comm,dso",
                           "-s sym",
                           "-s pid",
                           "-s dso",
                           "-d shares",
                           "-S hot,warm",
                           "-S hot --percentage relative -F",
                           "-C shares",
                           "-o 0",
                           "--time 0%-50%",
                           "-t ,",
                           "-t : -p -c ratio",
                           "-t ';' -c wdiff:1,2 -F",
                           "-t ', ' -s comm,dso",
                           "-t '' -q"})
    compared += compare(std::string(" ") + opts + pair);
  compared += compare(" -t ." + pair, true);  // perf's refusal
  // no CPU in the samples: perf's refusal
  compared += compare(" --cpu 0" + pair, true);
  EXPECT_EQ(compared, 30);
}

TEST(Diff, TextMatchesPerfOnSeveralFilesAndRecordings) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  const std::string three = files({"shares_base1.data", "shares_hot1.data", "shares_base2.data"});
  PK_SKIP_IF_MISSING(three.empty(), "a shares fixture");
  for (const char* opts : {"", "-c ratio -p", "-c wdiff:2,3 -F", "-o 2", "-c delta -b", "-q"})
    compared += compare(std::string(" ") + opts + three);
  // different programs and event lists, kernel and unresolved frames, a
  // symbol on one side only
  for (auto names : {files({"syswide_g.data", "syswide.data"}), files({"fp.data", "dwarf.data"}),
                     files({"multi.data", "fp.data"}), files({"group.data", "multi.data"}),
                     files({"fp.data", "nocg.data", "mixedcg.data"}),
                     files({"tracepoint.data", "tponly.data"})}) {
    if (names.empty()) continue;
    for (const char* opts : {"", "-c ratio", "-s comm,dso"})
      compared += compare(std::string(" ") + opts + names);
  }
  if (const std::string sys = files({"syswide.data", "syswide_g.data"}); !sys.empty())
    compared += compare(" --cpu 0 -s cpu,dso" + sys);
  EXPECT_EQ(compared, 6 + 6 * 3 + 1);
}

// perf's other sort keys: source lines and files (made, and so sized, as
// perf's comparisons make them), parent, symbol and DSO sizes, socket, the
// sample's values (time, address, weight, cgroup, page size); the gate
// names an entry by them. (Not the trace outputs of two tracepoint
// recordings: perf 6.1 dies of a segmentation fault midway through a row.)
TEST(Diff, OtherSortKeysAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (auto names : {files({"shares_base1.data", "shares_hot1.data"}),
                     files({"shares_base1.data", "shares_base2.data", "shares_hot1.data"}),
                     files({"syswide.data", "fp.data"}), files({"multi.data", "fp.data"})}) {
    if (names.empty()) continue;
    for (const char* opts :
         {"-s srcline", "-s dso,sym,srcline", "-s srcline,sym -p", "-c ratio -s sym,srcline",
          "-c delta -s parent", "-s symbol_size", "-s sym,symbol_size", "-s dso_size", "-s socket",
          "-s sym,srcfile", "-b -s comm,srcline", "-s time", "-s sym,time", "-s dso,addr",
          "-s weight", "-s cgroup_id", "-s code_page_size,sym", "-s trace"})
      compared += compare(std::string(" ") + opts + names);
  }
  EXPECT_EQ(compared, 4 * 18);
  const std::string pair = files({"shares_base1.data", "shares_hot1.data"});
  auto gate = run(perfkit_bin() + " diff -s sym,srcline --fail-above 5 --json" + pair);
  EXPECT_EQ(gate.status, 2) << gate.err;
  EXPECT_NE(gate.out.find("\"symbol\":\"hot\",\"keys\":\"srcline=shares.c:"), std::string::npos)
      << gate.out;
}

// -v: the data files listed, DSOs by path (and paired by path), each
// symbol after its entry's address and origin; -q takes it back, as
// perf's -q sets its verbosity below zero.
TEST(Diff, VerboseAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (auto names : {files({"shares_base1.data", "shares_hot1.data"}),
                     files({"shares_base1.data", "shares_hot1.data", "shares_hot2.data"}),
                     files({"syswide_g.data", "syswide.data"}), files({"fp.data", "dwarf.data"})}) {
    if (names.empty()) continue;
    for (const char* opts :
         {"-v", "-v -c ratio -p", "-v -s dso", "-v -s comm,dso,sym", "-v -b", "-v -s sym", "-v -q"})
      compared += compare(std::string(" ") + opts + names);
  }
  EXPECT_EQ(compared, 4 * 7);
}

// -D: each file's records as perf diff's tool dumps them (ID_INDEX
// unhandled, no stats), then the table.
TEST(Diff, DumpRawTraceAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  const std::string pair = files({"shares_base1.data", "shares_hot1.data"});
  const std::string events = files({"multi.data", "syswide.data"});
  PK_SKIP_IF_MISSING(pair.empty() || events.empty(), "a fixture");
  compare(" -D" + pair);
  compare(" -D -c ratio" + events);
  // An AUX area recording (perf diff's tool leaves its records unhandled)
  // and counters read with each sample (one resolution per changed value).
  const std::string corpus = corpus_dir();
  if (corpus.empty()) return;
  for (const char* f : {"/simpleperf/etm/perf_etm.data", "/simpleperf/perf_with_add_counter.data"})
    compare(" -D " + sh(corpus + f) + " " + sh(corpus + f));
}

TEST(Diff, DefaultFilesAndErrorsAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  const std::string base = fixture("shares_base1.data"), hot = fixture("shares_hot1.data");
  PK_SKIP_IF_MISSING(base.empty() || hot.empty(), "a shares fixture");
  TempDir tmp;
  ASSERT_EQ(run("cp " + sh(base) + " " + sh(tmp.path("perf.data.old")) + " && cp " + sh(hot) + " " +
                sh(tmp.path("perf.data")))
                .status,
            0);
  auto theirs = run("cd " + sh(tmp.dir()) + " && perf diff 2>/dev/null");
  auto ours = run("cd " + sh(tmp.dir()) + " && " + perfkit_bin() + " diff 2>/dev/null");
  EXPECT_EQ(ours.out, theirs.out);
  auto one = run("cd " + sh(tmp.dir()) + " && " + perfkit_bin() + " diff " + sh(hot));
  EXPECT_EQ(one.out, theirs.out);
  // perf's texts and statuses: a missing file, a bad -c, an -o past the files
  auto missing = run(perfkit_bin() + " diff " + sh(tmp.path("none.data")) + " " + sh(hot));
  EXPECT_EQ(missing.status, 255);
  EXPECT_NE(missing.err.find("Failed to open " + tmp.path("none.data")), std::string::npos)
      << missing.err;
  auto bad = run(perfkit_bin() + " diff -c foo " + sh(base) + " " + sh(hot));
  EXPECT_EQ(bad.status, 129);
  EXPECT_EQ(bad.err, "Failed: 'foo' is not computation method (use 'delta','ratio' or 'wdiff')\n");
  auto weights = run(perfkit_bin() + " diff -c wdiff:1 " + sh(base) + " " + sh(hot));
  EXPECT_EQ(weights.status, 129);
  EXPECT_EQ(weights.err, "Failed: wrong weight data, use 'wdiff:w1,w2'\n");
  auto order = run(perfkit_bin() + " diff -o 2 " + sh(base) + " " + sh(hot));
  EXPECT_EQ(order.status, 255);
  EXPECT_EQ(order.err, "Order option out of limit.\n");
  // branch-stack computations on files without branch stacks: perf's silent 255
  for (const char* opt : {"--stream", "-c cycles"}) {
    auto nb = run(perfkit_bin() + " diff " + opt + " " + sh(base) + " " + sh(hot));
    EXPECT_EQ(nb.status, 255) << opt;
    EXPECT_EQ(nb.out, "") << opt;
  }
  EXPECT_EQ(run(perfkit_bin() + " diff --cycles-hist " + sh(base) + " " + sh(hot)).status, 129);
  // a file that is not a recording
  write_file(tmp.path("junk.data"), "not a recording");
  auto junk = run(perfkit_bin() + " diff " + sh(tmp.path("junk.data")) + " " + sh(hot));
  EXPECT_EQ(junk.status, 255);
  EXPECT_NE(junk.err.find("junk.data"), std::string::npos) << junk.err;
}

// Doubling hot's work breaks the gate, naming hot; the same program's runs
// pass; several runs on each side are compared by means and ranges.
TEST(DiffGate, FailsOnARegressionOnly) {
  std::vector<std::string> base, hot;
  for (const char* n : {"shares_base1.data", "shares_base2.data", "shares_base3.data"})
    base.push_back(fixture(n));
  for (const char* n : {"shares_hot1.data", "shares_hot2.data", "shares_hot3.data"})
    hot.push_back(fixture(n));
  if (base[0].empty() || hot[0].empty() || base[2].empty() || hot[2].empty()) {
    if (in_ci()) FAIL() << "shares fixtures missing";
    GTEST_SKIP() << "no shares fixtures";
  }
  const std::string p = perfkit_bin() + " diff ";
  auto fail = run(p + "--fail-above 5 " + sh(base[0]) + " " + sh(hot[0]));
  EXPECT_EQ(fail.status, 2) << fail.err;
  EXPECT_NE(fail.err.find("gate FAILED"), std::string::npos) << fail.err;
  EXPECT_NE(fail.err.find("shares  hot  "), std::string::npos) << fail.err;
  EXPECT_EQ(fail.err.find("warm"), std::string::npos) << fail.err;
  EXPECT_NE(fail.out.find("# Event 'cpu-clock"), std::string::npos);  // perf diff's text too
  auto same = run(p + "--fail-above 5 --fail-total-above 25 " + sh(base[0]) + " " + sh(base[1]));
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_NE(same.err.find("gate passed"), std::string::npos) << same.err;
  // the total: hot doubled is 60% more work
  auto total = run(p + "--fail-total-above 25 " + sh(base[0]) + " " + sh(hot[0]));
  EXPECT_EQ(total.status, 2) << total.err;
  EXPECT_NE(total.err.find("total"), std::string::npos) << total.err;
  // runs: a limit below the noise of single runs still passes the same
  // program, since the ranges overlap; the regression's do not
  const std::string b = sh(base[0]) + "," + sh(base[1]) + "," + sh(base[2]);
  const std::string h = sh(hot[0]) + "," + sh(hot[1]) + "," + sh(hot[2]);
  auto noise = run(p + "--fail-above 0.01 --base-runs " + b + " --new-runs " + sh(base[2]) + "," +
                   sh(base[1]) + "," + sh(base[0]));
  EXPECT_EQ(noise.status, 0) << noise.err;
  auto runs = run(p + "--fail-above 5 --json --base-runs " + b + " --new-runs " + h);
  EXPECT_EQ(runs.status, 2) << runs.err;
  EXPECT_EQ(runs.out.rfind("{\"passed\":false,\"fail_above\":5,\"fail_total_above\":null,", 0), 0u)
      << runs.out;
  // (the event's name is the recording's: perf's default event, fallen
  // back to cpu-clock, has modifiers that differ by CPU vendor)
  auto event = run(perfkit_bin() + " evlist -i " + sh(base[0]) + " | head -1");
  ASSERT_EQ(event.status, 0) << event.err;
  const std::string name = event.out.substr(0, event.out.find('\n'));
  EXPECT_NE(runs.out.find("\"kind\":\"entry\",\"event\":\"" + name +
                          "\",\"new\":0,\"comm\":\"\",\"dso\":\"shares\",\"symbol\":\"hot\""),
            std::string::npos)
      << runs.out;
  if (have_perf()) {
    auto py = run("printf '%s' " + sh(runs.out) + " | python3 -m json.tool >/dev/null");
    EXPECT_EQ(py.status, 0);
  }
  auto both = run(p + "--base-runs " + b + " " + sh(base[0]));
  EXPECT_NE(both.status, 0);
  EXPECT_NE(both.status, 2);
}

// --to-folded: every stack of either file with both counts, which are what
// data convert --to-folded counts in each; --to-pprof: two profiles whose
// difference go tool pprof -diff_base shows, hot's growth first.
TEST(DiffExports, FoldedPairAndPprofPair) {
  PK_FIXTURE_OR_SKIP(base, "shares_base1.data");
  PK_FIXTURE_OR_SKIP(hot, "shares_hot1.data");
  TempDir tmp;
  auto r = run(perfkit_bin() + " diff -q " + sh(base) + " " + sh(hot) + " --to-folded " +
               sh(tmp.path("pair.folded")) + " --to-pprof " + sh(tmp.path("d.pb.gz")));
  ASSERT_EQ(r.status, 0) << r.err;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> want;
  for (int side = 0; side < 2; ++side) {
    const std::string f = side ? hot : base;
    auto c = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-folded -");
    ASSERT_EQ(c.status, 0) << c.err;
    std::istringstream in(c.out);
    for (std::string line; std::getline(in, line);) {
      const auto sp = line.rfind(' ');
      auto& w = want[line.substr(0, sp)];
      (side ? w.second : w.first) += std::stoull(line.substr(sp + 1));
    }
  }
  std::string expected;
  for (const auto& [stack, w] : want)
    expected += stack + " " + std::to_string(w.first) + " " + std::to_string(w.second) + "\n";
  EXPECT_EQ(read_file(tmp.path("pair.folded")), expected);
  EXPECT_NE(expected.find(";hot "), std::string::npos);
  PK_TOOL_OR_SKIP(go, "go");
  auto top = run("HOME=" + sh(tmp.dir()) + " GOCACHE=" + sh(tmp.path("gocache")) + " " + sh(go) +
                 " tool pprof -symbolize=none -top -diff_base " + sh(tmp.path("d.base.pb.gz")) +
                 " " + sh(tmp.path("d.pb.gz")) + " 2>&1");
  ASSERT_EQ(top.status, 0) << top.out;
  // the first row: hot, grown (a positive flat)
  const auto rows = top.out.find("flat  flat%");
  ASSERT_NE(rows, std::string::npos) << top.out;
  std::istringstream in(top.out.substr(top.out.find('\n', rows) + 1));
  std::string flat, pct, sum, cum, cum_pct, name;
  in >> flat >> pct >> sum >> cum >> cum_pct >> name;
  EXPECT_EQ(name, "hot") << top.out;
  EXPECT_NE(flat[0], '-') << top.out;
  // an output that cannot be written: an error, nothing left
  auto bad = run(perfkit_bin() + " diff -q " + sh(base) + " " + sh(hot) +
                 " --to-folded /nonexistent/dir/x.folded");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("/nonexistent/dir/x.folded"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace perfkit::test
