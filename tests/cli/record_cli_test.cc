// `perfkit record` end to end, for each case of issue 3's "Done when": the
// file it writes is read by /usr/bin/perf report and perf script without a
// warning, perf counts the same samples as perfkit's closing line and its own
// reader, and perf's per-symbol report of the file equals perfkit report's.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "record_test_support.h"

namespace perfkit::test {
namespace {

class RecordCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PK_SKIP_WITHOUT_PERF();
    if (geteuid() != 0) GTEST_SKIP() << "recording tracepoints and -a needs root here";
  }

  // Records with perfkit into `name` and checks everything the issue asks of
  // the file. Returns perfkit's stderr.
  std::string record_and_check(const std::string& name, const std::string& args, bool pipe = false,
                               const std::string& sort = "sym") {
    const std::string out = dir_.path(name);
    const std::string cmd = pipe ? perfkit_bin() + " record -o - " + args + " > " + sh(out)
                                 : perfkit_bin() + " record -o " + sh(out) + " " + args;
    auto r = run(cmd);
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
    Closing c = parse_closing(r.err);
    EXPECT_TRUE(c.found) << r.err;
    EXPECT_GT(c.samples, 0u) << r.err;
    EXPECT_EQ(perf_report_errors(out), "") << "perf report warns on " << name;
    EXPECT_EQ(perf_script_errors(out), "") << "perf script warns on " << name;
    EXPECT_EQ(perf_sample_count(out), static_cast<long>(c.samples)) << name;
    EXPECT_EQ(count_samples(out), static_cast<long>(c.samples)) << name;
    const std::string theirs = sorted_report("perf", out, sort);
    const std::string ours = sorted_report(perfkit_bin(), out, sort);
    EXPECT_NE(theirs.find("Samples:"), std::string::npos) << theirs;
    EXPECT_EQ(ours, theirs) << "perf report --sort sym differs from perfkit report on " << name;
    return r.err;
  }

  std::string loop() const { return workload("cpuloop"); }
  TempDir dir_;
};

TEST_F(RecordCliTest, FramePointerCallGraph) {
  record_and_check("fp.data", "-g -- " + loop() + " 100");
  // The call tree perf sees: main -> run -> hot/warm/cool -> spin.
  auto r = run("perf report --stdio --no-children -i " + sh(dir_.path("fp.data")) +
               " --sort sym -G 2>/dev/null");
  EXPECT_NE(r.out.find("spin"), std::string::npos);
  EXPECT_NE(r.out.find("run"), std::string::npos);
  EXPECT_NE(r.out.find("main"), std::string::npos);
}

TEST_F(RecordCliTest, DwarfCallGraph) {
  // A 4 MiB buffer holds the whole run's stacks: under a loaded test run the
  // recorder may not be scheduled before the default one fills (a lost chunk).
  record_and_check("dwarf.data", "--call-graph dwarf -m 1024 -- " + loop() + " 60");
  auto r = run("perf report --stdio -i " + sh(dir_.path("dwarf.data")) + " -G 2>/dev/null");
  EXPECT_NE(r.out.find("hot"), std::string::npos) << "dwarf unwinding found no caller";
}

TEST_F(RecordCliTest, SystemWide) {
  // Every process on the machine: compared by command (symbols of whatever
  // else runs here are the reader's business, not the recording's).
  auto err = record_and_check("syswide.data", "-a -- sleep 2", false, "comm");
  // Every process gets its FORK and COMM before FINISHED_INIT.
  auto kinds = record_kinds_until_init(dir_.path("syswide.data"));
  ASSERT_GE(kinds.size(), 6u);
  EXPECT_EQ(kinds[0], "ID_INDEX");
  EXPECT_EQ(kinds[1], "MMAP");
  EXPECT_EQ(kinds[2], "THREAD_MAP");
  EXPECT_EQ(kinds[3], "CPU_MAP");
  EXPECT_EQ(kinds[4], "FORK");
  EXPECT_EQ(kinds.back(), "FINISHED_INIT");
}

