// Side-band synthesis on a fake /proc: the records perf would write for the
// same processes, checked field by field through the record module's
// parsers (the reader's view of them), and the user records perf writes.
#include "capture/synthesize.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <filesystem>
#include <fstream>

#include "abi/perf_event.h"
#include "record/records.h"
#include "support/test_support.h"

namespace perfkit::capture {
namespace {

using namespace perfkit::abi;

record::RecordView view(const std::vector<std::uint8_t>& b, std::size_t at = 0) {
  record::RecordView v = record::view_header(b.data() + at, false);
  v.bytes = Bytes(b.data() + at, v.size);
  return v;
}

// Collects what the synthesizer writes, record by record.
class Collect : public RecordSink {
 public:
  Status write(Bytes records) override {
    for (std::size_t at = 0; at + 8 <= records.size();) {
      std::uint16_t size = load<std::uint16_t>(records.data() + at + 6, false);
      recs.emplace_back(records.begin() + at, records.begin() + at + size);
      at += size;
    }
    return ok();
  }
  std::vector<std::vector<std::uint8_t>> recs;
};

class FakeProc {
 public:
  FakeProc() {
    file("kallsyms",
         "ffffffff81000000 T _stext\nffffffff81000000 T _text\nffffffff81000100 t foo\n"
         "ffffffff82000000 T _etext\n");
    file("modules", "kvm 1234567 0 - Live 0xffffffffc0400000\nzero 100 0 - Live 0x0\n");
    process(1, 1, 0, "init", true,
            "55d0a0000000-55d0a0001000 r--p 00000000 fe:00 100 /sbin/init\n"
            "55d0a0001000-55d0a0002000 r-xp 00001000 fe:00 100    /sbin/init\n"
            "7fff00000000-7fff00021000 rw-p 00000000 00:00 0      [stack]\n"
            "7fff10000000-7fff10002000 r-xp 00000000 00:00 0      [vdso]\n"
            "7fff20000000-7fff20001000 r-xs 00000000 00:05 77     \n");
    process(2, 2, 0, "kthreadd", false, "");
    process(10, 10, 1, "app", true, "400000-401000 r-xp 00000000 08:01 42 /usr/bin/app\n");
    process(10, 11, 1, "app-worker", true, "");
    // /proc/TID exists for every thread, though readdir shows only processes.
    file("11/task/11/status", "Name:\tapp-worker\nTgid:\t10\nPPid:\t1\nVmPeak:\t 1 kB\n");
  }
  SystemPaths paths() const {
    SystemPaths p;
    p.procfs = dir_.dir();
    p.sysfs = dir_.dir() + "/sys";
    return p;
  }
  void file(const std::string& rel, const std::string& text) {
    auto p = std::filesystem::path(dir_.dir()) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void process(int pid, int tid, int ppid, const std::string& name, bool user,
               const std::string& maps) {
    std::string base = std::to_string(pid) + "/task/" + std::to_string(tid) + "/";
    file(base + "status", "Name:\t" + name + "\nTgid:\t" + std::to_string(pid) + "\nPPid:\t" +
                              std::to_string(ppid) + "\n" + (user ? "VmPeak:\t 1000 kB\n" : ""));
    file(base + "maps", maps);
  }

 private:
  test::TempDir dir_;
};

TEST(SynthesizeTest, KernelMapFromKallsyms) {
  FakeProc proc;
  Collect out;
  SystemPaths paths = proc.paths();
  Synthesizer s(paths, SynthOptions{16}, out);
  ASSERT_TRUE(s.kernel_mmap());
  ASSERT_EQ(out.recs.size(), 1u);
  auto v = view(out.recs[0]);
  EXPECT_EQ(v.type, kRecordMmap);
  EXPECT_EQ(v.misc, kMiscKernel);
  auto m = record::parse_mmap(v);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pid, 0xffffffffu);
  EXPECT_EQ(m->tid, 0u);
  EXPECT_EQ(m->start, 0xffffffff81000000u);
  EXPECT_EQ(m->len, 0x1000000u);
  EXPECT_EQ(m->pgoff, 0xffffffff81000000u);
  EXPECT_EQ(m->filename, "[kernel.kallsyms]_text");
  // 8 + 32 + "[kernel.kallsyms]_text" padded to 24 + a 16-byte zero trailer.
  EXPECT_EQ(v.size, 8 + 32 + 24 + 16);
  // Hidden addresses (kptr_restrict) are an error the caller can report.
  proc.file("kallsyms", "0000000000000000 T _text\n");
  Collect none;
  Synthesizer hidden(paths, SynthOptions{}, none);
  auto st = hidden.kernel_mmap();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("kptr_restrict"), std::string::npos);
}

TEST(SynthesizeTest, ModulesWithTheirAddressAndSize) {
  FakeProc proc;
  Collect out;
  SystemPaths paths = proc.paths();
  Synthesizer s(paths, SynthOptions{}, out);
  ASSERT_TRUE(s.modules());
  ASSERT_EQ(out.recs.size(), 1u);  // zero's address 0 is skipped
  auto m = record::parse_mmap(view(out.recs[0]));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->start, 0xffffffffc0400000u);
  EXPECT_EQ(m->len, 1234567u);
  EXPECT_EQ(m->filename, "[kvm]");
}

