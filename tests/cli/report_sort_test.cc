// perfkit report's less common sort keys (time, socket, parent, period,
// srcline, srcfile, symoff, symbol_size, dso_size, addr, code_page_size,
// transaction) and --time percent ranges, against perf report
// --stdio 6.1 on the perf-recorded fixtures: whole outputs, line for line
// (white space at line ends and perf's random "Tip" line aside).
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "report_compare.h"
#include "support/test_support.h"

// A fixture path that came back empty: skips the test, or fails it in CI
// (the differential tests must not pass there without comparing).
#define PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(path)                          \
  do {                                                                  \
    if (!(path).empty()) break;                                         \
    if (perfkit::test::in_ci()) FAIL() << "a fixture is missing in CI"; \
    GTEST_SKIP() << "fixture missing";                                  \
  } while (0)

namespace perfkit {
namespace {

// "" when both agree (or both refuse the options).
std::string diff_report(const std::string& file, const std::string& args) {
  auto p = test::run("perf report --stdio -i " + test::sh(file) + " " + args);
  auto k = test::run(test::perfkit_bin() + " report --stdio -i " + test::sh(file) + " " + args);
  // perf's addr2line child cannot open a memfd-backed DSO (system-wide
  // recordings of some machines): perf's source lines are cut short, or
  // perf dies of the broken pipe to it.
  if (p.err.find("could not read first record") != std::string::npos || p.status > 128 ||
      p.status < 0)
    return "";
  // perf refuses some (--sort parent without callchains): perfkit must too.
  if (p.status != 0 || p.err.find("Error:") != std::string::npos) {
    if (k.status != 1) return "perf refused, perfkit did not: " + p.err.substr(0, 300);
    return "";
  }
  if (k.status != 0) return "perfkit failed: " + k.err;
  return test::report_mismatches(p.out, k.out);
}

// Each key alone and with others, without and with children.
const char* kSorts[] = {
    "period", "time", "socket", "parent", "srcline", "srcfile", "comm,srcline", "dso,srcfile",
    "srcline,comm", "period,dso", "time,comm,dso", "parent,sym", "socket,cpu,comm", "pid,srcline",
    // perf's sample keys (a --sort naming "symbol" compares ipc_null as sym)
    "symbol_size", "dso_size,sym", "addr", "code_page_size,comm", "transaction,dso"};
const char* kModes[] = {"--no-children -g none", "--children -g none"};

class ReportSortKeys : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportSortKeys, EachKeyAloneAndCombinedSameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  for (const char* mode : kModes)
    for (const char* sort : kSorts) {
      std::string args = std::string(mode) + " --sort " + sort;
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << GetParam() << " " << args << ":\n" << d;
    }
  // --ns changes the time key only.
  for (const char* sort : {"time", "time,comm,dso"}) {
    std::string args = std::string("--no-children -g none --ns --sort ") + sort;
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << GetParam() << " " << args << ":\n" << d;
  }
}

// -F places the new keys among the columns in the order given.
TEST_P(ReportSortKeys, FieldsSameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  for (const char* fields : {"overhead,comm,srcline", "overhead,socket,cpu", "overhead,period,dso",
                             "overhead,srcfile", "overhead,parent,sym", "overhead,sample,time"}) {
    std::string args = std::string("--no-children -g none -F ") + fields;
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << GetParam() << " " << args << ":\n" << d;
  }
}

// --time percent forms (perf-report(1)) and absolute ranges; the header
// names the slices.
TEST_P(ReportSortKeys, TimePercentRangesSameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture(GetParam());
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  for (const char* t : {"10%/2", "0%-10%", "10%/1,10%/3", "50%", "0%-10%,50%-60%", "25%/4"}) {
    std::string args = std::string("--no-children -g none --sort comm,dso,sym --time ") + t;
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << GetParam() << " " << args << ":\n" << d;
    args = std::string("--children -g none --time ") + t;
    d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << GetParam() << " " << args << ":\n" << d;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReportSortKeys,
                         ::testing::Values("fp.data", "dwarf.data", "syswide.data", "multi.data",
                                           "nocg.data", "memfd.data"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

// The call graphs under the new keys (frame-pointer callchains).
TEST(ReportSortKeysGraph, CallGraphsSameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("fp.data");
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  for (const char* args : {"--sort srcline", "--no-children --sort srcline", "--sort parent",
                           "--sort time", "--no-children --sort comm,srcfile"}) {
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
}

// -p REGEX sets the parent pattern and adds the parent key; the first
// matching frame is the innermost without children, the outermost with.
TEST(ReportSortKeysParent, ParentRegexSameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("fp.data");
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  for (const char* args :
       {"--no-children -g none -p '^run|^main'", "-g none --sort parent,sym -p '^run|^main'",
        "--no-children -g none --sort parent -p 'spin'", "-g none --sort sym,parent -p '^hot$'"}) {
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
}

// -w/--column-widths: perf's columns in order (elided ones too) take the
// widths; a percentage in its width less two, a count less one, padded to
// the header; keys cut to theirs, the symbol's name to what "[.] " leaves
// (all of it when the width is narrower); group mode's wider minimum;
// none in --hierarchy.
TEST(ReportColumnWidths, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"fp.data", "group.data", "syswide_g.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"-w 5,4", "-w 12,5,4,30,10", "--no-children -w 3,3,3,3 -g none",
          "--no-children -n --show-total-period -w 10,3,4,0,8 -g none",
          "-F overhead,sym,period -w 10,8,3 -g none", "-s sym,dso -w 10,3,4 -g none",
          "--hierarchy -w 12,5", "--group -w 5,4,3 -g none -n", "--no-group -w 20,5 -g none",
          "-w -9,x,4 -g none", "-t , -w 9,4,3 -g none"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 33);
}

// -t/--field-separator: the separator between columns, no dotted line,
// values unpadded before it, the call graphs as they are.
TEST(ReportFieldSeparator, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"fp.data", "multi.data", "group.data", "syswide_g.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"-t ,", "-t , -g none", "-t ';' -n --show-total-period -g none", "-t , --no-children",
          "-t , -F sym,overhead -g none", "-t , -F sym -g none", "-t '|' --group -g none",
          "-t ', ' --sort dso,sym --show-cpu-utilization -g none"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 32);
  // '.' is refused as perf refuses it: a line on stderr, the first header
  // lines, status 0.
  const std::string f = test::fixture("fp.data");
  auto p = test::run("perf report --stdio -t . -i " + test::sh(f));
  auto k = test::run(test::perfkit_bin() + " report --stdio -t . -i " + test::sh(f));
  EXPECT_EQ(k.out, p.out);
  EXPECT_EQ(k.err, p.err);
  EXPECT_EQ(k.status, p.status);
}

// --hide-unresolved: samples in no symbol left out (the totals too), the
// frames in none dropped from call chains and children.
TEST(ReportHideUnresolved, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"syswide_g.data", "fp.data", "dwarf.data", "mixedcg.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"--hide-unresolved", "--hide-unresolved --no-children",
          "--hide-unresolved -g none --sort dso,sym", "--hide-unresolved -g caller"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 16);
}

// --ignore-callees: the last matching frame of the recorded chain (walked
// callee first, or caller first with -G and with --children) becomes the
// sample's location and the frames before it are dropped; frames the DWARF
// unwinder adds are never matched. A bad regex: perf's words, status 129.
TEST(ReportIgnoreCallees, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"fp.data", "dwarf.data", "syswide_g.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* regex : {"run", "^main$", "^spin$|asm_sysvec", "do_syscall_64|^hot$"})
      for (const char* mode : {"", "--no-children", "-G --no-children", "-g none --sort dso,sym"}) {
        const std::string args = std::string("--ignore-callees '") + regex + "' " + mode;
        std::string d = diff_report(f, args);
        EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
        ++compared;
      }
  }
  EXPECT_EQ(compared, 48);
  const std::string f = test::fixture("fp.data");
  auto bad =
      test::run(test::perfkit_bin() + " report --stdio --ignore-callees '(' -i " + test::sh(f));
  EXPECT_EQ(bad.status, 129);
  EXPECT_EQ(bad.err.substr(0, bad.err.find('\n')), "Invalid --ignore-callees regex: (");
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

// -x/--exclude-other: entries whose sample has no parent are filtered out
// (all of them without the parent key).
TEST(ReportExcludeOther, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"syswide_g.data", "fp.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"-x -g none", "-x --sort parent,sym -g none", "-x -p clock --no-children",
          "-x -p 'clock|^run$'", "-x -p '^main$' --sort dso,sym -n"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 10);
}

// --symbol-filter: each entry kept only when its symbol (its first
// sample's, sym a key or not) contains the text; as perf, only when a
// --sort key makes perf collapse its entries (comm), else it changes nothing.
TEST(ReportSymbolFilter, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"syswide_g.data", "fp.data", "dwarf.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"--symbol-filter=clock", "--symbol-filter=clock --no-children -g caller",
          "--symbol-filter=_ --sort dso,sym", "--symbol-filter=_ --sort pid,comm -g caller",
          "--symbol-filter=spin --percentage relative",
          "--symbol-filter=k -n --show-total-period -g none"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 18);
}

// --switch-on/--switch-off/--show-on-off-events: samples dropped until the
// on event's first sample, and from an off event's sample until the next on
// (after --time, before -C, as perf); an unknown event is an error.
TEST(ReportEventSwitch, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("multi.data");
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  int compared = 0;
  for (const char* sw : {"--switch-on page-faults", "--switch-off page-faults --show-on-off-events",
                         "--switch-on task-clock --switch-off page-faults",
                         "--switch-on page-faults --switch-off cpu-clock --show-on-off-events",
                         "--switch-off task-clock --time 20%-50%"})
    for (const char* mode : {"", "-g none --sort sym -n"}) {
      const std::string args = std::string(sw) + " " + mode;
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << args << ":\n" << d;
      ++compared;
    }
  EXPECT_EQ(compared, 10);
  auto bad =
      test::run(test::perfkit_bin() + " report --stdio --switch-on nosuch -i " + test::sh(f));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("switch-on event not found (nosuch)"), std::string::npos) << bad.err;
}

