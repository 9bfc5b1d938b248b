// perfkit report --stdio against perf report --stdio on the same files:
// the perf-recorded fixtures and the corpus, line for line (white space at
// line ends aside; perf's random "Tip" line is left out of both).
#include <gtest/gtest.h>

#include <sstream>

#include "report_compare.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

struct Case {
  std::string fixture;
  std::string args;
};

// Files perf 6.1 fails to read where perfkit reads them, each for a reason
// of perf's (their report diffs then compare nothing).
const char* kPerfCannotRead[] = {
    // COMPRESSED2 records (type 83) come after perf 6.1
    "linux-perf-data/fibo.compressed2.pipe.data",
    "linux-perf-data/sleep.compressed2.pipe.data",
    // simpleperf's own record types (32769 and up): perf fails the file
    "simpleperf/perf_for_build_id_check.data",
    "simpleperf/perf_test_max_stack_and_percent_limit.data",
    "simpleperf/perf_with_callchain_record.data",
    "simpleperf/perf_with_failed_unwinding_debug_info.data",
    // Arm CoreSight: perf 6.1 needs random access to decode it ("Failed to
    // process auxtrace index"); perfkit reports the recorded samples
    "simpleperf/etm/",
    // Intel PT in a pipe: perf's pipe reader fails on the trace's samples
    "quipper/perf.data.piped.intel_pt-4.14",
};

// perf's output against perfkit's for `file` and `args`: "" when they are
// the same, or when both refuse (perf prints "Error:" and may still exit 0);
// else what differs. Where perf refuses, perfkit must too, unless `file` is
// one perf cannot read (kPerfCannotRead).
std::string diff_report(const std::string& file, const std::string& args) {
  auto p = test::run("perf report --stdio -i " + test::sh(file) + " " + args);
  auto k = test::run(test::perfkit_bin() + " report --stdio -i " + test::sh(file) + " " + args);
  // perf died (a signal): nothing to compare.
  if (p.status > 128 || p.status < 0) return "";
  auto refused = [](const test::RunResult& r) {
    return r.status != 0 || r.err.find("Error:") != std::string::npos;
  };
  if (refused(p)) {
    if (refused(k)) return "";
    for (const char* f : kPerfCannotRead)
      if (file.find(f) != std::string::npos) return "";
    return "perf refused, perfkit did not: " + p.err.substr(0, 300);
  }
  if (k.status != 0) return "perfkit failed: " + k.err;
  return test::report_mismatches(p.out, k.out);
}

// (-q: the rows alone, without perf's comment lines)
const char* kModes[] = {"--no-children -g none --sort comm,dso,sym",
                        "--children -g none",
                        "--sort dso",
                        "--sort sym",
                        "-q --sort dso,sym",
                        "-q --children --sort comm"};

class ReportFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportFixture, SameAsPerfInEveryMode) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, GetParam());
  for (const char* mode : kModes) {
    std::string d = diff_report(f, mode);
    EXPECT_TRUE(d.empty()) << GetParam() << " " << mode << ":\n" << d;
  }
}

// --stats: perf's "Aggregated stats" (per record type) and per-event
// sample counts, nothing else.
TEST_P(ReportFixture, StatsSameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, GetParam());
  std::string d = diff_report(f, "--stats");
  EXPECT_TRUE(d.empty()) << GetParam() << " --stats:\n" << d;
  auto k = test::run(test::perfkit_bin() + " report --stats -i " + test::sh(f));
  EXPECT_NE(k.out.find("Aggregated stats:"), std::string::npos) << k.out << k.err;
}

// The call graphs; dwarf.data's user stacks are unwound in process, with
// the functions inlined at each frame as perf's "(inlined)" entries.
TEST_P(ReportFixture, SameCallGraphAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, GetParam());
  for (const char* mode :
       {"", "--no-children", "-g flat", "-g folded", "-g fractal", "-G", "-g caller",
        "--no-children -g caller", "-g fractal,0.5,callee", "-g graph,1,caller", "-g flat,1,callee",
        "-g folded,0.5,caller", "--no-children -g fractal,0.5,callee"}) {
    std::string d = diff_report(f, mode);
    EXPECT_TRUE(d.empty()) << GetParam() << " [" << mode << "]:\n" << d;
  }
}

