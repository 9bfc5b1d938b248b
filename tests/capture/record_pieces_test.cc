// The recorder's pure parts: the event configuration rules (the full table
// against perf is in tests/cli/record_attr_test.cc), option parsers, the DSO
// hit tracker, the COMPRESSED record stream, TRACING_DATA, and the machine
// description read from a fake sysfs.
#include <gtest/gtest.h>

#include "abi/perf_event.h"
#include "capture/compressor.h"
#include "capture/dso_hits.h"
#include "capture/record_config.h"
#include "capture/record_options.h"
#include "capture/system_info.h"
#include "capture/tracing_data.h"
#include "fake_system.h"
#include "perfdata/decompressor.h"
#include "record/encode.h"

namespace perfkit::capture {
namespace {

using namespace perfkit::abi;

RecordConfig configure(const std::string& events, RecordOptions o = {}) {
  fake::FakeSystem fs;
  auto pmus = PmuCatalog::load(fs.paths());
  auto tfs = Tracefs::at(fs.root() + "/kernel/tracing");
  EventList list;
  if (!events.empty()) {
    EXPECT_TRUE(parse_events(events, EventSources{&pmus, &tfs}, list));
  }
  if (o.workload.empty() && o.target.none()) o.workload = {"true"};
  auto c = configure_record(list, o, RecordLimits{100000});
  EXPECT_TRUE(c) << (c ? "" : c.error().message());
  return c ? *c : RecordConfig{};
}

TEST(RecordConfigTest, DefaultEventIsPreciseCycles) {
  auto c = configure("");
  ASSERT_EQ(c.events.size(), 1u);
  const auto& e = c.events[0];
  EXPECT_EQ(e.name, "cycles");
  EXPECT_EQ(e.attr.type, kTypeHardware);
  EXPECT_EQ(e.attr.precise_ip(), 3u);
  EXPECT_TRUE(e.attr.has(kAttrExcludeGuest));  // event_attr_init's
  EXPECT_EQ(e.attr.sample_type, kSampleIp | kSampleTid | kSampleTime | kSamplePeriod);
  EXPECT_EQ(e.attr.read_format, kFormatId | kFormatLost);
  EXPECT_TRUE(e.attr.has(kAttrEnableOnExec));
  EXPECT_TRUE(e.attr.has(kAttrMmap2));
  EXPECT_TRUE(e.attr.has(kAttrCommExec));
  EXPECT_EQ(e.attr.sample_period, 4000u);
  EXPECT_TRUE(e.attr.freq());
}

// perf keeps guests in its default event on AMD CPUs (IBS cannot leave
// them out), and only there.
TEST(RecordConfigTest, DefaultEventCountsGuestsOnAmd) {
  RecordOptions o;
  o.workload = {"true"};
  RecordLimits amd{100000};
  amd.amd = true;
  auto c = configure_record(EventList{}, o, amd);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->events[0].attr.has(kAttrExcludeGuest));
  EXPECT_EQ(c->events[0].attr.precise_ip(), 3u);
}

TEST(RecordConfigTest, SystemWideAddsAnImmediateTrackingDummy) {
  RecordOptions o;
  o.target.system_wide = true;
  auto c = configure("cpu-clock", o);
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_FALSE(c.events[0].tracking);
  EXPECT_FALSE(c.events[0].attr.has(kAttrMmap));
  EXPECT_EQ(c.events[1].name, "dummy:HG");
  EXPECT_TRUE(c.events[1].immediate);
  EXPECT_FALSE(c.events[1].attr.has(kAttrDisabled));
  EXPECT_EQ(c.events[1].attr.sample_period, 1u);
  // Different sample types: every event gets IDENTIFIER.
  for (const auto& e : c.events) {
    EXPECT_TRUE(e.attr.sample_type & kSampleIdentifier);
    EXPECT_TRUE(e.attr.sample_type & kSampleCpu);
  }
}

TEST(RecordConfigTest, TermsOverrideGlobalOptions) {
  RecordOptions o;
  o.user_freq = 50;
  auto c = configure("cpu-clock/period=100/", o);
  EXPECT_EQ(c.events[0].attr.sample_period, 100u);
  EXPECT_FALSE(c.events[0].attr.freq());
  EXPECT_FALSE(c.events[0].attr.sample_type & kSamplePeriod);
  o = {};
  o.call_graph.mode = CallGraphMode::kFp;
  auto dw = configure("cpu-clock/call-graph=dwarf,stack-size=4096/", o);
  EXPECT_TRUE(dw.events[0].attr.sample_type & kSampleStackUser);
  EXPECT_EQ(dw.events[0].attr.sample_stack_user, 4096u);
  EXPECT_EQ(dw.events[0].attr.sample_regs_user, 0xff0fffu);
  auto no = configure("cpu-clock/call-graph=no/", o);
  EXPECT_FALSE(no.events[0].attr.sample_type & kSampleCallchain);
}

TEST(RecordConfigTest, SampleReadGroupMembersFollowTheLeader) {
  auto c = configure("{faults:u,cs:k}:S");
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_TRUE(c.events[0].attr.read_format & kFormatGroup);
  EXPECT_FALSE(c.events[0].attr.has(kAttrInherit));
  EXPECT_EQ(c.events[1].attr.sample_period, 0u);
  EXPECT_EQ(c.events[1].attr.sample_type, c.events[0].attr.sample_type);
  EXPECT_FALSE(c.events[1].attr.has(kAttrDisabled));
}

TEST(RecordConfigTest, RatesAndTheirLimits) {
  RecordOptions o;
  o.workload = {"true"};
  o.user_freq = 200000;
  EventList none;
  auto c = configure_record(none, o, RecordLimits{100000});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->freq, 100000u);
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_NE(c->warnings[0].find("throttling from 200000 Hz to 100000 Hz"), std::string::npos);
  o.strict_freq = true;
  EXPECT_FALSE(configure_record(none, o, RecordLimits{100000}));
  o = {};
  o.workload = {"true"};
  o.freq_max = true;
  auto m = configure_record(none, o, RecordLimits{12345});
  EXPECT_EQ(m->freq, 12345u);
  EXPECT_EQ(m->infos[0], "info: Using a maximum frequency rate of 12345 Hz");
  o.user_period = 10;
  auto both = configure_record(none, o, RecordLimits{});
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().message(), "cannot set frequency and period at the same time");
}

