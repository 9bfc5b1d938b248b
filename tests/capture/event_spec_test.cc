// The event-spec parser against perf 6.1's behaviour. Expected attrs come from
// `perf record -e SPEC` + `perf evlist -v` on this machine (software events,
// tracepoints, breakpoints) and, for hardware PMUs, from the sysfs format
// rules through a fake sysfs tree (fake_system.h).
#include "capture/event_spec.h"

#include <gtest/gtest.h>

#include "base/text.h"
#include "fake_system.h"

namespace perfkit::capture {
namespace {

using namespace perfkit::abi;

class EventSpecTest : public ::testing::Test {
 protected:
  EventSpecTest()
      : pmus_(PmuCatalog::load(fake_.paths())),
        tracefs_(Tracefs::at(fake_.root() + "/kernel/tracing")),
        sources_{&pmus_, &tracefs_} {}

  EventList parse(std::string_view text) {
    EventList list;
    auto st = parse_events(text, sources_, list);
    EXPECT_TRUE(st) << text << ": " << st.error().message();
    return list;
  }
  EventSpec one(std::string_view text) {
    auto list = parse(text);
    EXPECT_EQ(list.size(), 1u) << text;
    return list.empty() ? EventSpec{} : list.events[0];
  }
  std::string error(std::string_view text) {
    EventList list;
    auto st = parse_events(text, sources_, list);
    EXPECT_FALSE(st) << text << " should fail";
    return st ? "" : st.error().message();
  }

