#include "record/records.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>

#include "record/encode.h"

namespace perfkit::record {
namespace {

using namespace perfkit::abi;

RecordView view_of(const std::vector<std::uint8_t>& bytes, bool swap) {
  RecordView v = view_header(bytes.data(), swap);
  v.bytes = bytes;
  v.offset = 0x200;
  return v;
}

class Records : public ::testing::TestWithParam<bool> {
 protected:
  bool swap() const { return GetParam(); }
  RecordBuilder builder(std::uint32_t type, std::uint16_t misc = 0) {
    return RecordBuilder(type, misc, swap());
  }
  // Keeps the bytes alive for the views parsed from them.
  RecordView view(std::vector<std::uint8_t> b) {
    keep_.push_back(std::move(b));
    return view_of(keep_.back(), swap());
  }

 private:
  std::deque<std::vector<std::uint8_t>> keep_;
};

TEST_P(Records, Mmap) {
  auto b = builder(kRecordMmap)
               .u32(1)
               .u32(2)
               .u64(0x400000)
               .u64(0x1000)
               .u64(0)
               .string("/bin/true")
               .finish();
  auto m = parse_mmap(view(b));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pid, 1u);
  EXPECT_EQ(m->start, 0x400000u);
  EXPECT_EQ(m->filename, "/bin/true");
}

TEST_P(Records, Mmap2WithInodeAndWithBuildId) {
  auto b = builder(kRecordMmap2)
               .u32(1)
               .u32(2)
               .u64(0x400000)
               .u64(0x1000)
               .u64(0x2000)
               .u32(254)
               .u32(1)
               .u64(77)
               .u64(3)
               .u32(5)
               .u32(2)
               .string("/usr/bin/sleep")
               .finish();
  auto m = parse_mmap2(view(b));
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->has_build_id);
  EXPECT_EQ(m->maj, 254u);
  EXPECT_EQ(m->ino, 77u);
  EXPECT_EQ(m->prot, 5u);
  EXPECT_EQ(m->filename, "/usr/bin/sleep");

  std::vector<std::uint8_t> id(20);
  for (int i = 0; i < 20; ++i) id[i] = static_cast<std::uint8_t>(i);
  auto c = builder(kRecordMmap2, kMiscMmapBuildId)
               .u32(1)
               .u32(2)
               .u64(1)
               .u64(2)
               .u64(3)
               .u8(20)
               .u8(0)
               .u16(0)
               .bytes(id)
               .u32(5)
               .u32(2)
               .string("/lib/x.so")
               .finish();
  auto n = parse_mmap2(view(c));
  ASSERT_TRUE(n);
  EXPECT_TRUE(n->has_build_id);
  EXPECT_EQ(n->build_id_size, 20);
  EXPECT_EQ(n->build_id[19], 19);
  EXPECT_EQ(n->filename, "/lib/x.so");
}

TEST_P(Records, CommForkExitLostThrottle) {
  auto comm =
      parse_comm(view(builder(kRecordComm, kMiscCommExec).u32(5).u32(6).string("sleep").finish()));
  ASSERT_TRUE(comm);
  EXPECT_EQ(comm->comm, "sleep");
  auto fork = parse_task(view(builder(kRecordFork).u32(1).u32(2).u32(3).u32(4).u64(99).finish()));
  ASSERT_TRUE(fork);
  EXPECT_EQ(fork->ptid, 4u);
  EXPECT_EQ(fork->time, 99u);
  auto lost = parse_lost(view(builder(kRecordLost).u64(7).u64(1234).finish()));
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->lost, 1234u);
  auto thr = parse_throttle(view(builder(kRecordThrottle).u64(1).u64(2).u64(3).finish()));
  ASSERT_TRUE(thr);
  EXPECT_EQ(thr->stream_id, 3u);
}

