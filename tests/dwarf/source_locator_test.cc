// SourceLocator against GNU addr2line (the program perf 6.1 runs): for
// addresses spread over the code of several binaries — a test program with
// inlining built here, the cpuloop workload, libc (DWARF in a separate debug
// file found by build-id), ld.so and a stripped program (ELF symbols only) —
// `addr2line -e FILE -i -f` and the locator must give the same frames.
#include "dwarf/source_locator.h"

#include <elf.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "elf/elf_file.h"
#include "support/test_support.h"

namespace perfkit::dwarf {
namespace {

bool have_addr2line() { return access("/usr/bin/addr2line", X_OK) == 0; }

// addr2line's text for one address, without discriminators.
std::string format(bool found, const std::vector<SourceFrame>& frames) {
  if (!found) return "??\n??:0\n";
  std::string out;
  for (const auto& f : frames) {
    out += f.function.empty() ? std::string("??") : std::string(f.function);
    out += '\n';
    out += f.has_file ? std::string(f.file) : std::string("??");
    out += ':';
    out += f.line ? std::to_string(f.line) : std::string("?");
    out += '\n';
  }
  return out;
}

// Runs addr2line once for all addresses; each answer ends at the "??\n??:0"
// the extra "," query prints (the way perf reads it).
std::vector<std::string> addr2line(const std::string& file,
                                   const std::vector<std::uint64_t>& addrs) {
  test::TempDir dir;
  std::string in;
  for (auto a : addrs) in += fmt::format("{:016x}\n,\n", a);
  test::write_file(dir.path("in"), in);
  auto r = test::run("addr2line -e " + test::sh(file) + " -i -f < " + dir.path("in"));
  std::vector<std::string> out;
  std::istringstream s(r.out);
  std::string fn, loc, cur;
  // Records come in pairs of lines; a "??" + "??:0" pair closes an answer,
  // except that an unknown address answers with two such pairs.
  while (std::getline(s, fn) && std::getline(s, loc)) {
    auto d = loc.find(" (discriminator");
    if (d != std::string::npos) loc.resize(d);
    if (fn == "??" && loc == "??:0") {
      if (cur.empty()) {
        out.push_back("??\n??:0\n");
        std::getline(s, fn);  // the sentinel pair that follows
        std::getline(s, loc);
      } else {
        out.push_back(cur);
      }
      cur.clear();
      continue;
    }
    cur += fn + "\n" + loc + "\n";
  }
  return out;
}

// Addresses every `step` bytes through the executable sections, plus each
// function symbol's start and start+1.
std::vector<std::uint64_t> sample_addresses(const std::string& file, std::uint64_t step) {
  std::vector<std::uint64_t> out;
  auto f = elf::ElfFile::open(file);
  if (!f) return out;
  for (const auto& s : f->sections()) {
    if (!(s.flags & SHF_EXECINSTR) || !(s.flags & SHF_ALLOC)) continue;
    for (std::uint64_t a = s.addr; a < s.addr + s.size; a += step) out.push_back(a);
  }
  out.push_back(0x10);  // outside every section
  return out;
}

void compare(const std::string& file, std::uint64_t step, std::size_t max = 4000) {
  if (!have_addr2line()) GTEST_SKIP() << "addr2line is not installed";
  auto loc = SourceLocator::open(file);
  ASSERT_TRUE(loc) << loc.error().message();
  std::vector<std::uint64_t> addrs = sample_addresses(file, step);
  if (addrs.size() > max) addrs.resize(max);
  auto expected = addr2line(file, addrs);
  ASSERT_EQ(expected.size(), addrs.size()) << file;
  std::vector<SourceFrame> frames;
  int bad = 0;
  std::string msg;
  for (std::size_t i = 0; i < addrs.size(); ++i) {
    bool found = (*loc)->lookup(addrs[i], frames);
    std::string got = format(found, frames);
    if (got == expected[i]) continue;
    if (bad++ < 5)
      msg += fmt::format("{:#x}:\n addr2line:\n{} locator:\n{}", addrs[i], expected[i], got);
  }
  EXPECT_EQ(bad, 0) << file << " (DWARF from " << (*loc)->dwarf_path() << "), " << bad << " of "
                    << addrs.size() << " differ:\n"
                    << msg;
}

const char* kInlineProgram = R"(
#include <stdlib.h>
static volatile unsigned long sink;
static inline __attribute__((always_inline)) unsigned long leaf(unsigned long x) {
  for (int i = 0; i < 100; i++) x = x * 3 + i;
  return x;
}
static inline __attribute__((always_inline)) unsigned long mid(unsigned long x) {
  sink += leaf(x);
  return leaf(x + 1);
}
__attribute__((noinline)) unsigned long outer(unsigned long x) { return mid(x) + 1; }
static __attribute__((noinline)) unsigned long helper(unsigned long x, int k) {
  return k ? outer(x) * 2 : x;
}
int main(int argc, char** argv) {
  unsigned long s = 0;
  for (long i = 0; i < argc * 1000; i++) s += helper(i, argc);
  return (int)(s & 1);
}
)";

TEST(SourceLocator, MatchesAddr2lineOnInlinedCode) {
  test::TempDir dir;
  test::write_file(dir.path("inl.c"), kInlineProgram);
  auto r = test::run("cc -O2 -g -o " + dir.path("inl") + " " + dir.path("inl.c"));
  if (r.status != 0) GTEST_SKIP() << "no C compiler: " << r.err;
  compare(dir.path("inl"), 1);
  auto stripped = test::run("strip -o " + dir.path("inl.stripped") + " " + dir.path("inl"));
  ASSERT_EQ(stripped.status, 0);
  compare(dir.path("inl.stripped"), 1);  // no DWARF, no .symtab: dynamic symbols only
}

// Debug sections compressed (SHF_COMPRESSED, zlib), as Debian's debug
// packages ship them: inflated by the ELF layer before libdw reads them.
TEST(SourceLocator, MatchesAddr2lineOnCompressedDebugSections) {
  test::TempDir dir;
  test::write_file(dir.path("inl.c"), kInlineProgram);
  auto r = test::run("cc -O2 -g -gz=zlib -o " + dir.path("inl") + " " + dir.path("inl.c"));
  if (r.status != 0) GTEST_SKIP() << "no C compiler with -gz=zlib: " << r.err;
  auto f = elf::ElfFile::open(dir.path("inl"));
  ASSERT_TRUE(f);
  const elf::Section* info = f->section(".debug_info");
  ASSERT_NE(info, nullptr);
  ASSERT_TRUE(info->flags & SHF_COMPRESSED);
  auto plain =
      test::run("objcopy --decompress-debug-sections " + dir.path("inl") + " " + dir.path("plain"));
  ASSERT_EQ(plain.status, 0) << plain.err;
  auto g = elf::ElfFile::open(dir.path("plain"));
  ASSERT_TRUE(g);
  for (const char* name : {".debug_info", ".debug_line", ".debug_str", ".debug_abbrev"}) {
    const elf::Section* s = f->section(name);
    if (!s) continue;
    Bytes a = f->section_data(*s), b = g->section_data(*g->section(name));
    ASSERT_FALSE(a.empty()) << name;
    EXPECT_TRUE(a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin())) << name;
  }
  compare(dir.path("inl"), 1);
}