TEST(SynthesizeTest, SystemWideForkCommAndExecutableMaps) {
  FakeProc proc;
  Collect out;
  SystemPaths paths = proc.paths();
  Synthesizer s(paths, SynthOptions{8}, out);
  ASSERT_TRUE(s.all_threads());
  std::vector<std::string> kinds;
  for (const auto& r : out.recs) {
    auto v = view(r);
    kinds.push_back(v.type == kRecordFork ? "FORK" : v.type == kRecordComm ? "COMM" : "MMAP2");
  }
  // init: FORK COMM + its 3 exec maps; kthreadd (a kernel thread) no maps;
  // app's two threads, maps after the leader only.
  std::vector<std::string> want = {"FORK", "COMM", "MMAP2", "MMAP2", "MMAP2", "FORK",
                                   "COMM", "FORK", "COMM",  "MMAP2", "FORK",  "COMM"};
  EXPECT_EQ(kinds, want);
  auto fork = record::parse_task(view(out.recs[0]));
  ASSERT_TRUE(fork);
  EXPECT_EQ(view(out.recs[0]).misc, 1u << 13);
  EXPECT_EQ(fork->pid, 1u);
  EXPECT_EQ(fork->ppid, 0u);
  auto mm = record::parse_mmap2(view(out.recs[2]));
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->start, 0x55d0a0001000u);
  EXPECT_EQ(mm->len, 0x1000u);
  EXPECT_EQ(mm->pgoff, 0x1000u);
  EXPECT_EQ(mm->maj, 0xfeu);
  EXPECT_EQ(mm->ino, 100u);
  EXPECT_EQ(mm->prot, static_cast<std::uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(mm->flags, static_cast<std::uint32_t>(MAP_PRIVATE));
  EXPECT_EQ(mm->filename, "/sbin/init");
  EXPECT_EQ(record::parse_mmap2(view(out.recs[3]))->filename, "[vdso]");
  // An anonymous executable shared map is named //anon.
  auto anon = record::parse_mmap2(view(out.recs[4]));
  EXPECT_EQ(anon->filename, "//anon");
  EXPECT_EQ(anon->flags, static_cast<std::uint32_t>(MAP_SHARED));
  // The second thread's parent is its process.
  auto worker = record::parse_task(view(out.recs[10]));
  EXPECT_EQ(worker->pid, 10u);
  EXPECT_EQ(worker->tid, 11u);
  EXPECT_EQ(worker->ppid, 10u);
  auto comm = record::parse_comm(view(out.recs[11]));
  EXPECT_EQ(comm->comm, "app-worker");
}

