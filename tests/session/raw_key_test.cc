// Raw sample keys (session/raw_key.h): a sample finds what an earlier one
// with the same raw content resolved to, in the same machine generation,
// and nothing else.
#include "session/raw_key.h"

#include <gtest/gtest.h>

#include <vector>

namespace perfkit::session {
namespace {

// A sample of `thread` at `ip` with `chain` as its call chain words.
struct Raw {
  Raw(machine::Thread* t, std::uint64_t i, std::vector<std::uint64_t> c)
      : thread(t), ip(i), chain(std::move(c)) {}
  machine::Thread* thread = nullptr;
  std::uint64_t ip = 0;
  std::vector<std::uint64_t> chain;
  std::uint32_t cpu = 0;
  std::size_t event = 0;
  record::Sample sample;
  RawSample get() {
    sample.ip = ip;
    sample.cpu = cpu;
    sample.callchain =
        record::U64Array(reinterpret_cast<const std::uint8_t*>(chain.data()), chain.size(), false);
    return RawSample{event, &sample, 2, thread, {}};
  }
};

TEST(RawKeyTable, FindsWhatTheFirstOfARepeatResolvedTo) {
  machine::Thread t1, t2;
  RawKeyTable table({false, true});
  Raw a{&t1, 0x1000, {0x1000, 0x2000, 0x3000}};
  EXPECT_EQ(table.find(a.get(), 1), RawKeyTable::kNone);
  table.insert(7);
  Raw again = a;  // same content, another record
  EXPECT_EQ(table.find(again.get(), 1), 7u);
  // Anything in the key told apart: the chain, its length, the ip, the
  // thread, the event, the generation.
  Raw other_chain = a, shorter = a, other_ip = a, other_thread = a, other_event = a;
  other_chain.chain[2] = 0x3008;
  shorter.chain.pop_back();
  other_ip.ip = 0x1008;
  other_thread.thread = &t2;
  other_event.event = 1;
  for (Raw* r : {&other_chain, &shorter, &other_ip, &other_thread, &other_event})
    EXPECT_EQ(table.find(r->get(), 1), RawKeyTable::kNone);
  EXPECT_EQ(table.find(again.get(), 2), RawKeyTable::kNone);
  // Only the last miss is kept by insert().
  table.insert(9);
  EXPECT_EQ(table.find(again.get(), 2), 9u);
  EXPECT_EQ(table.find(other_event.get(), 1), RawKeyTable::kNone);
  EXPECT_EQ(table.size(), 2u);
  // The cpu counts only when asked to.
  Raw cpu1 = a;
  cpu1.cpu = 1;
  EXPECT_EQ(table.find(cpu1.get(), 1), 7u);
  RawKeyTable by_cpu({true, true});
  EXPECT_EQ(by_cpu.find(a.get(), 1), RawKeyTable::kNone);
  by_cpu.insert(1);
  EXPECT_EQ(by_cpu.find(cpu1.get(), 1), RawKeyTable::kNone);
  table.clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(again.get(), 1), RawKeyTable::kNone);
}

TEST(RawKeyTable, ManyKeysEachFindTheirOwn) {
  machine::Thread t;
  RawKeyTable table({false, true});
  std::vector<Raw> raws;
  for (std::uint64_t i = 0; i < 5000; ++i)
    raws.emplace_back(&t, i, std::vector<std::uint64_t>{i, i * 3, 42});
  for (std::size_t i = 0; i < raws.size(); ++i) {
    ASSERT_EQ(table.find(raws[i].get(), 1), RawKeyTable::kNone);
    table.insert(static_cast<std::uint32_t>(i));
  }
  for (std::size_t i = 0; i < raws.size(); ++i) ASSERT_EQ(table.find(raws[i].get(), 1), i);
  EXPECT_GT(table.bytes(), raws.size() * 3 * 8);
}

// A chain is known by its digest: one read ahead on another thread stands
// for the words (which need not stay), and the words are not kept.
TEST(RawKeyTable, AChainIsKnownByItsDigest) {
  machine::Thread t;
  RawKeyTable table({false, true});
  Raw a{&t, 0x1000, {0x1000, 0x2000, 0x3000}};
  EXPECT_EQ(table.find(a.get(), 1), RawKeyTable::kNone);
  table.insert(3);
  // The same chain read ahead: its digest given, the words made elsewhere.
  Raw ahead = a;
  RawSample r = ahead.get();
  r.chain_digest = record::callchain_digest(r.sample->callchain.bytes());
  EXPECT_EQ(table.find(r, 1), 3u);
  // The words are not compared at all: other words of the same length
  // with the first chain's digest read ahead are taken for it.
  Raw same_digest{&t, 0x1000, {0x1000, 0x2000, 0x3008}};
  RawSample d = same_digest.get();
  d.chain_digest = r.chain_digest;
  EXPECT_EQ(table.find(d, 1), 3u);
  // A digest that is not the chain's is another chain.
  Raw other{&t, 0x1000, {0x1000, 0x2000, 0x3000}};
  RawSample o = other.get();
  o.chain_digest = record::callchain_digest(Bytes());
  EXPECT_EQ(table.find(o, 1), RawKeyTable::kNone);
}

}  // namespace
}  // namespace perfkit::session
