// SymbolTable follows perf's symbols__fixup_end / fixup_duplicate rules;
// demangling prints names as perf (libiberty, no options) does; kallsyms
// parsing keeps what perf keeps; the ELF loader sees what readelf sees.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "elf/elf_file.h"
#include "elf/elf_symbols.h"
#include "support/test_support.h"
#include "symbol/demangle.h"
#include "symbol/kallsyms.h"
#include "symbol/symbol_table.h"
#include "symbol/symbolizer.h"

namespace perfkit::symbol {
namespace {

TEST(SymbolTable, ZeroSizeSymbolsEndAtTheNextOne) {
  SymbolTable t;
  t.add(0x100, 0, kBindGlobal, kTypeFunc, "a");
  t.add(0x180, 0x10, kBindGlobal, kTypeFunc, "b");
  t.add(0x200, 0, kBindGlobal, kTypeFunc, "c");
  t.fixup(false);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.at(0).end, 0x180u);
  EXPECT_EQ(t.at(1).end, 0x190u);   // sized: kept
  EXPECT_EQ(t.at(2).end, 0x2000u);  // last: rounded up to a page, plus a page
  EXPECT_EQ(t.find(0x17f), 0);
  EXPECT_EQ(t.find(0x195), -1);  // in no symbol
  EXPECT_EQ(t.find(0x200), 2);
  EXPECT_EQ(t.find(0x50), -1);
}

TEST(SymbolTable, DuplicatesKeepPerfsBest) {
  SymbolTable t;
  t.add(0x10, 8, kBindWeak, kTypeFunc, "write");
  t.add(0x10, 8, kBindLocal, kTypeFunc, "__GI___libc_write");  // non-weak beats weak
  t.add(0x40, 0, kBindGlobal, kTypeFunc, "zero");
  t.add(0x40, 4, kBindGlobal, kTypeFunc, "sized");  // sized beats zero-size
  t.add(0x80, 4, kBindGlobal, kTypeFunc, "__x");
  t.add(0x80, 4, kBindGlobal, kTypeFunc, "x");  // fewer underscores
  t.add(0xc0, 4, kBindLocal, kTypeFunc, "loc");
  t.add(0xc0, 4, kBindGlobal, kTypeFunc, "glob");  // global beats local
  t.fixup(false);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.name(0), "__GI___libc_write");
  EXPECT_EQ(t.name(1), "sized");
  EXPECT_EQ(t.name(2), "x");
  EXPECT_EQ(t.name(3), "glob");
}

// A zero-size _init grows over .plt before the stubs are added, so they
// overlap it; perf answers with the first symbol containing the address on
// its tree's path from the root, which depends on the tree's shape.
TEST(SymbolTable, OverlapsResolveAsPerfsTreeWalk) {
  {
    SymbolTable t;  // _init alone: the stub hangs below it
    t.track_perf_tree();
    t.add(0x1000, 0, kBindGlobal, kTypeFunc, "_init");
    t.fixup(false);
    t.add(0x1010, 0x10, kBindGlobal, kTypeFunc, "a@plt");
    t.sort_only();
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t.name(static_cast<std::size_t>(t.find(0x1014))), "_init");
    EXPECT_EQ(t.name(static_cast<std::size_t>(t.find(0x1024))), "_init");
  }
  {
    SymbolTable t;  // with _start the first stub's insert rotates it to the root
    t.track_perf_tree();
    t.add(0x1000, 0, kBindGlobal, kTypeFunc, "_init");
    t.add(0x1100, 0x10, kBindGlobal, kTypeFunc, "_start");
    t.fixup(false);
    t.add(0x1010, 0x10, kBindGlobal, kTypeFunc, "a@plt");
    t.add(0x1020, 0x10, kBindGlobal, kTypeFunc, "b@plt");
    t.sort_only();
    EXPECT_EQ(t.name(static_cast<std::size_t>(t.find(0x1014))), "a@plt");
    EXPECT_EQ(t.name(static_cast<std::size_t>(t.find(0x1024))), "b@plt");
    EXPECT_EQ(t.name(static_cast<std::size_t>(t.find(0x1004))), "_init");
    // In _init's range, but the walk passes _init by (perf prints [unknown]).
    EXPECT_EQ(t.find(0x1034), -1);
    EXPECT_EQ(t.find(0x1110), -1);
  }
  {
    SymbolTable t;  // untracked: the innermost symbol
    t.add(0x1000, 0, kBindGlobal, kTypeFunc, "_init");
    t.fixup(false);
    t.add(0x1010, 0x10, kBindGlobal, kTypeFunc, "a@plt");
    t.sort_only();
    EXPECT_EQ(t.name(static_cast<std::size_t>(t.find(0x1014))), "a@plt");
  }
}

