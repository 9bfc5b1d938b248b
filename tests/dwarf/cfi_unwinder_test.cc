// The CFI unwinder on this very process: a chain of functions captures its
// registers and a copy of its stack, as the kernel does for a
// --call-graph dwarf sample, and the unwinder must find the same callers as
// glibc's backtrace() (libgcc's unwinder over the same .eh_frame), with
// perf's convention that callers are shown at return address - 1.
#include "dwarf/cfi_unwinder.h"

#include <execinfo.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace perfkit::dwarf {
namespace {

struct Mapping {
  std::uint64_t start = 0, end = 0, offset = 0;
  std::string path;
};

std::vector<Mapping> self_maps() {
  std::vector<Mapping> out;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string range, perms, off, dev, inode, path;
    s >> range >> perms >> off >> dev >> inode >> path;
    Mapping m;
    m.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    m.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    m.offset = std::stoull(off, nullptr, 16);
    m.path = path;
    out.push_back(m);
  }
  return out;
}

// The kernel's view of a sample: registers and the stack from %rsp up.
struct Capture {
  UnwindRegs regs;
  std::vector<std::uint8_t> stack;
  std::uint64_t sp = 0;
  void* backtrace[32] = {};
  int depth = 0;
};

class SelfTarget final : public UnwindTarget {
 public:
  explicit SelfTarget(const Capture& c) : c_(c), maps_(self_maps()) {}

  UnwindTables* tables_at(std::uint64_t pc, std::uint64_t& bias) override {
    const Mapping* m = find(pc);
    if (!m || m->path.empty() || m->path[0] != '/') return nullptr;
    auto& t = tables_[m->path];
    if (!t) {
      auto opened = UnwindTables::open(m->path);
      if (!opened) return nullptr;
      t = std::move(*opened);
    }
    std::uint64_t vaddr;
    if (!t->offset_to_vaddr(pc - m->start + m->offset, vaddr)) return nullptr;
    bias = pc - vaddr;
    return t.get();
  }

  bool read(std::uint64_t addr, std::uint64_t& out) override {
    if (addr >= c_.sp && addr + 8 < c_.sp + c_.stack.size()) {
      std::memcpy(&out, c_.stack.data() + (addr - c_.sp), 8);
      return true;
    }
    const Mapping* m = find(addr);
    if (!m || m->path.empty() || m->path[0] != '/') return false;
    std::uint64_t bias;
    UnwindTables* t = tables_at(addr, bias);
    return t && t->read_file(addr - m->start + m->offset, out);
  }

 private:
  const Mapping* find(std::uint64_t a) const {
    for (const auto& m : maps_)
      if (a >= m.start && a < m.end) return &m;
    return nullptr;
  }
  const Capture& c_;
  std::vector<Mapping> maps_;
  std::map<std::string, std::unique_ptr<UnwindTables>> tables_;
};

// Reads other frames' bytes on purpose: not for AddressSanitizer to check.
__attribute__((noinline, no_sanitize_address)) void copy_stack(Capture& c, std::uint64_t top) {
  c.stack.resize(top - c.sp);
  const volatile std::uint8_t* from = reinterpret_cast<const volatile std::uint8_t*>(c.sp);
  for (std::size_t i = 0; i < c.stack.size(); ++i) c.stack[i] = from[i];
}

__attribute__((noinline)) void capture(Capture& c) {
  std::uint64_t r[9];
  // One instruction's view of the registers: rip is the lea's own address.
  asm volatile(
      "lea 0(%%rip), %%rax\n\t"
      "mov %%rax, 0(%0)\n\t"
      "mov %%rsp, 8(%0)\n\t"
      "mov %%rbp, 16(%0)\n\t"
      "mov %%rbx, 24(%0)\n\t"
      "mov %%r12, 32(%0)\n\t"
      "mov %%r13, 40(%0)\n\t"
      "mov %%r14, 48(%0)\n\t"
      "mov %%r15, 56(%0)\n\t"
      :
      : "r"(r)
      : "rax", "memory");
  c.regs.set(kRegRip, r[0]);
  c.regs.set(kRegRsp, r[1]);
  c.regs.set(kRegRbp, r[2]);
  c.regs.set(3, r[3]);
  for (int i = 0; i < 4; ++i) c.regs.set(12 + i, r[4 + i]);
  c.sp = r[1];
  // Copy up to 32 KiB of stack, not past its mapping.
  std::uint64_t top = c.sp + 32768;
  for (const auto& m : self_maps())
    if (c.sp >= m.start && c.sp < m.end) top = std::min(top, m.end);
  copy_stack(c, top);
  c.depth = backtrace(c.backtrace, 32);
}

__attribute__((noinline)) void level3(Capture& c) {
  capture(c);
  asm volatile("" ::: "memory");
}
__attribute__((noinline)) void level2(Capture& c, int n) {
  if (n > 0)
    level2(c, n - 1);
  else
    level3(c);
  asm volatile("" ::: "memory");
}
__attribute__((noinline)) void level1(Capture& c) {
  level2(c, 3);
  asm volatile("" ::: "memory");
}

TEST(CfiUnwinder, FindsTheCallersBacktraceFinds) {
  Capture c;
  level1(c);
  ASSERT_GT(c.depth, 8);
  SelfTarget target(c);
  std::vector<std::uint64_t> ips;
  unwind_stack(c.regs, target, 64, ips);
  // backtrace()[0] is inside capture() (after its call to backtrace); from
  // [1] on they are return addresses, which perf shows minus one.
  ASSERT_GE(ips.size(), 8u) << "unwound only " << ips.size() << " frames";
  // Under AddressSanitizer backtrace() is intercepted: its [0] is then in
  // the interceptor, and capture() is [1].
  int shift = 0;
  if (c.depth > 2 && reinterpret_cast<std::uint64_t>(c.backtrace[1]) != ips[1] + 1 &&
      reinterpret_cast<std::uint64_t>(c.backtrace[2]) == ips[1] + 1)
    shift = 1;
  int compared = 0;
  for (int i = 1; i + shift < c.depth && static_cast<std::size_t>(i) < ips.size(); ++i, ++compared)
    EXPECT_EQ(ips[i] + 1, reinterpret_cast<std::uint64_t>(c.backtrace[i + shift])) << "frame " << i;
  EXPECT_GE(compared, 8);
  EXPECT_EQ(ips[0], c.regs.value[kRegRip]);
}

TEST(CfiUnwinder, RespectsTheFrameLimit) {
  Capture c;
  level1(c);
  SelfTarget target(c);
  std::vector<std::uint64_t> ips;
  unwind_stack(c.regs, target, 3, ips);
  EXPECT_EQ(ips.size(), 3u);
  ips.clear();
  unwind_stack(c.regs, target, 1, ips);
  EXPECT_EQ(ips.size(), 1u);
}

TEST(CfiUnwinder, StopsWhereTheStackCopyEnds) {
  Capture c;
  level1(c);
  c.stack.resize(64);  // too little to reach the callers' frames
  SelfTarget target(c);
  std::vector<std::uint64_t> ips;
  unwind_stack(c.regs, target, 64, ips);
  EXPECT_GE(ips.size(), 1u);
  EXPECT_LT(ips.size(), 5u);
}

TEST(CfiUnwinder, OpenErrorsNameTheFile) {
  auto t = UnwindTables::open("/nonexistent/lib.so");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message().find("/nonexistent/lib.so"), std::string::npos);
}

}  // namespace
}  // namespace perfkit::dwarf