// A process that exits while it is read: its /proc files fail to read
// (ESRCH), here as a directory does (EISDIR). Its maps are none, a thread
// whose status fails is left out, and the others are written.
TEST(SynthesizeTest, FilesThatFailToReadAreAProcessGone) {
  FakeProc proc;
  std::filesystem::create_directories(proc.paths().procfs + "/20/task/20/maps");
  proc.file("20/task/20/status", "Name:\tgone\nTgid:\t20\nPPid:\t1\nVmPeak:\t 1 kB\n");
  std::filesystem::create_directories(proc.paths().procfs + "/20/task/21/status");
  proc.file("20/task/21/maps", "");
  Collect out;
  SystemPaths paths = proc.paths();
  Synthesizer s(paths, SynthOptions{8}, out);
  ASSERT_TRUE(s.all_threads());
  std::vector<std::string> comms;
  std::size_t maps_of_20 = 0;
  for (const auto& r : out.recs) {
    auto v = view(r);
    if (v.type == kRecordComm) comms.emplace_back(record::parse_comm(v)->comm);
    if (v.type == kRecordMmap2 && record::parse_mmap2(v)->pid == 20) ++maps_of_20;
  }
  EXPECT_EQ(comms, (std::vector<std::string>{"init", "kthreadd", "app", "app-worker", "gone"}));
  EXPECT_EQ(maps_of_20, 0u);
}

TEST(SynthesizeTest, DataMapsWithDashD) {
  FakeProc proc;
  Collect out;
  SystemPaths paths = proc.paths();
  SynthOptions o;
  o.mmap_data = true;
  Synthesizer s(paths, o, out);
  ASSERT_TRUE(s.mmaps(1, 1));
  ASSERT_EQ(out.recs.size(), 5u);  // the r--p and rw-p maps too
  EXPECT_EQ(view(out.recs[0]).misc, kMiscUser | kMiscMmapData);
  EXPECT_EQ(view(out.recs[1]).misc, kMiscUser);
}

TEST(SynthesizeTest, BuildIdInMmap2) {
  FakeProc proc;
  Collect out;
  SystemPaths paths = proc.paths();
  SynthOptions o;
  o.build_id = [](const std::string& path) -> std::optional<std::vector<std::uint8_t>> {
    if (path != "/usr/bin/app") return std::nullopt;
    return std::vector<std::uint8_t>{0xde, 0xad, 0xbe, 0xef};
  };
  Synthesizer s(paths, o, out);
  ASSERT_TRUE(s.mmaps(10, 10));
  auto v = view(out.recs[0]);
  EXPECT_EQ(v.misc, kMiscUser | kMiscMmapBuildId);
  auto m = record::parse_mmap2(v);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->has_build_id);
  EXPECT_EQ(m->build_id_size, 4u);
  EXPECT_EQ(m->build_id[0], 0xde);
  EXPECT_EQ(m->filename, "/usr/bin/app");
}

TEST(SynthesizeTest, ThreadMapSynthesisAddsTheLeader) {
  FakeProc proc;
  Collect out;
  SystemPaths paths = proc.paths();
  Synthesizer s(paths, SynthOptions{}, out);
  ASSERT_TRUE(s.thread_map_threads({11}));
  // COMM of 11, then the missing leader 10: COMM and its maps.
  ASSERT_EQ(out.recs.size(), 3u);
  EXPECT_EQ(record::parse_comm(view(out.recs[0]))->tid, 11u);
  EXPECT_EQ(record::parse_comm(view(out.recs[1]))->tid, 10u);
  EXPECT_EQ(view(out.recs[2]).type, kRecordMmap2);
  auto gone = s.comm(999);
  EXPECT_FALSE(gone);
}