// --threads: a perf.data directory, `data` with the header and side-band,
// data.N with cpu N's buffer (perf's layout), read by perf's report and
// script as by perfkit's; -z compresses each file apart; user masks;
// --overwrite's buffers read at the end; perf's refusals, leaving nothing
// behind.
TEST_F(RecordCliTest, ThreadsWriteADirectoryAsPerf) {
  const std::string busy =
      " -a -g -- sh -c " + sh(loop() + " 100 & " + workload("clockloop") + " 100; wait");
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int made = 0;
  for (const char* opts : {"--threads", "--threads=1/1:0/0 -z", "--threads=core --overwrite"}) {
    if (cpus < 2 && std::string(opts).find("1/1") != std::string::npos) continue;
    const std::string name = "t" + std::to_string(made++) + ".data";
    record_and_check(name, std::string(opts) + busy, false, "comm");
    const std::string d = dir_.path(name);
    for (long n = 0; n < cpus; ++n)
      EXPECT_TRUE(access((d + "/data." + std::to_string(n)).c_str(), F_OK) == 0)
          << opts << " " << n;
    // each SAMPLE of data.N was taken on cpu N
    auto dump = run("perf report -D -i " + sh(d) + " 2>/dev/null");
    const std::regex head(R"(/data\.([0-9]+) \[0x[0-9a-f]+\]: event: 9$)");
    std::istringstream in(dump.out);
    std::string line, file;
    int checked = 0;
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_search(line, m, head)) {
        file = m[1];
      } else if (!file.empty() && line.find("PERF_RECORD_SAMPLE") != std::string::npos) {
        EXPECT_EQ(line.substr(0, line.find(' ')), file) << opts << ": " << line;
        file.clear();
        ++checked;
      }
    }
    EXPECT_GT(checked, 0) << opts;
    auto header = run("perf report --header-only -i " + sh(d));
    EXPECT_NE(header.out.find("# directory data version : 1"), std::string::npos) << header.out;
    for (const char* args : {"script -F cpu,comm,tid,time,ip,sym", "report --stdio -q -g none"}) {
      auto theirs = run(std::string("perf ") + args + " -i " + sh(d));
      auto ours = run(perfkit_bin() + " " + args + " -i " + sh(d));
      EXPECT_TRUE(theirs.out == ours.out) << args << "\n" << first_difference(ours.out, theirs.out);
    }
  }
  const std::pair<const char*, const char*> refused[] = {
      {"--threads=foo", "Invalid thread maps or affinity specs"},
      {"--threads=0/", "Invalid thread maps or affinity specs"},
      {"--threads=4096/0", "Failed to initialize maps thread mask"},
      {"--threads --per-thread", "--per-thread option is mutually exclusive"}};
  for (const auto& [opts, says] : refused) {
    const std::string out = dir_.path("refused.data");
    auto r = run(perfkit_bin() + " record -q " + opts + " -o " + sh(out) + " -- true");
    EXPECT_NE(r.status, 0) << opts;
    EXPECT_NE(r.err.find(says), std::string::npos) << opts << ": " << r.err;
    EXPECT_NE(access(out.c_str(), F_OK), 0) << opts;
  }
  auto pipe = run(perfkit_bin() + " record --threads -o - -- true > /dev/null");
  EXPECT_NE(pipe.err.find("Parallel trace streaming is not available in pipe mode."),
            std::string::npos)
      << pipe.err;
}

