// perfkit script on Intel PT recordings against perf script: pt-synth
// records ptflow (static and dynamic) and both tools print the synthesized
// samples for several --itrace option sets, field lists, filters and the
// trace presets (--call-trace, --call-ret-trace, --insn-trace); the whole
// outputs must be equal (the first mismatching lines are printed). perfkit
// inject --itrace against perf inject --itrace, read back by perf.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "abi/perf_event.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// Both outputs, line by line; the first few differences are reported.
void expect_same(const std::string& want_text, const std::string& got_text,
                 const std::string& what) {
  auto want = lines(want_text), got = lines(got_text);
  int shown = 0;
  for (std::size_t i = 0; i < std::max(want.size(), got.size()) && shown < 5; ++i) {
    const std::string w = i < want.size() ? want[i] : "<none>";
    const std::string g = i < got.size() ? got[i] : "<none>";
    if (w == g) continue;
    ADD_FAILURE() << what << ": line " << i + 1 << "\n  perf:    " << w << "\n  perfkit: " << g;
    ++shown;
  }
  EXPECT_EQ(want.size(), got.size()) << what;
}

class PtScriptTest : public ::testing::Test {
 protected:
  // The recordings, made once per build for every test process (single-
  // stepping is slow): one process makes them under a lock while the others
  // wait, and a stamp of the binaries and options says when to make them again.
  static void SetUpTestSuite() {
    // name, program, pt-synth options[, the program's arguments after 5]
    static const char* kRecordings[][4] = {
        {"ptflow-static", "ptflow-static", "--mtc --cyc"},
        {"ptflow", "ptflow", "--mtc --cyc"},
        // overflows (errors), PTWRITE, CBR changes, a per-cpu queue in pieces
        {"events", "ptflow-static",
         "--ovf-every 5001 --ptwrite-every 3001 --cbr-change-every 7001 --per-cpu "
         "--aux-buffer-size 3000"},
        {"timeless", "ptflow-static", "--no-tsc"},
        // TSC packets only (at the PSB and where tracing resumes)
        {"tsc", "ptflow-static", ""},
        // pipe mode (-o -), read back from stdin
        {"pipe", "ptflow-static", "--mtc --cyc -o -"},
        // IPC from CYC packets alone, long TNT packets, no return compression
        {"cyc", "ptflow-static", "--cyc --long-tnt --noretcomp"},
        // IPC estimated from MTC time, restarted by CBR changes and overflows
        {"mtc-events", "ptflow-static",
         "--mtc --ovf-every 5001 --ptwrite-every 3001 --cbr-change-every 7001 --per-cpu"},
        // CYC timing at the rate measured between MTC packets, CBR changes,
        // overflows, PTWRITE, a per-cpu queue in pieces
        {"cyc-events", "ptflow-static",
         "--mtc --cyc --ovf-every 5001 --ptwrite-every 3001 --cbr-change-every 7001 --per-cpu "
         "--aux-buffer-size 3000"},
        // a recorded event beside the trace: perf report gives its samples
        // call chains from the decoder's thread stacks (per thread, per cpu)
        {"sampled", "ptflow-static", "--mtc --cyc --sample-every 997"},
        {"sampled-cpu", "ptflow", "--per-cpu --sample-every 1009"},
        // a child forked without exec that runs code of its own: a queue of
        // its own, per thread and per cpu
        {"fork", "ptflow-static", "--mtc --cyc", "fork"},
        {"fork-cpu", "ptflow", "--per-cpu --sample-every 1009", "fork"},
    };
    std::filesystem::create_directories(dir());
    const int lock = ::open((dir() + "/.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    ASSERT_GE(lock, 0);
    ::flock(lock, LOCK_EX);
    std::string stamp;
    auto add_file = [&](const std::string& path) {
      struct stat st {};
      ::stat(path.c_str(), &st);
      stamp += path + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) +
               "." + std::to_string(st.st_mtim.tv_nsec) + "\n";
    };
    add_file(test::perfkit_bin());
    for (const char* w : {"ptflow", "ptflow-static"})
      add_file(std::string(PT_WORKLOAD_DIR) + "/" + w);
    for (const auto& rec : kRecordings)
      stamp += std::string(rec[0]) + ":" + rec[2] + ":" + (rec[3] ? rec[3] : "") + "\n";
    std::ifstream old(dir() + "/.stamp");
    const std::string had((std::istreambuf_iterator<char>(old)), std::istreambuf_iterator<char>());
    bool made = had == stamp;
    if (!made) {
      std::filesystem::remove(dir() + "/.stamp");
      made = true;
      for (const auto& rec : kRecordings) {
        const bool pipe = std::string(rec[2]).ends_with("-o -");
        auto r = test::run(test::sh(test::perfkit_bin()) + " pt-synth " + rec[2] +
                           (pipe ? "" : " -o " + test::sh(file(rec[0]))) + " -- " +
                           test::sh(std::string(PT_WORKLOAD_DIR) + "/" + rec[1]) + " 5 " +
                           (rec[3] ? rec[3] : "") + (pipe ? " > " + test::sh(file(rec[0])) : ""));
        EXPECT_EQ(r.status, 0) << r.err;
        made &= r.status == 0;
      }
      if (made) std::ofstream(dir() + "/.stamp") << stamp;
    }
    ::flock(lock, LOCK_UN);
    ::close(lock);
  }
  static std::string dir() { return std::string(PT_WORKLOAD_DIR) + "/pt-script-recordings"; }
  static std::string file(const char* prog) { return dir() + "/" + prog + ".data"; }

  // perf script and perfkit script with the same arguments: same text
  // (perf's in `perf_out` if given).
  void compare(const char* prog, const std::string& args, bool allow_empty = false,
               std::string* perf_out = nullptr) {
    const std::string in = " -i " + test::sh(file(prog)) + " ";
    auto want = test::run("perf script" + in + args);
    auto got = test::run(test::sh(test::perfkit_bin()) + " script" + in + args);
    ASSERT_EQ(got.status, 0) << args << ": " << got.err;
    ASSERT_EQ(want.status, 0) << args << ": " << want.err;
    if (!allow_empty) ASSERT_FALSE(want.out.empty()) << args;
    expect_same(want.out, got.out, std::string(prog) + " " + args);
    if (perf_out) *perf_out = std::move(want.out);
  }
  // compare(), and perf's text shows IPC values (or, `shown` false, none).
  void compare_ipc(const char* prog, const std::string& args, bool shown = true) {
    std::string perf_out;
    compare(prog, args, false, &perf_out);
    EXPECT_EQ(perf_out.find(" \t IPC: ") != std::string::npos, shown) << prog << " " << args;
  }
};

TEST_F(PtScriptTest, DefaultItraceIsPerfs) {
  PK_SKIP_WITHOUT_PERF();
  compare("ptflow-static", "");
  compare("ptflow-static", "--itrace");
  compare("ptflow", "-F-sym,-symoff");
}

TEST_F(PtScriptTest, ItraceOptionSets) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* opts :
       {"--itrace=i0ns", "--itrace=i1000i", "--itrace=i100i -F+flags", "--itrace=be -F+flags",
        "--itrace=cr -F+flags", "--itrace=pe", "--itrace=c", "--itrace=r --ns",
        "--itrace=i0ns -F+flags", "--itrace=bpe -F+flags,+synth"})
    compare("ptflow-static", opts);
}