TEST(RecordOptionsTest, Parsers) {
  EXPECT_EQ(parse_call_graph("dwarf,4000")->dump_size, 4000u);
  EXPECT_EQ(parse_call_graph("dwarf,4001")->dump_size, 4008u);
  EXPECT_EQ(parse_call_graph("fp")->mode, CallGraphMode::kFp);
  EXPECT_FALSE(parse_call_graph("fp,10"));
  EXPECT_FALSE(parse_call_graph("dwarf,100000"));
  EXPECT_EQ(*parse_clockid("CLOCK_MONOTONIC_RAW"), 4);
  EXPECT_EQ(*parse_clockid("boot"), 7);
  EXPECT_EQ(*parse_clockid("11"), 11);
  EXPECT_FALSE(parse_clockid("xyz"));
  EXPECT_EQ(*parse_regs("ax,bx,r15", false), 0x800003u);
  EXPECT_EQ(*parse_regs("", false), 0xff0fffu);
  EXPECT_EQ(*parse_regs("xmm1", true), 3ULL << 34);
  EXPECT_FALSE(parse_regs("xmm1", false));
  EXPECT_EQ(*parse_branch_filter("any_call,u"), kBranchAnyCall | kBranchUser);
  EXPECT_EQ(*parse_branch_filter("u,k"), static_cast<std::uint64_t>(kBranchAny));
  EXPECT_FALSE(parse_branch_filter("sideways"));
  EXPECT_EQ(*parse_mmap_pages("512K", 4096), 128u);
  EXPECT_EQ(*parse_mmap_pages("100", 4096), 128u);
  EXPECT_FALSE(parse_mmap_pages("0", 4096));
  EXPECT_EQ(*parse_size("64K"), 65536u);
  auto ctl = parse_control("fifo:/tmp/a,/tmp/b");
  EXPECT_EQ(ctl->ctl_fifo, "/tmp/a");
  EXPECT_EQ(ctl->ack_fifo, "/tmp/b");
  EXPECT_EQ(parse_control("fd:3,4")->ack_fd, 4);
  EXPECT_FALSE(parse_control("pipe:x"));
}

