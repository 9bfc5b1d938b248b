#include "cli/dump_records_synthetic.h"

#include <array>
#include <cstring>
#include <vector>

#include "abi/layout.h"
#include "abi/perf_event.h"
#include "perfdata/writer.h"
#include "record/encode.h"

namespace perfkit::test {

using namespace perfkit::abi;
using record::RecordBuilder;

namespace {

constexpr std::uint64_t kContextKernelMark = static_cast<std::uint64_t>(-128);
constexpr std::uint64_t kContextUserMark = static_cast<std::uint64_t>(-512);

EventAttr make_attr(std::uint64_t sample_type) {
  EventAttr a;
  a.type = kTypeSoftware;
  a.config = 0;  // cpu-clock
  a.sample_period = 4000;
  a.sample_type = sample_type | kSampleIdentifier;
  a.set(kAttrSampleIdAll);
  a.set(kAttrDisabled);
  return a;
}

class Builder {
 public:
  explicit Builder(perfdata::EventSet& events) : events_(events) {}

  std::vector<std::vector<std::uint8_t>> records;

  const RecordLayout& layout(std::size_t attr) const { return events_[attr].layout; }

  // The sample_id_all trailer of attr `attr` with sample id `id`.
  RecordBuilder& trailer(RecordBuilder& b, std::size_t attr, std::uint64_t id, std::uint64_t time) {
    record::SampleId s;
    s.pid = 10;
    s.tid = 11;
    s.time = time;
    s.id = id;
    s.stream_id = id + 1000;
    s.cpu = 1;
    s.identifier = id;
    return b.sample_id(s, layout(attr));
  }
  void add(RecordBuilder& b) { records.push_back(b.finish()); }
  void add(RecordBuilder&& b) { add(b); }
  void kernel(RecordBuilder b, std::uint64_t time) {
    trailer(b, 0, 100, time);
    add(b);
  }