// The DWARF recordings are not among them (-g fractal, see ReportDwarf).
INSTANTIATE_TEST_SUITE_P(Fixtures, ReportFixture,
                         ::testing::Values("fp.data", "nocg.data", "syswide.data", "multi.data",
                                           "group.data", "tracepoint.data", "compressed.data",
                                           "pipe.data", "tponly.data", "threads.data"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

// A system-wide call-graph recording. With a symbol key but no DSO key perf
// compares unresolved entries by address alone but others by DSO name
// first, so its entry tree is not consistently ordered and a search can
// miss an equal entry (one address then shows twice); simulated. The idle
// tasks' stacks run through init text (start_kernel), past the kernel
// MMAP's _etext, which perf resolves once kallsyms has widened the kernel
// map. Many entries of many
// threads tie on Children there; perf then orders by callchain depth within
// a thread and by Self across threads, which is not a consistent order, so
// the result depends on its output tree's shape (simulated).
TEST(ReportSystemWide, CallchainsThroughInitTextMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("syswide_g.data");
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  for (const char* mode :
       {"--no-children -g none --sort comm,dso,sym", "--children -g none", "--sort dso",
        "--sort sym", "", "-g caller", "--no-children", "-g flat", "-g folded", "-G",
        "--sort sym,comm", "--no-children --sort sym",
        // a single-value filter elides its column, and perf's output sort
        // then skips that key (which changes which tie comes first)
        "--comm swapper", "--dso '[kernel.kallsyms]'", "--symbols pv_native_safe_halt"}) {
    std::string d = diff_report(f, mode);
    EXPECT_TRUE(d.empty()) << "[" << mode << "]:\n" << d;
  }
}

// A recursion through an inline function copied into adjacent functions
// (deepstack's next in step0..step15): perf's duplicate check of a sample's
// call-chain entries is its entry comparison, which takes inline symbols of
// one name as one where their ranges touch, so each counts once per sample
// (before, perfkit's --children showed such entries at 284%).
TEST(ReportDwarf, InlinedRecursionCountsOncePerSampleAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "deep_dwarf.data");
  int compared = 0;
  for (const char* mode : {"", "--no-children", "--sort sym", "-g caller --sort comm,sym"}) {
    std::string d = diff_report(f, mode);
    EXPECT_TRUE(d.empty()) << "deep_dwarf.data [" << mode << "]:\n" << d;
    ++compared;
  }
  EXPECT_EQ(compared, 4);
}

// DWARF-unwound stacks with perf's inline entries. dwarf_vdso.data runs
// through the vdso and a PLT slot that perf names _init (its symbol tree's
// walk, simulated); stacks cut short end in an unwound 0 less one, which
// perf's graphs show and its flat and folded chains skip. An inline symbol
// compares by name with others but by address among real ones, so perf's
// entry tree is not consistently ordered: a search can miss an equal entry
// and add a second (e.g. "_dl_start_final (inlined)" twice with --sort sym,
// merged again by the collapse with a comm key); simulated. Every -g mode,
// with and without inline frames (perf's "[...]" remainder reads a symbol
// it never initialised: its " (inlined)" comes and goes from run to run and
// is not compared, report_compare.cc).
TEST(ReportDwarf, VdsoAndPltLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* fx : {"dwarf_vdso.data", "dwarf.data"}) {
    std::string f = test::fixture(fx);
    if (PK_FIXTURE_MISSING_IN_LOOP(f, fx)) continue;
    for (const char* mode : {kModes[0],
                             kModes[1],
                             kModes[2],
                             kModes[3],
                             "",
                             "--no-children",
                             "-g flat",
                             "-g folded",
                             "--no-children -g folded",
                             "-G",
                             "-g caller",
                             "--no-inline",
                             "--no-inline --no-children",
                             "-g fractal",
                             "-g fractal --no-inline",
                             "-g graph,0.5,callee",
                             "-g fractal,1,caller",
                             "-g flat,1,callee",
                             "-g folded,0.5,caller",
                             "--no-children -g fractal,0.5,callee"}) {
      std::string d = diff_report(f, mode);
      EXPECT_TRUE(d.empty()) << fx << " [" << mode << "]:\n" << d;
    }
  }
}

// --call-graph lbr: the user part of each chain comes from the LBR call
// stack (the newest branch's target, then every branch's source).
TEST(ReportLbr, UserChainsFromTheLbrCallStack) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  std::string f = test::corpus_dir() + "/perfparser/vector_static_gcc/perf.lbr.data";
  // (Not --no-children nor -g callee: there perf's frame read past the
  // record of kernel samples with an empty call stack shows.)
  for (const char* mode :
       {kModes[0], kModes[1], kModes[2], kModes[3], "", "-g caller", "-g flat", "-g folded"}) {
    std::string d = diff_report(f, mode);
    EXPECT_TRUE(d.empty()) << "[" << mode << "]:\n" << d;
  }
}

