// The typed header features: every feature encodes and parses back equal in
// both byte orders; malformed sections give errors that name the feature and
// the offset.
#include "perfdata/features.h"

#include <gtest/gtest.h>

#include "abi/names.h"
#include "perfdata/feature_bpf.h"
#include "record/encode.h"
#include "support/test_support.h"

namespace perfkit::perfdata {
namespace {

using namespace perfkit::abi;

EventAttr sample_attr(std::uint64_t config) {
  EventAttr a;
  a.type = kTypeSoftware;
  a.size = kAttrSizeVer7;
  a.config = config;
  a.sample_period = 4000;
  a.sample_type = kSampleIp | kSampleTid | kSampleTime | kSamplePeriod;
  a.read_format = kFormatId;
  a.set(kAttrDisabled);
  a.set(kAttrFreq);
  a.set(kAttrSampleIdAll);
  a.set_precise_ip(2);
  a.clockid = 1;
  return a;
}

// One value of every feature perf writes, with lists of more than one entry.
Features sample_features() {
  Features f;
  f.tracing_data = std::vector<std::uint8_t>{0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
  BuildIdTable b;
  b.entries.push_back({kHostKernelPid, kMiscKernel | kBuildIdMiscSize,
                       std::vector<std::uint8_t>(20, 0xab), "[kernel.kallsyms]"});
  b.entries.push_back({1234, kMiscUser | kBuildIdMiscSize, {1, 2, 3, 4, 5, 6, 7, 8}, "/usr/bin/x"});
  b.entries.push_back({77, kMiscUser, std::vector<std::uint8_t>(20, 0x11), "/lib/libc.so.6"});
  f.build_id = b;
  f.hostname = "host";
  f.osrelease = "6.1.0-18-amd64";
  f.version = "6.1.187";
  f.arch = "x86_64";
  f.nrcpus = NrCpus{4, 3};
  f.cpudesc = "AMD EPYC 7B13";
  f.cpuid = "AuthenticAMD,25,1,1";
  f.total_mem_kb = 24684096;
  f.cmdline = std::vector<std::string>{"/usr/bin/perf", "record", "-e", "cpu-clock", "--", "ls"};
  EventDescList d;
  d.events.push_back({sample_attr(0), "cpu-clock", {10, 11, 12, 13}});
  d.events.push_back({sample_attr(9), "dummy:u", {}});
  f.event_desc = d;
  CpuTopology t;
  t.package_cpus_lists = {"0-3"};
  t.core_cpus_lists = {"0-1", "2-3"};
  t.has_cpu_ids = true;
  t.cpus = {{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}};
  t.die_cpus_lists = {"0-3"};
  f.cpu_topology = t;
  f.numa_topology = std::vector<NumaNode>{{0, 1000, 500, "0-1"}, {1, 2000, 1500, "2-3"}};
  f.branch_stack = true;
  f.pmu_mappings = std::vector<PmuMapping>{{1, "software"}, {4, "cpu"}, {4294901760u, "hwmon"}};
  f.group_desc = std::vector<GroupDesc>{{"{anon_group}", 0, 2}, {"g", 2, 3}};
  f.auxtrace = std::vector<AuxtraceIndexEntry>{{0x1000, 0x200}, {0x3000, 0x40}};
  f.stat = true;
  CacheInfo c;
  c.levels.push_back({1, 64, 64, 8, "Data", "32K", "0"});
  c.levels.push_back({3, 64, 32768, 16, "Unified", "32768K", "0-3"});
  f.cache = c;
  f.sample_time = SampleTime{1241507964000, 1241508463000};
  MemTopology m;
  m.block_size = 0x8000000;
  m.nodes.push_back({0, 200, {0xffffffff00ffffffULL, 0xff, 0, 0}});
  m.nodes.push_back({1, 64, {0x1}});
  f.mem_topology = m;
  f.clockid_res_ns = 1;
  f.dir_format = 1;
  f.bpf_prog_info = std::vector<BpfProgInfo>{{0x1234, std::vector<std::uint8_t>(232, 7), {1, 2}}};
  f.bpf_btf = std::vector<BpfBtf>{{10, {0x9f, 0xeb, 1, 0}}, {11, {}}};
  f.compressed = CompressionInfo{1, 1, 1, 58, 528384};
  f.cpu_pmu_caps = std::vector<PmuCapability>{{"branches", "32"}, {"max_precise", "3"}};
  f.clock_data = ClockData{1, 1, 1762878703344339000ULL, 1642884550397ULL};
  f.hybrid_topology = std::vector<HybridNode>{{"cpu_core", "0-3"}, {"cpu_atom", "4-11"}};
  f.pmu_caps = std::vector<PmuCaps>{{{{"branches", "32"}}, "cpu_core"}, {{}, "cpu_atom"}};
  f.unknown.push_back(FeatureData{128, {1, 2, 3, 4, 5}});
  return f;
}

std::vector<FeatureBlob> as_blobs(const std::vector<FeatureData>& sections) {
  std::vector<FeatureBlob> blobs;
  std::uint64_t off = 0x1000;
  for (const auto& s : sections) {
    blobs.push_back(FeatureBlob{s.id, off, s.bytes});
    off += s.bytes.size();
  }
  return blobs;
}

class FeatureRoundTrip : public testing::TestWithParam<bool> {};

TEST_P(FeatureRoundTrip, EveryFeatureParsesBackEqual) {
  const bool swap = GetParam();
  Features f = sample_features();
  auto sections = encode_features(f, swap);
  ASSERT_TRUE(sections) << sections.error().message();
  ASSERT_EQ(sections->size(), 32u);  // features 1..31 and one unknown
  auto back = parse_features(as_blobs(*sections), swap);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_TRUE(back->trailing.empty());
  for (std::uint32_t id : f.ids()) {
    auto a = encode_feature(f, id, swap);
    auto b = encode_feature(*back, id, swap);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(*a, *b) << feature_name(id);
  }
  for (auto& e : back->build_id->entries) {
    EXPECT_EQ(e.stored_name.size() % 64, 0u);
    e.stored_name.clear();  // the padded name as read
  }
  EXPECT_TRUE(*back == f);
}

TEST_P(FeatureRoundTrip, EachFeatureAloneParsesBackEqual) {
  const bool swap = GetParam();
  Features all = sample_features();
  for (std::uint32_t id : all.ids()) {
    auto bytes = encode_feature(all, id, swap);
    ASSERT_TRUE(bytes) << bytes.error().message();
    Features one;
    if (id == kFeatCpuTopology) one.nrcpus = all.nrcpus;
    auto st = parse_feature(id, *bytes, swap, 0, one);
    ASSERT_TRUE(st) << st.error().message();
    auto again = encode_feature(one, id, swap);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *bytes) << feature_name(id);
  }
}

INSTANTIATE_TEST_SUITE_P(ByteOrder, FeatureRoundTrip, testing::Bool(),
                         [](const auto& info) { return info.param ? "Swapped" : "Native"; });

TEST(Features, ByteOrdersDiffer) {
  Features f;
  f.nrcpus = NrCpus{2, 1};
  auto a = encode_feature(f, kFeatNrcpus, false);
  auto b = encode_feature(f, kFeatNrcpus, true);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, (std::vector<std::uint8_t>{2, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(*b, (std::vector<std::uint8_t>{0, 0, 0, 2, 0, 0, 0, 1}));
}

TEST(Features, StringsArePaddedTo64) {
  Features f;
  f.hostname = "vm";
  auto b = encode_feature(f, kFeatHostname, false);
  ASSERT_TRUE(b);
  ASSERT_EQ(b->size(), 4u + 64u);
  EXPECT_EQ((*b)[0], 64);
  EXPECT_EQ((*b)[4], 'v');
  EXPECT_EQ((*b)[6], 0);
  f.hostname = std::string(64, 'x');  // 64 chars + NUL need 128 bytes
  b = encode_feature(f, kFeatHostname, false);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->size(), 4u + 128u);
}

TEST(Features, BuildIdLayoutMatchesPerf) {
  Features f;
  f.build_id =
      BuildIdTable{{{-1, kMiscKernel | kBuildIdMiscSize, {0xaa, 0xbb}, "[kernel.kallsyms]"}}};
  auto b = encode_feature(f, kFeatBuildId, false);
  ASSERT_TRUE(b);
  ASSERT_EQ(b->size(), 36u + 64u);
  EXPECT_EQ(load<std::uint16_t>(b->data() + 6, false), 100);  // header.size
  EXPECT_EQ(load<std::int32_t>(b->data() + 8, false), -1);    // pid
  EXPECT_EQ((*b)[12], 0xaa);
  EXPECT_EQ((*b)[12 + 20], 2);  // size byte
  EXPECT_EQ((*b)[36], '[');
}

TEST(Features, LegacyBuildIdTableWithoutPid) {
  // perf before 2.6.34: header, 24 bytes of build-id, name; no pid.
  std::vector<std::uint8_t> t;
  append<std::uint32_t>(t, 0);
  append<std::uint16_t>(t, kMiscKernel);
  append<std::uint16_t>(t, 32 + 64);
  t.insert(t.end(), 24, 0x5a);
  t.resize(t.size() - 4);  // 20 bytes of id + 4 of padding
  t.insert(t.end(), 4, 0);
  append_padded_string(t, "[kernel.kallsyms]", 64);
  Features f;
  ASSERT_TRUE(parse_feature(kFeatBuildId, t, false, 0, f));
  ASSERT_TRUE(f.build_id->legacy_without_pid);
  ASSERT_EQ(f.build_id->entries.size(), 1u);
  EXPECT_EQ(f.build_id->entries[0].pid, kHostKernelPid);
  EXPECT_EQ(f.build_id->entries[0].filename, "[kernel.kallsyms]");
  EXPECT_EQ(f.build_id->entries[0].build_id, std::vector<std::uint8_t>(20, 0x5a));
  auto back = encode_feature(f, kFeatBuildId, false);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, t);
}

TEST(Features, CpuTopologyWithoutNrcpusInfersTheCount) {
  Features all = sample_features();
  for (bool dies : {true, false}) {
    if (!dies) all.cpu_topology->die_cpus_lists.clear();
    auto bytes = encode_feature(all, kFeatCpuTopology, false);
    ASSERT_TRUE(bytes);
    Features one;
    ASSERT_TRUE(parse_feature(kFeatCpuTopology, *bytes, false, 0, one));
    EXPECT_EQ(one.cpu_topology->cpus.size(), 4u) << dies;
    EXPECT_EQ(one.cpu_topology->die_cpus_lists.size(), dies ? 1u : 0u);
  }
}

TEST(Features, OldCpuTopologyHasNoIds) {
  Features f;
  f.cpu_topology = CpuTopology{{"0-1"}, {"0", "1"}, {}, false, {}};
  auto bytes = encode_feature(f, kFeatCpuTopology, false);
  ASSERT_TRUE(bytes);
  Features back;
  back.nrcpus = NrCpus{2, 2};
  ASSERT_TRUE(parse_feature(kFeatCpuTopology, *bytes, false, 0, back));
  EXPECT_FALSE(back.cpu_topology->has_cpu_ids);
  EXPECT_TRUE(back.cpu_topology->cpus.empty());
}

TEST(Features, TrailingBytesAreKept) {
  Features f;
  f.total_mem_kb = 5;
  auto bytes = encode_feature(f, kFeatTotalMem, false);
  ASSERT_TRUE(bytes);
  bytes->insert(bytes->end(), {0, 0, 0, 0});
  Features back;
  ASSERT_TRUE(parse_feature(kFeatTotalMem, *bytes, false, 0, back));
  EXPECT_EQ(*back.total_mem_kb, 5u);
  EXPECT_EQ(back.trailing[kFeatTotalMem].size(), 4u);
  EXPECT_EQ(*encode_feature(back, kFeatTotalMem, false), *bytes);
}

TEST(Features, EventDescKeepsAnOlderAttrSize) {
  Features f = sample_features();
  f.event_desc->events[0].attr.size = kAttrSizeVer5;  // copied from an older file
  auto bytes = encode_feature(f, kFeatEventDesc, false);
  ASSERT_TRUE(bytes);
  Features back;
  ASSERT_TRUE(parse_feature(kFeatEventDesc, *bytes, false, 0, back));
  EXPECT_EQ(back.event_desc->events[0].attr.size, kAttrSizeVer5);
  EXPECT_EQ(back.event_desc->events[0].attr.clockid, 1);  // read past its own size, as perf
}

TEST(Features, BuildIdNamesKeepTheirStoredPadding) {
  // perf 6.x pads build-id names to 8 bytes, perf 3.x left stray bytes after the NUL.
  std::vector<std::uint8_t> t;
  append<std::uint32_t>(t, 0);
  append<std::uint16_t>(t, kMiscUser | kBuildIdMiscSize);
  append<std::uint16_t>(t, 36 + 8);
  append<std::int32_t>(t, -1);
  t.insert(t.end(), 20, 0x42);
  t.insert(t.end(), {20, 0, 0, 0});
  t.insert(t.end(), {'[', 'v', 'd', 's', 'o', ']', 0, 'x'});
  Features f;
  ASSERT_TRUE(parse_feature(kFeatBuildId, t, false, 0, f));
  EXPECT_EQ(f.build_id->entries[0].filename, "[vdso]");
  EXPECT_EQ(*encode_feature(f, kFeatBuildId, false), t);
  f.build_id->entries[0].filename = "[vsyscall]";  // a changed name gets perf's 64-byte layout
  EXPECT_EQ(encode_feature(f, kFeatBuildId, false)->size(), 36u + 64u);
}

TEST(Features, EncodingAnAbsentFeatureFails) {
  Features f;
  auto b = encode_feature(f, kFeatHostname, false);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message().find("HOSTNAME"), std::string::npos);
  f.build_id = BuildIdTable{{{-1, 0, std::vector<std::uint8_t>(21, 1), "x"}}};
  b = encode_feature(f, kFeatBuildId, false);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message().find("more than 20"), std::string::npos);
}