// --no-skip-empty: a block for every event, those without samples (the
// dummy event of -a recordings) included.
TEST(ReportSkipEmpty, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"syswide_g.data", "multi.data", "group.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"--no-skip-empty", "--no-skip-empty -g none --sort dso", "--skip-empty"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 9);
  auto k = test::run(test::perfkit_bin() + " report --stdio --no-skip-empty -i " +
                     test::sh(test::fixture("syswide_g.data")));
  EXPECT_NE(k.out.find("of event 'dummy:HG'"), std::string::npos);
}

// --stdio-color always: the percentages of the columns and of the call
// graphs (graph, flat, folded) in perf's colours; never and auto (not a
// terminal) without; a bad mode warns as perf and means auto.
TEST(ReportStdioColor, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"fp.data", "syswide_g.data", "group.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"--stdio-color always", "--stdio-color always -g flat --no-children",
          "--stdio-color always -g folded",
          "--stdio-color always -g none -n --show-cpu-utilization", "--stdio-color never"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 15);
  const std::string f = test::fixture("fp.data");
  auto on =
      test::run(test::perfkit_bin() + " report --stdio --stdio-color always -i " + test::sh(f));
  EXPECT_NE(on.out.find("\033[31m"), std::string::npos);
  auto bad =
      test::run(test::perfkit_bin() + " report --stdio --stdio-color sometimes -i " + test::sh(f));
  EXPECT_EQ(bad.status, 0);
  EXPECT_NE(bad.err.find("bad config value for 'color.ui'"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out.find('\033'), std::string::npos);
}