TEST_P(Records, AuxItraceSwitchNamespacesKsymbolBpfCgroupTextPoke) {
  auto aux = parse_aux(view(builder(kRecordAux).u64(0x100).u64(0x200).u64(1).finish()));
  ASSERT_TRUE(aux);
  EXPECT_EQ(aux->aux_size, 0x200u);
  auto its = parse_itrace_start(view(builder(kRecordItraceStart).u32(8).u32(9).finish()));
  ASSERT_TRUE(its);
  EXPECT_EQ(its->tid, 9u);
  auto sw = parse_switch_cpu_wide(view(builder(kRecordSwitchCpuWide).u32(10).u32(11).finish()));
  ASSERT_TRUE(sw);
  EXPECT_EQ(sw->next_prev_tid, 11u);
  auto ns = parse_namespaces(
      view(builder(kRecordNamespaces).u32(1).u32(1).u64(2).u64(3).u64(4).u64(5).u64(6).finish()));
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->nr, 2u);
  EXPECT_EQ(ns->ino(1), 6u);
  auto ks = parse_ksymbol(view(
      builder(kRecordKsymbol).u64(0xffff0000).u32(64).u16(1).u16(0).string("bpf_prog_x").finish()));
  ASSERT_TRUE(ks);
  EXPECT_EQ(ks->len, 64u);
  EXPECT_EQ(ks->name, "bpf_prog_x");
  auto bpf = parse_bpf_event(
      view(builder(kRecordBpfEvent).u16(1).u16(0).u32(33).u64(0x0807060504030201ULL).finish()));
  ASSERT_TRUE(bpf);
  EXPECT_EQ(bpf->id, 33u);
  EXPECT_EQ(bpf->tag.size(), 8u);
  auto cg = parse_cgroup(view(builder(kRecordCgroup).u64(12).string("/user.slice").finish()));
  ASSERT_TRUE(cg);
  EXPECT_EQ(cg->path, "/user.slice");
  const std::uint8_t code[] = {0x90, 0x90, 0xcc, 0xcc, 0xcc};
  auto tp = parse_text_poke(view(builder(kRecordTextPoke)
                                     .u64(0xffffffff81000000)
                                     .u16(2)
                                     .u16(3)
                                     .bytes(code)
                                     .zeros(3)
                                     .finish()));
  ASSERT_TRUE(tp);
  EXPECT_EQ(tp->old_bytes.size(), 2u);
  EXPECT_EQ(tp->new_bytes[2], 0xcc);
  auto hw = parse_aux_output_hw_id(view(builder(kRecordAuxOutputHwId).u64(3).finish()));
  ASSERT_TRUE(hw);
  EXPECT_EQ(hw->hw_id, 3u);
}