// Every prefix of every encoded feature either parses (trailing-free prefixes
// of lists cannot) or fails with a message naming the feature and an offset.
TEST(Features, TruncatedSectionsFailCleanly) {
  Features all = sample_features();
  for (std::uint32_t id : all.ids()) {
    if (id >= kFeatLastKnown) continue;
    auto bytes = encode_feature(all, id, false);
    ASSERT_TRUE(bytes);
    auto name = std::string(feature_name(id));
    for (std::size_t n = 0; n < bytes->size(); ++n) {
      Features f;
      f.nrcpus = all.nrcpus;
      auto st = parse_feature(id, Bytes(bytes->data(), n), false, 0x500, f);
      if (st) continue;  // e.g. a shorter BUILD_ID table or TRACING_DATA
      const auto& msg = st.error().message();
      EXPECT_NE(msg.find("feature " + name), std::string::npos) << msg;
      EXPECT_TRUE(msg.starts_with("feature " + name + " at offset 0x")) << msg;
    }
  }
}

TEST(Features, HugeCountsFailWithoutAllocating) {
  std::vector<std::uint8_t> b;
  append<std::uint32_t>(b, 0xffffffffu);
  for (std::uint32_t id :
       {kFeatCmdline, kFeatNumaTopology, kFeatPmuMappings, kFeatGroupDesc, kFeatCpuPmuCaps,
        kFeatHybridTopology, kFeatPmuCaps, kFeatBpfProgInfo, kFeatBpfBtf}) {
    Features f;
    auto st = parse_feature(id, b, false, 0x100, f);
    ASSERT_FALSE(st) << feature_name(id);
    EXPECT_NE(st.error().message().find("feature " + std::string(feature_name(id))),
              std::string::npos)
        << st.error().message();
  }
  std::vector<std::uint8_t> ed;
  append<std::uint32_t>(ed, 0x10000000u);
  append<std::uint32_t>(ed, 128);
  Features f;
  auto st = parse_feature(kFeatEventDesc, ed, false, 0x100, f);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("event count"), std::string::npos);
}