std::vector<std::uint8_t> rec(std::uint32_t type, std::uint16_t misc,
                              std::initializer_list<std::uint64_t> words,
                              std::string_view name = {}) {
  record::RecordBuilder b(type, misc);
  for (auto w : words) b.u64(w);
  if (!name.empty() || type == kRecordMmap) b.string(name, 8);
  return b.finish();
}

std::vector<std::uint8_t> mmap(std::uint32_t pid, bool kernel, std::uint64_t start,
                               std::uint64_t len, std::string_view file) {
  return rec(kRecordMmap, kernel ? kMiscKernel : kMiscUser,
             {pid | (std::uint64_t{pid} << 32), start, len, 0}, file);
}

std::vector<std::uint8_t> sample(std::uint32_t pid, bool kernel, std::uint64_t ip) {
  return rec(kRecordSample, kernel ? kMiscKernel : kMiscUser,
             {ip, pid | (std::uint64_t{pid} << 32)});
}

TEST(DsoHitsTest, SamplesMarkTheirMapsThroughForkAndExec) {
  DsoHits h(8);
  h.on_record(mmap(0xffffffff, true, 0xffffffff81000000, 0x1000000, "[kernel.kallsyms]_text"));
  h.on_record(mmap(10, false, 0x400000, 0x1000, "/bin/app"));
  h.on_record(mmap(10, false, 0x7f0000000000, 0x10000, "/lib/libc.so.6"));
  h.on_record(sample(10, false, 0x400010));
  h.on_record(sample(10, true, 0xffffffff81000100));
  // A child forked from 10 runs the parent's code before it execs.
  h.on_record(rec(kRecordFork, 0, {11 | (10ULL << 32), 11 | (10ULL << 32), 0}));
  h.on_record(sample(11, false, 0x7f0000000100));
  // After exec the old image is gone; a sample there resolves to nothing.
  h.on_record(rec(kRecordComm, kMiscCommExec, {11 | (11ULL << 32)}, "new"));
  h.on_record(mmap(11, false, 0x500000, 0x1000, "/bin/other"));
  h.on_record(sample(11, false, 0x400020));
  // A sample before its map (another cpu's buffer) resolves at the pass's end.
  h.on_record(sample(12, false, 0x600000));
  h.on_record(mmap(12, false, 0x600000, 0x1000, "/bin/late"));
  h.end_pass();
  std::map<std::string, bool> hit;
  for (const auto& d : h.dsos()) hit[d.filename] = d.hit;
  EXPECT_TRUE(hit["[kernel.kallsyms]"]);
  EXPECT_TRUE(hit["/bin/app"]);
  EXPECT_TRUE(hit["/lib/libc.so.6"]);
  EXPECT_FALSE(hit["/bin/other"]);
  EXPECT_TRUE(hit["/bin/late"]);
  EXPECT_EQ(h.unresolved(), 1u);  // the post-exec sample
  EXPECT_EQ(h.dsos().front().filename, "[kernel.kallsyms]");
  EXPECT_TRUE(h.dsos().front().kernel);
}

TEST(DsoHitsTest, NewMapsReplaceWhatTheyOverlap) {
  DsoHits h(16);  // IDENTIFIER first
  h.on_record(mmap(5, false, 0x1000, 0x3000, "/a"));
  h.on_record(mmap(5, false, 0x2000, 0x1000, "/b"));
  auto s = [&](std::uint64_t ip) {
    return rec(kRecordSample, kMiscUser, {77, ip, 5 | (5ULL << 32)});
  };
  h.on_record(s(0x2800));
  std::map<std::string, bool> hit;
  for (const auto& d : h.dsos()) hit[d.filename] = d.hit;
  EXPECT_TRUE(hit["/b"]);
  EXPECT_FALSE(hit["/a"]);
  h.on_record(s(0x3800));  // the tail of /a survives
  for (const auto& d : h.dsos()) hit[d.filename] = d.hit;
  EXPECT_TRUE(hit["/a"]);
}

