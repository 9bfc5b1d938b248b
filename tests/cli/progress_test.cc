// cli::ProgressBar with a clock the test moves by hand: nothing in the first
// second, then a percentage redrawn in place at most every kInterval and
// only when it changes, and a clear() that wipes the line. The bar through
// the binary on a terminal is in tests/intelpt/pt_cli_test.cc.
#include "cli/progress.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace perfkit::cli {
namespace {

using namespace std::chrono_literals;

struct Terminal {
  std::chrono::steady_clock::time_point now{};
  std::vector<std::string> writes;
  ProgressBar bar() {
    return ProgressBar(
        "Processing...", [this](std::string_view s) { writes.emplace_back(s); },
        [this] { return now; });
  }
};

TEST(ProgressBarTest, ShowsOnlyAfterASecond) {
  Terminal t;
  auto bar = t.bar();
  bar.update(10, 100);
  t.now += 999ms;
  bar.update(20, 100);
  EXPECT_TRUE(t.writes.empty());
  EXPECT_FALSE(bar.shown());
  t.now += 1ms;
  bar.update(30, 100);
  ASSERT_EQ(t.writes.size(), 1u);
  EXPECT_EQ(t.writes[0], "\rProcessing...  30%");
  EXPECT_TRUE(bar.shown());
}

TEST(ProgressBarTest, RedrawsAtMostEveryIntervalAndOnlyOnChange) {
  Terminal t;
  auto bar = t.bar();
  t.now += 2s;
  bar.update(1, 3);  // 33%
  t.now += 100ms;
  bar.update(2, 3);  // too soon
  t.now += 100ms;
  bar.update(1, 3);  // the same percentage
  t.now += 300ms;
  bar.update(3, 3);
  t.now += 300ms;
  bar.update(5, 3);  // past the total: 100%, shown already
  EXPECT_EQ(t.writes, (std::vector<std::string>{"\rProcessing...  33%", "\rProcessing... 100%"}));
}

TEST(ProgressBarTest, ClearWipesTheLineOnce) {
  Terminal t;
  auto bar = t.bar();
  bar.clear();  // nothing shown: nothing to wipe
  EXPECT_TRUE(t.writes.empty());
  t.now += 2s;
  bar.update(0, 0);  // no total: nothing
  EXPECT_TRUE(t.writes.empty());
  bar.update(7, 100);
  bar.clear();
  bar.clear();
  ASSERT_EQ(t.writes.size(), 2u);
  EXPECT_EQ(t.writes[1], "\r" + std::string(std::string("Processing...   7%").size(), ' ') + "\r");
  EXPECT_FALSE(bar.shown());
  // Shown again after a clear (a warning went between), at once.
  bar.update(8, 100);
  EXPECT_EQ(t.writes.size(), 3u);
}

TEST(ProgressBarTest, QuietOrNoTerminalWantsNoBar) {
  EXPECT_FALSE(stderr_progress_wanted(true, false));
  // Under ctest stderr is a file or a pipe, not a terminal.
  if (!isatty(2)) EXPECT_FALSE(stderr_progress_wanted(false, false));
}

}  // namespace
}  // namespace perfkit::cli