// Branch-stack mode (perf record -b files): an entry per branch, the
// branch keys, and the IPC column perf adds to a --sort naming "symbol".
TEST(ReportBranch, BranchKeysLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  for (const char* rel : {"quipper/perf.data.callgraph_and_branch-3.4", "simpleperf/perf_b.data",
                          "quipper/perf.data.branch_stack_hw_index"}) {
    std::string f = test::corpus_dir() + "/" + rel;
    for (const char* mode :
         {"-n", "--sort dso_to,symbol_to", "--sort cycles,comm", "--sort dso_from,dso_to",
          "--sort symbol_to,comm", "--sort symbol_from -n", "--comm elf", "--percent-limit 0.5"}) {
      std::string d = diff_report(f, mode);
      EXPECT_TRUE(d.empty()) << rel << " [" << mode << "]:\n" << d;
    }
  }
  // Without branch stacks the branch keys are refused, as perf does.
  if (std::string fp = test::fixture("fp.data"); !fp.empty()) {
    auto k = test::run(test::perfkit_bin() + " report --stdio --sort dso_from -i " + test::sh(fp));
    EXPECT_NE(k.status, 0);
    EXPECT_NE(k.err.find("Invalid --sort key: `dso_from'"), std::string::npos) << k.err;
  }
}

// A --sort naming "symbol" gets perf's IPC column (no branch data: "-").
TEST(ReportOptions, SymbolSortAddsIpcColumnLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("fp.data");
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  for (const char* mode : {"--sort symbol", "--no-children --sort dso,symbol"}) {
    std::string d = diff_report(f, mode);
    EXPECT_TRUE(d.empty()) << "[" << mode << "]:\n" << d;
  }
}

// The trace sort key: a tracepoint's payload as perf formats it, in files
// with other events too, and with a single sample (perf then leaves the
// column at its header's width, cutting the text).
TEST(ReportOptions, TraceOutputKeyMatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* fx : {"tracepoint.data", "tponly.data"}) {
    std::string f = test::fixture(fx);
    if (PK_FIXTURE_MISSING_IN_LOOP(f, fx)) continue;
    for (const char* args :
         {"--sort trace", "--sort comm,trace -n", "--no-children --sort trace,pid"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << fx << " " << args << ":\n" << d;
    }
  }
  if (test::corpus_dir().empty()) return;
  auto k = test::run(test::perfkit_bin() + " report --stdio -i " +
                     test::sh(test::corpus_dir() + "/perfparser/probe.data.file"));
  ASSERT_EQ(k.status, 0) << k.err;
  EXPECT_NE(k.out.find("   100.00%  (55d1db02856\n"), std::string::npos) << k.out;
}

// -F: only the listed columns, in their order; "Overhead" keeps its name
// beside Children, entries sort by the listed percentages, and Children
// without call graphs is "N/A".
TEST(ReportOptions, FieldListsMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* fx : {"fp.data", "syswide_g.data", "nocg.data"}) {
    std::string f = test::fixture(fx);
    if (PK_FIXTURE_MISSING_IN_LOOP(f, fx)) continue;
    for (const char* args : {"-F overhead,comm,dso", "-F comm,dso",
                             "-F overhead_children,overhead,comm,dso", "-F overhead,sym -g none",
                             "-F overhead,overhead_children,sym", "-F overhead_children,comm"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << fx << " " << args << ":\n" << d;
    }
  }
}

// -F in any order: the columns as listed, entries sorted by --sort then by
// the fields in their order (by name when a key comes first); "+" adds to
// perf's default columns; the hpp columns (sample, period, sys/usr by
// cpumode) anywhere, in --sort too; each group member's value side by side.
// The system-wide fixture is left out: what else ran on the machine while it
// was recorded decides two orders perfkit does not reproduce (unresolved
// children-only entries of one comm; a garbage kernel frame's accumulation).
TEST(ReportOptions, FieldOrdersAndHppColumnsMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* fx : {"fp.data", "group.data", "multi.data"}) {
    std::string f = test::fixture(fx);
    if (PK_FIXTURE_MISSING_IN_LOOP(f, fx)) continue;
    for (const char* args :
         {"-F sym,overhead", "-F dso,overhead,sym -g none", "-F comm", "-F sample,overhead,comm",
          "-F overhead,period,sample,dso -g none", "-F overhead_sys,overhead_us,comm -g none",
          "-F overhead,dso -s sym -g none", "-F overhead_children,sym,overhead", "-F +dso",
          "-F +sample -g none", "-s sample,comm -g none", "-s dso,overhead",
          "--show-cpu-utilization -n --show-total-period --no-children", "-F overhead_guest_us,dso",
          "-n --group", "-n --no-group", "--no-group",
          // -F keeps the first callchain frame a --sort sym would elide
          "-s sym -F overhead,sym", "--no-children -s sym -F overhead,sym"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << fx << " " << args << ":\n" << d;
    }
  }
}

