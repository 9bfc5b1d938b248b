// perfkit script against perf script on the recordings tests/fixtures/record.sh
// makes with /usr/bin/perf: every fixture in the default output, with the
// source-line field set, with and without inlined frames, and the options
// that change the text (times, fields, filters, side-band records). The
// issue's bar is 99.9% identical lines; the first mismatches are printed.
#include "cli/script_diff.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "support/test_support.h"

namespace perfkit {
namespace {

// Every line, in order: no tolerance.
constexpr double kMinMatch = 1.0;

const std::vector<std::string> kFixtures = {
    "fp.data",      "dwarf.data",      "nocg.data",      "tracepoint.data", "multi.data",
    "syswide.data", "pipe.data",       "group.data",     "compressed.data", "switch.data",
    "faults.data",  "dwarf_vdso.data", "syswide_g.data", "threads.data"};

void expect_same(const std::string& fixture, const std::string& args) {
  std::string f = test::fixture(fixture);
  if (f.empty()) {
    ADD_FAILURE() << fixture << " is missing (tests/fixtures/record.sh failed?)";
    return;
  }
  test::ScriptDiff d = test::diff_script(f, args);
  if (!d.perf_ok) {
    // perf refuses some field lists for some files (a field the samples do
    // not carry): perfkit must refuse them too, with perf's reason.
    EXPECT_FALSE(d.perfkit_ok) << fixture << " [" << args << "]: perf failed: " << d.perf_error;
    std::string reason = d.perf_error.substr(0, d.perf_error.find('\n'));
    EXPECT_NE(d.perfkit_error.find(reason), std::string::npos)
        << fixture << " [" << args << "]: perf: " << reason << "\nperfkit: " << d.perfkit_error;
    return;
  }
  ASSERT_TRUE(d.perfkit_ok) << fixture << " [" << args << "]: " << d.summary();
  EXPECT_GE(d.match(), kMinMatch) << fixture << " [" << args << "]: " << d.summary();
  EXPECT_GT(d.perf_lines, 0u) << fixture << " [" << args << "]: perf printed nothing";
}

class ScriptFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(ScriptFixture, DefaultOutputMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  expect_same(GetParam(), "");
}

TEST_P(ScriptFixture, SourceLinesMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  const std::string args = "-F comm,tid,time,ip,sym,dso,srcline";
  // perf's addr2line child cannot open a memfd-backed DSO; perf then dies
  // of SIGPIPE part way (system-wide recordings of some machines), or, on a
  // loaded machine, gives up on addr2line at another point of its output.
  std::string f = test::fixture(GetParam());
  if (!f.empty()) {
    test::ScriptDiff d = test::diff_script(f, args);
    if (d.perf_error.find("addr2line") != std::string::npos || d.perf_status > 128 ||
        d.perf_status < 0)
      GTEST_SKIP() << "perf's addr2line failed (status " << d.perf_status << "): " << d.perf_error;
  }
  expect_same(GetParam(), args);
}

TEST_P(ScriptFixture, InlineFramesMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  expect_same(GetParam(), "--inline");
  expect_same(GetParam(), "--no-inline");
}

TEST_P(ScriptFixture, SideBandRecordsMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  expect_same(GetParam(),
              "--show-task-events --show-mmap-events --show-switch-events --show-lost-events "
              "--show-namespace-events --show-cgroup-events");
  expect_same(GetParam(), "--show-round-events");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ScriptFixture, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

// Options that change what is printed, on recordings where they matter.
TEST(ScriptOptions, TimeFormatsMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* args : {"--ns", "--reltime", "--deltatime", "--ns --reltime"}) {
    expect_same("fp.data", args);
    expect_same("syswide.data", args);
  }
}

TEST(ScriptOptions, FieldSelectionMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* args :
       {"-F comm,tid,ip,sym", "-F +pid,-period", "-F sw:comm,ip,sym,symoff", "-F +misc",
        "-F comm,pid,tid,cpu,time,event,ip,sym,dso,symoff,period", "-F ip,sym -F sw:+dso",
        "-F +flags", "-F +uregs", "-G", "--max-stack 3", "-F +addr,+phys_addr", "-F +insn,+insnlen",
        "-F ip,sym,insnlen,insn -G"}) {
    expect_same("fp.data", args);
    expect_same("syswide.data", args);
  }
  expect_same("fp.data", "-F +srcline --full-source-path");
  expect_same("dwarf.data", "-F +srcline --full-source-path");
  expect_same("dwarf.data", "-F +uregs");
  expect_same("dwarf.data", "--max-stack 4");
  expect_same("tracepoint.data", "-F trace:comm,tid,event,trace");
  expect_same("faults.data", "-F +addr");
  expect_same("faults.data", "-F ip,sym,addr,data_src");
  expect_same("faults_g.data", "-F +data_src,+phys_addr,+data_page_size");
  expect_same("multi.data", "-F sw:comm,event,period");
}

// -F srccode: perf's "|LINE     text" lines, once per source line per
// thread, after the sample (and its callchain). The source lines must be
// the same, in the same order, besides the usual 99.9% overall.
TEST(ScriptOptions, SourceCodeMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::size_t shown = 0;
  for (const char* fixture : {"fp.data", "dwarf.data", "syswide.data", "multi.data"}) {
    std::string f = test::fixture(fixture);
    if (PK_FIXTURE_MISSING_IN_LOOP(f, fixture)) continue;
    for (const char* args : {"-F +srccode", "-F comm,tid,ip,sym,srccode -G"}) {
      // perf's addr2line child cannot open a memfd-backed DSO; perf then
      // dies part way (system-wide recordings of some machines).
      if (test::diff_script(f, args).perf_error.find("could not read first record") !=
          std::string::npos)
        continue;
      expect_same(fixture, args);
      std::string code_lines =
          std::string(" ") + args + " -i " + test::sh(f) + " 2>/dev/null | grep '^|'";
      auto p = test::run("perf script" + code_lines);
      auto k = test::run(test::perfkit_bin() + " script" + code_lines);
      EXPECT_EQ(p.out, k.out) << fixture << " [" << args << "]";
      shown += static_cast<std::size_t>(std::count(p.out.begin(), p.out.end(), '\n'));
    }
  }
  EXPECT_GT(shown, 0u) << "perf showed no source code: the fixtures' sources are missing?";
}

// The first sample's comm, pid, tid and symbol as perf prints them.
std::vector<std::string> first_sample(const std::string& fixture) {
  auto r = test::run("perf script -F comm,pid,tid,ip,sym -i " + test::sh(test::fixture(fixture)) +
                     " 2>/dev/null | grep -v unknown | awk 'NF == 4' | head -1");
  std::vector<std::string> out;
  std::istringstream in(r.out);
  std::string w;
  while (in >> w) out.push_back(w);
  if (out.size() == 4) {
    auto slash = out[1].find('/');
    std::string pid = out[1].substr(0, slash), tid = out[1].substr(slash + 1);
    return {out[0], pid, tid, out.back()};
  }
  return {};
}

TEST(ScriptOptions, FiltersMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_IF_MISSING(test::fixture("syswide.data").empty(), "fixture syswide.data");
  auto first = first_sample("syswide.data");
  ASSERT_EQ(first.size(), 4u);
  for (std::string args : {"-C 0", "-C 1", "--time 10%/2", "--time 0%-10%,30%-40%", "--time 50%"})
    expect_same("syswide.data", args);
  expect_same("syswide.data", "--comm " + first[0]);
  expect_same("syswide.data", "--pid " + first[1]);
  expect_same("syswide.data", "--tid " + first[2]);
  expect_same("syswide.data", "-S " + first[3]);
  expect_same("fp.data", "-S spin,hot");
  expect_same("fp.data", "--time 25%-75%");
  expect_same("dwarf.data", "--comm cpuloop");
}

// --graph-function on a recording without a trace: no sample enters a
// function (none carries branch flags), so none prints; the side-band
// records still do.
TEST(ScriptOptions, GraphFunctionWithoutATraceMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  expect_same("fp.data", "--graph-function main --show-task-events --show-mmap-events");
  expect_same("syswide.data", "--graph-function main,hot --show-task-events");
}

// -S entries that read as hex numbers are addresses (perf's addr_list): a
// sample's exact address, or with --addr-range N the N bytes from it; a
// symbol's start address alone keeps only samples at it, not the symbol.
TEST(ScriptOptions, AddressFiltersMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  // The busiest address of spin, and spin's start, as perf prints them.
  auto top = test::run("perf script -F ip,sym,symoff -G -i " + test::sh(f) +
                       " 2>/dev/null | grep 'spin+' | sort | uniq -c | sort -rn | head -1");
  std::istringstream in(top.out);
  std::string count, ip, symoff;
  in >> count >> ip >> symoff;
  ASSERT_FALSE(ip.empty()) << top.out;
  const std::uint64_t at = std::stoull(ip, nullptr, 16);
  const std::uint64_t start = at - std::stoull(symoff.substr(symoff.find("+0x") + 3), nullptr, 16);
  const std::string a = fmt::format("{:#x}", at), s = fmt::format("{:#x}", start);
  int compared = 0;
  for (const std::string& args :
       {"-F ip,sym -S " + a, "-F ip,sym -S " + s, "-F ip,sym -S spin," + a,
        "-F ip,sym -S " + a.substr(2), "-F ip,sym,symoff -S " + a + " --addr-range 16",
        "-F ip,sym -S " + s + ",main --addr-range 64"}) {
    auto p = test::run("perf script -G -i " + test::sh(f) + " " + args + " 2>&1");
    auto k = test::run(test::perfkit_bin() + " script -G -i " + test::sh(f) + " " + args + " 2>&1");
    EXPECT_TRUE(p.out == k.out) << args << "\n" << test::first_difference(k.out, p.out);
    ++compared;
  }
  EXPECT_EQ(compared, 6);
}

// --dlfilter: a filter built against perf's perf/perf_dlfilter.h sees the
// same samples, fields, resolved symbols, attr and instruction lengths from
// perfkit as from perf, keeps the same ones, and gets its --dlarg; both list
// it (and perf's installed ones) the same with --list-dlfilters.
TEST(ScriptOptions, DlfilterAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_TOOL_OR_SKIP(cc, "cc");
  if (::access("/usr/include/perf/perf_dlfilter.h", R_OK) != 0) {
    if (test::in_ci()) FAIL() << "perf/perf_dlfilter.h is missing in CI";
    GTEST_SKIP() << "no perf/perf_dlfilter.h";
  }
  test::TempDir dir;
  auto built =
      test::run(cc + " -shared -fPIC -o " + test::sh(dir.path("keep.so")) + " " +
                test::sh(std::string(PERFKIT_SOURCE_DIR) + "/tests/cli/dlfilter/keep_symbol.c"));
  ASSERT_EQ(built.status, 0) << built.err;
  int compared = 0;
  for (const char* fixture : {"fp.data", "dwarf.data"}) {
    PK_FIXTURE_OR_SKIP(f, fixture);
    for (const std::string args :
         {"--dlfilter ./keep.so -F comm,tid,ip,sym", "--dlfilter keep.so --dlarg run -F ip,sym",
          "--dlfilter ./keep.so --dlarg main"}) {
      const std::string cmd = " script -i " + test::sh(f) + " " + args;
      auto p = test::run("cd " + test::sh(dir.dir()) + " && perf" + cmd);
      auto k = test::run("cd " + test::sh(dir.dir()) + " && " + test::perfkit_bin() + cmd);
      EXPECT_EQ(k.status, p.status) << args;
      EXPECT_EQ(k.err, p.err) << fixture << " [" << args << "]";
      EXPECT_TRUE(k.out == p.out) << fixture << " [" << args << "]\n"
                                  << test::first_difference(k.out, p.out);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);
  const std::string list = " script --list-dlfilters";
  EXPECT_EQ(test::run("cd " + test::sh(dir.dir()) + " && " + test::perfkit_bin() + list).out,
            test::run("cd " + test::sh(dir.dir()) + " && perf" + list).out);
}

// --switch-on/--switch-off/--show-on-off-events, after the other filters.
TEST(ScriptOptions, EventSwitchMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* args :
       {"--switch-on page-faults", "--switch-off page-faults --show-on-off-events",
        "--switch-on task-clock --switch-off page-faults -F event,time,ip,sym",
        "--switch-on cpu-clock --switch-off page-faults --show-on-off-events --time 0%-60%"})
    expect_same("multi.data", args);
}

// --stop-bt: each call chain ends after the frame of a function listed.
TEST(ScriptOptions, StopBtMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* fixture : {"fp.data", "dwarf.data"})
    for (const char* args : {"--stop-bt run", "-F comm,ip,sym --stop-bt main,run"})
      expect_same(fixture, args);
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  auto full = test::run(test::perfkit_bin() + " script -F ip,sym -i " + test::sh(f));
  auto cut = test::run(test::perfkit_bin() + " script -F ip,sym --stop-bt run -i " + test::sh(f));
  // Chains through run: how many, and how many go on past it. Without the
  // option they go on (to main); with it each ends at run (a sample outside
  // run, in main itself, still shows main).
  auto through_run = [](const std::string& out) {
    std::istringstream lines(out);
    bool after_run = false;
    int chains = 0, past = 0;
    for (std::string line; std::getline(lines, line);) {
      if (after_run && !line.empty()) ++past;
      after_run = line.ends_with(" run");
      chains += after_run;
    }
    return std::pair{chains, past};
  };
  const auto [full_chains, full_past] = through_run(full.out);
  const auto [cut_chains, cut_past] = through_run(cut.out);
  EXPECT_GT(full_chains, 0);
  EXPECT_EQ(full_past, full_chains);
  EXPECT_EQ(cut_chains, full_chains);
  EXPECT_EQ(cut_past, 0);
}