  fake::FakeSystem fake_;
  PmuCatalog pmus_;
  Tracefs tracefs_;
  EventSources sources_;
};

TEST_F(EventSpecTest, SymbolicEventsAndAliases) {
  struct Case {
    const char* text;
    std::uint32_t type;
    std::uint64_t config;
  } cases[] = {
      {"cycles", 0, 0},
      {"cpu-cycles", 0, 0},
      {"instructions", 0, 1},
      {"cache-references", 0, 2},
      {"cache-misses", 0, 3},
      {"branches", 0, 4},
      {"branch-instructions", 0, 4},
      {"branch-misses", 0, 5},
      {"bus-cycles", 0, 6},
      {"stalled-cycles-frontend", 0, 7},
      {"idle-cycles-frontend", 0, 7},
      {"stalled-cycles-backend", 0, 8},
      {"idle-cycles-backend", 0, 8},
      {"ref-cycles", 0, 9},
      {"cpu-clock", 1, 0},
      {"task-clock", 1, 1},
      {"page-faults", 1, 2},
      {"faults", 1, 2},
      {"context-switches", 1, 3},
      {"cs", 1, 3},
      {"cpu-migrations", 1, 4},
      {"migrations", 1, 4},
      {"minor-faults", 1, 5},
      {"major-faults", 1, 6},
      {"alignment-faults", 1, 7},
      {"emulation-faults", 1, 8},
      {"dummy", 1, 9},
      {"bpf-output", 1, 10},
      {"cgroup-switches", 1, 11},
  };
  for (const auto& c : cases) {
    auto e = one(c.text);
    EXPECT_EQ(e.attr.type, c.type) << c.text;
    EXPECT_EQ(e.attr.config, c.config) << c.text;
    // perf names an event by its text and sets exclude_guest (event_attr_init).
    EXPECT_EQ(e.name, c.text);
    EXPECT_TRUE(e.attr.has(kAttrExcludeGuest)) << c.text;
    EXPECT_EQ(e.leader, 0u);
    EXPECT_EQ(e.group, -1);
  }
}

TEST_F(EventSpecTest, HardwareCacheTableWithPerfsAliases) {
  struct Case {
    const char* text;
    std::uint64_t config;
  } cases[] = {
      {"L1-dcache-loads", 0x00000},
      {"L1-dcache-load-misses", 0x10000},
      {"L1-dcache-stores", 0x00100},
      {"L1-dcache-store-misses", 0x10100},
      {"L1-dcache-prefetches", 0x00200},
      {"L1-icache-load-misses", 0x10001},
      {"LLC-loads", 0x00002},
      {"L2-load-misses", 0x10002},
      {"dTLB-load-misses", 0x10003},
      {"dTLB-prefetches", 0x00203},
      {"iTLB-loads", 0x00004},
      {"branch-load-misses", 0x10005},
      {"branches-loads", 0x00005},
      {"node-loads", 0x00006},
      {"l1d", 0x00000},
      {"L1-dcache", 0x00000},
      {"L1-dcache-misses", 0x10000},
      {"l1-d-read-miss", 0x10000},
      {"L1-data-write-Reference", 0x00100},
      {"LLC-speculative-read-miss", 0x10202},
      {"Data-TLB-stores", 0x00103},
      {"i-tlb-read-access", 0x00004},
      {"bpu-loads", 0x00005},
      {"node-prefetch-misses", 0x10206},
      {"L1-DCACHE-LOADS", 0x00000},
      {"LLC-misses-loads", 0x10002},
  };
  for (const auto& c : cases) {
    auto e = one(c.text);
    EXPECT_EQ(e.attr.type, kTypeHwCache) << c.text;
    EXPECT_EQ(e.attr.config, c.config) << c.text;
    EXPECT_EQ(e.name, c.text);
  }
  // Ops a level does not have (perf: L1I read+prefetch, ITLB and BPU read only).
  for (auto bad : {"iTLB-stores", "L1-icache-stores", "branch-prefetches", "L1-dcache-loads-stores",
                   "L1-dcache-load-misses-refs-x"})
    EXPECT_FALSE(parse_cache_event(bad)) << bad;
}

TEST_F(EventSpecTest, RawAndNumericEvents) {
  auto r = one("r1a8");
  EXPECT_EQ(r.attr.type, kTypeRaw);
  EXPECT_EQ(r.attr.config, 0x1a8u);
  EXPECT_EQ(r.name, "r1a8");
  auto n = one("1:2");
  EXPECT_EQ(n.attr.type, 1u);
  EXPECT_EQ(n.attr.config, 2u);
  EXPECT_EQ(n.name, "1:2");
  auto h = one("4:0x1a8:u");
  EXPECT_EQ(h.attr.type, 4u);
  EXPECT_EQ(h.attr.config, 0x1a8u);
  EXPECT_TRUE(h.attr.has(kAttrExcludeKernel));
  auto rt = one("r3c/period=1000/");
  EXPECT_EQ(rt.attr.config, 0x3cu);
  EXPECT_EQ(rt.terms.period, 1000u);
}

// The flags each modifier gives, as perf evlist -v shows them for cpu-clock:MOD.
TEST_F(EventSpecTest, ModifiersAsPerf) {
  struct Case {
    const char* mods;
    std::uint64_t flags;
    unsigned precise;
  } cases[] = {
      {"u", kAttrExcludeKernel | kAttrExcludeHv | kAttrExcludeGuest, 0},
      {"k", kAttrExcludeUser | kAttrExcludeHv, 0},
      {"h", kAttrExcludeUser | kAttrExcludeKernel, 0},
      {"uk", kAttrExcludeHv | kAttrExcludeGuest, 0},
      {"H", kAttrExcludeGuest, 0},
      {"G", kAttrExcludeHost, 0},
      {"GH", 0, 0},
      {"p", kAttrExcludeGuest, 1},
      {"pp", kAttrExcludeGuest, 2},
      {"ppp", kAttrExcludeGuest, 3},
      {"Gp", kAttrExcludeHost, 1},
      {"S", 0, 0},
      {"I", kAttrExcludeIdle, 0},
      {"D", kAttrPinned, 0},
      {"e", kAttrExclusive, 0},
      {"upp", kAttrExcludeKernel | kAttrExcludeHv | kAttrExcludeGuest, 2},
  };
  const std::uint64_t mask = kAttrExcludeUser | kAttrExcludeKernel | kAttrExcludeHv |
                             kAttrExcludeGuest | kAttrExcludeHost | kAttrExcludeIdle | kAttrPinned |
                             kAttrExclusive;
  for (const auto& c : cases) {
    std::string text = std::string("cpu-clock:") + c.mods;
    auto e = one(text);
    EXPECT_EQ(e.attr.flags & mask, c.flags) << text;
    EXPECT_EQ(e.attr.precise_ip(), c.precise) << text;
    EXPECT_EQ(e.name, text);
  }
  EXPECT_TRUE(one("cpu-clock:S").sample_read);
  EXPECT_TRUE(one("cpu-clock:P").precise_max);
  EXPECT_TRUE(one("cpu-clock:W").weak_group);
  EXPECT_NE(error("cpu-clock:pppp").find("precise level"), std::string::npos);
  EXPECT_NE(error("cpu-clock:uu").find("repeated"), std::string::npos);
  EXPECT_NE(error("cpu-clock:z").find("invalid modifier 'z'"), std::string::npos);
  EXPECT_NE(error("cpu-clock/period=1/z").find("invalid modifier 'z'"), std::string::npos);
  // Modifiers also follow a term list, with or without ':'.
  EXPECT_TRUE(one("cpu-clock/period=10/u").attr.has(kAttrExcludeKernel));
  EXPECT_TRUE(one("cpu-clock/period=10/:k").attr.has(kAttrExcludeUser));
}

TEST_F(EventSpecTest, PmuTermsThroughSysfsFormat) {
  auto e = one("cpu/event=0x3c,umask=0x1/");
  EXPECT_EQ(e.attr.type, 4u);
  EXPECT_EQ(e.attr.config, 0x13cu);
  EXPECT_EQ(e.pmu, "cpu");
  EXPECT_EQ(e.name, "cpu/event=0x3c,umask=0x1/");
  EXPECT_EQ(one("cpu/event=0x3c,edge,inv/").attr.config, 0x3cu | 1u << 18 | 1u << 23);
  EXPECT_EQ(one("cpu/event=0xc0,in_tx=1,cmask=2/").attr.config, 0xc0u | 2u << 24 | 1ULL << 32);
  EXPECT_EQ(one("cpu/event=0xc0,frontend=0x11/").attr.config1, 0x11u);
  // A later term overrides an earlier one of the same field.
  EXPECT_EQ(one("cpu/event=0x3c,event=0x2/").attr.config, 0x2u);
  // Generic terms mix in.
  auto t = one("cpu/event=0x3c,period=5000,name=mycycles/pp");
  EXPECT_EQ(t.terms.period, 5000u);
  EXPECT_EQ(t.name, "mycycles");
  EXPECT_EQ(t.attr.precise_ip(), 2u);
  auto big = error("cpu/event=0x1ff/");
  EXPECT_NE(big.find("value 0x1ff too big for format 'event' (config:0-7), maximum is 0xff"),
            std::string::npos)
      << big;
  auto unknown = error("cpu/foo=1/");
  EXPECT_NE(unknown.find("unknown term 'foo' for pmu 'cpu'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("valid terms: cmask,edge,event"), std::string::npos) << unknown;
  EXPECT_NE(error("cpu/event=zz/").find("needs a number"), std::string::npos);
  EXPECT_NE(error("nopmu/event=1/").find("unknown PMU or event 'nopmu'"), std::string::npos);
  EXPECT_NE(error("cpu/event=1").find("missing '/'"), std::string::npos);
}

TEST_F(EventSpecTest, NamedSysfsEvents) {
  // Used as a term: the event's own terms, then the user's.
  auto e = one("cpu/mem-loads,ldlat=30/");
  EXPECT_EQ(e.attr.config, 0x1cdu);
  EXPECT_EQ(e.attr.config1, 30u);
  // Bare names are looked up in every PMU.
  auto bare = one("mem-stores");
  EXPECT_EQ(bare.attr.type, 4u);
  EXPECT_EQ(bare.attr.config, 0x82d0u);
  EXPECT_EQ(bare.name, "mem-stores");
  auto tsc = one("tsc");
  EXPECT_EQ(tsc.attr.type, 9u);
  EXPECT_EQ(tsc.pmu, "msr");
  EXPECT_EQ(one("msr/tsc/").attr.type, 9u);
  // Scale and unit come along.
  auto imc = one("uncore_imc/data_reads/");
  EXPECT_EQ(imc.attr.type, 13u);
  EXPECT_EQ(imc.attr.config, 1u);
  EXPECT_EQ(imc.unit, "MiB");
  ASSERT_TRUE(imc.scale);
  EXPECT_DOUBLE_EQ(*imc.scale, 6.103515625e-5);
  // A "?" parameter must be given.
  EXPECT_NE(error("cpu/needs-param/").find("required parameter 'umask' not set"),
            std::string::npos);
  EXPECT_EQ(one("cpu/needs-param,umask=3/").attr.config, 0x32eu);
}

TEST_F(EventSpecTest, IntelPtTerms) {
  auto pt = one("intel_pt//u");
  EXPECT_EQ(pt.attr.type, 8u);
  EXPECT_EQ(pt.attr.config, 0u);
  EXPECT_TRUE(pt.attr.has(kAttrExcludeKernel));
  auto cfg = one("intel_pt/cyc,mtc_period=3,psb_period=0xf,noretcomp=1/");
  EXPECT_EQ(cfg.attr.config, 1u << 1 | 3u << 14 | 0xfu << 24 | 1u << 11);
  EXPECT_NE(error("intel_pt/mtc_period=16/").find("maximum is 0xf"), std::string::npos);
}

TEST_F(EventSpecTest, Tracepoints) {
  auto e = one("sched:sched_switch");
  EXPECT_EQ(e.attr.type, kTypeTracepoint);
  EXPECT_EQ(e.attr.config, 316u);
  EXPECT_EQ(e.attr.sample_period, 1u);
  EXPECT_EQ(e.attr.sample_type, kSampleRaw | kSampleTime | kSampleCpu | kSamplePeriod);
  EXPECT_EQ(e.name, "sched:sched_switch");
  EXPECT_EQ(e.tracepoint.system, "sched");
  // Modifiers do not rename a tracepoint.
  auto u = one("sched:sched_switch:u");
  EXPECT_EQ(u.name, "sched:sched_switch");
  EXPECT_TRUE(u.attr.has(kAttrExcludeKernel));
  auto globbed = parse("sched:sched_s*");
  ASSERT_EQ(globbed.size(), 2u);
  EXPECT_EQ(globbed.events[0].name, "sched:sched_stat_runtime");
  EXPECT_EQ(globbed.events[1].name, "sched:sched_switch");
  EXPECT_EQ(parse("*:*").size(), 4u);
  auto missing = error("sched:nosuch");
  EXPECT_NE(missing.find("unknown tracepoint 'sched:nosuch': File "), std::string::npos) << missing;
  EXPECT_NE(missing.find("/events/sched/nosuch not found"), std::string::npos) << missing;
  auto typo = error("sched:sched_swich");
  EXPECT_NE(typo.find("did you mean 'sched:sched_switch'"), std::string::npos) << typo;
  EXPECT_NE(error("sched:zz*").find("no tracepoint matches"), std::string::npos);
  auto cg = one("sched:sched_switch/call-graph=fp,period=3/");
  EXPECT_EQ(cg.terms.call_graph, "fp");
  EXPECT_EQ(cg.terms.period, 3u);
  EventSources none{&pmus_, nullptr};
  EventList list;
  auto st = parse_events("sched:sched_switch", none, list);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("tracefs is not available"), std::string::npos);
}

TEST_F(EventSpecTest, Breakpoints) {
  auto rw = one("mem:0x1000");
  EXPECT_EQ(rw.attr.type, kTypeBreakpoint);
  EXPECT_EQ(rw.attr.bp_type, 3u);
  EXPECT_EQ(rw.attr.config1, 0x1000u);
  EXPECT_EQ(rw.attr.config2, 4u);
  EXPECT_EQ(rw.attr.sample_period, 1u);
  EXPECT_EQ(rw.name, "mem:0x1000");
  auto w = one("mem:0x1000:w");
  EXPECT_EQ(w.attr.bp_type, 2u);
  EXPECT_EQ(w.name, "mem:0x1000:w");
  auto x = one("mem:4096:x");
  EXPECT_EQ(x.attr.bp_type, 4u);
  EXPECT_EQ(x.attr.config1, 4096u);
  EXPECT_EQ(x.attr.config2, sizeof(long));
  // perf names this one "mem:0x1000": its lexer stops at the '/'.
  auto len = one("mem:0x1000/8:rw:u");
  EXPECT_EQ(len.attr.bp_type, 3u);
  EXPECT_EQ(len.attr.config2, 8u);
  EXPECT_EQ(len.name, "mem:0x1000");
  EXPECT_TRUE(len.attr.has(kAttrExcludeKernel));
  EXPECT_TRUE(one("mem:0x2000:k").attr.has(kAttrExcludeUser));
  EXPECT_NE(error("mem:0x1000/3").find("bad breakpoint length"), std::string::npos);
  EXPECT_NE(error("mem:zz").find("bad breakpoint address"), std::string::npos);
  EXPECT_NE(error("mem:0x1000:wx").find("mixes execute"), std::string::npos);
  EXPECT_NE(error("mem:0x1000:ww").find("repeated"), std::string::npos);
  EXPECT_NE(error("mem:0x1000:q:u").find("bad breakpoint access"), std::string::npos);
}

TEST_F(EventSpecTest, ConfigTerms) {
  auto e =
      one("cpu-clock/period=1000,freq=10,time=0,call-graph=dwarf,stack-size=4096,max-stack=5,"
          "nr=3,no-inherit,overwrite,branch_type=any,percore,aux-output,aux-sample-size=64,"
          "metric-id=m,driver-config=d,config=2/");
  EXPECT_EQ(e.terms.period, 1000u);
  EXPECT_EQ(e.terms.freq, 10u);
  EXPECT_EQ(e.terms.time, false);
  EXPECT_EQ(e.terms.call_graph, "dwarf");
  EXPECT_EQ(e.terms.stack_size, 4096u);
  EXPECT_EQ(e.terms.max_stack, 5u);
  EXPECT_EQ(e.terms.max_events, 3u);
  EXPECT_EQ(e.terms.inherit, false);
  EXPECT_EQ(e.terms.overwrite, true);
  EXPECT_EQ(e.terms.branch_type, "any");
  EXPECT_EQ(e.terms.percore, true);
  EXPECT_EQ(e.terms.aux_output, true);
  EXPECT_EQ(e.terms.aux_sample_size, 64u);
  EXPECT_EQ(e.attr.config, 2u);
  EXPECT_EQ(one("cpu-clock/inherit=1/").terms.inherit, true);
  EXPECT_EQ(one("cpu-clock/name=foo/").name, "foo");
  auto bad = error("cpu-clock/foo=1/");
  EXPECT_NE(bad.find("unknown term 'foo' (valid terms: config,config1"), std::string::npos) << bad;
  EXPECT_NE(error("cpu-clock/call-graph=xyz/").find("unknown call-graph mode"), std::string::npos);
  EXPECT_NE(error("cpu-clock/name/").find("needs a value"), std::string::npos);
  EXPECT_NE(error("cpu-clock/,/").find("empty term"), std::string::npos);
  // perf's terms are comma separated: "dwarf,4096" makes 4096 a term.
  EXPECT_NE(error("cpu-clock/call-graph=dwarf,4096/").find("unknown term '4096'"),
            std::string::npos);
}

TEST_F(EventSpecTest, Groups) {
  auto g = parse("{cpu-clock,task-clock},faults");
  ASSERT_EQ(g.size(), 3u);
  ASSERT_EQ(g.groups.size(), 1u);
  EXPECT_EQ(g.groups[0].leader, 0u);
  EXPECT_EQ(g.groups[0].nr_members, 2u);
  EXPECT_EQ(g.events[0].leader, 0u);
  EXPECT_EQ(g.events[1].leader, 0u);
  EXPECT_EQ(g.events[2].leader, 2u);
  EXPECT_EQ(g.events[2].group, -1);
  EXPECT_EQ(g.group_size(0), 2u);

  // Group modifiers apply to every member and do not rename them.
  auto u = parse("{cpu-clock,task-clock}:u");
  for (const auto& e : u.events) {
    EXPECT_TRUE(e.attr.has(kAttrExcludeKernel));
    EXPECT_TRUE(e.attr.has(kAttrExcludeHv));
    EXPECT_TRUE(e.attr.has(kAttrExcludeGuest));
  }
  EXPECT_EQ(u.events[0].name, "cpu-clock");
  // Group modifiers build on the members' own.
  auto s = parse("{faults:u,cs:k}:S");
  EXPECT_EQ(s.events[0].name, "faults:u");
  EXPECT_TRUE(s.events[0].sample_read);
  EXPECT_TRUE(s.events[0].attr.has(kAttrExcludeKernel));
  EXPECT_TRUE(s.events[1].attr.has(kAttrExcludeUser));
  // Pinned only on the leader.
  auto d = parse("{cpu-clock,task-clock}:D");
  EXPECT_TRUE(d.events[0].attr.has(kAttrPinned));
  EXPECT_FALSE(d.events[1].attr.has(kAttrPinned));

  auto named = parse("mygroup{cpu-clock,task-clock}");
  EXPECT_EQ(named.groups[0].name, "mygroup");
  auto two = parse("{cpu-clock,task-clock},{faults,cs}");
  ASSERT_EQ(two.groups.size(), 2u);
  EXPECT_EQ(two.events[3].leader, 2u);

  // Appending a second -e keeps indexes consistent.
  EventList list;
  ASSERT_TRUE(parse_events("cpu-clock", sources_, list));
  ASSERT_TRUE(parse_events("{faults,cs}", sources_, list));
  EXPECT_EQ(list.events[2].leader, 1u);
  EXPECT_EQ(list.groups[0].leader, 1u);
  group_all(list);
  EXPECT_EQ(list.groups.size(), 1u);
  EXPECT_EQ(list.events[2].leader, 0u);
}

TEST_F(EventSpecTest, MalformedGroupsAndLists) {
  EXPECT_NE(error("{cpu-clock,task-clock").find("missing '}'"), std::string::npos);
  EXPECT_NE(error("{cpu-clock,{task-clock}}").find("nested group"), std::string::npos);
  EXPECT_NE(error("cpu-clock}").find("unbalanced '}'"), std::string::npos);
  EXPECT_NE(error("{}").find("empty event"), std::string::npos);
  EXPECT_NE(error("cpu-clock,").find("empty event"), std::string::npos);
  EXPECT_NE(error(",cpu-clock").find("empty event"), std::string::npos);
  EXPECT_NE(error("").find("empty event list"), std::string::npos);
  EXPECT_NE(error("{cpu-clock}:z").find("invalid modifier"), std::string::npos);
  // Every message names the whole argument.
  EXPECT_EQ(error("{a,b").rfind("event syntax error: '{a,b': ", 0), 0u);
}

TEST_F(EventSpecTest, UnknownEventsSuggestCloseNames) {
  auto e = error("cpu-clok");
  EXPECT_NE(e.find("unknown event 'cpu-clok'; did you mean 'cpu-clock'"), std::string::npos) << e;
  auto i = error("instrucions");
  EXPECT_NE(i.find("did you mean 'instructions'"), std::string::npos) << i;
  auto l = error("L1-dcache-lod-misses");
  EXPECT_NE(l.find("L1-dcache-load-misses"), std::string::npos) << l;
  auto m = error("mem-lods");
  EXPECT_NE(m.find("mem-loads"), std::string::npos) << m;
  auto none = error("qqqqqqqqqqqq");
  EXPECT_NE(none.find("unknown event 'qqqqqqqqqqqq' (run 'perfkit list'"), std::string::npos)
      << none;
}

TEST(PmuCatalogTest, ReadsTheFakeTree) {
  fake::FakeSystem fake;
  auto cat = PmuCatalog::load(fake.paths());
  const Pmu* cpu = cat.find("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->type, 4u);
  EXPECT_EQ(cpu->cpumask, "0-1");
  EXPECT_EQ(cat.core(), cpu);
  ASSERT_TRUE(cpu->format("ldlat"));
  EXPECT_EQ(cpu->format("ldlat")->word, 1u);
  EXPECT_EQ(cpu->format("ldlat")->max_value(), 0xffffu);
  ASSERT_TRUE(cpu->event("MEM-LOADS"));
  EXPECT_EQ(cpu->event("mem-loads")->terms, "event=0xcd,umask=0x1,ldlat=3");
  EXPECT_EQ(cat.find_by_type(8)->name, "intel_pt");
  const PmuEvent* reads = cat.find("uncore_imc")->event("data_reads");
  ASSERT_TRUE(reads);
  EXPECT_EQ(reads->unit, "MiB");
  EXPECT_EQ(cat.find("uncore_imc")->events.size(), 2u);  // .scale/.unit are not events
  EXPECT_EQ(cat.pmus().size(), 7u);
  // The real machine's catalog has at least the software PMU.
  auto real = PmuCatalog::load(SystemPaths{});
  ASSERT_TRUE(real.find("software"));
  EXPECT_EQ(real.find("software")->type, 1u);
}

TEST(PmuCatalogTest, FormatFields) {
  auto f = parse_format_field("x", "config:0-7,32-35", "test");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->width(), 12u);
  abi::EventAttr a;
  a.config = ~0ULL;
  ASSERT_TRUE(apply_format(*f, 0x5a5, a));
  EXPECT_EQ(a.config, (~0ULL & ~0xf000000ffULL) | 0xa5 | (0x5ULL << 32));
  auto single = parse_format_field("b", "config1:21", "test");
  ASSERT_TRUE(single);
  abi::EventAttr b;
  ASSERT_TRUE(apply_format(*single, 1, b));
  EXPECT_EQ(b.config1, 1u << 21);
  EXPECT_FALSE(apply_format(*single, 2, b));
  EXPECT_FALSE(parse_format_field("z", "config9:0-3", "test"));
  EXPECT_FALSE(parse_format_field("z", "config:7-3", "test"));
  EXPECT_FALSE(parse_format_field("z", "config:0-64", "test"));
  EXPECT_FALSE(parse_format_field("z", "nonsense", "test"));
}

TEST(TextUtilTest, CpuListsAndNumbers) {
  auto l = parse_cpu_list("0-3,8,10-11,2");
  ASSERT_TRUE(l);
  EXPECT_EQ(format_cpu_list(*l), "0-3,8,10-11");
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a"));
  std::uint64_t v = 0;
  EXPECT_TRUE(parse_u64("0x1f", v));
  EXPECT_EQ(v, 0x1fu);
  EXPECT_TRUE(parse_u64("010", v));
  EXPECT_EQ(v, 8u);
  EXPECT_FALSE(parse_u64("12z", v));
  EXPECT_FALSE(parse_u64("99999999999999999999", v));
  EXPECT_EQ(edit_distance("cpu-clok", "cpu-clock"), 1u);
  EXPECT_TRUE(glob_match("sched_*", "sched_switch"));
  EXPECT_FALSE(glob_match("sched_?", "sched_switch"));
}

}  // namespace
}  // namespace perfkit::capture