TEST(Features, BadValuesAreNamed) {
  Features f;
  std::vector<std::uint8_t> cache;
  append<std::uint32_t>(cache, 2);
  append<std::uint32_t>(cache, 0);
  auto st = parse_feature(kFeatCache, cache, false, 0x40, f);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(),
            "feature CACHE at offset 0x40: unsupported version 2 (perf knows 1)");

  std::vector<std::uint8_t> ed;
  append<std::uint32_t>(ed, 1);
  append<std::uint32_t>(ed, 32);
  st = parse_feature(kFeatEventDesc, ed, false, 0x80, f);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(),
            "feature EVENT_DESC at offset 0x84: attr size 32 is smaller than 64");

  std::vector<std::uint8_t> str;
  append<std::uint32_t>(str, 100);
  str.resize(20);
  st = parse_feature(kFeatHostname, str, false, 0x200, f);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(),
            "feature HOSTNAME at offset 0x200: hostname of 100 bytes runs past the end of the "
            "section at 0x214");
}

TEST(Features, UnknownIdsAreKeptByteForByte) {
  Features f;
  std::vector<std::uint8_t> bytes{9, 8, 7};
  ASSERT_TRUE(parse_feature(130, bytes, false, 0, f));
  EXPECT_TRUE(f.has(130));
  EXPECT_EQ(*encode_feature(f, 130, true), bytes);
  EXPECT_EQ(f.ids(), std::vector<std::uint32_t>{130});
}

