// perf report's call-graph frames as perf names and tells them apart:
// names cut where perf's buffer ends, the address and srcline keys
// (-g address, -g srcline), and -v's table, against perf report on the
// same files.
#include <gtest/gtest.h>

#include "report_compare.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

std::string diff_with_perf(const std::string& file, const std::string& args) {
  auto p = test::run("perf report --stdio -i " + test::sh(file) + " " + args);
  auto k = test::run(test::perfkit_bin() + " report --stdio -i " + test::sh(file) + " " + args);
  if (p.status != 0) return "perf failed: " + p.err.substr(0, 300);
  if (k.status != 0) return "perfkit failed: " + k.err;
  return test::report_mismatches(p.out, k.out);
}

// longnames.data: frames named with 1022, 1023, 1041 and 1500 characters.
// perf prints a call-graph frame's name and a column's header through a
// 1024-byte buffer (cut at 1023 characters: the 1041-character name loses
// its tail, the shorter ones print whole); entry rows print whole.
TEST(ReportNames, LongNamesCutAsPerfCutsThem) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "longnames.data");
  int compared = 0;
  for (const char* mode : {"", "--no-children", "-g flat", "-g folded", "-g caller",
                           "--no-children -g fractal,0,callee", "--sort sym", "-g none"}) {
    std::string d = diff_with_perf(f, mode);
    EXPECT_TRUE(d.empty()) << "[" << mode << "]:\n" << d;
    ++compared;
  }
  EXPECT_EQ(compared, 8);
  // (the cut is there to see: a frame line of exactly 1023 name characters)
  auto k = test::run(test::perfkit_bin() + " report --stdio -g flat -i " + test::sh(f));
  bool cut = false;
  for (std::size_t at = 0; (at = k.out.find("\n", at)) != std::string::npos; ++at) {
    const std::size_t q = k.out.find_first_not_of(' ', at + 1);
    if (q == std::string::npos || k.out.compare(q, 2, "qb") != 0) continue;
    const std::size_t end = k.out.find('\n', q);
    cut |= end - q == 1023;
  }
  EXPECT_TRUE(cut) << k.out.substr(0, 2000);
}

// perf report -v names DSOs by path (and orders them so) and prefixes each
// resolved symbol with its entry's address (a sample's DSO-relative, the
// kernel's and a call-chain frame's as recorded) and the letter of where its
// DSO's symbols came from (B: the build-id cache's copy, D: its debug file,
// k: kallsyms, !: none). Recordings whose [vdso] perf names by a temporary
// file of its own (no build-id recorded for it) are left out.
TEST(ReportNames, VerboseTableAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* name : {"fp.data", "syswide_g.data", "dwarf.data", "deep_dwarf.data",
                           "multi.data", "mixedcg.data", "longnames.data", "compressed.data"}) {
    PK_FIXTURE_OR_SKIP(f, name);
    for (const char* mode :
         {"-v", "-v --no-children -g none", "-v --sort dso,sym -g none", "-v --sort dso -g none",
          "-v --sort comm,dso,sym -n", "-v --children --sort sym"}) {
      std::string d = diff_with_perf(f, mode);
      EXPECT_TRUE(d.empty()) << name << " [" << mode << "]:\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 8 * 6);
  // The tables -v changes otherwise are refused rather than shown unchanged;
  // -v keeps the outputs it does not change (--stats).
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  auto k = test::run(test::perfkit_bin() + " report --stdio -v --hierarchy -i " + test::sh(f));
  EXPECT_NE(k.status, 0);
  EXPECT_NE(k.err.find("-v: the verbose columns"), std::string::npos) << k.err;
  auto s = test::run(test::perfkit_bin() + " report --stdio -v --stats -i " + test::sh(f));
  EXPECT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.out.find("Aggregated stats:"), std::string::npos) << s.out;
}

// -g address (perf's CCKEY_ADDRESS): frames told apart by DSO and address,
// named "name file:line" (or "name +offset" where the line is unknown, as in
// the kernel without a vmlinux); -g srcline (CCKEY_SRCLINE): told apart by
// the line where both frames have one, else as functions, named with the
// line where it is known. perf's -g words match as prefixes ("addr",
// "srcl"). (A recording with a deleted memfd mapping is not among them: perf
// stops printing once its addr2line fails on it.)
TEST(ReportChainKeys, AddressAndSrclineKeysAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  int compared = 0;
  for (const char* fx :
       {"longnames.data", "fp.data", "dwarf.data", "deep_dwarf.data", "syswide_g.data"}) {
    PK_FIXTURE_OR_SKIP(f, fx);
    for (const char* mode :
         {"-g address", "--no-children -g address,0", "-g addr,0,caller", "-g folded,address",
          "-g srcline", "--no-children -g srcline,0", "-g srcl,0,caller", "-g flat,srcline,0",
          "--sort srcline,sym -g srcline"}) {
      std::string d = diff_with_perf(f, mode);
      EXPECT_TRUE(d.empty()) << fx << " [" << mode << "]:\n" << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 5 * 9);
  // (the keys change the graph: spin's frames split by address, merge by line)
  PK_FIXTURE_OR_SKIP(f, "fp.data");
  auto by = [&](const char* key) {
    return test::run(test::perfkit_bin() + " report --stdio --no-children -g " + key + ",0 -i " +
                     test::sh(f))
        .out;
  };
  const std::string fn = by("function"), addr = by("address"), line = by("srcline");
  EXPECT_NE(fn, addr);
  EXPECT_NE(addr, line);
  EXPECT_NE(line.find("cpuloop.c:"), std::string::npos) << line.substr(0, 2000);
}

}  // namespace
}  // namespace perfkit