// The tree's erasures (duplicates dropped) keep it a valid search tree.
TEST(SymbolTable, TrackedDuplicatesAreErasedFromTheTree) {
  SymbolTable t;
  t.track_perf_tree();
  for (std::uint64_t i = 0; i < 200; ++i) {
    t.add(0x1000 + i * 0x10, 0x10, kBindWeak, kTypeFunc, fmt::format("w{}", i));
    if (i % 3 == 0) t.add(0x1000 + i * 0x10, 0x10, kBindGlobal, kTypeFunc, fmt::format("g{}", i));
  }
  t.fixup(false);
  ASSERT_EQ(t.size(), 200u);
  for (std::uint64_t i = 0; i < 200; ++i) {
    int at = t.find(0x1000 + i * 0x10 + 4);
    ASSERT_GE(at, 0) << i;
    EXPECT_EQ(t.name(static_cast<std::size_t>(at)), fmt::format("{}{}", i % 3 ? 'w' : 'g', i));
  }
  t.add(0x1004, 0x8, kBindGlobal, kTypeFunc, "inner");  // an overlap: the tree walk answers
  t.sort_only();
  EXPECT_GE(t.find(0x1006), 0);
  EXPECT_EQ(t.find(0x2000), -1);
}

TEST(Demangle, LikePerfWithoutParameters) {
  EXPECT_EQ(demangle("_ZNK2ns1K4spinIlEElT_"), "ns::K::spin<long>");
  EXPECT_EQ(demangle("_ZN2ns1fEi"), "ns::f");
  EXPECT_EQ(demangle("_ZN2ns1fEi", true), "ns::f(int)");
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("_Znwm"), "operator new");
  // Templates of operators: the operator's own '<' is no bracket, and a
  // return type before the name goes (as perf's names have them).
  EXPECT_EQ(demangle("_ZStltIcSt11char_traitsIcESaIcEEbRKNSt7__cxx1112basic_stringIT_T0_T1_EESA_"),
            "std::operator< <char, std::char_traits<char>, std::allocator<char> >");
  EXPECT_EQ(
      demangle("_ZN9__gnu_cxxmiIPiSt6vectorIiSaIiEEEENS_17__normal_iteratorIT_T0_E15difference_"
               "typeERKS8_SB_"),
      "__gnu_cxx::operator-<int*, std::vector<int, std::allocator<int> > >");
  EXPECT_EQ(demangle("_ZlsRSoRKi"), "operator<<");
  EXPECT_EQ(demangle("_Z3bad_not_mangled"), "_Z3bad_not_mangled");
}

TEST(Kallsyms, KeepsTextAndDataLikePerf) {
  auto k = parse_kallsyms(
      "ffffffff81000000 T _text\n"
      "ffffffff81000010 t local_fn\n"
      "ffffffff81000020 r rodata_sym\n"
      "ffffffff81000030 W weak_fn\n"
      "ffffffff81000040 D data_sym\n"
      "bad line\n");
  EXPECT_EQ(k.ref_reloc_addr, 0xffffffff81000000u);
  ASSERT_EQ(k.table.size(), 4u);  // 'r' dropped
  EXPECT_EQ(k.table.name(1), "local_fn");
  EXPECT_EQ(k.table.at(1).end, 0xffffffff81000030u);
  EXPECT_EQ(k.table.at(2).binding, kBindWeak);
  EXPECT_EQ(k.table.at(3).type, kTypeObject);
}

