// The line worker (profile/line_worker.h): answers come back in the order
// asked, as the symbolizer's SourceLines gives them on this thread.
#include "profile/line_worker.h"

#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "elf/build_id.h"
#include "symbol/source_lines.h"

namespace perfkit::profile {
namespace {

// A function of this binary, and the binary's path and load address.
[[gnu::noinline]] int answered_here(int x) { return x * 3 + 1; }

struct Self {
  std::string path;
  std::uint64_t base = 0;
};
Self self() {
  Self s;
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) s.path.assign(buf, static_cast<std::size_t>(n));
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        static_cast<Self*>(data)->base = info->dlpi_addr;  // the first: the program
        return 1;
      },
      &s);
  return s;
}

TEST(LineWorker, AnswersInTheOrderAsked) {
  const Self me = self();
  ASSERT_FALSE(me.path.empty());
  const std::uint64_t addr =
      reinterpret_cast<std::uintptr_t>(&answered_here) - me.base;  // map-relative (PIE)
  symbol::Symbolizer sym({});
  symbol::Symbolizer sym2({});
  symbol::SourceLines direct(sym2, symbol::SourceLineOptions{true});
  auto* d = direct.dso(me.path, "line_worker_test", {});
  const std::string expected(direct.srcline(d, addr));
  ASSERT_NE(expected.find("line_worker_test.cc:"), std::string::npos) << expected;

  LineWorker w(sym);
  w.dso(0, me.path, "line_worker_test", {});
  w.dso(1, "/nonexistent/libgone.so", "libgone.so", {});
  std::vector<std::string> want;
  for (int i = 0; i < 200; ++i) {  // past a batch, so the worker takes some
    w.ask_known("known.c:" + std::to_string(i));
    want.push_back("known.c:" + std::to_string(i));
    w.ask(0, addr);
    want.push_back(expected);
    w.ask(1, 0x10 + i);
    want.push_back(std::string(
        direct.srcline(direct.dso("/nonexistent/libgone.so", "libgone.so", {}), 0x10 + i)));
  }
  EXPECT_EQ(w.finish(), want);
}

TEST(LineWorker, NothingAskedNothingAnswered) {
  symbol::Symbolizer sym({});
  LineWorker w(sym);
  EXPECT_TRUE(w.finish().empty());
}

}  // namespace
}  // namespace perfkit::profile