TEST_F(PtScriptTest, CallChains) {
  PK_SKIP_WITHOUT_PERF();
  compare("ptflow-static", "--itrace=i1000ig");
  compare("ptflow-static", "--itrace=i0nsg4");
  compare("ptflow-static", "--itrace=pg");
  compare("ptflow-static", "--itrace=i1000ig -G");
  compare("ptflow", "--itrace=i100ig -F-sym,-symoff");
}

// Errors (perf's auxtrace error lines and its warning), ptwrite and CBR
// events, a per-cpu queue; a trace without timestamps.
TEST_F(PtScriptTest, EventsErrorsAndTimeless) {
  PK_SKIP_WITHOUT_PERF();
  compare("events", "");
  compare("events", "--itrace=be -F+flags");
  compare("events", "--call-ret-trace");
  compare("events", "--itrace=wpe -F+flags -C 0");
  compare("events", "--itrace=wpxg8e");
  compare("events", "--itrace=i100ig");
  // Every instruction between the events, errors and trace stops: each
  // breaks a run of lines that repeat the one before.
  compare("events", "--itrace=i0nspwe");
  compare("events", "--itrace=i0nsbe -F ip,sym,symoff,dso,cpu,period");
  compare("events", "--insn-trace");  // i0nse: with the errors
  compare("timeless", "");
  compare("timeless", "--itrace=i0ns");
  auto want = test::run("perf script -i " + test::sh(file("events")) + " >/dev/null");
  auto got = test::run(test::sh(test::perfkit_bin()) + " script -i " + test::sh(file("events")) +
                       " >/dev/null");
  EXPECT_EQ(got.err, want.err);
  EXPECT_NE(got.err.find("instruction trace errors"), std::string::npos) << got.err;
}

// The text with each "psb offs: N" made "psb offs: -".
std::string without_psb_offsets(const std::string& text) {
  static const std::string kKey = "psb offs: ";
  std::string out;
  std::size_t from = 0;
  for (std::size_t at; (at = text.find(kKey, from)) != std::string::npos;) {
    out.append(text, from, at + kKey.size() - from);
    out += '-';
    from = text.find_first_of(" \n", at + kKey.size());
    if (from == std::string::npos) from = text.size();
  }
  out.append(text, from);
  return out;
}

