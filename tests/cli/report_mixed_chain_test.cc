// perfkit report against perf report on a generated file whose call chains
// mix, at one level of the call graph, frames resolved to a symbol and
// frames of the same DSO that resolve to none. perf's match_chain compares
// the first kind by symbol start (in the DSO) but the two kinds with each
// other by address (in the process); two processes of one command map the
// DSO at different addresses, so the children of such a level are not
// consistently ordered: which node a chain lands in depends on the tree's
// shape when it comes, and a function can show twice. The samples repeat (as a profile's do) and
// interleave, so a report that counted repeats together (analysis/
// report_fold.h) rather than one by one would differ from perf's.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "abi/perf_event.h"
#include "perfdata/writer.h"
#include "record/encode.h"
#include "report_compare.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

using namespace perfkit::abi;
using record::RecordBuilder;

// Two processes: the second maps the DSO a page higher, so its text lies
// over the first one's read-only data.
constexpr std::uint64_t kBase[2] = {0x555555554000, 0x555555555000};
constexpr std::uint32_t kPid[2] = {4242, 4243};
constexpr std::uint64_t kContextUserMark = static_cast<std::uint64_t>(-512);

// Offsets of `binary`'s functions (nm), each a little inside its symbol.
std::vector<std::uint64_t> function_offsets(const std::string& binary) {
  auto r = test::run("nm -n " + test::sh(binary));
  std::vector<std::uint64_t> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string addr, type, name;
    if (!(l >> addr >> type >> name)) continue;  // undefined: no address
    if ((type == "t" || type == "T") && name != "_init" && name != "_fini")
      out.push_back(std::stoull(addr, nullptr, 16) + 1);
  }
  return out;
}

// A small deterministic generator (the file must be the same every run).
struct Lcg {
  std::uint64_t s;
  std::uint32_t next(std::uint32_t n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>((s >> 33) % n);
  }
};

std::vector<std::vector<std::uint64_t>> make_chains(const std::vector<std::uint64_t>& frames,
                                                    Lcg& rng, std::size_t n) {
  std::vector<std::vector<std::uint64_t>> chains;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint64_t> c;
    const std::uint32_t depth = 2 + rng.next(5);
    for (std::uint32_t d = 0; d < depth; ++d) c.push_back(frames[rng.next(frames.size())]);
    chains.push_back(c);
  }
  return chains;
}

// Offsets below this are in the DSO; frames from it on are addresses.
constexpr std::uint64_t kAbsolute = 0x10000;