TEST(CompressorTest, RecordsInflateBackThroughPerfdatasDecompressor) {
  // 300 KiB of records: more than four COMPRESSED records' worth.
  std::vector<std::uint8_t> data;
  for (std::uint64_t i = 0; data.size() < 300 * 1024; ++i)
    record::RecordBuilder(kRecordSample, kMiscUser).u64(i * 7919).u64(i).finish_into(data);
  auto z = RecordCompressor::create(3);
  ASSERT_TRUE(z);
  std::vector<std::uint8_t> out, all;
  const std::size_t half = data.size() / 2 + 3;  // a split mid-record, as a wrapped ring gives
  ASSERT_TRUE((*z)->compress(
      {Bytes(data.data(), half), Bytes(data.data() + half, data.size() - half)}, out));
  all = out;
  ASSERT_TRUE((*z)->compress({Bytes(data.data(), 64), {}}, out));
  all.insert(all.end(), out.begin(), out.end());
  EXPECT_EQ((*z)->bytes_in(), data.size() + 64);
  perfdata::Decompressor d;
  std::size_t at = 0, records = 0;
  while (at < all.size()) {
    EXPECT_EQ(load<std::uint32_t>(all.data() + at, false), kRecordCompressed);
    std::uint16_t size = load<std::uint16_t>(all.data() + at + 6, false);
    ASSERT_GT(size, 8u);
    ASSERT_TRUE(d.feed(Bytes(all.data() + at + 8, size - 8u), at));
    at += size;
    ++records;
  }
  EXPECT_GT(records, 1u);
  Bytes plain = d.pending();
  ASSERT_EQ(plain.size(), data.size() + 64);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), plain.begin()));
  EXPECT_FALSE(RecordCompressor::create(0));
  EXPECT_FALSE(RecordCompressor::create(99));
}

TEST(TracingDataTest, PerfsLayoutForTheRecordedTracepoints) {
  fake::FakeSystem fs;
  fs.file("kernel/tracing/events/header_page", "page header\n");
  fs.file("kernel/tracing/events/header_event", "event header\n");
  fs.file("kernel/tracing/printk_formats", "0x1 : \"x\"\n");
  auto t = Tracefs::at(fs.root() + "/kernel/tracing");
  auto data = build_tracing_data(t, {{"sched", "sched_switch"}, {"irq", "irq_handler_entry"}});
  ASSERT_TRUE(data) << data.error().message();
  Bytes b = *data;
  EXPECT_EQ(std::string(b.begin() + 3, b.begin() + 10), "tracing");
  EXPECT_EQ(std::string(b.begin() + 10, b.begin() + 14), std::string("0.6\0", 4));
  std::string text(b.begin(), b.end());
  EXPECT_NE(text.find("header_page"), std::string::npos);
  EXPECT_NE(text.find("name: sched_switch"), std::string::npos);
  EXPECT_NE(text.find("name: irq_handler_entry"), std::string::npos);
  EXPECT_EQ(text.find("name: sched_wakeup"), std::string::npos);  // not recorded
  EXPECT_NE(text.find("0x1 : \"x\""), std::string::npos);
  auto missing = build_tracing_data(Tracefs::at(fs.root() + "/nowhere"), {});
  EXPECT_FALSE(missing);
}