 private:
  perfdata::EventSet& events_;
};

void sample_head(RecordBuilder& b, std::uint64_t st, std::uint64_t id, std::uint64_t ip,
                 std::uint64_t time) {
  // IDENTIFIER IP TID TIME [ADDR] [ID] [STREAM_ID] CPU [PERIOD], in sample_type order
  b.u64(id).u64(ip).u32(10).u32(11).u64(time);
  if (st & kSampleAddr) b.u64(0x7fff0000 + id);
  if (st & kSampleId) b.u64(id);
  if (st & kSampleStreamId) b.u64(id + 1000);
  b.u32(1).u32(0);
  if (st & kSamplePeriod) b.u64(id * 10 + 1);
}

// attr 0: every sample field but READ and AUX.
void add_full_samples(Builder& out, std::uint64_t time, bool all_records) {
  const std::uint64_t st = out.layout(0).sample_type;
  for (int variant = 0; variant < 2; ++variant) {
    RecordBuilder b(kRecordSample, variant ? 1 : 0x4002);
    sample_head(b, st, 100 + variant, 0x401000 + variant, time + variant);
    const std::array<std::uint64_t, 6> chain = {kContextKernelMark, 0xffffffff81001234,
                                                0xffffffff81005678, kContextUserMark,
                                                0x401000,           0x401234};
    b.u64(variant ? 0 : chain.size());
    if (!variant)
      for (auto ip : chain) b.u64(ip);
    const std::uint8_t raw[12] = {1, 2, 3, 4, 5, 6, 7, 8, 'r', 'a', 'w', 0};
    b.u32(sizeof raw).bytes(raw);
    // branch entries exercising every flag field
    const std::array<std::uint64_t, 9> flags = {
        1 | (5 << 4) | (1ULL << 20),                 // mispred, 5 cycles, COND
        2 | 4 | (4ULL << 20),                        // predicted, in_tx, CALL
        8 | (6ULL << 20) | (1ULL << 40),             // abort, RET, a reserved bit
        (15ULL << 20) | (2ULL << 26),                // EXTEND_ABI + FAULT_INST
        (2ULL << 24) | (3ULL << 30) | (3ULL << 20),  // spec, priv, IND
        (0xffffULL << 4) | (13ULL << 20),            // max cycles, SERROR
        (14ULL << 20),                               // NO_TX
        (12ULL << 20) | (7ULL << 26),                // IRQ with a new_type
        0,
    };
    b.u64(variant ? 1 : flags.size());
    // perf 6.1 reads spec, new_type, priv and reserved of a cross-endian
    // file as one 40-bit field: the variant for it keeps them zero.
    const std::uint64_t keep = all_records ? ~0ULL : 0xffffffULL;
    for (std::size_t i = 0; i < (variant ? 1 : flags.size()); ++i)
      b.u64(0xffffffff81000000 + 16 * i).u64(0x400000 + 32 * i).u64(flags[i] & keep);
    // REGS_USER (mask 0xff0fff: 20 registers)
    if (variant) {
      b.u64(kRegsAbiNone);
    } else {
      b.u64(kRegsAbi64);
      for (int i = 0; i < 20; ++i) b.u64(0x1000 + i);
    }
    // STACK_USER
    if (variant) {
      b.u64(0);
    } else {
      b.u64(64);
      for (int i = 0; i < 8; ++i) b.u64(0x7ffd00000000 + i);
      b.u64(48);
    }
    b.u64(1234 | (0x56ULL << 32) | (0x7ULL << 48));  // WEIGHT_STRUCT
    b.u64(0x5080021);                                // DATA_SRC
    b.u64(0x1f);                                     // TRANSACTION
    // REGS_INTR (mask 0x3_0000_000f: AX..DX and both halves of XMM0; or,
    // since perf 6.1 does not swap an attr's sample_regs_intr, a mask that
    // reads the same in both byte orders: AX and XMM12)
    b.u64(variant ? std::uint64_t{kRegsAbi32} : 7);
    for (int i = 0; i < (all_records ? 6 : 2); ++i) b.u64(0x2000 + i);
    b.u64(0xdeadbeef000);  // PHYS_ADDR
    b.u64(77);             // CGROUP
    b.u64(variant ? 1024 : 4096);
    b.u64(variant ? 1073741824 : 0);
    out.add(b);
  }
}

// attr 1 (group read leader) and attr 3 (single read member).
void add_read_samples(Builder& out, std::uint64_t time) {
  for (int i = 0; i < 3; ++i) {
    RecordBuilder b(kRecordSample, 2);
    sample_head(b, out.layout(1).sample_type, 200, 0x402000, time + i);
    b.u64(2).u64(1000 * (i + 1)).u64(900 * (i + 1));  // nr, enabled, running
    b.u64(500 * (i + 1)).u64(200).u64(i);             // value, id, lost
    b.u64(i == 2 ? 700 : 300 * (i + 1)).u64(201).u64(0);
    out.add(b);
  }
  RecordBuilder b(kRecordSample, 2);
  sample_head(b, out.layout(3).sample_type, 201, 0x403000, time + 5);
  b.u64(2000).u64(201).u64(9);  // value, id, lost
  out.add(b);
}

// attr 2: an LBR call stack with a callchain; plain WEIGHT.
void add_callstack_sample(Builder& out, std::uint64_t time) {
  RecordBuilder b(kRecordSample, 2);
  sample_head(b, out.layout(2).sample_type, 300, 0x404000, time);
  b.u64(4).u64(kContextKernelMark).u64(0xffffffff81000100).u64(kContextUserMark).u64(0x404000);
  b.u64(3);
  for (int i = 0; i < 3; ++i) b.u64(0x405000 + 16 * i).u64(0x406000 + 16 * i).u64(0);
  b.u64(99);  // WEIGHT
  out.add(b);
}

// attr 4: a branch stack with hw_idx; attr 5: WEIGHT and WEIGHT_STRUCT both set.
void add_misc_samples(Builder& out, std::uint64_t time) {
  RecordBuilder b(kRecordSample, 2);
  sample_head(b, out.layout(4).sample_type, 400, 0x407000, time);
  b.u64(2).u64(7);  // nr, hw_idx
  b.u64(0x1000).u64(0x2000).u64(3 | (1ULL << 20)).u64(0x3000).u64(0x4000).u64(0);
  out.add(b);
  RecordBuilder w(kRecordSample, 2);
  sample_head(w, out.layout(5).sample_type, 500, 0x408000, time + 1);
  w.u64(0x123456789abcULL);
  out.add(w);
}

void add_kernel_records(Builder& out, std::uint64_t t, bool all_records) {
  out.kernel(RecordBuilder(kRecordComm, 0).u32(10).u32(11).string("synth"), t + 1);
  out.kernel(RecordBuilder(kRecordComm, kMiscCommExec).u32(10).u32(11).string("synth-exec"), t + 2);
  out.kernel(RecordBuilder(kRecordMmap, kMiscKernel)
                 .u32(0xffffffff)
                 .u32(0)
                 .u64(0xffffffff81000000)
                 .u64(0x1000000)
                 .u64(0xffffffff81000000)
                 .string("[kernel.kallsyms]_text"),
             t + 3);
  out.kernel(RecordBuilder(kRecordMmap, kMiscUser | kMiscMmapData)
                 .u32(10)
                 .u32(11)
                 .u64(0x600000)
                 .u64(0x1000)
                 .u64(0)
                 .string("/tmp/synth-data"),
             t + 4);
  out.kernel(RecordBuilder(kRecordMmap2, kMiscUser)
                 .u32(10)
                 .u32(11)
                 .u64(0x400000)
                 .u64(0x10000)
                 .u64(0x1000)
                 .u32(0xfe)
                 .u32(1)
                 .u64(12345)
                 .u64(7)
                 .u32(5)
                 .u32(2)
                 .string("/usr/lib/libsynth.so"),
             t + 5);
  const std::uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
                                7,    8,    9,    10,   11, 12, 13, 14, 15, 16};
  out.kernel(RecordBuilder(kRecordMmap2, kMiscUser | kMiscMmapBuildId)
                 .u32(10)
                 .u32(11)
                 .u64(0x500000)
                 .u64(0x2000)
                 .u64(0)
                 .u8(20)
                 .zeros(3)
                 .bytes(bid)
                 .u32(3)
                 .u32(1)
                 .string("/tmp/synth-shared"),
             t + 6);
  out.kernel(RecordBuilder(kRecordFork).u32(20).u32(10).u32(21).u32(11).u64(t + 7), t + 7);
  out.kernel(RecordBuilder(kRecordExit).u32(20).u32(20).u32(21).u32(21).u64(t + 8), t + 8);
  out.kernel(RecordBuilder(kRecordLost).u64(100).u64(5), t + 9);
  out.kernel(RecordBuilder(kRecordThrottle).u64(t + 10).u64(100).u64(1100), t + 10);
  out.kernel(RecordBuilder(kRecordUnthrottle).u64(t + 11).u64(100).u64(1100), t + 11);
  out.kernel(RecordBuilder(kRecordAux).u64(0x1000).u64(0x200).u64(7), t + 12);
  out.kernel(RecordBuilder(kRecordAux).u64(0x1200).u64(0x10).u64(8), t + 13);
  out.kernel(RecordBuilder(kRecordItraceStart).u32(10).u32(11), t + 14);
  out.kernel(RecordBuilder(kRecordLostSamples).u64(3), t + 15);
  out.kernel(RecordBuilder(kRecordSwitch, 0), t + 16);
  out.kernel(RecordBuilder(kRecordSwitch, kMiscSwitchOut), t + 17);
  out.kernel(RecordBuilder(kRecordSwitch, kMiscSwitchOut | kMiscSwitchOutPreempt), t + 18);
  out.kernel(RecordBuilder(kRecordSwitchCpuWide, 0).u32(30).u32(31), t + 19);
  out.kernel(RecordBuilder(kRecordSwitchCpuWide, kMiscSwitchOut).u32(123456).u32(7), t + 20);
  for (std::uint64_t nr : {7, 9}) {
    RecordBuilder n(kRecordNamespaces);
    n.u32(10).u32(11).u64(nr);
    for (std::uint64_t i = 0; i < nr; ++i) n.u64(3 + i).u64(0xf0000000 + i);
    out.kernel(std::move(n), t + 21 + nr);
  }
  if (all_records) {
    out.kernel(RecordBuilder(kRecordKsymbol)
                   .u64(0xffffffffc0001000)
                   .u32(100)
                   .u16(1)
                   .u16(0)
                   .string("bpf_prog_synth"),
               t + 31);
    const std::uint8_t tag[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    out.kernel(RecordBuilder(kRecordBpfEvent).u16(1).u16(0).u32(42).bytes(tag), t + 32);
  }
  out.kernel(RecordBuilder(kRecordCgroup).u64(77).string("/synthetic"), t + 33);
  std::vector<std::uint8_t> poke(23);
  for (std::size_t i = 0; i < poke.size(); ++i) poke[i] = static_cast<std::uint8_t>(0x90 + i);
  RecordBuilder tp(kRecordTextPoke);
  tp.u64(0xffffffff81000040).u16(3).u16(20).bytes(poke).zeros(5);
  out.kernel(std::move(tp), t + 34);
  out.kernel(RecordBuilder(kRecordAuxOutputHwId).u64(0x42), t + 35);
  // PERF_RECORD_READ of attr 3 (read_format ID|LOST), its own trailer. perf
  // 6.1 swaps a cross-endian READ as if it had every read_format field.
  if (all_records) {
    RecordBuilder rd(kRecordRead);
    rd.u32(10).u32(11).u64(4242).u64(201).u64(1);
    out.trailer(rd, 3, 201, t + 36);
    out.add(rd);
  }
}

void add_user_records(Builder& out, bool all_records) {
  RecordBuilder idx(kRecordIdIndex);
  const std::array<std::pair<std::uint64_t, std::uint64_t>, 7> ids = {
      {{100, 0}, {101, 0}, {200, 1}, {201, 3}, {300, 2}, {400, 4}, {500, 5}}};
  idx.u64(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    idx.u64(ids[i].first).u64(ids[i].second).u64(i % 2).u64(i == 3 ? ~0ULL : 10);
  for (std::size_t i = 0; i < ids.size(); ++i) idx.u64(0).u64(i);
  out.add(idx);
  out.add(RecordBuilder(kRecordThreadMap)
              .u64(2)
              .u64(10)
              .fixed_string("synth", 16)
              .u64(11)
              .fixed_string("t2", 16));
  // CPU_MAP: a cpu list, 32- and 64-bit masks, a range with "any cpu"
  out.add(RecordBuilder(kRecordCpuMap).u16(0).u16(6).u16(0).u16(1).u16(2).u16(5).u16(7).u16(8));
  out.add(RecordBuilder(kRecordCpuMap).u16(1).u16(1).u16(4).u32(0xb).zeros(6));
  out.add(RecordBuilder(kRecordCpuMap).u16(1).u16(2).u16(8).zeros(4).u64(1).u64(2).zeros(6));
  out.add(RecordBuilder(kRecordCpuMap).u16(2).u8(1).u8(0).u16(2).u16(4));
  out.add(RecordBuilder(kRecordStatConfig)
              .u64(4)
              .u64(0)
              .u64(2)
              .u64(1)
              .u64(1000)
              .u64(2)
              .u64(1)
              .u64(7)
              .u64(5));
  out.add(RecordBuilder(kRecordStat).u64(100).u32(1).u32(0).u64(123).u64(456).u64(789));
  out.add(RecordBuilder(kRecordStatRound).u64(1).u64(99999));
  out.add(RecordBuilder(kRecordStatRound).u64(0).u64(100000));
  out.add(RecordBuilder(kRecordEventUpdate).u64(0).u64(100).string("msec"));
  if (all_records) {
    // perf 6.1 swaps only an EVENT_UPDATE's type and id: it prints a wrong
    // scale and overflows a buffer printing the cpus of a cross-endian one.
    double scale = 0.5;
    std::uint64_t scale_bits;
    std::memcpy(&scale_bits, &scale, 8);
    out.add(RecordBuilder(kRecordEventUpdate).u64(1).u64(100).u64(scale_bits));
    out.add(RecordBuilder(kRecordEventUpdate).u64(2).u64(300).string("synth-callstack"));
    out.add(RecordBuilder(kRecordEventUpdate).u64(3).u64(100).u16(0).u16(2).u16(0).u16(1));
  }
  out.add(RecordBuilder(kRecordTimeConv).u64(31).u64(1073649490).u64(123456789));
  out.add(RecordBuilder(kRecordTimeConv)
              .u64(10)
              .u64(20)
              .u64(30)
              .u64(40)
              .u64(0xffffffffffff)
              .u8(1)
              .u8(1)
              .zeros(6));
  RecordBuilder err(kRecordAuxtraceError);
  err.u32(1).u32(2).u32(3).u32(10).u32(11).u32(1).u64(0x401000).u64(5555).fixed_string(
      "synthetic error", 64);
  out.add(err);
  RecordBuilder err2(kRecordAuxtraceError);
  err2.u32(1)
      .u32(3)
      .u32(0)
      .u32(10)
      .u32(11)
      .u32(2)
      .u64(0x402000)
      .u64(6666)
      .fixed_string("second", 64)
      .u32(0)
      .u32(1);
  out.add(err2);
  const std::uint8_t bid[24] = {0xaa, 0xbb, 0xcc, 1,  2,  3,  4,  5,  6, 7, 8, 9,
                                10,   11,   12,   13, 14, 15, 16, 17, 0, 0, 0, 0};
  out.add(RecordBuilder(kRecordHeaderBuildId, kMiscKernel)
              .u32(0xffffffff)
              .bytes(bid)
              .string("[kernel.kallsyms]", 64));
  out.add(RecordBuilder(kRecordHeaderEventType).u64(1).fixed_string("synthetic", 64));
  out.add(RecordBuilder(kRecordFinishedInit));
}

}  // namespace

std::string write_synthetic_recording(const std::string& path, bool all_records) {
  perfdata::EventSet events;
  const std::uint64_t all = kSampleIp | kSampleTid | kSampleTime | kSampleAddr | kSampleId |
                            kSampleStreamId | kSampleCpu | kSamplePeriod | kSampleCallchain |
                            kSampleRaw | kSampleBranchStack | kSampleRegsUser | kSampleStackUser |
                            kSampleWeightStruct | kSampleDataSrc | kSampleTransaction |
                            kSampleRegsIntr | kSamplePhysAddr | kSampleCgroup |
                            kSampleDataPageSize | kSampleCodePageSize;
  EventAttr a0 = make_attr(all);
  a0.branch_sample_type = kBranchAny;
  a0.sample_regs_user = 0xff0fff;
  a0.sample_regs_intr = all_records ? 0x30000000fULL : 0x0100000000000001ULL;
  a0.sample_stack_user = 64;
  const std::uint64_t basic = kSampleIp | kSampleTid | kSampleTime | kSampleCpu | kSamplePeriod;
  EventAttr a1 = make_attr(basic | kSampleRead);
  a1.read_format =
      kFormatTotalTimeEnabled | kFormatTotalTimeRunning | kFormatId | kFormatGroup | kFormatLost;
  EventAttr a2 = make_attr(basic | kSampleCallchain | kSampleBranchStack | kSampleWeight);
  a2.branch_sample_type = kBranchUser | kBranchCallStack;
  a2.config = 1;  // task-clock
  EventAttr a3 = make_attr(basic | kSampleRead);
  a3.read_format = kFormatId | kFormatLost;
  a3.config = 2;  // page-faults
  EventAttr a4 = make_attr(basic | kSampleBranchStack);
  a4.branch_sample_type = kBranchAny | kBranchHwIndex;
  a4.config = 3;
  EventAttr a5 = make_attr(basic | kSampleWeight | kSampleWeightStruct);
  a5.config = 4;
  events.add(a0, {100, 101});
  events.add(a1, {200});
  events.add(a2, {300});
  events.add(a3, {201});
  events.add(a4, {400});
  events.add(a5, {500});

  Builder b(events);
  add_user_records(b, all_records);
  const std::uint64_t t0 = 1000000;
  add_kernel_records(b, t0, all_records);
  add_full_samples(b, t0 + 50, all_records);
  b.add(RecordBuilder(kRecordFinishedRound));
  // Round 2: older than some of round 1's records (flushed in time order).
  add_read_samples(b, t0 + 40);
  add_callstack_sample(b, t0 + 200);
  b.add(RecordBuilder(kRecordFinishedRound));
  add_misc_samples(b, t0 + 300);
  b.add(RecordBuilder(kRecordFinishedRound));

  auto w = perfdata::Writer::create(path, {});
  if (!w) return w.error().message();
  if (auto st = (*w)->begin(events); !st) return st.error().message();
  for (const auto& r : b.records)
    if (auto st = (*w)->write(r); !st) return st.error().message();
  if (auto st = (*w)->finish(events, {}); !st) return st.error().message();
  return "";
}

}  // namespace perfkit::test