// --dump-unsorted-raw-trace: -D's dump in file order (FINISHED_ROUND where
// it lies, unhandled), each sample's script lines after it, as perf.
TEST(ScriptOptions, UnsortedDumpMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* name : {"fp.data", "multi.data", "pipe.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    const std::string args = " script --dump-unsorted-raw-trace -i " + test::sh(f);
    auto p = test::run("perf" + args);
    auto k = test::run(test::perfkit_bin() + args);
    ASSERT_EQ(k.status, 0) << k.err;
    EXPECT_NE(p.out.find("PERF_RECORD_FINISHED_ROUND: unhandled!"), std::string::npos) << name;
    EXPECT_TRUE(p.out == k.out) << name << ": the dumps differ";
  }
}

// --per-event-dump: each event's samples in INPUT.EVENT.dump, side-band
// records on stdout, and perf's "Wrote" line per file on stderr; a pipe's
// files named as perf names them.
TEST(ScriptOptions, PerEventDumpMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  auto dumps = [](const std::string& tool, const std::string& fixture, const std::string& args,
                  bool pipe) {
    test::TempDir dir;
    const std::string in = dir.path("in.data");
    test::write_file(in, test::read_file(fixture));
    const std::string cmd = "cd " + test::sh(dir.dir()) + " && " + (pipe ? "cat in.data | " : "") +
                            tool + " script " + args + " --per-event-dump" +
                            (pipe ? "" : " -i in.data");
    auto r = test::run(cmd);
    std::string all =
        "status " + std::to_string(r.status) + "\nstdout:\n" + r.out + "stderr:\n" + r.err;
    auto ls = test::run("cd " + test::sh(dir.dir()) + " && ls *.dump");
    for (std::size_t at = 0, nl; (nl = ls.out.find('\n', at)) != std::string::npos; at = nl + 1) {
      const std::string name = ls.out.substr(at, nl - at);
      all += "== " + name + "\n" + test::read_file(dir.path(name));
    }
    return all;
  };
  int compared = 0;
  for (const char* name : {"multi.data", "fp.data", "pipe.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    const bool pipe = std::string(name) == "pipe.data";
    for (const char* args : {"", "--show-task-events -F comm,tid,event,ip,sym"}) {
      const std::string want = dumps("perf", f, args, pipe);
      EXPECT_NE(want.find(".dump ("), std::string::npos) << name << ": " << want.substr(0, 300);
      EXPECT_EQ(dumps(test::perfkit_bin(), f, args, pipe), want) << name << " [" << args << "]";
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);
}

TEST(ScriptOptions, AbsoluteTimeRangesMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("syswide.data");
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  // Times around the first sample perf prints: one range, then two.
  auto first = test::run("perf script -F time -i " + test::sh(f) + " 2>/dev/null | head -1");
  std::string t = first.out.substr(0, first.out.find(':'));
  while (!t.empty() && t.front() == ' ') t.erase(0, 1);
  ASSERT_FALSE(t.empty());
  double start = std::stod(t);
  auto at = [&](double d) { return fmt::format("{:.6f}", start + d); };
  expect_same("syswide.data", "--time " + at(0.05) + "," + at(0.2));
  expect_same("syswide.data", "--time " + at(0) + ",");
  expect_same("syswide.data",
              "--time '" + at(0) + "," + at(0.1) + " " + at(0.2) + "," + at(0.3) + "'");
}

TEST(ScriptOptions, HeaderAndStdinMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  expect_same("fp.data", "--header");
  std::string f = test::fixture("pipe.data");
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  test::ScriptDiff d = test::diff_script(f, "", "-i - < " + test::sh(f));
  ASSERT_TRUE(d.perf_ok && d.perfkit_ok) << d.summary();
  EXPECT_GE(d.match(), kMinMatch) << d.summary();
}

// While the kernel's symbols load on another thread, script formats on and
// fills the kernel frames in afterwards. A kallsyms that arrives late
// through a FIFO makes every sample wait so; the output must be the same
// bytes as with the file read at once, for callchains and for plain ips.
TEST(ScriptOptions, KernelFramesFilledInAfterASlowKallsymsAreTheSame) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  std::string copy = dir.path("kallsyms"), fifo = dir.path("slow");
  ASSERT_EQ(
      test::run("cat /proc/kallsyms > " + test::sh(copy) + " && mkfifo " + test::sh(fifo)).status,
      0);
  for (const char* fixture : {"syswide_g.data", "syswide.data", "multi.data"}) {
    std::string f = test::fixture(fixture);
    if (PK_FIXTURE_MISSING_IN_LOOP(f, fixture)) continue;
    for (std::string args : {"", "-F comm,tid,time,ip,sym,dso,symoff", "-G"}) {
      std::string script = test::perfkit_bin() + " script " + args + " -i " + test::sh(f);
      auto at_once = test::run(script + " --kallsyms " + test::sh(copy));
      auto late = test::run("(sleep 0.3; cat " + test::sh(copy) + " > " + test::sh(fifo) + ") & " +
                            script + " --kallsyms " + test::sh(fifo) + "; wait");
      ASSERT_EQ(at_once.status, 0) << at_once.err;
      ASSERT_EQ(late.status, 0) << late.err;
      EXPECT_GT(at_once.out.size(), 1000u) << fixture;
      EXPECT_TRUE(at_once.out == late.out) << fixture << " [" << args << "]";
    }
  }
}

// Wrong usage: perf's messages, exit status 1.
// --stitch-lbr on a recording without LBR call stacks: perf's warning, and
// the script as without it.
TEST(ScriptOptions, StitchLbrWithoutLbrWarnsAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  auto theirs = test::run("perf script --stitch-lbr -i " + test::sh(f));
  auto ours = test::run(test::perfkit_bin() + " script --stitch-lbr -i " + test::sh(f));
  ASSERT_EQ(ours.status, theirs.status) << ours.err;
  EXPECT_EQ(ours.err, theirs.err);
  EXPECT_TRUE(ours.out == theirs.out) << test::first_difference(ours.out, theirs.out);
  EXPECT_NE(theirs.err.find("Can't find LBR callchain"), std::string::npos) << theirs.err;
}

TEST(ScriptOptions, BadFieldsAreRejected) {
  std::string f = test::fixture("fp.data");
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  struct Case {
    const char* args;
    const char* message;
  } cases[] = {
      {"-F nosuchfield", "Invalid field requested."},
      {"-F comm,+ip", "Cannot mix +-field with overridden fields"},
      {"-F bogus:comm", "Invalid event type in field string."},
      {"-F trace:", "tracepoint events do not exist"},
      {"-F sw:trace", "'trace' not valid for software events."},
      {"-F +srcline,-ip", "Display of source line number requested"},
      {"-F ip,brstackinsn", "Display of branch stack assembler requested, but non all-branch"},
      {"-F +cpu", "do not have CPU attribute set"},
      {"--reltime --deltatime", "reltime and deltatime"},
      {"-C 0", "File does not contain CPU events"},
      {"--time 1.5", "Invalid time string"},
  };
  for (const auto& c : cases) {
    auto r = test::run(test::perfkit_bin() + " script -i " + test::sh(f) + " " + c.args);
    EXPECT_EQ(r.status, 1) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
  }
}

// A process that had libc mapped lower before it exec'd (perf keeps its
// old maps across exec): perf's libunwind looks for libc's unwind tables at
// the lowest libc map, searches them at the wrong place, and stops in libc
// (no __libc_start_main, no _start); perfkit unwinds as perf does, in
// script and in report's call graphs.
TEST(ScriptDwarf, UnwindingAfterExecKeepsPerfsStaleMaps) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir tmp;
  const std::string data = tmp.path("execlow.data");
  const std::string loop = test::workload("cpuloop");
  // The case is there when perf ends chains through libc at
  // __libc_start_call_main; a recording where it unwinds them all further
  // (it happens) is made again, at most three times.
  auto ends_in_libc = [](const std::string& text) {
    for (std::size_t at = text.find("__libc_start_call_main"); at != std::string::npos;
         at = text.find("__libc_start_call_main", at + 1)) {
      const std::size_t eol = text.find('\n', at);
      if (eol != std::string::npos && text.compare(eol, 2, "\n\n") == 0) return true;
    }
    return false;
  };
  const std::string script = " script -i " + test::sh(data) + " 2>/dev/null";
  test::RunPair pair;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto rec = test::run("perf record -q --call-graph dwarf -F 2000 -o " + test::sh(data) + " -- " +
                         test::sh(test::workload("execlow")) + " \"$(ldd " + test::sh(loop) +
                         " | awk '/libc.so/ {print $3}')\" " + test::sh(loop) + " 300 2>&1");
    ASSERT_EQ(rec.status, 0) << rec.out;
    pair = test::run_pair("perf" + script, test::perfkit_bin() + script);
    ASSERT_EQ(pair.theirs.status, 0);
    EXPECT_TRUE(pair.ours.out == pair.theirs.out)
        << test::first_difference(pair.ours.out, pair.theirs.out);
    if (ends_in_libc(pair.theirs.out)) break;
  }
  ASSERT_TRUE(ends_in_libc(pair.theirs.out)) << pair.theirs.out.substr(0, 4000);
  auto no_tip = [](std::string text) {
    const auto at = text.find("# (Tip:");
    return at == std::string::npos ? text : text.substr(0, at);
  };
  const std::string report = " report --stdio -i " + test::sh(data) + " 2>/dev/null";
  auto rep = test::run_pair("perf" + report, test::perfkit_bin() + report);
  ASSERT_EQ(rep.theirs.status, 0);
  EXPECT_EQ(no_tip(rep.ours.out), no_tip(rep.theirs.out));
}

TEST(ScriptOptions, HelpDescribesTheCommand) {
  auto r = test::run(test::perfkit_bin() + " help script");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--fields"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--show-mmap-events"), std::string::npos);
}

}  // namespace
}  // namespace perfkit
