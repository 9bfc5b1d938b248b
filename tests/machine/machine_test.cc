// MapSet cuts overlapped maps as perf's maps__fixup_overlappings does;
// Machine threads share their process's maps and take perf's names.
#include "machine/machine.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace perfkit::machine