namespace {

using StartsAndNames = std::vector<std::pair<std::uint64_t, std::string>>;

StartsAndNames starts_and_names(const KallsymsInfo& k) {
  StartsAndNames got;
  for (std::size_t i = 0; i < k.table.size(); ++i)
    got.emplace_back(k.table.at(i).start, std::string(k.table.name(i)));
  return got;
}

}  // namespace

// Lines of another shape than "16-digit-address type name[\tmodule]" take
// the general path and read as it always read them.
TEST(Kallsyms, OddLinesReadAsUsualLinesDo) {
  auto k = parse_kallsyms(
      "81000000 T short_address\n"
      "0xffffffff81000100 T with_prefix\n"
      "FFFFFFFF81000200 t upper_hex\n"
      "1ffffffff81000300 T seventeen_digits\n"
      "ffffffff81000400 T\n"
      "ffffffff8100050g T not_hex\n"
      "ffffffff81000600 T name with spaces\n"
      "ffffffff81000700 t mod_fn\t[mod]\textra\n"
      "ffffffff81000800 b bss_sym\n"
      "ffffffff81000900 T $x\n"
      "ffffffff81000a00 T  two_spaces\n");
  const StartsAndNames want = {
      {0x81000000, "short_address"},
      {0xffffffff81000100, "with_prefix"},
      {0xffffffff81000200, "upper_hex"},
      {0xffffffff81000600, "name with spaces"},
      {0xffffffff81000700, "mod_fn [mod]\textra"},  // (name() keeps the module)
      {0xffffffff81000800, "bss_sym"},
      {0xffffffff81000a00, " two_spaces"}};
  EXPECT_EQ(starts_and_names(k), want);
  EXPECT_EQ(k.table.at(2).binding, kBindLocal);
  EXPECT_EQ(k.table.at(5).type, kTypeObject);
}

// Addresses read 16 digits at a time: every digit and letter, either case,
// and the characters beside them in ASCII, which are no digits (those lines
// take the general path and are dropped there).
TEST(Kallsyms, EveryHexDigitAndItsNeighbours) {
  auto k = parse_kallsyms(
      "0123456789abcdef T digits_and_lower\n"
      "FEDCBA9876543210 T upper\n"
      "ffffffff8100050/ T slash\n"
      "ffffffff8100050: T colon\n"
      "ffffffff8100050@ T at\n"
      "ffffffff8100050G T big_g\n"
      "ffffffff8100050` T backtick\n"
      "ffffffff8100050g T small_g\n"
      "ffffffff8100050\xb0 T high_bit\n"
      "/fffffff81000500 T slash_first\n"
      "aBcDeF0000000000 T mixed\n");
  const StartsAndNames want = {{0x0123456789abcdef, "digits_and_lower"},
                               {0xabcdef0000000000, "mixed"},
                               {0xfedcba9876543210, "upper"}};
  EXPECT_EQ(starts_and_names(k), want);
}

