// perfkit report on LBR branch stacks with cycles, predictions and branch
// types (lbr_synthetic.h: made up for the cpuloop workload, as no recording
// here has them), against perf report 6.1 on the same file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/lbr_synthetic.h"
#include "report_compare.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

class ReportLbr : public ::testing::Test {
 protected:
  void SetUp() override {
    PK_SKIP_WITHOUT_PERF();
    const std::string bin = test::workload("cpuloop");
    auto samples = test::cpuloop_lbr_samples(bin);
    ASSERT_FALSE(samples.empty()) << "no branches found in " << bin;
    path_ = dir_.path("lbr.data");
    ASSERT_EQ(test::write_lbr_recording(path_, bin, samples), "");
  }
  // "" when perf and perfkit print the same report.
  std::string diff(const std::string& args) {
    const std::string in = " report --stdio -i " + test::sh(path_) + " " + args;
    auto p = test::run("perf" + in);
    auto k = test::run(test::perfkit_bin() + in);
    if (k.status != 0) return "perfkit failed: " + k.err;
    if (p.status != 0) return "perf failed: " + p.err;
    return test::report_mismatches(p.out, k.out);
  }
  test::TempDir dir_;
  std::string path_;
};

// perf's branch mode, its "Branch Statistics" at the end included, and its
// branch keys (mispredict, in_tx and abort compare 0 or 1, no order: perf's
// trees keep equal entries apart, as perfkit's simulation of them does). (perf
// 6.1 dies of a --sort naming "symbol" on stacks with cycles: its IPC
// column's accounting; those are left out.)
TEST_F(ReportLbr, BranchModeAsPerf) {
  for (const char* args :
       {"", "--sort cycles,dso_from", "-n --sort dso_to,cycles", "--sort mispredict,dso_from",
        "--sort in_tx,abort,cycles", "--sort addr_from,addr_to", "--sort addr_to,mispredict -n",
        "--sort srcline_from,srcline_to", "--sort comm,srcline_to,cycles -n"}) {
    std::string d = diff(args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
}

// --branch-history: each target's branch types ("COND_BWD", "CALL") and
// prediction, each source's cycles and loop iterations.
TEST_F(ReportLbr, BranchHistoryAsPerf) {
  for (const char* args : {"--branch-history", "--branch-history --no-children -g caller",
                           "--branch-history --sort dso -g flat", "--branch-history -g folded"}) {
    std::string d = diff(args);
    EXPECT_TRUE(d.empty()) << args << ":\n" << d;
  }
  // (the raw text too: the statistics end without a newline)
  auto p = test::run("perf report --stdio -i " + test::sh(path_));
  auto k = test::run(test::perfkit_bin() + " report --stdio -i " + test::sh(path_));
  EXPECT_EQ(p.out.substr(p.out.rfind("# Branch")), k.out.substr(k.out.rfind("# Branch")));
}

// --total-cycles: perf 6.1's stdio output dies on the first block (its
// block table is printed as perf diff's), so the blocks are checked for
// what perf's accounting makes of this file: run's loop (its back edge in
// every stack, never with a start: from run's first line) is the hottest,
// spin's body next; the shares fall and add up to at most 100%.
TEST_F(ReportLbr, TotalCyclesBlocks) {
  auto k = test::run(test::perfkit_bin() + " report --stdio --total-cycles -i " + test::sh(path_));
  ASSERT_EQ(k.status, 0) << k.err;
  std::vector<std::string> rows;
  std::istringstream in(k.out);
  for (std::string line; std::getline(in, line);)
    if (line.find(" -> ") != std::string::npos) rows.push_back(line);
  ASSERT_GE(rows.size(), 6u) << k.out;
  EXPECT_NE(k.out.find("# Sampled Cycles%  Sampled Cycles  Avg Cycles%  Avg Cycles"),
            std::string::npos);
  double last = 100.0, sum = 0.0;
  for (const std::string& r : rows) {
    double pct = std::stod(r);
    EXPECT_LE(pct, last) << r;
    last = pct;
    sum += pct;
    EXPECT_NE(r.find(" -> "), std::string::npos) << r;
    EXPECT_EQ(r.substr(r.size() - 7), "cpuloop") << r;
  }
  EXPECT_LE(sum, 100.0 + 0.005 * static_cast<double>(rows.size()));  // (rounded shares)
  EXPECT_GT(sum, 90.0) << k.out;  // (the blocks of run, hot, warm, cool and spin: nearly all)
  EXPECT_NE(rows[0].find("[cpuloop.c:22 -> cpuloop.c:22]"), std::string::npos) << k.out;
  EXPECT_NE(rows[1].find("[cpuloop.c:10 -> cpuloop.c:12]"), std::string::npos) << k.out;
}

// Without cycles there is no block: perf's table stays empty, as perfkit's;
// outside branch mode --total-cycles changes nothing.
TEST_F(ReportLbr, TotalCyclesWithoutCyclesAsPerf) {
  const std::string fp = test::fixture("fp.data");
  PK_SKIP_IF_MISSING(fp.empty(), "fixture fp.data");
  std::vector<std::string> files = {fp};
  if (!test::corpus_dir().empty()) files.push_back(test::corpus_dir() + "/simpleperf/perf_b.data");
  for (const std::string& f : files) {
    const std::string in = " report --stdio --total-cycles -i " + test::sh(f);
    auto p = test::run("perf" + in + " 2>/dev/null");
    auto k = test::run(test::perfkit_bin() + in + " 2>/dev/null");
    EXPECT_EQ(test::report_mismatches(p.out, k.out), "") << f;
  }
}

// A guest's samples (perf kvm record) count in the totals but show nowhere
// without guest symbols, in report and script, as perf.
TEST(ReportGuest, GuestSamplesFilteredAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  const std::string f = dir.path("guest.data");
  ASSERT_EQ(test::write_guest_recording(f, test::workload("cpuloop")), "");
  for (const char* cmd : {"report --stdio", "report --stdio --sort dso,sym -n", "script",
                          "script -F comm,pid,ip,sym"}) {
    const std::string in = std::string(" ") + cmd + " -i " + test::sh(f);
    auto p = test::run("perf" + in + " 2>/dev/null");
    auto k = test::run(test::perfkit_bin() + in + " 2>/dev/null");
    EXPECT_EQ(test::report_mismatches(p.out, k.out), "") << cmd;
    EXPECT_NE(k.out.find("spin"), std::string::npos) << cmd << ": " << k.out;
  }
}

// perf script's guest options on a made-up perf kvm recording: the default
// guest's kernel from --guestkallsyms or --guestvmlinux (its map preloaded
// and fitted at its MMAP, remapped to a vmlinux's .text), guest threads
// named ":TID", modules perf script leaves unmapped, --guest-code's guest
// threads with their hypervisor process's maps ("[guest/PID]"), and perf's
// errors: no hypervisor process, a --guestmount without the guest.
class ScriptGuest : public ::testing::Test {
 protected:
  void SetUp() override {
    PK_SKIP_WITHOUT_PERF();
    const std::string bin = test::workload("cpuloop");
    ASSERT_EQ(test::write_guest_recording(dir_.path("guest.data"), bin, true), "");
    ASSERT_EQ(test::write_guest_recording(dir_.path("hv.data"), bin, true, true), "");
    write(dir_.path("kallsyms"),
          "ffffffff81000000 T _text\nffffffff81000000 T startup_64\n"
          "ffffffff81000100 T guest_func_a\nffffffff81000200 t guest_func_b\n"
          "ffffffff81000400 T _etext\nffffffffc0002000 t pkmod_fn\t[pkguestmod]\n");
    write(dir_.path("modules"), "pkguestmod 16384 0 - Live 0xffffffffc0002000\n");
    // a guest vmlinux: .text from _text (0x100 startup_64, 0x100
    // guest_func_a, 0x200 guest_func_b) to _etext
    write(dir_.path("vmlinux.s"),
          ".text\n.globl _text\n_text:\n.type startup_64,@function\nstartup_64:\n"
          ".fill 0x100,1,0x90\n.size startup_64,0x100\n.globl guest_func_a\n"
          ".type guest_func_a,@function\nguest_func_a:\n.fill 0x100,1,0x90\n"
          ".size guest_func_a,0x100\n.type guest_func_b,@function\nguest_func_b:\n"
          ".fill 0x200,1,0x90\n.size guest_func_b,0x200\n.globl _etext\n_etext:\n");
    auto cc = test::run("cc -nostdlib -static -no-pie -Wl,-Ttext=0xffffffff81000000 -Wl,-e,0 -o " +
                        test::sh(dir_.path("vmlinux")) + " " + test::sh(dir_.path("vmlinux.s")));
    ASSERT_EQ(cc.status, 0) << cc.err;
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  // "" when perf and perfkit print the same (stdout, and stderr but for
  // perfkit's "perfkit script: FILE: " before an error).
  std::string diff(const std::string& file, const std::string& args) {
    const std::string in = " script -i " + test::sh(dir_.path(file)) + " " + args;
    auto p = test::run("perf" + in);
    auto k = test::run(test::perfkit_bin() + in);
    std::string err = k.err;
    const std::string prefix = "perfkit script: " + dir_.path(file) + ": ";
    if (err.starts_with(prefix)) err.erase(0, prefix.size());
    if ((p.status == 0) != (k.status == 0))
      return "exit " + std::to_string(k.status) + ": " + k.err;
    if (p.out != k.out) return "stdout:\n" + test::report_mismatches(p.out, k.out);
    if (p.err != err) return "stderr:\n" + p.err + "---\n" + err;
    return "";
  }
  test::TempDir dir_;
};

TEST_F(ScriptGuest, SameAsPerf) {
  const std::string ks = " --guestkallsyms " + test::sh(dir_.path("kallsyms"));
  const std::string vm = " --guestvmlinux " + test::sh(dir_.path("vmlinux"));
  const std::string mount = " --guestmount " + test::sh(dir_.path("mnt"));
  std::filesystem::create_directories(dir_.path("mnt/4242/proc"));
  int compared = 0;
  for (const std::string& args : std::vector<std::string>{
           ks, vm, ks + vm, ks + " --guestmodules " + test::sh(dir_.path("modules")),
           " --guestmodules " + test::sh(dir_.path("modules")), mount,
           " --guestkallsyms /nonexistent", " --guestvmlinux /nonexistent",
           ks + " -F comm,pid,tid,ip,sym,symoff,dso", ks + " --show-mmap-events",
           ks + " -S guest_func_a", ks + " --dsos '[guest.kernel.kallsyms]'",
           ks + " --comms :777"}) {
    for (const char* file : {"guest.data", "hv.data"}) {
      std::string d = diff(file, args);
      EXPECT_EQ(d, "") << file << args;
      ++compared;
    }
  }
  // --guest-code: the hypervisor's maps for its guest (hv.data), perf's
  // error where there is no such process (guest.data), and with a
  // --guestmount, the guests it has a directory for (4242) and the
  // warning for those it has none
  for (const std::string& args :
       std::vector<std::string>{" --guest-code", ks + " --guest-code", " --guest-code" + mount,
                                " --guest-code --guestmount /nonexistent"}) {
    for (const char* file : {"guest.data", "hv.data"}) {
      std::string d = diff(file, args);
      EXPECT_EQ(d, "") << file << args;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 34);
  auto k =
      test::run(test::perfkit_bin() + " script --guest-code -i " + test::sh(dir_.path("hv.data")));
  EXPECT_NE(k.out.find("[guest/4242]"), std::string::npos) << k.out;
  k = test::run(test::perfkit_bin() + " script -i " + test::sh(dir_.path("guest.data")) + ks);
  EXPECT_NE(k.out.find("guest_func_a+0x50 ([guest.kernel.kallsyms])"), std::string::npos) << k.out;
}

}  // namespace
}  // namespace perfkit