// `binary` mapped whole (its text and read-only data) in both processes,
// and `samples` cpu-clock samples of chains drawn unevenly from a pool;
// with `garbage`, the pool has unmapped addresses all round the address
// circle too, as a stack walk through data finds them.
std::string write_file(const std::string& path, const std::string& binary, std::size_t samples,
                       bool garbage) {
  std::vector<std::uint64_t> frames = function_offsets(binary);
  if (frames.size() < 6) return "too few functions in " + binary;
  // .rodata: mapped, in the DSO, in no symbol
  for (std::uint64_t off : {0x2010, 0x2048, 0x2090, 0x20d8}) frames.push_back(off);
  Lcg pool{0xa11};
  for (int i = 0; garbage && i < 64; ++i) {
    // below the kernel's half of x86-64 addresses and above kAbsolute
    std::uint64_t ip = (std::uint64_t{pool.next(0xffff)} << 48) |
                       (std::uint64_t{pool.next(1u << 24)} << 24) | pool.next(1u << 24);
    frames.push_back(std::max(ip, kAbsolute));
  }

  perfdata::EventSet events;
  EventAttr a;
  a.type = kTypeSoftware;
  a.config = 0;  // cpu-clock
  a.sample_period = 1000;
  a.sample_type = kSampleIp | kSampleTid | kSampleTime | kSamplePeriod | kSampleCallchain;
  a.set(kAttrSampleIdAll);
  a.set(kAttrDisabled);
  events.add(a, {7});
  const RecordLayout& layout = events[0].layout;

  std::vector<std::vector<std::uint8_t>> records;
  auto trailer = [&](RecordBuilder& b, std::uint32_t pid, std::uint64_t time) {
    record::SampleId s;
    s.pid = pid;
    s.tid = pid;
    s.time = time;
    records.push_back(b.sample_id(s, layout).finish());
  };
  for (int p = 0; p < 2; ++p) {
    RecordBuilder comm(kRecordComm);
    comm.u32(kPid[p]).u32(kPid[p]).string("mixed");
    trailer(comm, kPid[p], 1);
    RecordBuilder mmap(kRecordMmap, kMiscUser);
    mmap.u32(kPid[p]).u32(kPid[p]).u64(kBase[p]).u64(0x3000).u64(0).string(binary);
    trailer(mmap, kPid[p], 2);
  }

  Lcg rng{0x5eed};
  auto chains = make_chains(frames, rng, 48);
  for (std::size_t i = 0; i < samples; ++i) {
    // uneven: low indexes far more often, so that chains repeat
    const std::uint32_t k = rng.next(static_cast<std::uint32_t>(chains.size()));
    const auto& c = chains[rng.next(k + 1)];
    const std::uint32_t p = rng.next(2);
    RecordBuilder b(kRecordSample, kMiscUser);
    auto ip = [&](std::uint64_t f) { return f < kAbsolute ? kBase[p] + f : f; };
    b.u64(ip(c[0])).u32(kPid[p]).u32(kPid[p]).u64(1000 + i).u64(1000);
    b.u64(c.size() + 1).u64(kContextUserMark);
    for (std::uint64_t f : c) b.u64(ip(f));
    records.push_back(b.finish());
  }

  auto w = perfdata::Writer::create(path, {});
  if (!w) return w.error().message();
  if (auto st = (*w)->begin(events); !st) return st.error().message();
  for (const auto& r : records)
    if (auto st = (*w)->write(r); !st) return st.error().message();
  if (auto st = (*w)->finish(events, {}); !st) return st.error().message();
  return "";
}

// Diffs perfkit report against perf report on `file` in each of `modes`;
// returns how many were compared.
int expect_same_as_perf(const std::string& file, std::initializer_list<const char*> modes) {
  int compared = 0;
  for (const char* mode : modes) {
    auto p = test::run("perf report --stdio -i " + test::sh(file) + " " + mode);
    EXPECT_EQ(p.status, 0) << p.err;
    auto k = test::run(test::perfkit_bin() + " report --stdio -i " + test::sh(file) + " " + mode);
    EXPECT_EQ(k.status, 0) << k.err;
    if (p.status != 0 || k.status != 0) break;
    EXPECT_EQ(test::report_mismatches(p.out, k.out), "") << "[" << mode << "]";
    ++compared;
  }
  return compared;
}

TEST(ReportMixedChains, ResolvedAndUnresolvedSiblingsLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  const std::string binary = test::workload("cpuloop");
  test::TempDir tmp;
  const std::string file = tmp.path("mixed.data");
  ASSERT_EQ(write_file(file, binary, 4000, false), "");
  const int compared =
      expect_same_as_perf(file, {"", "--no-children", "-g caller", "-g folded", "--sort sym",
                                 "--no-children --sort sym", "--sort comm,sym"});
  EXPECT_EQ(compared, 7);
}

// Unresolved entries compare by the difference of their addresses as a
// signed number, which orders them only while they lie within half of the
// address circle: past that perf's entry tree can miss an equal entry, add
// a second one, and merge the two again (its comm key), keeping one's
// callchain depth, which then orders entries of equal Children.
TEST(ReportMixedChains, GarbageFramesRoundTheAddressCircleLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  const std::string binary = test::workload("cpuloop");
  test::TempDir tmp;
  const std::string file = tmp.path("garbage.data");
  ASSERT_EQ(write_file(file, binary, 4000, true), "");
  EXPECT_EQ(expect_same_as_perf(file, {"", "-g caller", "--children -g none",
                                       "--no-children -g none", "--sort sym", "--sort dso,sym"}),
            6);
}

}  // namespace
}  // namespace perfkit