// Options of perf's other front ends (annotate, the TUI) and the defaults:
// accepted, nothing printed changes; a bad --percent-type is a usage error.
TEST(ReportAcceptedOptions, ChangeNothingAsInPerf) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("fp.data");
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  for (const char* args :
       {"--percent-type local-hits", "--samples 5", "--pretty raw", "--demangle",
        "--objdump /usr/bin/objdump --asm-raw -M intel", "--prefix /x --prefix-strip 2 --no-source",
        "--tui", "-m --show-ref-call-graph", "--ignore-vmlinux"}) {
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
  auto bad =
      test::run(test::perfkit_bin() + " report --stdio --percent-type bogus -i " + test::sh(f));
  EXPECT_EQ(bad.status, 129);
  EXPECT_NE(bad.err.find("--percent-type 'bogus'"), std::string::npos) << bad.err;
  auto strip =
      test::run(test::perfkit_bin() + " report --stdio --prefix-strip 2 -i " + test::sh(f));
  EXPECT_EQ(strip.status, 234);
  EXPECT_EQ(strip.err, "--prefix-strip requires --prefix\n");
  // --stitch-lbr without LBR call stacks: perf's warning, the same report
  auto lbr = test::run(test::perfkit_bin() + " report --stdio --stitch-lbr -i " + test::sh(f));
  EXPECT_EQ(lbr.status, 0);
  EXPECT_NE(lbr.err.find("Can't find LBR callchain. Switch off --stitch-lbr."), std::string::npos);
  EXPECT_TRUE(diff_report(f, "--stitch-lbr").empty());
}

