// The --itrace grammar (perf-intel-pt(1)): every letter, periods with units,
// sizes, flags, skips, perf's defaults and perf's error message.
#include "intelpt/itrace_options.h"

#include <gtest/gtest.h>

#include "intelpt/synth.h"

namespace perfkit::intelpt {
namespace {

ItraceOptions parse(std::string_view s, bool no_sample = true) {
  ItraceOptions o;
  auto st = parse_itrace(s, no_sample, o);
  EXPECT_TRUE(st) << s << ": " << (st ? "" : st.error().message());
  return o;
}

TEST(ItraceOptionsTest, Periods) {
  auto o = parse("i0ns");
  EXPECT_TRUE(o.instructions);
  EXPECT_EQ(o.period, 0u);
  EXPECT_EQ(o.period_type, PeriodType::kNanosecs);
  o = parse("i100i");
  EXPECT_EQ(o.period, 100u);
  EXPECT_EQ(o.period_type, PeriodType::kInstructions);
  o = parse("i10us");
  EXPECT_EQ(o.period, 10000u);
  EXPECT_EQ(o.period_type, PeriodType::kNanosecs);
  o = parse("i3ms");
  EXPECT_EQ(o.period, 3000000u);
  o = parse("i77t");
  EXPECT_EQ(o.period, 77u);
  EXPECT_EQ(o.period_type, PeriodType::kTicks);
  o = parse("i");  // perf's default: 100us
  EXPECT_EQ(o.period, 100000u);
  EXPECT_EQ(o.period_type, PeriodType::kNanosecs);
  o = parse("i 5 , i");  // spaces and commas between a number and its unit
  EXPECT_EQ(o.period, 5u);
  EXPECT_EQ(o.period_type, PeriodType::kInstructions);
  o = parse("i42");  // a bare number at the end keeps the default unit
  EXPECT_EQ(o.period, 42u);
  EXPECT_EQ(o.period_type, PeriodType::kNanosecs);
}

TEST(ItraceOptionsTest, Letters) {
  auto o = parse("bxwpoIe");
  EXPECT_TRUE(o.branches && o.transactions && o.ptwrites && o.pwr_events && o.other_events &&
              o.intr_events && o.errors);
  EXPECT_FALSE(o.instructions || o.calls || o.returns);
  o = parse("cr");
  EXPECT_TRUE(o.branches && o.calls && o.returns);
  o = parse("qq");
  EXPECT_EQ(o.quick, 2);
  o = parse("Z");
  EXPECT_TRUE(o.timeless);
  o = parse("beA");
  EXPECT_TRUE(o.approx_ipc && o.branches);
  o = parse("i0nss1000000");
  EXPECT_EQ(o.initial_skip, 1000000u);
}

TEST(ItraceOptionsTest, CallchainAndLastBranchSizes) {
  auto o = parse("ig32");
  EXPECT_TRUE(o.callchain);
  EXPECT_EQ(o.callchain_sz, 32u);
  o = parse("ig");
  EXPECT_EQ(o.callchain_sz, 16u);
  o = parse("xl10");
  EXPECT_TRUE(o.last_branch);
  EXPECT_EQ(o.last_branch_sz, 10u);
  o = parse("il");
  EXPECT_EQ(o.last_branch_sz, 64u);
  o = parse("G8L4");
  EXPECT_TRUE(o.add_callchain && o.add_last_branch);
  EXPECT_EQ(o.callchain_sz, 8u);
  EXPECT_EQ(o.last_branch_sz, 4u);
}

TEST(ItraceOptionsTest, ErrorAndLogFlags) {
  auto o = parse("e-o-l");
  EXPECT_FALSE(o.report_overflow());
  EXPECT_FALSE(o.report_lost());
  o = parse("e+o");
  EXPECT_TRUE(o.report_overflow());
  EXPECT_TRUE(o.error_plus_flags & ItraceOptions::flag('o'));
  o = parse("d+a");
  EXPECT_TRUE(o.log);
  EXPECT_TRUE(o.log_plus_flags & ItraceOptions::flag('a'));
  o = parse("d-a");
  EXPECT_TRUE(o.log_minus_flags & ItraceOptions::flag('a'));
}

TEST(ItraceOptionsTest, BadStringsAreErrors) {
  for (std::string_view bad :
       {"k", "i10x", "i10n", "i10u", "ig0", "ig1025", "il2000", "e+1", "e-O", "i5b"}) {
    ItraceOptions o;
    auto st = parse_itrace(bad, true, o);
    ASSERT_FALSE(st) << bad;
    EXPECT_EQ(st.error().message(), fmt::format("Bad Instruction Tracing options '{}'", bad));
  }
}

TEST(ItraceOptionsTest, Defaults) {
  // perf script: cepwx (branches limited to calls), no instructions.
  auto s = parse("", true);
  EXPECT_TRUE(s.branches && s.calls && s.errors && s.ptwrites && s.pwr_events && s.transactions);
  EXPECT_FALSE(s.instructions || s.returns);
  EXPECT_EQ(format_itrace(s), "cxwpoIe");
  // perf report: instructions every 100us as well.
  auto r = parse("", false);
  EXPECT_TRUE(r.instructions);
  EXPECT_EQ(r.period, 100000u);
  EXPECT_EQ(r.period_type, PeriodType::kNanosecs);
}

TEST(ItraceOptionsTest, OptionsAddUp) {
  ItraceOptions o;
  ASSERT_TRUE(parse_itrace("i0ns", true, o));
  ASSERT_TRUE(parse_itrace("e", true, o));
  // A later string without a period sets the default one while instructions
  // are on: perf 6.1 decodes `--insn-trace --itrace=b` with i100us.
  EXPECT_TRUE(o.instructions && o.errors);
  EXPECT_EQ(o.period, 100000u);
  EXPECT_EQ(o.period_type, PeriodType::kNanosecs);
}

TEST(ItraceOptionsTest, FormatRoundTrips) {
  for (std::string_view s :
       {"i100i", "i0ns", "be", "cr", "i10ti", "xwpe-o", "g32l16s5qqZ", "i0nsA"}) {
    auto o = parse(s);
    auto again = parse(format_itrace(o));
    EXPECT_EQ(format_itrace(again), format_itrace(o)) << s;
  }
}

TEST(IpFlagsTest, NamesAsPerfScriptPrintsThem) {
  // perf 6.1: the name in 15 columns, then the (x/D/t) part in 6.
  EXPECT_EQ(format_ip_flags(kFlagBranch | kFlagCall), "call                 ");
  EXPECT_EQ(format_ip_flags(kFlagBranch | kFlagConditional), "jcc                  ");
  EXPECT_EQ(format_ip_flags(kFlagBranch | kFlagTraceBegin), "tr strt              ");
  EXPECT_EQ(format_ip_flags(kFlagBranch | kFlagCall | kFlagSyscallRet | kFlagTraceEnd),
            "tr end  syscall      ");
  EXPECT_EQ(format_ip_flags(kFlagBranch | kFlagCall | kFlagAsync | kFlagInterrupt),
            "hw int               ");
  EXPECT_EQ(format_ip_flags(kFlagBranch | kFlagReturn | kFlagInTx), "return            (x)");
  EXPECT_EQ(format_ip_flags(kFlagBranch | kFlagTxAbort | kFlagReturn), "brA");
  EXPECT_EQ(insn_op_flags(InsnOp::kSysret), kFlagBranch | kFlagReturn | kFlagSyscallRet);
  EXPECT_EQ(insn_op_flags(InsnOp::kLoop), kFlagBranch | kFlagConditional);
  EXPECT_EQ(insn_op_flags(InsnOp::kNone), 0u);
}

}  // namespace
}  // namespace perfkit::intelpt