// A pipe-mode trace read from stdin is copied aside and decoded; reading the
// same stream as a file decodes the same. perf decodes a stream as it comes
// ("The output cannot relied upon", it warns): its PSB offsets there are
// 16 bytes on from the second buffer, and it stops a few branches before
// the end of the trace (sometimes with a "Bad packet" error there). Apart
// from those, the text is perf's.
TEST_F(PtScriptTest, PipeFromStdin) {
  PK_SKIP_WITHOUT_PERF();
  const std::string in = " -i - < " + test::sh(file("pipe")) + " ";
  for (const char* args :
       {"", "--itrace=i0ns", "--itrace=be -F+flags", "--call-trace", "--itrace=i100i -F ip,sym"}) {
    auto want = test::run("perf script" + in + args);
    auto got = test::run(test::sh(test::perfkit_bin()) + " script" + in + args);
    ASSERT_EQ(got.status, 0) << args << ": " << got.err;
    ASSERT_EQ(want.status, 0) << args << ": " << want.err;
    ASSERT_FALSE(want.out.empty()) << args;
    auto w = lines(without_psb_offsets(want.out)), g = lines(without_psb_offsets(got.out));
    // Where perf stops early it may report the cut as a bad packet.
    while (!w.empty() && w.back().find("instruction trace error") != std::string::npos)
      w.pop_back();
    ASSERT_GE(g.size(), w.size()) << args;
    EXPECT_LE(g.size() - w.size(), 400u) << args;  // the last few branches' instructions
    g.resize(w.size());
    int shown = 0;
    for (std::size_t i = 0; i < w.size() && shown < 5; ++i)
      if (w[i] != g[i]) {
        ADD_FAILURE() << "stdin " << args << ": line " << i + 1 << "\n  perf:    " << w[i]
                      << "\n  perfkit: " << g[i];
        ++shown;
      }
  }
  auto cat = test::run("cat " + test::sh(file("pipe")) + " | " + test::sh(test::perfkit_bin()) +
                       " script -i - --itrace=i0ns");
  auto direct = test::run(test::sh(test::perfkit_bin()) + " script --itrace=i0ns -i " +
                          test::sh(file("pipe")));
  ASSERT_EQ(cat.status, 0) << cat.err;
  ASSERT_FALSE(cat.out.empty());
  EXPECT_EQ(cat.out, direct.out);
}

TEST_F(PtScriptTest, FieldLists) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* opts :
       {"--itrace=b -F ip,addr,sym,dso,symoff,cpu,time --ns", "--itrace=b -F+addr,+cpu,+pid",
        "--itrace=i0ns -F+insnlen,+insn", "--itrace=i0ns -F ip,sym,symoff",
        "--itrace=be -F comm,tid,time,flags,ip,addr", "--itrace=be -F-dso,-symoff",
        "--itrace=i0ns -F time,ip,insnlen --ns", "--itrace=i0ns -F ip,dso",
        "--itrace=i0ns -F comm,pid,tid,cpu,time,period,event,ip,sym,dso,symoff --ns",
        "--itrace=i0ns -F ip --deltatime", "--itrace=i0ns -F +time --reltime"})
    compare("ptflow-static", opts);
  // The dynamic program: PLT slots are named as perf's symbol tree finds
  // them (_init+0x30 where _init, grown over .plt, is met first).
  compare("ptflow", "--itrace=be -F ip,addr,sym,symoff,dso,flags");
  compare("ptflow", "--itrace=i0ns -F ip,sym,symoff");
}

TEST_F(PtScriptTest, Filters) {
  PK_SKIP_WITHOUT_PERF();
  compare("ptflow-static", "--itrace=cr --pid 1", true);
  compare("ptflow-static", "--itrace=cr --comms ptflow-static");
  compare("ptflow-static", "--itrace=b -C 0");
  compare("ptflow-static", "--itrace=cr -S main");
}

TEST_F(PtScriptTest, CallTraces) {
  PK_SKIP_WITHOUT_PERF();
  compare("ptflow-static", "--call-trace");
  compare("ptflow-static", "--call-ret-trace");
  compare("ptflow", "--call-ret-trace --dsos /usr/lib/x86_64-linux-gnu/libc.so.6");
}

// --graph-function: a function's calls down to its return (a recursion,
// a longjmp out of one, a signal raised in one, several at once), with and
// without the call indent that keeps perf's thread stack, and the recorded
// samples beside a trace shown only inside one.
TEST_F(PtScriptTest, GraphFunction) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* fn : {"dispatch", "deep", "jumper", "raise", "main", "f1,leaf,memmove"}) {
    const std::string g = std::string(" --graph-function ") + fn;
    compare("ptflow-static", "--call-trace" + g);
    compare("ptflow-static", "--call-ret-trace" + g);
  }
  compare("ptflow-static", "--itrace=cr -F ip,sym,flags --graph-function deep");
  compare("ptflow", "--call-ret-trace --graph-function dispatch,memset");
  compare("sampled", "--call-ret-trace -F+period --graph-function deep,jumper");
}

// itrace l: each sample's last branches from its thread's stack, as perf's
// brstack fields show them (brstackoff absolute: perf loaded the DSOs to
// decode), per thread and per cpu.
TEST_F(PtScriptTest, LastBranchStacks) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"ptflow", "events", "sampled-cpu"})
    for (const char* opts :
         {"--itrace=i1000il8 -F ip,sym,brstack", "--itrace=i1000il -F tid,ip,brstacksym",
          "--itrace=i1000il4 -F ip,brstackoff,dso", "--itrace=pwl3 -F ip,brstack",
          "--itrace=i100il2 -F+brstack,+flags"})
      compare(rec, opts);
}