TEST(SourceLocator, MatchesAddr2lineOnTheWorkload) { compare(test::workload("cpuloop"), 1); }

TEST(SourceLocator, MatchesAddr2lineOnSystemLibraries) {
  for (const char* f : {"/usr/lib/x86_64-linux-gnu/libc.so.6",
                        "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "/usr/bin/bash"}) {
    if (access(f, R_OK) != 0) continue;
    SCOPED_TRACE(f);
    compare(f, 97);
  }
}

// A compressed .debug_info inflated only as far as lookups reach answers
// as the whole section does, in whatever order the addresses come: the
// function starts of libc (its debug file: zlib sections, .debug_aranges)
// and addresses every 509 bytes, ascending, descending and shuffled.
TEST(SourceLocator, LazyDebugInfoAnswersAsTheWholeSection) {
  const std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  auto whole = SourceLocator::open(libc, LocatorOptions{.lazy_debug_info = false});
  ASSERT_TRUE(whole) << whole.error().message();
  if ((*whole)->dwarf_path().empty()) {
    if (test::in_ci()) FAIL() << "libc's debug file (libc6-dbg) is not installed";
    GTEST_SKIP() << "libc's debug file (libc6-dbg) is not installed";
  }
  auto f = elf::ElfFile::open((*whole)->dwarf_path());
  ASSERT_TRUE(f);
  const elf::Section* info = f->section(".debug_info");
  ASSERT_TRUE(info && (info->flags & SHF_COMPRESSED) && f->section(".debug_aranges"));
  std::vector<std::uint64_t> addrs = sample_addresses(libc, 509);
  auto exe = elf::ElfFile::open(libc);
  ASSERT_TRUE(exe);
  for (const auto& s : exe->sections()) {
    if (s.type != SHT_DYNSYM) continue;
    Bytes b = exe->section_data(s);
    for (std::size_t at = 0; at + sizeof(Elf64_Sym) <= b.size(); at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, b.data() + at, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value) addrs.push_back(sym.st_value);
    }
  }
  std::vector<std::string> expected;
  std::vector<SourceFrame> frames;
  for (std::uint64_t a : addrs) expected.push_back(format((*whole)->lookup(a, frames), frames));
  std::vector<std::size_t> order(addrs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<std::vector<std::size_t>> orders{order, {order.rbegin(), order.rend()}, order};
  std::uint64_t x = 88172645463325252ULL;  // xorshift: the same shuffle each run
  for (std::size_t i = orders[2].size(); i > 1; --i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::swap(orders[2][i - 1], orders[2][x % i]);
  }
  for (const auto& o : orders) {
    auto lazy = SourceLocator::open(libc);
    ASSERT_TRUE(lazy);
    int bad = 0;
    for (std::size_t i : o) {
      std::string got = format((*lazy)->lookup(addrs[i], frames), frames);
      if (got != expected[i] && bad++ < 3)
        ADD_FAILURE() << fmt::format("{:#x}: whole:\n{}lazy:\n{}", addrs[i], expected[i], got);
    }
    EXPECT_EQ(bad, 0) << "of " << addrs.size();
  }
}

// The ELF layer's lazy inflation: each ensure() leaves the section's first
// bytes as the whole inflation has them, the rest zero; a corrupt stream
// fails (at the latest at its Adler-32) instead of reading as data.
TEST(LazySection, InflatesAsFarAsAskedAndEndsAsTheWholeSection) {
  auto whole = SourceLocator::open("/usr/lib/x86_64-linux-gnu/libc.so.6");
  ASSERT_TRUE(whole);
  if ((*whole)->dwarf_path().empty()) {
    if (test::in_ci()) FAIL() << "libc's debug file (libc6-dbg) is not installed";
    GTEST_SKIP() << "libc's debug file (libc6-dbg) is not installed";
  }
  const std::string path = (*whole)->dwarf_path();
  auto a = elf::ElfFile::open(path), b = elf::ElfFile::open(path);
  ASSERT_TRUE(a && b);
  Bytes plain = a->section_data(*a->section(".debug_info"));
  ASSERT_FALSE(plain.empty());
  elf::LazySection* lz = b->inflate_lazily(*b->section(".debug_info"));
  ASSERT_NE(lz, nullptr);
  EXPECT_EQ(lz->size(), plain.size());
  EXPECT_EQ(lz->ready(), 0u);
  Bytes data = b->section_data(*b->section(".debug_info"));
  ASSERT_EQ(data.size(), plain.size());
  for (std::uint64_t end :
       {std::uint64_t{1}, std::uint64_t{300000}, plain.size() / 2, std::uint64_t{plain.size()}}) {
    ASSERT_TRUE(lz->ensure(end)) << end;
    ASSERT_GE(lz->ready(), end);
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + lz->ready(), plain.begin())) << end;
    EXPECT_TRUE(std::all_of(data.begin() + lz->ready(), data.end(), [](auto c) { return c == 0; }));
  }
  EXPECT_TRUE(lz->complete());

  // The same bytes with some of the compressed stream overwritten.
  const elf::Section* info = a->section(".debug_info");
  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t k = 0; k < 64; ++k) file[info->offset + info->size / 2 + k] ^= 0x5a;
  test::TempDir dir;
  test::write_file(dir.path("corrupt"), file);
  auto c = elf::ElfFile::open(dir.path("corrupt"));
  ASSERT_TRUE(c);
  elf::LazySection* bad = c->inflate_lazily(*c->section(".debug_info"));
  ASSERT_NE(bad, nullptr);
  EXPECT_TRUE(bad->ensure(1000));  // (the stream's start is intact)
  EXPECT_FALSE(bad->ensure(bad->size()));
  EXPECT_FALSE(bad->complete());
}