TEST_P(Records, UserRecords) {
  std::vector<std::uint8_t> attr;
  EventAttr a;
  a.type = 1;
  a.sample_type = kSampleIp;
  encode_attr(a, 128, swap(), attr);
  auto ha =
      parse_header_attr(view(builder(kRecordHeaderAttr).bytes(attr).u64(11).u64(12).finish()));
  ASSERT_TRUE(ha);
  EXPECT_EQ(ha->attr.sample_type, kSampleIp);
  ASSERT_EQ(ha->ids.size(), 2u);
  EXPECT_EQ(ha->ids[1], 12u);

  auto idx =
      parse_id_index(view(builder(kRecordIdIndex).u64(1).u64(5).u64(0).u64(1).u64(100).finish()));
  ASSERT_TRUE(idx);
  EXPECT_EQ(idx->entries2, nullptr);
  EXPECT_EQ(idx->at(0).tid, 100u);
  // perf's id_index_entry_2 array comes after all the entries
  auto idx2 = parse_id_index(view(builder(kRecordIdIndex)
                                      .u64(2)
                                      .u64(5)
                                      .u64(0)
                                      .u64(1)
                                      .u64(100)
                                      .u64(6)
                                      .u64(1)
                                      .u64(~0ULL)
                                      .u64(101)
                                      .u64(4242)
                                      .u64(0)
                                      .u64(4242)
                                      .u64(1)
                                      .finish()));
  ASSERT_TRUE(idx2);
  EXPECT_EQ(idx2->at(1).id, 6u);
  EXPECT_EQ(idx2->at(1).tid, 101u);
  EXPECT_EQ(idx2->at(0).machine_pid, 4242u);
  EXPECT_EQ(idx2->at(0).vcpu, 0u);
  EXPECT_EQ(idx2->at(1).vcpu, 1u);

  auto tm_bytes = builder(kRecordThreadMap).u64(1).u64(42).fixed_string("worker", 16).finish();
  auto tm = parse_thread_map(view(tm_bytes));
  ASSERT_TRUE(tm);
  EXPECT_EQ(tm->pid(0), 42u);
  EXPECT_EQ(tm->comm(0), "worker");

  auto cm_bytes = builder(kRecordCpuMap).u16(0).u16(3).u16(0).u16(2).u16(5).zeros(6).finish();
  auto cm = parse_cpu_map(view(cm_bytes));
  ASSERT_TRUE(cm);
  std::vector<int> cpus;
  cm->for_each([&](int c) { cpus.push_back(c); });
  EXPECT_EQ(cpus, (std::vector<int>{0, 2, 5}));

  auto mask_bytes = builder(kRecordCpuMap).u16(1).u16(1).u16(8).zeros(4).u64(0b1011).finish();
  auto mask = parse_cpu_map(view(mask_bytes));
  ASSERT_TRUE(mask);
  cpus.clear();
  mask->for_each([&](int c) { cpus.push_back(c); });
  EXPECT_EQ(cpus, (std::vector<int>{0, 1, 3}));

  auto range =
      parse_cpu_map(view(builder(kRecordCpuMap).u16(2).u8(0).u8(0).u16(4).u16(6).finish()));
  ASSERT_TRUE(range);
  cpus.clear();
  range->for_each([&](int c) { cpus.push_back(c); });
  EXPECT_EQ(cpus, (std::vector<int>{4, 5, 6}));

  auto tc = parse_time_conv(view(builder(kRecordTimeConv)
                                     .u64(31)
                                     .u64(123)
                                     .u64(456)
                                     .u64(7)
                                     .u64(~0ULL)
                                     .u8(1)
                                     .u8(1)
                                     .zeros(6)
                                     .finish()));
  ASSERT_TRUE(tc);
  EXPECT_TRUE(tc->has_cycles);
  EXPECT_EQ(tc->time_mult, 123u);
  EXPECT_EQ(tc->cap_user_time_short, 1);
  auto old_tc = parse_time_conv(view(builder(kRecordTimeConv).u64(31).u64(123).u64(456).finish()));
  ASSERT_TRUE(old_tc);
  EXPECT_FALSE(old_tc->has_cycles);

  auto st = parse_stat(
      view(builder(kRecordStat).u64(9).u32(1).u32(2).u64(100).u64(200).u64(150).finish()));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->run, 150u);

  double scale = 0.5;
  std::uint64_t bits;
  std::memcpy(&bits, &scale, 8);
  auto eu = parse_event_update(view(builder(kRecordEventUpdate).u64(1).u64(7).u64(bits).finish()));
  ASSERT_TRUE(eu);
  EXPECT_EQ(eu->scale, 0.5);
  auto en_bytes = builder(kRecordEventUpdate).u64(2).u64(7).string("cycles:u").finish();
  auto en = parse_event_update(view(en_bytes));
  ASSERT_TRUE(en);
  EXPECT_EQ(en->text, "cycles:u");

  auto err_bytes = builder(kRecordAuxtraceError)
                       .u32(1)
                       .u32(2)
                       .u32(3)
                       .u32(4)
                       .u32(5)
                       .u32(1)
                       .u64(0x401000)
                       .u64(777)
                       .fixed_string("overflow", 64)
                       .finish();
  auto err = parse_auxtrace_error(view(err_bytes));
  ASSERT_TRUE(err);
  EXPECT_EQ(err->time, 777u);
  EXPECT_EQ(err->msg, "overflow");

  std::vector<std::uint8_t> id(20, 0xab);
  auto bid_bytes = builder(kRecordHeaderBuildId, kMiscExtReserved)
                       .u32(-1)
                       .bytes(id)
                       .u8(20)
                       .zeros(3)
                       .string("/bin/ls")
                       .finish();
  auto bid = parse_build_id(view(bid_bytes));
  ASSERT_TRUE(bid);
  EXPECT_EQ(bid->build_id.size(), 20u);
  EXPECT_EQ(bid->filename, "/bin/ls");
}

TEST_P(Records, TruncatedRecordsNameOffsetAndType) {
  auto b = builder(kRecordMmap).u32(1).u32(2).u64(3).finish();
  auto m = parse_mmap(view(b));
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("offset 0x200"), std::string::npos);
  EXPECT_NE(m.error().message().find("MMAP"), std::string::npos);
  auto t = parse_thread_map(view(builder(kRecordThreadMap).u64(1000).finish()));
  EXPECT_FALSE(t);
  auto n = parse_namespaces(view(builder(kRecordNamespaces).u32(1).u32(1).u64(~0ULL).finish()));
  EXPECT_FALSE(n);
  auto c = parse_cpu_map(view(builder(kRecordCpuMap).u16(9).finish()));
  EXPECT_FALSE(c);
}

TEST_P(Records, TrailingPayloadSizes) {
  auto td = builder(kRecordHeaderTracingData).u32(13).u32(0).finish();
  EXPECT_EQ(trailing_payload_size(view(td)), 16u);
  auto at = builder(kRecordAuxtrace).u64(4096).u64(0).u64(0).u32(0).u32(1).u32(2).u32(0).finish();
  EXPECT_EQ(trailing_payload_size(view(at)), 4096u);
  // simpleperf keeps the tracing data inside the record.
  auto sp = builder(kRecordHeaderTracingData).u32(8).u64(0).finish();
  EXPECT_EQ(trailing_payload_size(view(sp)), 0u);
}

INSTANTIATE_TEST_SUITE_P(BothOrders, Records, ::testing::Bool());

}  // namespace
}  // namespace perfkit::record