TEST_F(RecordCliTest, ExistingProcess) {
  pid_t pid = fork();
  if (pid == 0) {
    execl(loop().c_str(), "cpuloop", "100000", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  record_and_check("pid.data", "-p " + std::to_string(pid) + " --duration 1");
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  auto kinds = record_kinds_until_init(dir_.path("pid.data"));
  ASSERT_GE(kinds.size(), 7u);
  EXPECT_EQ(kinds[4], "COMM");
  EXPECT_TRUE(kinds[5].starts_with("MMAP2")) << kinds[5];
  auto r = run("perf report --stdio -i " + sh(dir_.path("pid.data")) + " --sort comm 2>/dev/null");
  EXPECT_NE(r.out.find("cpuloop"), std::string::npos);
}

TEST_F(RecordCliTest, EventGroup) {
  record_and_check("group.data", "-e '{cpu-clock,task-clock}' -- " + loop() + " 100");
  auto header = run("perf report --header-only -I -i " + sh(dir_.path("group.data")) + " 2>&1");
  EXPECT_NE(header.out.find("# group: {cpu-clock,task-clock}"), std::string::npos) << header.out;
}

TEST_F(RecordCliTest, TracepointSystemWide) {
  record_and_check("tp.data", "-e sched:sched_switch -a -- sleep 0.5", false, "comm");
  // The trace formats travel in TRACING_DATA: perf script prints the fields.
  auto r = run("perf script -i " + sh(dir_.path("tp.data")) + " 2>&1 | head -5");
  EXPECT_NE(r.out.find("sched:sched_switch: prev_comm="), std::string::npos) << r.out;
}

TEST_F(RecordCliTest, EveryPageFault) {
  record_and_check("faults.data", "-e page-faults -c 1 -- " + loop() + " 5");
  auto r = run("perf evlist -v -i " + sh(dir_.path("faults.data")));
  EXPECT_NE(r.out.find("sample_period, sample_freq }: 1,"), std::string::npos) << r.out;
}

TEST_F(RecordCliTest, WriteBreakpointCountsEveryWrite) {
  PK_SKIP_WITHOUT_BREAKPOINTS();
  const std::string exe = watched_workload();
  const std::uint64_t addr = symbol_address(exe, "watched_counter");
  ASSERT_NE(addr, 0u) << "nm found no watched_counter in " << exe;
  const std::string ev = fmt::format("mem:{:#x}:w", addr);
  auto err = record_and_check("bp.data", "-e " + ev + " -- " + exe + " 1000");
  // Each of the 1000 writes is a sample (the loader's own writes come on top),
  // exactly as many as perf records.
  const auto ours = parse_closing(err).samples;
  EXPECT_GE(ours, 1000u) << err;
  EXPECT_LT(ours, 1010u) << err;
  auto r = run("perf record -q -e " + ev + " -o " + sh(dir_.path("perf-bp.data")) + " -- " + exe +
               " 1000 2>&1");
  EXPECT_EQ(perf_sample_count(dir_.path("perf-bp.data")), static_cast<long>(ours)) << r.out;
  EXPECT_EQ(evlist(dir_.path("bp.data")), evlist(dir_.path("perf-bp.data")));
}

TEST_F(RecordCliTest, PipeOutput) {
  record_and_check("out.pipe", "-g -- " + loop() + " 50", /*pipe=*/true);
  auto kinds = run("head -c 16 " + sh(dir_.path("out.pipe")) + " | od -An -c | head -1");
  EXPECT_NE(kinds.out.find("P   E   R   F   I   L   E   2"), std::string::npos) << kinds.out;
}

TEST_F(RecordCliTest, Compressed) {
  auto err = record_and_check("z.data", "-z -g -- " + loop() + " 100");
  EXPECT_NE(err.find(", compressed (original "), std::string::npos) << err;
  auto header = run("perf report --header-only -I -i " + sh(dir_.path("z.data")) + " 2>&1");
  EXPECT_NE(header.out.find("# compressed : Zstd, level = 1, ratio = "), std::string::npos)
      << header.out;
}

TEST_F(RecordCliTest, BuildIdsForEveryDsoWithSamples) {
  record_and_check("ids.data", "-g -- " + loop() + " 50");
  const std::string f = sh(dir_.path("ids.data"));
  auto dsos = run("perf report --stdio --no-children --sort dso -g none -i " + f +
                  " 2>/dev/null | awk '/^ *[0-9.]+%/ {print $2}'");  // (not perf's tip line)
  auto ids = run("perf buildid-list -i " + f + " 2>/dev/null");
  std::istringstream in(dsos.out);
  std::string dso;
  int checked = 0;
  while (in >> dso) {
    if (dso == "[unknown]") continue;
    EXPECT_NE(ids.out.find(dso), std::string::npos) << dso << " has samples but no build-id:\n"
                                                    << ids.out;
    ++checked;
  }
  EXPECT_GT(checked, 0);
  // --buildid-all lists every mapped DSO, libc included.
  record_and_check("all.data", "--buildid-all -- " + loop() + " 10");
  auto all = run("perf buildid-list -i " + sh(dir_.path("all.data")));
  EXPECT_NE(all.out.find("libc.so"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("[kernel.kallsyms]"), std::string::npos) << all.out;
}

TEST_F(RecordCliTest, BuildIdsInMmapEvents) {
  record_and_check("mmapid.data", "--buildid-mmap -- " + loop() + " 10");
  auto r =
      run("perf script -D -i " + sh(dir_.path("mmapid.data")) + " 2>/dev/null | grep -m2 MMAP2");
  // perf prints the build-id in place of dev/inode: "@ 0x1000 <hex>]".
  EXPECT_NE(r.out.find(" <"), std::string::npos) << r.out;
}

TEST_F(RecordCliTest, SwitchNamespaceAndCgroupEvents) {
  record_and_check("sb.data", "--switch-events --namespaces --all-cgroups -- " + loop() + " 20");
  auto r = run("perf report --stats -i " + sh(dir_.path("sb.data")) + " 2>/dev/null");
  EXPECT_NE(r.out.find("SWITCH events"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NAMESPACES events"), std::string::npos) << r.out;
}

// --filter and --exclude-perf apply to the tracepoint given just before
// them, not to the last event (with -a, the tracking dummy): the kernel then
// keeps only what the filter passes, as perf's recording of the same does.
TEST_F(RecordCliTest, FilterAppliesToTheEventBeforeIt) {
  const std::string out = dir_.path("filter.data");
  // The shell's pid is perfkit's once it execs: what --exclude-perf leaves out.
  auto r = run("sh -c 'echo $$; exec " + perfkit_bin() + " record -q -o " + sh(out) +
               " -e sched:sched_switch --filter \"prev_pid != 0\" --exclude-perf"
               " -e sched:sched_wakeup --filter \"prio < 200\" -a -- sleep 0.3'");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string recorder = r.out.substr(0, r.out.find('\n'));
  ASSERT_FALSE(recorder.empty());
  auto script = run(perfkit_bin() + " script -i " + sh(out) + " -F comm,pid,event,trace");
  ASSERT_EQ(script.status, 0) << script.err;
  int switches = 0, wakeups = 0;
  std::istringstream in(script.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string comm, pid;
    fields >> comm >> pid;
    if (line.find("sched:sched_switch:") != std::string::npos) {
      ++switches;
      // Both filters, joined: no idle task switched out, and nothing the
      // recording perfkit issued (it sleeps, so it would switch out; other
      // perfkits may run beside it).
      EXPECT_EQ(line.find("prev_pid=0 "), std::string::npos) << line;
      EXPECT_NE(pid, recorder) << line;
    }
    if (line.find("sched:sched_wakeup:") != std::string::npos) ++wakeups;
  }
  EXPECT_GT(switches, 0) << script.out;
  EXPECT_GT(wakeups, 0) << script.out;
}

// Where perf refuses --filter or --exclude-perf, perfkit refuses with perf's
// first line and status.
TEST_F(RecordCliTest, MisplacedFiltersRefusedAsPerf) {
  int compared = 0;
  for (const char* args :
       {"--filter 'prev_pid != 0' -e sched:sched_switch", "-e cpu-clock --filter 'prev_pid != 0'",
        "--exclude-perf -e sched:sched_switch", "-e cpu-clock --exclude-perf"}) {
    const std::string tail = std::string(" ") + args + " -- true";
    auto ours = run(perfkit_bin() + " record -o " + sh(dir_.path("x.data")) + tail);
    auto theirs = run("perf record -o " + sh(dir_.path("y.data")) + tail);
    EXPECT_EQ(ours.status, theirs.status) << args << "\n" << theirs.err;
    EXPECT_EQ(ours.err.substr(0, ours.err.find('\n')), theirs.err.substr(0, theirs.err.find('\n')))
        << args;
    ++compared;
  }
  EXPECT_EQ(compared, 4);
}

// --timestamp-filename: the file renamed with the time it ended (perf's
// 16 digits) and named so in a "Dump" line; --realtime: the recorder at
// that priority, its workload not; perf's accepted tuning options.
TEST_F(RecordCliTest, TimestampFilenameRealtimeAndTuningOptions) {
  const std::string out = dir_.path("ts.data");
  auto r = run(perfkit_bin() + " record -o " + sh(out) + " --timestamp-filename -e task-clock -- " +
               loop() + " 20");
  ASSERT_EQ(r.status, 0) << r.err;
  static const std::regex dump(R"(\[ perfkit record: Dump (.*ts\.data\.[0-9]{16}) \])");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, dump)) << r.err;
  EXPECT_NE(r.err.find("ts.data.<timestamp> ("), std::string::npos) << r.err;
  EXPECT_EQ(::access(out.c_str(), F_OK), -1);
  EXPECT_EQ(perf_report_errors(m[1].str()), "");
  auto rt = run(perfkit_bin() + " record -q -o " + sh(dir_.path("rt.data")) +
                " --realtime 5 -e task-clock -- chrt -p 0");
  ASSERT_EQ(rt.status, 0) << rt.err;
  EXPECT_NE(rt.out.find("SCHED_OTHER"), std::string::npos) << rt.out;
  record_and_check("tuned.data",
                   "--affinity=cpu --aio=2 --proc-map-timeout 100 --num-thread-synthesize 2 "
                   "--timestamp-boundary -e task-clock -- " +
                       loop() + " 20");
}

// --synth and --tail-synthesize: the side-band records perf writes, of the
// same types in the same file order (samples and rounds aside), for a
// workload; the files read by perf and perfkit alike.
TEST_F(RecordCliTest, SynthAndTailSynthesizeAsPerf) {
  // The record types of a file in file order (perf -D prints them in its
  // delivery order, each with its offset), without samples and rounds.
  auto types = [](const std::string& file) {
    auto d = run("perf report -D -i " + sh(file) + " 2>/dev/null");
    static const std::regex event(R"(^0x([0-9a-f]+)@\S+ \[0x[0-9a-f]+\]: event: ([0-9]+)$)");
    std::istringstream in(d.out);
    std::string line, seq;
    std::map<unsigned long, std::string> by_offset;
    for (std::smatch m; std::getline(in, line);)
      if (std::regex_match(line, m, event) && m[2] != "9" && m[2] != "68")
        by_offset[std::stoul(m[1].str(), nullptr, 16)] = m[2].str();
    for (const auto& [offset, type] : by_offset) seq += type + " ";
    return seq;
  };
  int compared = 0;
  for (const char* args : {"--synth=no", "--synth=task", "--synth=cgroup,mmap", "--tail-synthesize",
                           "--tail-synthesize --synth=no"}) {
    const std::string theirs = dir_.path("perf.data"), ours = dir_.path("perfkit.data");
    const std::string rest = std::string(" -q -e task-clock ") + args + " -- " + loop() + " 20";
    ASSERT_EQ(run("perf record -o " + sh(theirs) + rest + " >/dev/null").status, 0) << args;
    auto r = run(perfkit_bin() + " record -o " + sh(ours) + rest);
    ASSERT_EQ(r.status, 0) << args << ": " << r.err;
    const std::string want = types(theirs);
    EXPECT_NE(want.find("3 "), std::string::npos) << args << ": " << want;
    // An EXIT's place among the records of the other cpu's buffer is the
    // scheduler's: the same order without them, and as many of them.
    auto without_exits = [](std::string seq) {
      int exits = 0;
      for (std::size_t at; (at = (" " + seq).find(" 4 ")) != std::string::npos; ++exits)
        seq.erase(at, 2);
      return seq + "| exits " + std::to_string(exits);
    };
    EXPECT_EQ(without_exits(types(ours)), without_exits(want)) << args << "\n" << types(ours);
    EXPECT_EQ(perf_report_errors(ours), "") << args;
    // What perf script shows of the side-band (names, not addresses).
    auto side = [](const std::string& file) {
      auto o = run("perf script -F comm,event --show-task-events -i " + sh(file) +
                   " 2>&1 | grep PERF_RECORD | sed 's/[:(].*//' | sort | uniq -c");
      return o.out;
    };
    EXPECT_EQ(side(ours), side(theirs)) << args;
    ++compared;
  }
  EXPECT_EQ(compared, 5);
  auto bad = run(perfkit_bin() + " record --synth=bogus -o " + sh(dir_.path("x.data")) + " true");
  EXPECT_EQ(bad.status, 129);
  EXPECT_NE(bad.err.find("Invalid synth option: bogus"), std::string::npos) << bad.err;
}

// --switch-output=1s over a 2.5 s workload: a file each second, renamed
// FILE.TIMESTAMP with perf's lines, each one readable by perf with its own
// side-band (the workload's symbols resolve in every file); with
// --switch-max-files=2 two files are left. Sizes and signals switch too.
TEST_F(RecordCliTest, SwitchOutputAsPerf) {
  const std::string out = dir_.path("sw.data");
  // Some 4 s of work, for at least three files.
  auto r = run(perfkit_bin() + " record --switch-output=1s --switch-max-files=2 -e task-clock -o " +
               sh(out) + " -- " + loop() + " 3500");
  ASSERT_EQ(r.status, 0) << r.err;
  static const std::regex dump(R"(\[ perfkit record: Dump (.*sw\.data\.[0-9]{16}) \])");
  std::vector<std::string> dumped;
  for (std::sregex_iterator it(r.err.begin(), r.err.end(), dump), end; it != end; ++it)
    dumped.push_back((*it)[1].str());
  ASSERT_GE(dumped.size(), 3u) << r.err;
  EXPECT_NE(r.err.find("[ perfkit record: dump data: Woken up "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Captured and wrote "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sw.data.<timestamp> ]"), std::string::npos) << r.err;
  EXPECT_EQ(::access(out.c_str(), F_OK), -1) << "the last file was not renamed";
  for (std::size_t i = 0; i < dumped.size(); ++i) {
    const bool kept = i + 2 >= dumped.size();
    EXPECT_EQ(::access(dumped[i].c_str(), F_OK) == 0, kept) << dumped[i];
    if (!kept) continue;
    EXPECT_EQ(perf_report_errors(dumped[i]), "") << dumped[i];
    // The workload's maps are synthesized again at each switch; the last
    // file may begin as the workload exits (its maps gone), so symbols are
    // checked in the files before it.
    if (i + 1 == dumped.size()) continue;
    auto rep = run("perf report --stdio --sort sym -i " + sh(dumped[i]) + " 2>/dev/null");
    EXPECT_NE(rep.out.find("[.] spin"), std::string::npos) << dumped[i] << "\n" << rep.out;
  }
  // A size: perf's warning, and a file per 8K of data at least (a small
  // buffer wakes the recorder often enough under any load).
  auto z = run(perfkit_bin() + " record --switch-output=8K -m 8 -e task-clock -o " +
               sh(dir_.path("size.data")) + " -- " + loop() + " 600");
  ASSERT_EQ(z.status, 0) << z.err;
  EXPECT_NE(z.err.find("WARNING: switch-output data size lower than wakeup kernel buffer size ("),
            std::string::npos)
      << z.err;
  EXPECT_NE(z.err.find("[ perfkit record: dump data: Woken up"), std::string::npos) << z.err;
  // perf's refusal of a value that is neither.
  auto bad =
      run(perfkit_bin() + " record --switch-output=5x -o " + sh(dir_.path("x.data")) + " true");
  EXPECT_EQ(bad.status, 234);
  EXPECT_NE(bad.err.find("--switch-output[=<signal or size[BKMG] or time[smhd]>]"),
            std::string::npos)
      << bad.err;
  auto perf_bad = run("perf record --switch-output=5x -o " + sh(dir_.path("y.data")) + " true");
  EXPECT_EQ(perf_bad.status, bad.status);
}

// --switch-output-event: an event that is not recorded but switches the
// output file each time it fires (perf's side-band thread; --switch-output=
// signal implied), opened on every cpu whatever the target. A workload that
// calls syncfs twice between runs of cpuloop: perf and perfkit each leave
// three files, whose comms say where each call cut; perfkit refuses an
// event that does not exist and a pipe.
TEST_F(RecordCliTest, SwitchOutputEventAsPerf) {
  // syncfs(2), which `sync -f` makes and little else does (a sleep would
  // switch on every other test's sleeps too: the event watches every cpu)
  const std::string sync = "sync -f . && sleep 0.1; ";
  const std::string work =
      " -e task-clock --switch-output-event syscalls:sys_enter_syncfs -- sh -c '" + loop() +
      " 30; " + sync + loop() + " 30; " + sync + loop() + " 30' >/dev/null";
  auto files = [&](const std::string& tool, const std::string& name) {
    const std::string sub = dir_.path(name);
    ::mkdir(sub.c_str(), 0755);
    auto r = run("cd " + sh(sub) + " && " + tool + " record -o sw.data" + work);
    EXPECT_EQ(r.status, 0) << tool << ": " << r.err;
    std::vector<std::string> comms;
    auto ls = run("ls " + sh(sub));
    std::istringstream in(ls.out);
    for (std::string f; std::getline(in, f);) {
      auto rep = run("perf report --stdio --sort comm -i " + sh(sub + "/" + f) + " 2>/dev/null");
      comms.push_back(rep.out.find("cpuloop") != std::string::npos ? "cpuloop" : "none");
    }
    return comms;
  };
  const auto theirs = files("perf", "theirs"), ours = files(perfkit_bin(), "ours");
  ASSERT_EQ(theirs.size(), 3u);
  EXPECT_EQ(ours, theirs);
  for (const char* bad : {" -e task-clock --switch-output-event no:such_event -- true",
                          " -o - --switch-output-event syscalls:sys_enter_syncfs true"}) {
    auto r = run(perfkit_bin() + " record" + bad + " >/dev/null");
    EXPECT_NE(r.status, 0) << bad;  // perf: 129 and 234 (after writing "-.TIMESTAMP")
    EXPECT_NE(r.err, "") << bad;
  }
}

// -u USER: the user's processes as recording starts (a cpuloop run as
// nobody), with the side-band perf synthesizes for them and the workload
// that only sets how long; -p PID with a workload the same way; perf's words
// for users that do not exist and its overriding warnings.
// --vmlinux: the kernel's BUILD_ID entry under that name, with the running
// kernel's id, as perf's; a file that cannot be read: perf's line (not
// with -q) and its status 234.
TEST_F(RecordCliTest, VmlinuxNamesTheKernelAsPerf) {
  auto kernel = [](const std::string& data) {
    return run("perf buildid-list -i " + sh(data) + " | grep ' /bin/ls$'").out;
  };
  const std::string rest = " -q --buildid-all --vmlinux /bin/ls -- " + loop() + " 10 >/dev/null";
  const std::string theirs = dir_.path("perf.data"), ours = dir_.path("perfkit.data");
  ASSERT_EQ(run("perf record -o " + sh(theirs) + rest).status, 0);
  ASSERT_EQ(run(perfkit_bin() + " record -o " + sh(ours) + rest).status, 0);
  EXPECT_NE(kernel(theirs), "");
  EXPECT_EQ(kernel(ours), kernel(theirs));
  for (const char* q : {"", "-q "}) {
    const std::string bad = std::string(" record ") + q + "--vmlinux /nonexistent -o " +
                            sh(dir_.path("x.data")) + " -- " + loop() + " 10";
    auto p = run("perf" + bad);
    auto k = run(perfkit_bin() + bad);
    EXPECT_EQ(k.status, p.status) << q;
    EXPECT_EQ(k.status, 234) << q;
    EXPECT_EQ(k.err, p.err) << q;
  }
}

TEST_F(RecordCliTest, UidAndPidWithAWorkloadAsPerf) {
  if (run("command -v setpriv").status != 0) GTEST_SKIP() << "no setpriv";
  // A copy of the workload nobody can reach, wherever the build tree is.
  TempDir reach;
  chmod(reach.dir().c_str(), 0755);
  const std::string work = reach.path("cpuloop");
  ASSERT_EQ(run("cp " + sh(loop()) + " " + sh(work) + " && chmod 755 " + sh(work)).status, 0);
  auto busy = run("setpriv --reuid=65534 --regid=65534 --clear-groups -- " + work +
                  " 30000 >/dev/null 2>&1 & echo $!");
  const std::string pid = busy.out.substr(0, busy.out.find('\n'));
  ASSERT_FALSE(pid.empty());
  struct Kill {
    std::string pid;
    ~Kill() { run("kill " + pid + " 2>/dev/null"); }
  } kill{pid};
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto side = [&](const std::string& file) {
    return run("perf script -i " + sh(file) +
               " --show-task-events --show-mmap-events 2>/dev/null | grep PERF_RECORD | "
               "awk '{print $1, $NF}' | sed 's/:[0-9]*\\/[0-9]*$//' | sort | uniq -c")
        .out;
  };
  for (const std::string& target : std::vector<std::string>{"-u nobody", "-u 65534", "-p " + pid}) {
    const std::string theirs = dir_.path("perf.data"), ours = dir_.path("perfkit.data");
    ASSERT_EQ(run("perf record -q " + target + " -o " + sh(theirs) + " -- sleep 0.3").status, 0);
    auto r = run(perfkit_bin() + " record -q " + target + " -o " + sh(ours) + " -- sleep 0.3");
    ASSERT_EQ(r.status, 0) << target << ": " << r.err;
    EXPECT_EQ(side(ours), side(theirs)) << target;
    auto entries = [](const std::string& report) {
      std::string out;
      std::istringstream in(report);
      for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#') out += line + "\n";
      return out;
    };
    const std::string want = entries(sorted_report("perf", theirs, "comm"));
    EXPECT_NE(want.find("cpuloop"), std::string::npos) << target;
    EXPECT_EQ(entries(sorted_report("perf", ours, "comm")), want) << target;
    EXPECT_GT(count_samples(ours), 0) << target;
  }
  for (const char* args : {"-u nosuchuser", "-u 99999"}) {
    auto p = run("perf record " + std::string(args) + " -o " + sh(dir_.path("x.data")) + " true");
    auto k = run(perfkit_bin() + " record " + args + " -o " + sh(dir_.path("y.data")) + " true");
    EXPECT_NE(k.status, 0) << args;
    const std::string said = p.err.substr(p.err.find('\n') + 1);
    EXPECT_NE(k.err.find(said.substr(0, said.find('\n'))), std::string::npos)
        << args << ": " << k.err << " vs " << p.err;
  }
  auto w = run(perfkit_bin() + " record -q -u root -p 1 -o " + sh(dir_.path("w.data")) +
               " -- sleep 0.1");
  EXPECT_NE(w.err.find("Warning:\nPID/TID switch overriding UID"), std::string::npos) << w.err;
}

// --overwrite: write_backward buffers read when recording ends, the newest
// whole records that fit (with -m 4 as many samples as perf keeps), the
// side-band synthesized at the end (perf's implied --tail-synthesize).
// Recorder and workload stay on cpu 0: what another cpu's buffer keeps
// depends on when the scheduler moved the workload there.
TEST_F(RecordCliTest, OverwriteKeepsTheNewestAsPerf) {
  auto shape = [&](const std::string& tool) {
    const std::string out = dir_.path(tool == "perf" ? "perf.data" : "perfkit.data");
    auto r = run("taskset -c 0 " + tool + " record -q --overwrite -e cpu-clock -m 4 -o " + sh(out) +
                 " -- " + loop() + " 500");
    EXPECT_EQ(r.status, 0) << tool << ": " << r.err;
    EXPECT_NE(evlist(out).find("write_backward: 1"), std::string::npos) << tool;
    auto samples = run("perf script -F time -i " + sh(out) + " 2>/dev/null | wc -l").out;
    auto side = run("perf script --show-task-events --show-mmap-events -i " + sh(out) +
                    " 2>/dev/null | grep PERF_RECORD | awk '{print $1, $5}' | sed 's/:.*//'")
                    .out;
    EXPECT_EQ(perf_report_errors(out), "") << tool;
    return samples + side;
  };
  const std::string want = shape("perf");
  EXPECT_EQ(shape(perfkit_bin()), want);
}

}  // namespace
}  // namespace perfkit::test