// --socket-filter: entries of samples on other sockets' CPUs filtered
// (where perf collapses entries, as --symbol-filter), and perf's "Processor
// Socket" line.
TEST(ReportSocketFilter, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"syswide_g.data", "group.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args : {"--socket-filter 0", "--socket-filter 1 --sort sym,comm --no-children",
                             "--socket-filter 1 -g none --sort dso"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);
}

// --full-source-path: the srcline and srcfile keys name files by their path.
TEST(ReportFullSourcePath, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"fp.data", "dwarf.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"--full-source-path --sort srcline -g none", "--full-source-path --sort sym,srcline",
          "--full-source-path --sort srcfile -g none"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);
  auto k = test::run(test::perfkit_bin() + " report --stdio --full-source-path --sort srcline -i " +
                     test::sh(test::fixture("fp.data")));
  EXPECT_NE(k.out.find("/workloads/cpuloop.c:"), std::string::npos) << k.out;
}

// -T/--threads: the READ records' per-thread counts after the report (a
// header alone without them), and perf's raw listing with --pretty raw.
TEST(ReportThreads, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"read.data", "syswide_g.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args : {"-T", "-T --pretty raw -g none", "--threads --sort pid -g none"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);
  auto k = test::run(test::perfkit_bin() + " report --stdio -T -i " +
                     test::sh(test::fixture("read.data")));
  EXPECT_NE(k.out.find("  cpu-clock  task-clock\n"), std::string::npos) << k.out;
}

// --raw-trace: the trace key as each field's " name=value", values printed
// as perf's own traceevent printed them (not by the print format).
TEST(ReportRawTrace, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"tracepoint.data", "tponly.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"--raw-trace --sort trace -g none", "--raw-trace --sort comm,trace -g none",
          "--raw-trace -F overhead,trace,sym"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);
}

// Bad --time strings and a bad parent regex are one-line errors.
TEST(ReportSortKeysErrors, BadTimeAndRegexAreErrors) {
  std::string f = test::fixture("fp.data");
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  for (const char* args : {"--time 10%/x", "--time 120%", "--time abc", "-p '('",
                           "--time-quantum 0", "--time-quantum 5days"}) {
    auto k = test::run(test::perfkit_bin() + " report --stdio -i " + test::sh(f) + " " + args);
    EXPECT_EQ(k.status, 1) << args << "\n" << k.out << k.err;
    EXPECT_NE(k.err.find("report"), std::string::npos) << args << ": " << k.err;
  }
  // Percent ranges need HEADER_SAMPLE_TIME, which a pipe does not carry.
  if (std::string p = test::fixture("pipe.data"); !p.empty()) {
    auto k = test::run(test::perfkit_bin() + " report --stdio -i " + test::sh(p) + " --time 10%");
    EXPECT_EQ(k.status, 1) << k.out << k.err;
  }
}