// itrace G: the recorded cpu-clock samples get the thread stack's chain as of
// their time (perf's add_callchain), per thread and per cpu; --max-stack
// grows to the itrace chain size, as perf's scripting_max_stack.
TEST_F(PtScriptTest, ChainsAddedToRecordedSamples) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"sampled", "sampled-cpu"})
    for (const char* opts : {"--itrace=G", "--itrace=ceG", "--itrace=i1000igG", "--itrace=G4",
                             "--itrace=i1000iG -F+callindent", "--itrace=Ge --max-stack 2",
                             "--itrace=i1000ig4 --max-stack 2"})
      compare(rec, opts);
}

// -F, --itrace (any number of them) and the trace presets apply in their
// order, as perf's option callbacks do: a later itrace string without a
// period resets it.
TEST_F(PtScriptTest, OptionsApplyInOrder) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* opts : {"-F ip,sym --insn-trace", "--itrace=il2 -F ip,brstack --insn-trace",
                           "--insn-trace --itrace=b", "--itrace=b --insn-trace",
                           "-F ip,sym --call-trace", "--call-trace --itrace=i1000i",
                           // several --itrace, each parsed on top of the ones before
                           "--itrace=i1000i --itrace=b -F+flags", "--itrace --itrace=i1000i",
                           "--itrace=b --insn-trace --itrace=e"})
    compare("ptflow-static", opts);
}

// The instruction bytes perf shows: a trace begin, and an event not at a
// FUP, keep the instruction its decoder walked last; events at a FUP show
// the one at their IP.
TEST_F(PtScriptTest, InsnBytesOfEventsAndTraceBegins) {
  PK_SKIP_WITHOUT_PERF();
  compare("ptflow", "--itrace=b -F +insn,+insnlen");
  compare("events", "--itrace=i0nsbwe -F +insn,+insnlen");
  compare("cyc-events", "--itrace=wb -F +insn,+insnlen,+flags");
}

TEST_F(PtScriptTest, InsnTraceBytes) {
  PK_SKIP_WITHOUT_PERF();
  compare("ptflow-static", "--insn-trace");
}

// perf's --xed needs the xed tool, absent here: the disassembly is checked
// on known instructions of the trace instead (AT&T syntax, as xed -A).
TEST_F(PtScriptTest, InsnTraceDisassembly) {
  auto r = test::run(test::sh(test::perfkit_bin()) + " script --insn-trace --xed -i " +
                     test::sh(file("ptflow-static")) + " | head -3");
  ASSERT_EQ(r.status, 0) << r.err;
  auto ls = lines(r.out);
  ASSERT_EQ(ls.size(), 3u) << r.out;
  // _start of a static glibc program: xor %ebp,%ebp; mov %rdx,%r9; pop %rsi.
  EXPECT_NE(ls[0].find("_start+0x0 ("), std::string::npos) << ls[0];
  EXPECT_NE(ls[0].find("\t\txor %ebp, %ebp"), std::string::npos) << ls[0];
  EXPECT_NE(ls[1].find("\t\tmov %rdx, %r9"), std::string::npos) << ls[1];
  EXPECT_NE(ls[2].find("\t\tpop %rsi"), std::string::npos) << ls[2];
}

// -F+ipc (perf-intel-pt(1), IPC): from CYC packets, the count of each
// branch or instruction sample that perf's decoder lets take one (branches
// and instructions apart; c and r, s, the presets' own sets).
TEST_F(PtScriptTest, IpcFromCycPackets) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"ptflow-static", "cyc"})
    for (const char* opts : {"--itrace=be -F+ipc", "--itrace=i0ns -F+ipc", "--itrace=i100i -F+ipc",
                             "--itrace=i0nsbe -F+ipc,+flags", "--itrace=cre -F+ipc,+flags",
                             "--itrace=i100ibs30 -F+ipc", "--call-trace -F+ipc",
                             "--call-ret-trace -F+ipc", "--insn-trace -F+ipc"})
      compare_ipc(rec, opts);
  compare_ipc("ptflow", "--itrace=i0nsbe -F+ipc");
}

// Times from CYC packets to the nanosecond: perf's rate measured between
// MTC packets that follow CYC packets, within one AUXTRACE buffer.
TEST_F(PtScriptTest, CycTimesToTheNanosecond) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"ptflow-static", "cyc-events"})
    for (const char* opts : {"--itrace=bpwe --ns -F+flags", "--itrace=i0nswe --ns"})
      compare(rec, opts);
  compare_ipc("cyc-events", "--itrace=i0nsbe -F+ipc");
}

// Without CYC packets perf estimates cycles from MTC time and the core:bus
// ratio (restarting at CBR changes and trace begins), and may show them at
// any sample; after an overflow the MTC packets go on timing.
TEST_F(PtScriptTest, IpcEstimatedFromMtc) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* opts :
       {"--itrace=be -F+ipc", "--itrace=i0ns -F+ipc", "--itrace=i100i -F+ipc",
        "--itrace=bpwe -F+ipc,+flags", "--itrace=i10is3 -F+ipc", "--call-ret-trace -F+ipc"})
    compare_ipc("mtc-events", opts);
  compare("mtc-events", "--itrace=i0nse --ns");  // the times the estimate comes from
}

