// MapSet cuts overlapped maps as perf's maps__fixup_overlappings does;
// Machine threads share their process's maps and take perf's names.
#include "machine/machine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "abi/perf_event.h"

namespace perfkit::machine {
namespace {

TEST(MapSet, NewMapCutsWhatItOverlaps) {
  MapSet s;
  Dso a, b;
  s.insert({0x1000, 0x5000, 0x0, &a, false});
  s.insert({0x2000, 0x3000, 0x100, &b, false});
  ASSERT_EQ(s.maps().size(), 3u);
  EXPECT_EQ(s.maps()[0].end, 0x2000u);
  EXPECT_EQ(s.maps()[1].dso, &b);
  EXPECT_EQ(s.maps()[2].start, 0x3000u);
  EXPECT_EQ(s.maps()[2].pgoff, 0x2000u);  // the tail keeps its file offsets
  EXPECT_EQ(s.find(0x2fff)->dso, &b);
  EXPECT_EQ(s.find(0x4000)->map_ip(0x4000), 0x3000u);
  EXPECT_EQ(s.find(0x5000), nullptr);
}

TEST(Machine, ThreadsShareTheLeadersMapsAndStartAsColonTid) {
  symbol::Symbolizer sym({});
  Machine m(sym);
  Thread& leader = m.findnew_thread(10, 10);
  Thread& other = m.findnew_thread(10, 11);
  EXPECT_EQ(leader.maps, other.maps);
  EXPECT_EQ(*other.comm, ":11");
  EXPECT_EQ(*m.findnew_thread(0, 0).comm, "swapper");
  EXPECT_EQ(m.findnew_dso("/tmp/perf-42.map", DsoKind::kJitMap).short_name, "[JIT] tid 42");
  EXPECT_EQ(m.findnew_dso("/usr/lib/libc.so.6", DsoKind::kUser).short_name, "libc.so.6");
}

// Record bytes in this machine's order: a header, then u32/u64 fields and
// a NUL-padded name.
struct Bytes8 {
  std::vector<std::uint8_t> b;
  template <class T>
  Bytes8& put(T v) {
    const auto at = b.size();
    b.resize(at + sizeof v);
    std::memcpy(b.data() + at, &v, sizeof v);
    return *this;
  }
  record::RecordView view(std::uint32_t type, std::uint16_t misc) {
    std::vector<std::uint8_t> all(8);
    const auto size = static_cast<std::uint16_t>(8 + b.size());
    std::memcpy(all.data(), &type, 4);
    std::memcpy(all.data() + 4, &misc, 2);
    std::memcpy(all.data() + 6, &size, 2);
    all.insert(all.end(), b.begin(), b.end());
    b = std::move(all);
    record::RecordView v;
    v.type = type;
    v.misc = misc;
    v.size = size;
    v.bytes = Bytes(b.data(), b.size());
    return v;
  }
};

Bytes8 mmap_body(std::uint32_t pid, std::uint64_t start, std::uint64_t len, const char* name) {
  Bytes8 r;
  r.put(pid).put(pid).put(start).put(len).put(std::uint64_t{0});
  std::string n(name);
  n.resize((n.size() / 8 + 1) * 8, '\0');
  for (char c : n) r.put(c);
  return r;
}

// With its history kept, the machine remembers every map an MMAP made, with
// the record's time, after a later map has cut it; a forked child starts
// with its parent's history; each address space is listed once.
TEST(Machine, HistoryKeepsEveryMapWithItsTimeAndForksCopyIt) {
  symbol::Symbolizer sym({});
  Machine m(sym);
  m.keep_history();
  auto a = mmap_body(10, 0x1000, 0x4000, "/old.so");
  ASSERT_TRUE(m.apply(a.view(abi::kRecordMmap, abi::kMiscUser), 100).has_value());
  auto b = mmap_body(10, 0x2000, 0x1000, "/new.so");
  ASSERT_TRUE(m.apply(b.view(abi::kRecordMmap, abi::kMiscUser), 200).has_value());
  auto k = mmap_body(~0u, 0xffffffff81000000ull, 0x1000000, "[kernel.kallsyms]_text");
  ASSERT_TRUE(m.apply(k.view(abi::kRecordMmap, abi::kMiscKernel), 50).has_value());
  Bytes8 f;
  f.put(std::uint32_t{11}).put(std::uint32_t{10}).put(std::uint32_t{11}).put(std::uint32_t{10});
  f.put(std::uint64_t{300});
  ASSERT_TRUE(m.apply(f.view(abi::kRecordFork, 0), 300).has_value());

  const MapSet& parent = *m.findnew_thread(10, 10).maps;
  ASSERT_EQ(parent.maps().size(), 3u);  // the new map cut the old one in three
  ASSERT_EQ(parent.history().size(), 2u);
  EXPECT_EQ(*parent.history()[0].name, "/old.so");
  EXPECT_EQ(parent.history()[0].time, 100u);
  EXPECT_EQ(parent.history()[0].map.end, 0x5000u);  // whole, as it was mapped
  EXPECT_EQ(*parent.history()[1].name, "/new.so");
  EXPECT_EQ(parent.history()[1].time, 200u);
  ASSERT_EQ(m.kernel_maps().history().size(), 1u);
  EXPECT_EQ(m.kernel_maps().history()[0].time, 50u);

  const MapSet& child = *m.findnew_thread(11, 11).maps;
  EXPECT_NE(&child, &parent);
  EXPECT_EQ(child.history().size(), 2u);
  const auto spaces = m.address_spaces();
  std::vector<std::int32_t> pids;
  for (const auto& [pid, maps] : spaces) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<std::int32_t>{0, 10, 11}));
}

// Without it (report, script), nothing is kept.
TEST(Machine, NoHistoryUnlessAsked) {
  symbol::Symbolizer sym({});
  Machine m(sym);
  auto a = mmap_body(10, 0x1000, 0x4000, "/old.so");
  ASSERT_TRUE(m.apply(a.view(abi::kRecordMmap, abi::kMiscUser)).has_value());
  EXPECT_TRUE(m.findnew_thread(10, 10).maps->history().empty());
  EXPECT_EQ(m.findnew_thread(10, 10).maps->maps().size(), 1u);
}

}  // namespace
}  // namespace perfkit::machine