// symoff is perf 6.8's key (perf 6.1 refuses it): each entry is a symbol
// plus the sample's offset in it. The sample counts per "sym+0xOFF" must be
// those perf script -F sym,symoff gives.
TEST(ReportSortKeysSymoff, OffsetsMatchPerfScript) {
  PK_SKIP_WITHOUT_PERF();
  std::string f = test::fixture("fp.data");
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  auto p = test::run("perf script -G -F ip,sym,symoff -i " + test::sh(f) + " 2>/dev/null");
  ASSERT_EQ(p.status, 0);
  std::map<std::string, long> want;
  std::istringstream ps(p.out);
  std::string ip, w;
  while (ps >> ip >> w)
    if (w != "[unknown]") ++want[w];
  auto k = test::run(test::perfkit_bin() + " report --stdio -n --no-children -g none -i " +
                     test::sh(f) + " --sort symoff");
  ASSERT_EQ(k.status, 0) << k.err;
  EXPECT_NE(k.out.find("Symbol Offset"), std::string::npos) << k.out;
  std::map<std::string, long> got;
  std::istringstream ks(k.out);
  std::string line;
  while (std::getline(ks, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string pct, level, name;
    long n = 0;
    ls >> pct >> n >> level >> name;
    if (name.find("+0x") != std::string::npos) got[name] += n;
  }
  EXPECT_FALSE(got.empty()) << k.out;
  EXPECT_EQ(got, want);
}

}  // namespace
// --hierarchy: each sort key a level, siblings by overhead, a leaf's call
// graph under it, filters per level (the nodes above a kept one shown,
// nothing without the filter's level), group columns summed, -t.
TEST(ReportHierarchy, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  const std::vector<std::pair<const char*, std::vector<const char*>>> cases = {
      {"fp.data",
       {"--hierarchy", "--hierarchy -g none -n --sort dso,sym -q", "--hierarchy -G",
        "--hierarchy --comm cpuloop --sort pid,dso"}},
      {"syswide.data",
       {"--hierarchy", "--hierarchy --sort comm,dso", "--hierarchy --comm cpuloop",
        "--hierarchy --dsos cpuloop", "--hierarchy --symbols spin",
        "--hierarchy --comm cpuloop --sort dso,sym", "--hierarchy --percent-limit 1",
        "--hierarchy -t ,", "--hierarchy --sort cpu,comm --show-total-period"}},
      {"group.data", {"--hierarchy", "--hierarchy --dsos cpuloop"}},
      {"dwarf.data", {"--hierarchy --sort sym,srcline"}},
  };
  for (const auto& [name, arg_sets] : cases) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args : arg_sets) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 16);
  auto k = test::run(test::perfkit_bin() + " report --stdio --hierarchy -g none -i " +
                     test::sh(test::fixture("fp.data")));
  EXPECT_NE(k.out.find("Command / Shared Object / Symbol"), std::string::npos) << k.out;
  // A limit between the top node's share and its first child's: perf says
  // "no entry" where the children would be.
  {
    std::string f = test::fixture("syswide.data");
    auto h = test::run(test::perfkit_bin() + " report --stdio --hierarchy -g none -i " +
                       test::sh(f) + " 2>/dev/null | grep -v '^#' | grep % | head -2");
    std::istringstream in(h.out);
    double top = 0, child = 0;
    in >> top;
    in.ignore(1 << 20, '\n');
    in >> child;
    if (top > child + 0.02) {
      const std::string args =
          "--hierarchy -g none --percent-limit " + std::to_string((top + child) / 2).substr(0, 5);
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << args << ":\n" << d;
      auto k = test::run(test::perfkit_bin() + " report --stdio " + args + " -i " + test::sh(f));
      EXPECT_NE(k.out.find("no entry >= "), std::string::npos) << k.out;
    }
  }
  auto both = test::run(test::perfkit_bin() + " report --stdio --hierarchy -F overhead,sym -i " +
                        test::sh(test::fixture("fp.data")));
  EXPECT_NE(both.err.find("--hierarchy and --fields options cannot be used together"),
            std::string::npos);
}