// A BTF blob with [1] int, [2] a function prototype, [3] FUNC "my_func".
std::vector<std::uint8_t> sample_btf() {
  const std::string strings = std::string("\0int\0my_func\0", 13);
  std::vector<std::uint8_t> types;
  auto type = [&](std::uint32_t name, std::uint32_t kind, std::uint32_t vlen, std::uint32_t t) {
    append<std::uint32_t>(types, name);
    append<std::uint32_t>(types, (kind << 24) | vlen);
    append<std::uint32_t>(types, t);
  };
  type(1, 1, 0, 4);  // INT, 4 more bytes
  append<std::uint32_t>(types, 32);
  type(0, 13, 1, 1);  // FUNC_PROTO with one parameter
  append<std::uint32_t>(types, 0);
  append<std::uint32_t>(types, 1);
  type(5, 12, 0, 2);  // FUNC my_func
  std::vector<std::uint8_t> b;
  append<std::uint16_t>(b, 0xeb9f);
  b.push_back(1);
  b.push_back(0);
  append<std::uint32_t>(b, 24);
  append<std::uint32_t>(b, 0);
  append<std::uint32_t>(b, static_cast<std::uint32_t>(types.size()));
  append<std::uint32_t>(b, static_cast<std::uint32_t>(types.size()));
  append<std::uint32_t>(b, static_cast<std::uint32_t>(strings.size()));
  append_bytes(b, types);
  append_bytes(b, as_bytes(strings));
  return b;
}