TEST(SystemInfoTest, FakeSysfsTopology) {
  fake::FakeSystem fs;
  for (int cpu = 0; cpu < 4; ++cpu) {
    std::string t = "devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    fs.file(t + "package_cpus_list", "0-3\n");
    fs.file(t + "core_cpus_list", cpu < 2 ? "0-1\n" : "2-3\n");
    fs.file(t + "die_cpus_list", "0-3\n");
    fs.file(t + "core_id", std::to_string(cpu / 2) + "\n");
    fs.file(t + "physical_package_id", "0\n");
    fs.file(t + "die_id", "0\n");
    std::string c = "devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/";
    fs.file(c + "index0/level", "1\n");
    fs.file(c + "index0/type", "Data\n");
    fs.file(c + "index0/size", "32K\n");
    fs.file(c + "index0/shared_cpu_list", std::to_string(cpu) + "\n");
    fs.file(c + "index1/level", "3\n");
    fs.file(c + "index1/type", "Unified\n");
    fs.file(c + "index1/size", "8192K\n");
    fs.file(c + "index1/shared_cpu_list", "0-3\n");
  }
  fs.file("devices/system/cpu/online", "0-3\n");
  fs.file("devices/system/cpu/present", "0-3\n");
  fs.file("devices/system/node/online", "0\n");
  fs.file("devices/system/node/node0/cpulist", "0-3\n");
  fs.file("devices/system/node/node0/meminfo",
          "Node 0 MemTotal:  1000 kB\nNode 0 MemFree:   400 kB\n");
  fs.file("devices/system/node/node0/memory3/x", "");
  fs.file("devices/system/node/node0/memory65/x", "");
  fs.file("devices/system/memory/block_size_bytes", "8000000\n");
  const auto p = fs.paths();
  auto n = read_nrcpus(p);
  EXPECT_EQ(n->available, 4u);
  EXPECT_EQ(n->online, 4u);
  auto t = read_cpu_topology(p, 4);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->package_cpus_lists, std::vector<std::string>{"0-3"});
  EXPECT_EQ(t->core_cpus_lists, (std::vector<std::string>{"0-1", "2-3"}));
  EXPECT_EQ(t->die_cpus_lists, std::vector<std::string>{"0-3"});
  EXPECT_EQ(t->cpus[3].core_id, 1);
  auto caches = read_caches(p, 4);
  ASSERT_TRUE(caches);
  ASSERT_EQ(caches->levels.size(), 5u);  // four L1s, one shared L3, by level
  EXPECT_EQ(caches->levels.back().level, 3u);
  EXPECT_EQ(caches->levels.back().map, "0-3");
  // A machine that shows no cache directories still has the feature, empty
  // (perf writes it so).
  fake::FakeSystem bare;
  bare.file("devices/system/cpu/online", "0\n");
  auto none = read_caches(bare.paths(), 1);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->levels.empty());
  auto numa = read_numa_topology(p);
  ASSERT_TRUE(numa);
  EXPECT_EQ((*numa)[0].mem_total_kb, 1000u);
  EXPECT_EQ((*numa)[0].mem_free_kb, 400u);
  EXPECT_EQ((*numa)[0].cpus, "0-3");
  auto mem = read_mem_topology(p);
  ASSERT_TRUE(mem);
  EXPECT_EQ(mem->block_size, 0x8000000u);
  EXPECT_EQ(mem->nodes[0].size, 66u);
  EXPECT_EQ(mem->nodes[0].set, (std::vector<std::uint64_t>{1u << 3, 2}));
  auto pmus = read_pmu_mappings(p);
  EXPECT_EQ(pmus.size(), 7u);
}

TEST(SystemInfoTest, ThisMachine) {
  perfdata::Features f;
  collect_system_info(SystemPaths{}, "perfkit test", f);
  EXPECT_EQ(f.version, "perfkit test");
  ASSERT_TRUE(f.nrcpus);
  EXPECT_GE(f.nrcpus->online, 1u);
  ASSERT_TRUE(f.pmu_mappings);
  bool software = false;
  for (const auto& m : *f.pmu_mappings) software |= m.name == "software" && m.type == 1;
  EXPECT_TRUE(software);
  // Every feature collected encodes.
  EXPECT_TRUE(perfdata::encode_features(f, false));
}

}  // namespace
}  // namespace perfkit::capture