// perf's kallsyms rule for the last symbol before a module's (a '[' in
// one name and not the other): it ends at the next page but one. A '[' is
// found anywhere in a name, on the usual path and the general one alike.
TEST(Kallsyms, BracketsEndTheKernelAtAModule) {
  const std::string lines =
      "ffffffff81000000 T core_a\n"
      "ffffffff81000100 T core_b\n"
      "ffffffffc0001000 t mod_fn\t[mod]\n"
      "ffffffffc0001100 t mod_g\t[mod]\n"
      "ffffffffc0002000 t a_name_longer_than_16[x]\n"
      "ffffffffc0003000 t plain_after\n"
      "ffffffffc0004000 t sh[o]rt\n"
      "ffffffffc0005000 t last\n";
  std::string odd;  // every line through the general path (a 0x prefix)
  for (std::size_t at = 0; at < lines.size();) {
    const std::size_t nl = lines.find('\n', at);
    odd += "0x" + lines.substr(at, nl + 1 - at);
    at = nl + 1;
  }
  for (const std::string& text : {lines, odd}) {
    auto k = parse_kallsyms(text);
    ASSERT_EQ(k.table.size(), 8u);
    std::vector<std::uint64_t> ends;
    for (std::size_t i = 0; i < k.table.size(); ++i) ends.push_back(k.table.at(i).end);
    const std::vector<std::uint64_t> want = {
        0xffffffff81000100, 0xffffffff81002000,   // core_b: the next page but one
        0xffffffffc0001100, 0xffffffffc0002000,   // module to module
        0xffffffffc0003000,                       // [x] then none: a boundary
        0xffffffffc0004000,                       // none then sh[o]rt: a boundary
        0xffffffffc0005000, 0xffffffffc0006000};  // sh[o]rt then none; the last
    EXPECT_EQ(ends, want);
  }
}

namespace {

// Lines of every kind, some cut by any chunk boundary.
std::string many_kallsyms_lines() {
  std::string text;
  for (int i = 0; i < 30000; ++i)
    text += fmt::format("{:016x} {} sym_{}{}\n", 0xffffffff81000000ULL + 16 * i, i % 3 ? 't' : 'T',
                        i, i % 7 ? "" : "\t[mod]");
  text += "ffffffffc0000000 t last_one";
  return text;
}

void expect_same_symbols(const KallsymsInfo& a, const KallsymsInfo& b) {
  ASSERT_EQ(a.table.size(), b.table.size());
  for (std::size_t i = 0; i < a.table.size(); ++i) {
    ASSERT_EQ(a.table.name(i), b.table.name(i)) << i;
    ASSERT_EQ(a.table.at(i).start, b.table.at(i).start) << i;
    ASSERT_EQ(a.table.at(i).end, b.table.at(i).end) << i;
  }
}

}  // namespace

// A regular file is parsed where it is mapped: as parse_kallsyms parses
// the whole text (a module tail, an unterminated last line).
TEST(Kallsyms, MappedLoadEqualsWholeParse) {
  const std::string text = many_kallsyms_lines();
  test::TempDir dir;
  std::string path = dir.path("kallsyms");
  test::write_file(path, text);
  auto loaded = load_kallsyms(path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  auto whole = parse_kallsyms(text);
  ASSERT_EQ(whole.table.size(), 30001u);
  expect_same_symbols(*loaded, whole);
  EXPECT_FALSE(load_kallsyms(dir.path("absent")));
}

// What is not a regular file (/proc/kallsyms) is read in 256 KiB chunks on
// a second thread and parsed as they come: lines cut by a chunk boundary
// read as parse_kallsyms reads the whole text.
TEST(Kallsyms, ChunkedLoadEqualsWholeParse) {
  const std::string text = many_kallsyms_lines();
  ASSERT_GT(text.size(), 3u << 18);  // several chunks
  test::TempDir dir;
  const std::string fifo = dir.path("kallsyms.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::FILE* f = std::fopen(fifo.c_str(), "w");
    if (!f) return;
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  });
  auto loaded = load_kallsyms(fifo);
  writer.join();
  ASSERT_TRUE(loaded) << loaded.error().message();
  expect_same_symbols(*loaded, parse_kallsyms(text));
}