// Periods in time: perf's decoder adds a tick per instruction walked to the
// time of the walk, samples where that crosses a multiple of the period
// (rounded down to a power of two), and starts over where tracing resumes.
// (With MTC or CYC timing some samples still differ: a known gap.)
TEST_F(PtScriptTest, TickPeriodsLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* opts : {"--itrace=i64t --ns", "--itrace=i1000t --ns", "--itrace=i3t --ns",
                           "--itrace=i100ns --ns -F+period", "--itrace=i1us --ns"})
    compare("tsc", opts);
}

// itrace A: the cycle count as of each update of the sample time.
TEST_F(PtScriptTest, ApproximateIpc) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"ptflow-static", "cyc", "mtc-events"})
    for (const char* opts :
         {"--itrace=beA -F+ipc", "--itrace=i0nsA -F+ipc", "--itrace=i100iA -F+ipc"})
      compare_ipc(rec, opts);
}

// No CYC or MTC packets: perf shows no IPC, and neither does perfkit; nor
// does it without -F+ipc.
TEST_F(PtScriptTest, NoIpcWithoutCyclesOrField) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"events", "timeless"})
    for (const char* opts : {"--itrace=be -F+ipc", "--itrace=i0nsA -F+ipc"})
      compare_ipc(rec, opts, false);
  compare_ipc("cyc", "--itrace=i0nsbe", false);
}

TEST_F(PtScriptTest, NoItraceAndBadOptions) {
  auto none = test::run(test::sh(test::perfkit_bin()) + " script --no-itrace -i " +
                        test::sh(file("ptflow-static")));
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out, "");
  auto bad = test::run(test::sh(test::perfkit_bin()) + " script --itrace=QQ -i " +
                       test::sh(file("ptflow-static")));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("Bad Instruction Tracing options 'QQ'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace perfkit

namespace perfkit {
namespace {

// perfkit inject --itrace against perf inject --itrace: the same events
// (perf evlist -v) and the same samples (perf script on both outputs).
TEST_F(PtScriptTest, InjectItraceMatchesPerfInject) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir out;
  const std::string theirs = out.path("perf.data"), ours = out.path("perfkit.data");
  auto check = [&](const char* rec, const std::string& itrace, bool samples,
                   const std::string& fields = "") {
    const std::string in = test::sh(file(rec));
    auto p = test::run("perf inject " + itrace + " -i " + in + " -o " + test::sh(theirs));
    ASSERT_EQ(p.status, 0) << p.err;
    auto k = test::run(test::sh(test::perfkit_bin()) + " inject " + itrace + " -i " + in + " -o " +
                       test::sh(ours));
    ASSERT_EQ(k.status, 0) << itrace << ": " << k.err;
    const std::string what = std::string(rec) + " inject " + itrace;
    expect_same(test::run("perf evlist -v -i " + test::sh(theirs)).out,
                test::run("perf evlist -v -i " + test::sh(ours)).out, what + " (evlist)");
    if (!samples) return;
    auto want = test::run("perf script " + fields + " -i " + test::sh(theirs));
    auto got = test::run("perf script " + fields + " -i " + test::sh(ours));
    ASSERT_FALSE(want.out.empty()) << what;
    expect_same(want.out, got.out, what + " (perf script)");
  };
  // perf inject's default (ibxwpe, instructions every 100us): the events.
  check("ptflow-static", "--itrace", false);
  for (const char* itrace :
       {"--itrace=i0ns", "--itrace=be", "--itrace=crg", "--itrace=i1000ig", "--itrace=pwe"}) {
    check("events", itrace, true);
    check("ptflow-static", itrace, true);
  }
  // Branch stacks (itrace l), in perf's layout with hw_idx.
  check("events", "--itrace=i1000il8", true, "-F ip,sym,brstack");
}

}  // namespace
}  // namespace perfkit

namespace perfkit {
namespace {

std::string without_tip(const std::string& text) {
  std::string out;
  for (const auto& l : lines(text))
    if (!l.starts_with("# (Tip:") && !l.starts_with("# (Cannot load tips")) out += l + "\n";
  return out;
}

// perf report and perfkit report --stdio of `path` with `args`: the same text
// (the tip aside). Returns perfkit's run.
test::RunResult expect_report_like_perf(const std::string& path, const std::string& what,
                                        const std::string& args) {
  const std::string in = " --stdio -i " + test::sh(path) + " " + args;
  auto want = test::run("perf report" + in);
  auto got = test::run(test::sh(test::perfkit_bin()) + " report" + in);
  EXPECT_EQ(got.status, 0) << args << ": " << got.err;
  expect_same(without_tip(want.out), without_tip(got.out), what + " report " + args);
  got.err = want.err == got.err ? "" : "perf:\n" + want.err + "perfkit:\n" + got.err;
  return got;
}

// perfkit report on Intel PT recordings: the trace decoded (perf report's
// --itrace) and the histograms of the synthesized events as perf shows them.
TEST_F(PtScriptTest, ReportDecodesLikePerfReport) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"ptflow-static", "events"})
    for (const char* args : {"--itrace=i1000ig", "--itrace=i100igxe", "--itrace=pe",
                             "--itrace=i1000i --no-children", "--itrace=i1000ig --sort dso,sym",
                             // last branches: perf's branch mode
                             "--itrace=i1000il8", "--itrace=i100il3 --sort symbol_from,dso_to",
                             "--itrace=i1000il -n --no-branch-stack"}) {
      auto got = expect_report_like_perf(file(rec), rec, args);
      EXPECT_EQ(got.err, "") << rec << " report " << args;  // the same warnings
    }
}

