// Folded stacks: the lines are the same bytes whatever the number of
// threads that make and sort them (--jobs), equal texts of two threads one
// line with their weights summed, in the order of their texts.
#include "export/folded.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_support.h"

namespace perfkit::exports {
namespace {

using profile::Index;
using profile::kNone;

// Two threads of command "x", each with a sample of every stack below a
// few thousand distinct ones (so that the lines are made in several
// shares), the second thread's weights 10 times the first's.
profile::Profile many_stacks(std::size_t stacks) {
  profile::Profile p;
  p.events.push_back({p.strings.intern("cpu-clock"), 1, true, 0, 0});
  const Index lib =
      p.lib({p.strings.intern("/bin/x"), p.strings.intern("x"), 0, profile::LibKind::kUser});
  for (std::int32_t tid : {100, 101}) {
    profile::Thread& t = p.threads[p.thread(100, tid)];
    for (std::size_t s = 0; s < stacks; ++s) {
      Index stack = kNone;
      // (root first; the names' order differs from the stacks')
      for (std::string f : {std::string("main"), "f" + std::to_string((s * 7919) % stacks),
                            "g" + std::to_string(s % 13)})
        stack =
            p.stack(p.frame({p.func({p.strings.intern(f), lib}), 0x10 + s, false, false}), stack);
      t.time.push_back(1000 + t.size());
      t.stack.push_back(stack);
      t.event.push_back(0);
      t.weight.push_back(tid == 100 ? 1 : 10);
      t.cpu.push_back(0);
      t.comm.push_back(p.strings.intern("x"));
      p.order.push_back(0);
    }
  }
  return p;
}

std::string folded(const profile::Profile& p, unsigned threads) {
  test::TempDir dir;
  auto out = FdWriter::create(dir.path("f"));
  EXPECT_TRUE(out);
  if (!out) return {};
  FoldedOptions o;
  o.weight_period = true;
  o.threads = threads;
  EXPECT_TRUE(write_folded(p, o, *out));
  EXPECT_TRUE(out->close());
  return test::read_file(dir.path("f"));
}

TEST(Folded, TheSameLinesOnAnyNumberOfThreads) {
  const profile::Profile p = many_stacks(9000);
  const std::string one = folded(p, 1);
  EXPECT_EQ(folded(p, 2), one);
  EXPECT_EQ(folded(p, 3), one);
  EXPECT_EQ(folded(p, 8), one);
  // One line per distinct text, in text order, the two threads summed.
  std::vector<std::string> lines;
  for (std::size_t at = 0, nl; (nl = one.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(one.substr(at, nl - at));
  ASSERT_EQ(lines.size(), 9000u);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string a = lines[i - 1].substr(0, lines[i - 1].rfind(' '));
    const std::string b = lines[i].substr(0, lines[i].rfind(' '));
    ASSERT_LT(a, b);
  }
  for (const std::string& l : lines) EXPECT_EQ(l.substr(l.rfind(' ')), " 11") << l;
}

}  // namespace
}  // namespace perfkit::exports
