// The one number-list parser (cpus, pids, tids of every command) and the
// string-list split: what each rule accepts, and each documented error.
#include "base/text.h"

#include <gtest/gtest.h>

namespace perfkit {
namespace {

std::vector<std::int64_t> list(std::string_view text, const IntListRules& rules = {}) {
  auto l = parse_int_list(text, rules);
  EXPECT_TRUE(l) << text << ": " << (l ? "" : l.error().message());
  return l ? *l : std::vector<std::int64_t>{};
}

TEST(IntList, NumbersAndRanges) {
  EXPECT_EQ(list("1,3-5,8"), (std::vector<std::int64_t>{1, 3, 4, 5, 8}));
  EXPECT_EQ(list(" 2 , 7 - 8 "), (std::vector<std::int64_t>{2, 7, 8}));
  EXPECT_EQ(list("-1,4"), (std::vector<std::int64_t>{-1, 4}));  // perf's pid -1
  EXPECT_EQ(list(""), std::vector<std::int64_t>{});
  EXPECT_EQ(list("1,,2"), (std::vector<std::int64_t>{1, 2}));  // empty pieces skipped
  EXPECT_EQ(list("5,1,5"), (std::vector<std::int64_t>{5, 1, 5}));
}

TEST(IntList, RulesSortBoundAndRefuse) {
  IntListRules sorted;
  sorted.sort_unique = true;
  EXPECT_EQ(list("5,1-2,1", sorted), (std::vector<std::int64_t>{1, 2, 5}));

  auto no_empty = parse_int_list("1,,2", IntListRules::pids("pid"));
  ASSERT_FALSE(no_empty);
  EXPECT_EQ(no_empty.error().message(), "invalid pid '' in '1,,2'");
  auto range = parse_int_list("3-4", IntListRules::pids("tid"));
  ASSERT_FALSE(range);
  EXPECT_EQ(range.error().message(), "invalid tid '3-4' in '3-4'");
  auto zero = parse_int_list("0", IntListRules::pids("pid"));
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message(), "invalid pid '0' in '0'");
}

TEST(IntList, ErrorsNameThePieceAndTheText) {
  for (std::string_view bad : {"a", "1,x", "3-1", "1-", "2-b", "1.5"}) {
    auto l = parse_int_list(bad);
    ASSERT_FALSE(l) << bad;
    EXPECT_NE(l.error().message().find(fmt::format("in '{}'", bad)), std::string::npos)
        << l.error().message();
  }
  IntListRules bounded;
  bounded.what = "cpu";
  bounded.min = 0;
  bounded.max = 3;
  auto high = parse_int_list("1,2-4", bounded);
  ASSERT_FALSE(high);
  EXPECT_EQ(high.error().message(), "invalid cpu '2-4' in '1,2-4'");
}

TEST(IntList, CpuListsAreSortedUniqueAndBounded) {
  auto l = parse_cpu_list("0-3,8,10-11,2");
  ASSERT_TRUE(l);
  EXPECT_EQ(*l, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(format_cpu_list(*l), "0-3,8,10-11");
  EXPECT_FALSE(parse_cpu_list("-1"));
  EXPECT_FALSE(parse_cpu_list("65536"));
  EXPECT_FALSE(parse_cpu_list("0,,1"));
}

TEST(SplitList, LeavesOutEmptyPieces) {
  EXPECT_EQ(split_list("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(split_list(""), std::vector<std::string>{});
  EXPECT_EQ(split_list("x:y", ':'), (std::vector<std::string>{"x", "y"}));
}

}  // namespace
}  // namespace perfkit