// A bpf_prog_info of program 5 with `subs` sub-programs, its arrays in data.
BpfProgInfo sample_prog(std::uint32_t subs) {
  BpfProgInfo p;
  p.info.assign(232, 0);
  auto put32 = [&](std::size_t off, std::uint32_t v) {
    store<std::uint32_t>(p.info.data() + off, v, false);
  };
  auto put64 = [&](std::size_t off, std::uint64_t v) {
    store<std::uint64_t>(p.info.data() + off, v, false);
  };
  put32(4, 5);  // id
  std::copy_n("short", 5, p.info.begin() + 64);
  put32(104, subs);       // nr_jited_ksyms
  put32(108, subs);       // nr_jited_func_lens
  put32(180, subs);       // nr_prog_tags
  put32(128, 10);         // btf_id
  put32(132, 8);          // func_info_rec_size
  put32(144, subs);       // nr_func_info
  put64(112, 0);          // jited_ksyms at data + 0
  put64(120, 8 * subs);   // jited_func_lens
  put64(184, 12 * subs);  // prog_tags
  put64(136, 20 * subs);  // func_info
  for (std::uint32_t i = 0; i < subs; ++i) append<std::uint64_t>(p.data, 0xffffffffc0000000 + i);
  for (std::uint32_t i = 0; i < subs; ++i) append<std::uint32_t>(p.data, 100 + i);
  for (std::uint32_t i = 0; i < subs; ++i)
    p.data.insert(p.data.end(), {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, static_cast<std::uint8_t>(i)});
  for (std::uint32_t i = 0; i < subs; ++i) {
    append<std::uint32_t>(p.data, 0);
    append<std::uint32_t>(p.data, 3);
  }
  return p;
}