// perf record's copy of /proc/kallsyms in the build-id cache stands in for
// /proc/kallsyms only while the kernel's image and modules are unchanged;
// load_current_kallsyms, checking as it parses, reads it just then.
TEST(Kallsyms, CachedCopyIsCurrentOnlyWhileNothingChanged) {
  test::TempDir dir;
  const std::string procfs = dir.path("proc");
  ASSERT_EQ(::mkdir(procfs.c_str(), 0755), 0);
  std::string core;
  for (int i = 0; core.size() < 6000; ++i)
    core += fmt::format("ffffffff81{:06x} T core_function_{}\n", i * 0x40, i);
  const std::string mods =
      "ffffffffc0001000 t mod_a_fn\t[mod_a]\n"
      "ffffffffc0001100 T mod_a_init\t[mod_a]\n"
      "ffffffffc0010000 t bpf_prog_1234\t[bpf]\n"
      "ffffffffc0020000 t ftrace_trampoline\t[__builtin__ftrace]\n";
  const std::string live = core + mods;
  test::write_file(procfs + "/kallsyms", live);
  test::write_file(procfs + "/modules", "mod_a 16384 0 - Live 0xffffffffc0001000\n");
  const std::string copy = dir.path("copy");
  auto current = [&](const std::string& text) {
    test::write_file(copy, text);
    const bool is = kallsyms_copy_is_current(copy, procfs);
    auto loaded = load_current_kallsyms(copy, procfs);
    EXPECT_TRUE(loaded);
    if (loaded) {
      EXPECT_EQ(loaded->path, is ? copy : procfs + "/kallsyms") << text;
    }
    return is;
  };
  EXPECT_TRUE(current(live));
  // BPF programs and trampolines come and go: perf keeps none of them.
  EXPECT_TRUE(current(core + mods.substr(0, mods.find("ffffffffc0010000"))));
  // Another KASLR offset (or kptr_restrict) shows in the first lines.
  std::string moved = live;
  moved[10] = moved[10] == '0' ? '1' : '0';
  EXPECT_FALSE(current(moved));
  // A module unloaded, loaded since, or loaded elsewhere.
  EXPECT_FALSE(current(core + mods + "ffffffffc0030000 t other_fn\t[mod_b]\n"));
  EXPECT_FALSE(current(core));
  EXPECT_FALSE(current(core + "ffffffffc0001000 t mod_a_fn\t(mod_a)\n"));  // no [module]
  test::write_file(procfs + "/modules", "mod_a 16384 0 - Live 0xffffffffc0008000\n");
  EXPECT_FALSE(current(live));
  // Too short to tell, or unreadable.
  EXPECT_FALSE(current(live.substr(0, 1000)));
  EXPECT_FALSE(kallsyms_copy_is_current(dir.path("missing"), procfs));
  auto loaded = load_current_kallsyms(dir.path("missing"), procfs);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->path, procfs + "/kallsyms");
}

// Symbolizers given one KallsymsShare read a kallsyms file once and hold
// the same table; one whose kernel sits elsewhere gets a moved copy.
TEST(KallsymsShare, OneTableForEverySymbolizer) {
  test::TempDir dir;
  const std::string path = dir.path("kallsyms");
  test::write_file(path,
                   "ffffffff81000000 T _text\nffffffff81000100 T start_kernel\n"
                   "ffffffff81000200 t do_work\nffffffff81000300 T _etext\n");
  auto share = std::make_shared<KallsymsShare>();
  SymbolizerOptions o;
  o.kallsyms = path;
  o.kallsyms_share = share;
  Symbolizer a(o), b(o), moved(o);
  a.prefetch_kernel({});
  const LoadedSymbols& ka = a.kernel({}, 0);
  const LoadedSymbols& kb = b.kernel({}, 0xffffffff81000000);
  ASSERT_TRUE(ka.found && kb.found);
  EXPECT_EQ(ka.table.get(), kb.table.get());
  EXPECT_FALSE(a.kernel_loading());
  const LoadedSymbols& km = moved.kernel({}, 0xffffffff82000000);
  ASSERT_TRUE(km.found);
  EXPECT_NE(km.table.get(), ka.table.get());
  const int s = km.table->find(0xffffffff82000210);
  ASSERT_GE(s, 0);
  EXPECT_EQ(km.table->name(static_cast<std::size_t>(s)), "do_work");
  EXPECT_LT(ka.table->find(0xffffffff82000210), 0);
  // an unreadable file: not found, for each
  SymbolizerOptions bad = o;
  bad.kallsyms = dir.path("absent");
  EXPECT_FALSE(Symbolizer(bad).kernel({}, 0).found);
}