// --branch-history: the last branches (itrace l) go into the call chains,
// frames told apart by address and named with their source lines, with
// perf's branch counts ("predicted", loop "iter"); with g the synthesized
// chain follows them.
TEST_F(PtScriptTest, BranchHistoryLikePerfReport) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"ptflow-static", "events"})
    for (const char* args :
         {"--itrace=i1000il --branch-history", "--itrace=i1000igl --branch-history",
          "--itrace=i1000il8 --branch-history -g folded",
          "--itrace=i1000il --branch-history -g caller",
          "--itrace=i1000igl --branch-history --no-children --max-stack 5",
          "--itrace=i1000il --branch-history --sort dso,sym -g flat",
          "--itrace=i1000igl --branch-history --hide-unresolved -g fractal"}) {
      auto got = expect_report_like_perf(file(rec), rec, args);
      EXPECT_EQ(got.err, "") << rec << " report " << args;
    }
}

// The trace is decoded as the report reads the recording, with no file in
// between: where TMPDIR names a directory that does not exist (where no
// temporary file can be made) the report is still perf's, the recorded
// samples' late call chains and the decode's --jobs included.
TEST_F(PtScriptTest, ReportDecodesWithoutATemporaryFile) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"sampled", "events"})
    for (const char* args : {"", "--itrace=i1000ig"}) {
      const std::string in = " --stdio -i " + test::sh(file(rec)) + " " + args;
      auto want = test::run("perf report" + in);
      auto got = test::run("TMPDIR=/nonexistent/perfkit-tmp " + test::sh(test::perfkit_bin()) +
                           " report --jobs " + (*args ? "1" : "2") + in);
      ASSERT_EQ(got.status, 0) << args << ": " << got.err;
      expect_same(without_tip(want.out), without_tip(got.out),
                  std::string(rec) + " report " + args);
    }
}

// A recording of one queue decodes on the calling thread with --jobs 1 and
// on a thread of its own otherwise (its runs of instruction samples handed
// over in batches, paused at each recorded event's time); several queues
// merge their runs: the same text.
TEST_F(PtScriptTest, ScriptIsTheSameForAnyJobs) {
  const std::string bin = test::sh(test::perfkit_bin());
  int compared = 0;
  for (const char* rec : {"ptflow", "timeless", "cyc", "sampled", "fork", "fork-cpu"})
    for (const char* args :
         {"--itrace=i0ns", "--itrace=i0ns -F ip", "--itrace=i0nse -F ip,sym,symoff,dso",
          "--itrace=bei10i", "--itrace=cre -F ip,addr,sym,flags"}) {
      const std::string cmd = bin + " script -i " + test::sh(file(rec)) + " " + args;
      auto one = test::run(cmd + " --jobs 1");
      auto two = test::run(cmd + " --jobs 2");
      ASSERT_EQ(one.status, 0) << rec << " " << args << ": " << one.err;
      EXPECT_EQ(two.status, 0) << rec << " " << args << ": " << two.err;
      EXPECT_EQ(one.err, two.err) << rec << " " << args;
      EXPECT_GT(one.out.size(), 1000u) << rec << " " << args;
      compared += one.out == two.out;
      EXPECT_TRUE(one.out == two.out) << rec << " " << args;
    }
  EXPECT_EQ(compared, 30);
}

// A trace on stdin is held in memory, not in a file: where TMPDIR names a
// directory that does not exist, script, report and inject read `-i -` as
// they read the recording's file.
TEST_F(PtScriptTest, StdinTraceNeedsNoTemporaryFile) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir tmp;
  const std::string bin = test::sh(test::perfkit_bin());
  const std::string nowhere = "TMPDIR=/nonexistent/perfkit-tmp ";
  int compared = 0;
  for (const char* args : {"script --itrace=i100i -F ip,sym", "report --stdio --itrace=i1000i",
                           "inject --itrace=i1000i -o OUT"}) {
    std::string cmd = args;
    const bool inject = cmd.starts_with("inject");
    auto command = [&](const std::string& out, const std::string& input) {
      std::string c = cmd;
      if (inject) c.replace(c.find("OUT"), 3, test::sh(out));
      return nowhere + bin + " " + c + " " + input;
    };
    auto from_stdin = test::run(command(tmp.path("a.data"), "-i - < " + test::sh(file("pipe"))));
    auto from_file = test::run(command(tmp.path("b.data"), "-i " + test::sh(file("pipe"))));
    ASSERT_EQ(from_stdin.status, 0) << args << ": " << from_stdin.err;
    ASSERT_EQ(from_file.status, 0) << args << ": " << from_file.err;
    if (inject) {
      from_stdin = test::run("perf script -i " + test::sh(tmp.path("a.data")));
      from_file = test::run("perf script -i " + test::sh(tmp.path("b.data")));
    }
    ASSERT_FALSE(from_file.out.empty()) << args;
    EXPECT_EQ(without_tip(from_stdin.out), without_tip(from_file.out)) << args;
    ++compared;
  }
  EXPECT_EQ(compared, 3);
}