// --disable-order: -D's records in file order (FINISHED_ROUND unhandled
// where it lies); perf 6.1's report itself stays in time order (its
// option reaches the tool only with -D), so a sample read before its
// thread's FORK still has the thread's command.
TEST(ReportDisableOrder, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* name : {"fp.data", "syswide.data", "pipe.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args : {"--disable-order", "--disable-order -g none --sort comm,dso,sym"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
    }
    auto p = test::run("perf report -D --disable-order -i " + test::sh(f));
    auto k = test::run(test::perfkit_bin() + " report -D --disable-order -i " + test::sh(f));
    ASSERT_EQ(k.status, 0) << k.err;
    EXPECT_NE(p.out.find("FINISHED_ROUND: unhandled!"), std::string::npos) << name;
    EXPECT_TRUE(p.out == k.out) << name << ": the -D dumps differ";
  }
}

// --group-sort-idx: a group's entries by that member (the leader's value
// not compared then), by the leader alone out of range, as perf 6.1.
TEST(ReportGroupSortIdx, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  const std::string f = dir.path("g.data");
  // members whose shares differ: time and page faults
  auto rec = test::run("perf record -q -o " + test::sh(f) + " -e '{task-clock,page-faults}' -- " +
                       test::sh(test::workload("cpuloop")) + " 30 >/dev/null 2>&1");
  ASSERT_EQ(rec.status, 0);
  for (const char* args : {"--group-sort-idx 1", "--group-sort-idx 1 -g none --sort dso,sym",
                           "--group-sort-idx 5 -g none"}) {
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
  auto k = test::run(test::perfkit_bin() + " report --stdio -g none --group-sort-idx 1 -i " +
                     test::sh(f));
  ASSERT_EQ(k.status, 0) << k.err;
  // the first entry is one with page faults, not the hot loop (first without the option)
  std::istringstream lines(k.out);
  std::string first;
  while (std::getline(lines, first) && (first.empty() || first[0] == '#')) {
  }
  EXPECT_EQ(first.find("[.] spin"), std::string::npos) << k.out;
  EXPECT_NE(k.out.find("[.] spin\n"), std::string::npos) << k.out;
}

// The srcline and srcfile columns of event groups: perf sizes them by the
// entries whose source line it has made, and matching a member's entries
// with the leader's makes those of the entries both have.
TEST(ReportGroupSrcline, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* fx : {"group.data", "multi.data"}) {
    std::string f = test::fixture(fx);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"--group --sort sym,srcline", "--sort sym,srcline", "--sort srcline,sym",
          "--group --sort srcfile,sym", "--no-children --sort dso,srcline"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << fx << " " << args << ":\n" << d;
    }
  }
}

// --mem-mode on perf record -d recordings: an entry per data address,
// data_src part and weight; perf's default mem sort, its header lines
// ("Total weight", "Sort order"), the data symbols ("+0x" offsets into
// objects, raw addresses where none), data objects ("anon", "[stack]"),
// and the weight keys, which work in any mode.
TEST(ReportMemMode, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"faults.data", "faults_g.data", "faults_two.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"--mem-mode", "--mem-mode --sort mem,dso_daddr", "--mem-mode -g none",
          "--mem-mode --sort dcacheline,sym -g none",
          "--mem-mode --sort mem,dcacheline,pid --no-children -g none",
          "--mem-mode --sort symbol_iaddr,symbol_daddr", "--mem-mode --children",
          "--mem-mode --sort locked,tlb,snoop,blocked,mem,sym",
          "--mem-mode --sort phys_daddr,data_page_size,sym -g none",
          "--mem-mode -F overhead,sym,symbol_daddr",
          "--mem-mode --sort dso_daddr,weight,ins_lat -n", "--mem-mode -t , -g none",
          "--mem-mode -d libc.so.6 -g none", "--sort local_weight,sym",
          "--sort weight,ins_lat,dso -g none", "-F +local_weight -g none",
          // refused: memory keys without --mem-mode
          "--sort mem", "-F dso_daddr"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 54);
  // Refused as perf refuses them (perf then exits 0; perfkit with 1): a
  // recording without DATA_SRC (a stream of one is not), and -b.
  const std::string fp = test::fixture("fp.data");
  auto kb = test::run(test::perfkit_bin() + " report --stdio --mem-mode -b -i " + test::sh(fp));
  auto pb = test::run("perf report --stdio --mem-mode -b -i " + test::sh(fp));
  EXPECT_EQ(kb.status, 1);
  EXPECT_NE(pb.err.find("branch and mem mode incompatible"), std::string::npos) << pb.err;
  EXPECT_NE(kb.err.find("branch and mem mode incompatible"), std::string::npos) << kb.err;
  auto k = test::run(test::perfkit_bin() + " report --stdio --mem-mode -i " + test::sh(fp));
  EXPECT_EQ(k.status, 1);
  EXPECT_NE(k.err.find("Selected --mem-mode but no mem data. Did you call perf record without -d?"),
            std::string::npos)
      << k.err;
  test::TempDir dir;
  for (const char* name : {"faults_g.data", "nocg.data"}) {
    const std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    const std::string pipe = dir.path(std::string(name) + ".pipe");
    ASSERT_EQ(test::run("perf inject -i " + test::sh(f) + " -o - > " + test::sh(pipe)).status, 0);
    const std::string in = " report --stdio --mem-mode -i - < " + test::sh(pipe);
    auto p = test::run("perf" + in);
    auto kp = test::run(test::perfkit_bin() + in);
    ASSERT_EQ(kp.status, 0) << kp.err;
    EXPECT_EQ(test::report_mismatches(p.out, kp.out), "") << name;
  }
}