// With link-time optimization GCC's DWARF refers across units
// (DW_FORM_ref_addr): a lazily inflated .debug_info is then inflated whole
// before such a unit is read.
TEST(SourceLocator, MatchesAddr2lineOnLtoCodeWithCompressedDebugSections) {
  test::TempDir dir;
  test::write_file(dir.path("a.c"), R"(
static inline __attribute__((always_inline)) unsigned long leaf(unsigned long x) {
  for (int i = 0; i < 100; i++) x = x * 3 + i;
  return x;
}
unsigned long helper(unsigned long x);
unsigned long outer(unsigned long x) { return leaf(x) + helper(x); }
)");
  test::write_file(dir.path("b.c"), R"(
unsigned long outer(unsigned long x);
__attribute__((noinline)) unsigned long helper(unsigned long x) { return x * 7; }
int main(int argc, char** argv) {
  unsigned long s = 0;
  for (long i = 0; i < argc * 1000; i++) s += outer(i);
  return (int)(s & 1);
}
)");
  auto r = test::run("cc -O2 -g -flto -gz=zlib -o " + dir.path("lto") + " " + dir.path("a.c") +
                     " " + dir.path("b.c"));
  if (r.status != 0) GTEST_SKIP() << "no C compiler with -flto -gz=zlib: " << r.err;
  auto abbrevs = test::run("readelf --debug-dump=abbrev " + dir.path("lto"));
  ASSERT_NE(abbrevs.out.find("DW_FORM_ref_addr"), std::string::npos);
  compare(dir.path("lto"), 1);
}

TEST(SourceLocator, OpenErrorsNameTheFile) {
  auto missing = SourceLocator::open("/nonexistent/file");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("/nonexistent/file"), std::string::npos);
  test::TempDir dir;
  test::write_file(dir.path("text"), "not an ELF file\n");
  EXPECT_FALSE(SourceLocator::open(dir.path("text")));
}

}  // namespace
}  // namespace perfkit::dwarf