// pt-synth's recording `from` rewritten as the trace of a child that its
// process forked without exec: the traced thread becomes process `child`
// (the ITRACE_START, AUX and AUXTRACE records say so), made by a FORK just
// before its trace starts; every map stays the parent's. Without a file
// index (the AUXTRACE feature: the offsets move), as a pipe would give it.
void write_as_forked_child(const std::string& from, const std::string& to, std::uint32_t child) {
  auto in = perfdata::Reader::open(from);
  ASSERT_TRUE(in) << in.error().message();
  auto& r = **in;
  auto out = perfdata::Writer::create(to, {});
  ASSERT_TRUE(out) << out.error().message();
  ASSERT_TRUE((*out)->begin(r.events()));
  auto put32 = [](std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
    std::memcpy(b.data() + at, &v, 4);
  };
  perfdata::ReadRecord rec;
  for (;;) {
    auto got = r.next(rec);
    ASSERT_TRUE(got) << got.error().message();
    if (!*got) break;
    const auto& v = rec.view;
    std::vector<std::uint8_t> b(v.bytes.begin(), v.bytes.end());
    // the sample_id trailer's pid and tid, then its time
    const int idx = r.events().attr_index(v);
    std::size_t id_at = 0;
    if (idx >= 0 && v.type != abi::kRecordSample) {
      const auto& l = r.events()[static_cast<std::size_t>(idx)].layout;
      if (l.sample_id_all && (l.sample_type & abi::kSampleTid)) id_at = b.size() - l.trailer_size;
    }
    if (v.type == abi::kRecordItraceStart) {
      std::uint32_t parent = 0;
      std::uint64_t time = 0;
      std::memcpy(&parent, b.data() + 8, 4);
      ASSERT_NE(id_at, 0u);
      std::memcpy(&time, b.data() + id_at + 8, 8);
      // FORK: pid, ppid, tid, ptid, time, then the same trailer
      std::vector<std::uint8_t> fork(32);
      fork.insert(fork.end(), b.begin() + static_cast<std::ptrdiff_t>(id_at), b.end());
      const std::uint32_t head[] = {abi::kRecordFork,
                                    static_cast<std::uint32_t>(fork.size()) << 16,
                                    child,
                                    parent,
                                    child,
                                    parent};
      std::memcpy(fork.data(), head, sizeof head);
      std::memcpy(fork.data() + 24, &time, 8);  // after the maps of its time: file order
      put32(fork, 32, child);
      put32(fork, 36, child);
      std::memcpy(fork.data() + 40, &time, 8);
      ASSERT_TRUE((*out)->write(fork));
      put32(b, 8, child);
      put32(b, 12, child);
    }
    if (v.type == abi::kRecordAuxtrace) put32(b, 36, child);
    if (id_at && (v.type == abi::kRecordItraceStart || v.type == abi::kRecordAux)) {
      put32(b, id_at, child);
      put32(b, id_at + 4, child);
    }
    ASSERT_TRUE((*out)->write(b, v.trailing));
  }
  std::vector<perfdata::FeatureData> feats;
  for (const auto& f : r.features())
    if (f.id != abi::kFeatAuxtrace) feats.push_back({f.id, {f.data.begin(), f.data.end()}});
  ASSERT_TRUE((*out)->finish(r.events(), feats));
}

// A child that forks without exec runs its parent's code: perf gives a new
// process its parent's maps at the FORK, and so does perfkit's decoder (its
// images come from them). (The static program: the dynamic one maps libc
// after the FORK, which the child then cannot decode, and perf's recovery
// from the errors that follow differs from perfkit's.)
TEST_F(PtScriptTest, ForkedChildDecodesWithItsParentsMaps) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir tmp;
  const std::string f = tmp.path("forked.data");
  const std::uint32_t child = 4194400;  // above the largest pid_max (2^22): no real process
  write_as_forked_child(file("ptflow-static"), f, child);
  for (const char* args : {"--itrace=i0ns -F pid,tid,ip,sym", "--itrace=i100ns -F pid,ip,sym,dso",
                           "--itrace=be -F pid,ip,sym,symoff"}) {
    const std::string in = std::string(" script -i ") + test::sh(f) + " " + args;
    auto want = test::run("perf" + in);
    auto got = test::run(test::sh(test::perfkit_bin()) + in);
    ASSERT_EQ(want.status, 0) << args << ": " << want.err;
    ASSERT_EQ(got.status, 0) << args << ": " << got.err;
    // perf decodes the child's trace with symbols: the rewrite is sound
    ASSERT_NE(want.out.find("4194400 "), std::string::npos) << args << "\n" << want.err;
    ASSERT_NE(want.out.find(" main"), std::string::npos) << args;
    expect_same(want.out, got.out, std::string("forked child: script ") + args);
  }
}