// perf's refusals of -F lists, and of -C where samples carry no CPU or the
// CPU is past the recording's.
TEST(ReportOptions, BadFieldsAndCpusAreErrors) {
  std::string f = test::fixture("fp.data");
  std::string sys = test::fixture("syswide.data");
  PK_SKIP_IF_MISSING(f.empty() || sys.empty(), "a fixture");
  auto err = [](const std::string& file, const std::string& args) {
    auto k = test::run(test::perfkit_bin() + " report --stdio -i " + test::sh(file) + " " + args);
    EXPECT_EQ(k.status, 1) << args;
    return k.err;
  };
  EXPECT_NE(err(f, "-F overhead,bogus").find("Unknown --fields key: `bogus'"), std::string::npos);
  EXPECT_NE(err(f, "-F +").find("Invalid --fields key: `+'"), std::string::npos);
  EXPECT_NE(err(f, "-F overhead,dso_from").find("Invalid --fields key: `dso_from'"),
            std::string::npos);
  EXPECT_NE(err(f, "--sort bogus").find("Unknown --sort key: `bogus'"), std::string::npos);
  EXPECT_NE(err(f, "-C 0").find("File does not contain CPU events. Remove -C option to proceed."),
            std::string::npos);
  EXPECT_NE(err(sys, "-C 4096").find("Requested CPU 4096 too large"), std::string::npos);
  EXPECT_NE(err(f, "-k /nonexistent").find("Invalid file: /nonexistent"), std::string::npos);
  EXPECT_NE(err(f, "--kallsyms /nonexistent").find("Invalid file: /nonexistent"),
            std::string::npos);
  auto s = test::run(test::perfkit_bin() + " script -i " + test::sh(f) + " -C 0");
  EXPECT_EQ(s.status, 1);
  EXPECT_NE(s.err.find("File does not contain CPU events"), std::string::npos) << s.err;
}