// Symbolizers given one DsoShare load each DSO once, whichever asks first,
// even side by side on two threads; each still warns of what is missing.
TEST(DsoShare, OneTablePerDsoForEverySymbolizer) {
  const std::string bin = test::workload("cpuloop");
  if (!elf::ElfFile::open(bin)) GTEST_SKIP() << "workload not built";
  SymbolizerOptions o;
  o.buildid_dir.clear();
  o.dso_share = std::make_shared<DsoShare>();
  int warned = 0;
  std::mutex mu;
  o.warn = [&](const std::string&) {
    std::lock_guard lock(mu);
    ++warned;
  };
  Symbolizer a(o), b(o), alone(SymbolizerOptions{});
  const LoadedSymbols* la = nullptr;
  const LoadedSymbols* lb = nullptr;
  std::thread t([&] { la = &a.user_dso(bin, {}); });
  lb = &b.user_dso(bin, {});
  t.join();
  ASSERT_TRUE(la->found && lb->found);
  EXPECT_EQ(la->table.get(), lb->table.get());
  EXPECT_EQ(la->file, lb->file);
  EXPECT_NE(alone.user_dso(bin, {}).table.get(), la->table.get());
  EXPECT_EQ(&a.user_dso(bin, {}), la);  // (its own cache from then on)
  const std::string missing = "/nonexistent/libgone.so";
  EXPECT_FALSE(a.user_dso(missing, {}).found);
  EXPECT_FALSE(b.user_dso(missing, {}).found);
  EXPECT_EQ(warned, 2);
}

TEST(ElfSymbols, FunctionsOfTheWorkloadAtFileOffsets) {
  std::string bin = test::workload("cpuloop");
  auto f = elf::ElfFile::open(bin);
  if (!f) GTEST_SKIP() << "workload not built";
  std::vector<elf::RawSymbol> raw;
  ASSERT_GT(elf::read_symbols(*f, *f, elf::SymbolSource::kSymtab, true, raw), 0u);
  // readelf's value of spin, turned into a file offset by its segment.
  auto r = test::run("readelf -sW " + test::sh(bin) + " | awk '$8 == \"spin\" {print $2}'");
  ASSERT_FALSE(r.out.empty());
  std::uint64_t vaddr = std::stoull(r.out, nullptr, 16);
  bool found = false;
  for (const auto& s : raw)
    if (s.name == "spin") {
      found = true;
      EXPECT_EQ(s.start, elf::vaddr_to_offset(*f, vaddr, nullptr));
    }
  EXPECT_TRUE(found);
  EXPECT_FALSE(f->build_id().empty());
}

TEST(ElfSymbols, PltStubsOfLibc) {
  auto f = elf::ElfFile::open("/bin/true");
  if (!f) GTEST_SKIP();
  std::vector<elf::RawSymbol> raw;
  std::size_t n = elf::read_plt_symbols(*f, raw);
  auto r = test::run("readelf -rW /bin/true | grep -c JUMP_SLOT");
  EXPECT_EQ(n, static_cast<std::size_t>(std::stoul(r.out.empty() ? "0" : r.out)));
}

TEST(ElfFile, ErrorsNameThePath) {
  auto f = elf::ElfFile::open("/nonexistent/x");
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message().find("/nonexistent/x"), std::string::npos);
  auto g = elf::ElfFile::open("/etc/hostname");
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message().find("not an ELF"), std::string::npos);
}

}  // namespace
}  // namespace perfkit::symbol