// pt-synth follows the child that ptflow forks (no exec: it runs its own
// child_work in its parent's maps) into a queue of its own, per thread and
// per cpu: perf and perfkit decode both processes the same, in script and
// report (the per-cpu one with recorded samples of both processes).
TEST_F(PtScriptTest, ForkingChildLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"fork", "fork-cpu"}) {
    for (const char* args :
         {"--itrace=i0ns -F pid,tid,ip,sym", "--itrace=i100ns -F pid,tid,time,ip,sym,dso",
          "--itrace=be -F pid,ip,sym,symoff,addr", "--itrace=cr -F pid,ip,sym,addr",
          "--itrace=i100nsg -F pid,time,ip,sym"}) {
      const std::string in = std::string(" script -i ") + test::sh(file(rec)) + " " + args;
      auto want = test::run("perf" + in);
      auto got = test::run(test::sh(test::perfkit_bin()) + in);
      ASSERT_EQ(want.status, 0) << args << ": " << want.err;
      ASSERT_EQ(got.status, 0) << args << ": " << got.err;
      // both processes, the child in code only it runs
      ASSERT_NE(want.out.find("child_work"), std::string::npos) << rec << " " << args;
      std::istringstream lines_in(want.out);
      std::set<std::string> pids;
      std::string line;
      while (std::getline(lines_in, line)) {
        std::string first;
        std::istringstream(line) >> first;
        pids.insert(first.substr(0, first.find('/')));
      }
      EXPECT_GE(pids.size(), 2u) << rec << " " << args;
      EXPECT_EQ(want.out.find("instruction trace error"), std::string::npos) << rec;
      expect_same(want.out, got.out, std::string(rec) + " script " + args);
    }
    for (const char* args : {"", "--itrace=i100ns --sort pid,sym"})
      expect_report_like_perf(file(rec), rec, args);
  }
}

// -F brstackinsn/brstackinsnlen of the last-branch stacks the decode
// gives samples (l): the basic blocks between the branches, instruction by
// instruction from the code, as perf prints them; --max-blocks keeps the
// newest blocks.
TEST_F(PtScriptTest, BrstackInsnLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"ptflow-static", "fork-cpu"})
    for (const char* args :
         {"--itrace=i1000il -F ip,sym,brstackinsn", "--itrace=i1000il3 -F ip,brstackinsnlen",
          "--itrace=i1000il -F ip,sym,srcline,brstackinsn,brstackinsnlen --max-blocks 2",
          "--itrace=i100nsl -F ip,sym,brstackinsn --max-blocks 4"}) {
      const std::string in = std::string(" script -i ") + test::sh(file(rec)) + " " + args;
      auto want = test::run("perf" + in);
      auto got = test::run(test::sh(test::perfkit_bin()) + in);
      ASSERT_EQ(want.status, 0) << args << ": " << want.err;
      ASSERT_EQ(got.status, 0) << args << ": " << got.err;
      ASSERT_NE(want.out.find("\tinsn: "), std::string::npos) << rec << " " << args;
      expect_same(want.out, got.out, std::string(rec) + " script " + args);
    }
}

// perf report's add_callchain: the recorded cpu-clock samples get call
// chains from the thread stack as of their time (the branches decoded before
// it), in perf's default decode and with itrace G; none with -g none.
TEST_F(PtScriptTest, ReportAddsCallChainsLikePerfReport) {
  PK_SKIP_WITHOUT_PERF();
  for (const char* rec : {"sampled", "sampled-cpu"})
    for (const char* args :
         {"", "--no-children", "-g caller", "--sort dso,sym", "--children -g none",
          "--itrace=i1000iG", "--itrace=iG4", "--itrace=i1000igG -g callee"}) {
      const std::string in = " --stdio -i " + test::sh(file(rec)) + " " + args;
      auto want = test::run("perf report" + in);
      auto got = test::run(test::sh(test::perfkit_bin()) + " report" + in);
      ASSERT_EQ(got.status, 0) << args << ": " << got.err;
      ASSERT_NE(want.out.find("cpu-clock:u"), std::string::npos) << want.out;
      expect_same(without_tip(want.out), without_tip(got.out),
                  std::string(rec) + " report " + args);
    }
  // The chains are real ones: samples under main have _start as a caller.
  auto got = test::run(test::sh(test::perfkit_bin()) + " report --stdio --no-children -i " +
                       test::sh(file("sampled")));
  EXPECT_NE(got.out.find("\n               _start\n"), std::string::npos) << got.out;
}

}  // namespace
}  // namespace perfkit