TEST(SynthesizeTest, ProcMapsLines) {
  ProcMap m;
  ASSERT_TRUE(parse_proc_map_line(
      "7f4f47f39000-7f4f47f5f000 r-xp 00001000 fe:00 332383                     "
      "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
      m));
  EXPECT_EQ(m.start, 0x7f4f47f39000u);
  EXPECT_EQ(m.end, 0x7f4f47f5f000u);
  EXPECT_EQ(m.filename, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  ASSERT_TRUE(parse_proc_map_line("00400000-00401000 r-xp 00000000 08:01 7 /a b (deleted)", m));
  EXPECT_EQ(m.filename, "/a b (deleted)");
  EXPECT_FALSE(parse_proc_map_line("garbage", m));
  EXPECT_FALSE(parse_proc_map_line("zz-10 r-xp 0 0:0 0", m));
}

TEST(SynthesizeTest, CpuMapInPerfsSmallestEncoding) {
  auto decode = [](const std::vector<std::uint8_t>& rec) {
    std::vector<int> cpus;
    auto m = record::parse_cpu_map(view(rec));
    EXPECT_TRUE(m);
    if (m) m->for_each([&](int c) { cpus.push_back(c); });
    return std::make_pair(static_cast<std::uint16_t>(m ? m->type : 99), cpus);
  };
  auto range = cpu_map_record({0, 1});
  EXPECT_EQ(range.size(), 16u);  // as perf writes "0-1"
  EXPECT_EQ(decode(range), std::make_pair(std::uint16_t{2}, std::vector<int>{0, 1}));
  auto any = cpu_map_record({-1});
  EXPECT_EQ(decode(any).first, 0u);
  EXPECT_EQ(decode(any).second, std::vector<int>{-1});
  auto list = cpu_map_record({0, 2});
  EXPECT_EQ(decode(list), std::make_pair(std::uint16_t{0}, std::vector<int>{0, 2}));
  std::vector<int> sparse;
  for (int c = 0; c < 64; c += 2) sparse.push_back(c);
  auto mask = cpu_map_record(sparse);
  EXPECT_EQ(decode(mask), std::make_pair(std::uint16_t{1}, sparse));
  EXPECT_EQ(mask.size() % 8, 0u);
}

TEST(SynthesizeTest, PerfUserRecords) {
  auto tm = thread_map_record({1234, -1}, {"app", ""});
  auto t = record::parse_thread_map(view(tm));
  ASSERT_TRUE(t);
  ASSERT_EQ(t->nr, 2u);
  EXPECT_EQ(t->pid(0), 1234u);
  EXPECT_EQ(t->comm(0), "app");
  EXPECT_EQ(t->pid(1), ~0ULL);

  std::vector<IdIndexEntry> entries(3000);
  for (std::size_t i = 0; i < entries.size(); ++i) entries[i] = {100 + i, i % 2, i % 2, 7};
  auto idx = id_index_record(entries);
  // More than one record's worth: split as perf splits them.
  auto first = record::parse_id_index(view(idx));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->nr, (0xffffu - 16) / 32);
  EXPECT_EQ(first->at(1).id, 101u);
  auto second = record::parse_id_index(view(idx, view(idx).size));
  ASSERT_TRUE(second);
  EXPECT_EQ(first->nr + second->nr, 3000u);

  TimeConversion tc{10, 12345, 999, 5, 0xffff, true, false};
  auto conv = record::parse_time_conv(view(time_conv_record(tc)));
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->time_shift, 10u);
  EXPECT_EQ(conv->time_mult, 12345u);
  EXPECT_EQ(conv->time_zero, 999u);
  EXPECT_TRUE(conv->has_cycles);
  EXPECT_EQ(conv->cap_user_time_zero, 1);

  const auto name_rec = event_update_name_record(42, "cpu-clock:ppp");  // name points into it
  auto name = record::parse_event_update(view(name_rec));
  ASSERT_TRUE(name);
  EXPECT_EQ(name->type, 2u);
  EXPECT_EQ(name->id, 42u);
  EXPECT_EQ(name->text, "cpu-clock:ppp");
  auto scale = record::parse_event_update(view(event_update_scale_record(7, 0.5)));
  EXPECT_DOUBLE_EQ(scale->scale, 0.5);
  EXPECT_EQ(header_only_record(kRecordFinishedInit).size(), 8u);
}

}  // namespace
}  // namespace perfkit::capture