// --sort cgroup (the samples' PERF_SAMPLE_CGROUP named by CGROUP records)
// and cgroup_id (the thread's cgroup namespace from NAMESPACES records) on
// a recording of the workload in two cgroups and a namespace of its own:
// columns, order, children (perf's duplicate check leaves both at 0), the
// hierarchy's headers; "N/A" and "0/0x0" without those records.
TEST(ReportCgroup, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  const std::string f = test::fixture("cgroups.data");
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  auto p = test::run("perf report --stdio --sort cgroup,cgroup_id -g none -i " + test::sh(f));
  ASSERT_EQ(p.status, 0) << p.err;
  // the fixture is what it should be: two cgroups, two namespaces
  EXPECT_NE(p.out.find("/perfkit-fixture-a"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("/perfkit-fixture-b"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("4/0xeffffffb"), std::string::npos);
  int compared = 0;
  for (const char* sort : {"cgroup", "cgroup_id", "cgroup,cgroup_id,comm", "comm,cgroup",
                           "cgroup_id,dso,sym", "cgroup,pid", "transaction,sym"}) {
    for (const char* mode : {"", "--no-children -g none", "--hierarchy", "-g caller,0.5,folded"}) {
      std::string args = std::string("--sort ") + sort + " " + mode;
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << args << ":\n" << d;
      ++compared;
    }
  }
  for (const char* args : {"-F overhead,cgroup_id,sym --sort cgroup", "-t , --sort cgroup,comm"}) {
    std::string d = diff_report(f, args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
    ++compared;
  }
  const std::string fp = test::fixture("fp.data");
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(fp);
  std::string d = diff_report(fp, "--sort cgroup,cgroup_id,sym");
  EXPECT_TRUE(d.empty()) << d;
  EXPECT_EQ(++compared, 31);
}

// --branch-history on recordings without branch stacks: the call chains
// keyed by address, each frame named with its source line (the unwinder's
// inline records for DWARF chains), perf's default sort srcline,symbol,dso;
// refused without call chains.
TEST(ReportBranchHistory, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"fp.data", "dwarf.data", "deep_dwarf.data", "syswide_g.data"}) {
    std::string f = test::fixture(name);
    PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
    for (const char* args :
         {"--branch-history", "--branch-history --no-children", "--branch-history -g folded"}) {
      std::string d = diff_report(f, args);
      EXPECT_TRUE(d.empty()) << name << " " << args << ":\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 12);
  const std::string f = test::fixture("nocg.data");
  PK_FAIL_IN_CI_OR_SKIP_IF_MISSING(f);
  auto k = test::run(test::perfkit_bin() + " report --stdio --branch-history -i " + test::sh(f));
  EXPECT_EQ(k.status, 1);
  EXPECT_NE(k.err.find("Selected -g or --branch-history, but no callchain or branch data"),
            std::string::npos)
      << k.err;
}

}  // namespace perfkit