TEST(BpfFeatures, ProgramNamesAsPerfSynthesizesThem) {
  auto btf_bytes = sample_btf();
  EXPECT_EQ(btf_type_name(btf_bytes, 3), "my_func");
  EXPECT_EQ(btf_type_name(btf_bytes, 1), "int");
  EXPECT_FALSE(btf_type_name(btf_bytes, 9));
  BpfBtf btf{10, btf_bytes};
  auto one = summarize_bpf_prog(sample_prog(1), false);
  ASSERT_TRUE(one) << one.error().message();
  EXPECT_EQ(one->id, 5u);
  EXPECT_EQ(one->jited_ksyms, std::vector<std::uint64_t>{0xffffffffc0000000});
  EXPECT_EQ(one->jited_func_lens, std::vector<std::uint32_t>{100});
  EXPECT_EQ(bpf_prog_name(*one, 0, &btf), "bpf_prog_deadbeef00010200_my_func");
  EXPECT_EQ(bpf_prog_name(*one, 0, nullptr), "bpf_prog_deadbeef00010200_short");
  auto two = summarize_bpf_prog(sample_prog(2), false);
  ASSERT_TRUE(two);
  EXPECT_EQ(bpf_prog_name(*two, 1, nullptr), "bpf_prog_deadbeef00010201_F");
  EXPECT_EQ(bpf_prog_name(*two, 1, &btf), "bpf_prog_deadbeef00010201_my_func");
}

TEST(BpfFeatures, ArraysOutsideTheDataAreErrors) {
  BpfProgInfo p = sample_prog(1);
  store<std::uint64_t>(p.info.data() + 120, 1000, false);  // jited_func_lens past the data
  auto s = summarize_bpf_prog(p, false);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("jited_func_lens"), std::string::npos);
  auto bad = sample_btf();
  bad[0] = 0;  // not BTF
  EXPECT_FALSE(btf_type_name(bad, 3));
}

// A recording of two events whose EVENT_DESC names only the first: the
// reader names the second the way perf does without a stored name.
class EventNames : public testing::TestWithParam<bool> {};

TEST_P(EventNames, ComeFromEventDescElsePerfsDefault) {
  const bool pipe = GetParam();
  EventSet events;
  events.add(sample_attr(0), {10});  // cpu-clock
  EventAttr faults = sample_attr(2);
  faults.set(kAttrExcludeKernel);
  faults.set(kAttrExcludeHv);
  faults.set_precise_ip(0);
  events.add(faults, {20});  // page-faults:u
  Features f;
  f.event_desc = EventDescList{kAttrSizeVer7, {{events[0].attr, "my-clock", {10}}}};
  f.hostname = "h";
  auto sections = encode_features(f, false);
  ASSERT_TRUE(sections);
  test::TempDir dir;
  const std::string path = dir.path("names.data");
  {
    auto w = Writer::create(path, WriterOptions{.pipe = pipe});
    ASSERT_TRUE(w);
    ASSERT_TRUE((*w)->begin(events, pipe ? *sections : std::vector<FeatureData>{}));
    auto comm = record::RecordBuilder(kRecordComm, 0, false).u32(7).u32(7).string("x").finish();
    ASSERT_TRUE((*w)->write(comm));
    ASSERT_TRUE((*w)->finish(events, *sections));
  }
  auto r = Reader::open(path);
  ASSERT_TRUE(r) << r.error().message();
  if (pipe) {
    ReadRecord rec;
    while (*(*r)->next(rec) && rec.view.type != kRecordComm) {
    }
  }
  ASSERT_EQ((*r)->events().size(), 2u);
  EXPECT_EQ((*r)->events()[0].name, "my-clock");
  EXPECT_EQ((*r)->events()[1].name, "page-faults:u");
}

INSTANTIATE_TEST_SUITE_P(Mode, EventNames, testing::Bool(),
                         [](const auto& info) { return info.param ? "Pipe" : "File"; });

}  // namespace
}  // namespace perfkit::perfdata