TEST(ReportOptions, FiltersAndLimitsMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("syswide.data");
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  for (const char* args :
       {"--no-children --comm swapper", "--no-children --dso '[kernel.kallsyms]'",
        "--no-children --percent-limit 2", "--no-children -n", "--no-children --sort pid",
        "--no-children --sort cpu", "--no-children --percentage absolute --comm swapper",
        "--no-children --percentage relative --comm swapper",
        "--no-children --dsos '[kernel.kallsyms]',cpuloop",
        "--no-children --symbols pv_native_safe_halt",
        "--no-children --sort dso --dsos '[kernel.kallsyms]'", "--no-children --symfs /"}) {
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
  // Samples without a CPU field: perf's CPU column shows -1.
  if (std::string fp = test::fixture("fp.data"); !fp.empty()) {
    std::string d = diff_report(fp, "--no-children --sort cpu");
    EXPECT_TRUE(d.empty()) << "fp.data --sort cpu:\n" << d;
  }
}

// One event with call chains and one without: in perf's --children, a
// sample without a chain adds the entries of the chain resolved before it
// (perf's callchain cursor keeps it), ordered by that chain's depth but
// with no call graph.
TEST(ReportOptions, SamplesWithoutChainsTakeTheChainBeforeLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("mixedcg.data");
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  for (const char* args :
       {"", "-g callee", "--sort dso,sym", "--children -g none", "--no-children", "-g folded"}) {
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
}

// Corpus files recorded elsewhere: perf lacks their binaries too, so both
// tools must agree on the unresolved addresses. Files perf itself cannot
// report on are skipped. Known differences, by file:
const char* kCorpusExceptions[] = {
    // --call-graph lbr: for kernel samples with an empty LBR call stack perf
    // reads an entry past the record (the next record's bytes) as a user
    // frame, which perfkit leaves out (ReportLbr covers the other modes)
    "perfparser/vector_static_gcc/perf.lbr.data",
};

// The Intel PT recording (SameAsPerfInEveryMode covers perf's defaults):
// its recorded cycles samples get call chains from the decoder's thread
// stacks unless -g none (perf's add_callchain, itrace G), with perf's
// [context, ip] where the stack has nothing; the synthesized events by the
// cpumode of their IP or, at IP 0, of their target; branches without call
// chains take the chain resolved before them.
TEST(ReportCorpus, IntelPtRecordingLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  const std::string file = test::corpus_dir() + "/quipper/perf.data.intel_pt-4.14";
  for (const char* args : {"--itrace=i10usG", "--itrace=ceG", "--itrace=i10usgG -g caller",
                           "--itrace=ig --sort dso -g none", "-g folded"}) {
    std::string d = diff_report(file, args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
}

// perf report --stats adds each LOST_SAMPLES record's count to the event
// its sample id names, and lists those per event.
TEST(ReportCorpus, StatsCountLostSamplesPerEvent) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  for (const char* f :
       {"quipper/perf.data.lost_samples-4.4", "quipper/perf.data.piped.lost_samples-4.4"}) {
    std::string file = test::corpus_dir() + "/" + f;
    std::string d = diff_report(file, "--stats");
    EXPECT_TRUE(d.empty()) << f << ":\n" << d;
    auto k = test::run(test::perfkit_bin() + " report --stats -i " + test::sh(file));
    std::size_t n = 0;
    for (auto at = k.out.find("LOST_SAMPLES events:"); at != std::string::npos;
         at = k.out.find("LOST_SAMPLES events:", at + 1))
      ++n;
    EXPECT_EQ(n, 3u) << k.out;  // the aggregate and two of the three events
  }
}

// Nothing to show (every sample outside --time): perf prints its note,
// then "Error:" and the file on stderr, and exits 0.
TEST(ReportOptions, NoSamplesLeftIsPerfsError) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("fp.data");
  PK_SKIP_IF_MISSING(f.empty(), "a fixture");
  for (const char* args : {"--time 1,2", "--time 1,2 --no-children"}) {
    std::string tail = " report --stdio -i " + test::sh(f) + " " + args;
    auto p = test::run("perf" + tail);
    auto k = test::run(test::perfkit_bin() + tail);
    EXPECT_EQ(k.status, p.status) << args;
    EXPECT_EQ(k.out, p.out) << args;
    EXPECT_EQ(k.err, p.err) << args;
    EXPECT_NE(k.err.find("data has no samples!"), std::string::npos) << k.err;
  }
  // Entries that exist but are filtered out are not "no samples".
  auto k = test::run(test::perfkit_bin() + " report --stdio --comm nosuch -i " + test::sh(f));
  EXPECT_EQ(k.err.find("no samples"), std::string::npos) << k.err;
  EXPECT_NE(k.out.find("# Samples:"), std::string::npos) << k.out;
}

// Every mode of the Done-when list, the default (children, call graph),
// --stats, and the Pid:Command column (sized from each thread's last
// command, like Command).
TEST(ReportCorpus, SameAsPerfInEveryMode) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  int compared = 0, same = 0;
  std::string failures;
  for (const auto& file : test::corpus_files()) {
    bool skip = false;
    for (const char* e : kCorpusExceptions) skip |= file.find(e) != std::string::npos;
    if (skip) continue;
    // (diff_report expects perfkit to refuse what perf refuses)
    ++compared;
    bool all_same = true;
    for (const char* mode :
         {kModes[0], kModes[1], kModes[2], kModes[3], "", "--stats", "--sort pid,sym"}) {
      // A damaged fuzz file: perf --stats counts the records before the
      // damage, perfkit refuses the file naming the offset.
      if (std::string(mode) == "--stats" && file.find("quipper-fuzz/") != std::string::npos)
        continue;
      // A pipe with tracing data: perf's --stats does not read past it
      // ("unexpected end of event stream"), perfkit counts every record.
      if (std::string(mode) == "--stats" && file.ends_with("perfparser/probe.data.stream"))
        continue;
      // Pipes perf's --stats misreads (a tracepoint pipe's sample taken for
      // a record of type 1950615575; a compressed pipe's "Couldn't
      // decompress data"), which perf's report of them reads whole.
      if (std::string(mode) == "--stats" &&
          (file.ends_with("LinuxTracepoints/pipe.data") ||
           file.ends_with("linux-perf-data/sleep.compressed.pipe.data")))
        continue;
      std::string d = diff_report(file, mode);
      if (d.empty()) continue;
      all_same = false;
      failures += file + " [" + mode + "]:\n" + d.substr(0, 600) + "\n";
    }
    same += all_same;
  }
  RecordProperty("compared", compared);
  RecordProperty("same", same);
  // Report the files that differ; the suite tracks the count.
  EXPECT_TRUE(failures.empty()) << same << "/" << compared << " identical\n" << failures;
}

}  // namespace
}  // namespace perfkit
