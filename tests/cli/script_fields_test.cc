// The pure parts of perf script's option handling: the -F grammar and its
// checks against a recording's attrs, and --time ranges (perf 6.1 rules).
#include "script/script_fields.h"

#include <gtest/gtest.h>

#include "abi/perf_event.h"
#include "session/time_filter.h"

namespace perfkit::script {
namespace {

using F = ScriptField;
constexpr std::uint32_t kSoftware = 1, kTracepoint = 2;

FieldMask fields_of(const ScriptFields& f, std::uint32_t type) { return f.of(type).fields; }

TEST(ScriptFields, DefaultsFollowPerf) {
  ScriptFields f;
  const FieldMask sw = fields_of(f, kSoftware);
  for (F x : {F::kComm, F::kTid, F::kCpu, F::kTime, F::kEvent, F::kIp, F::kSym, F::kSymoff, F::kDso,
              F::kPeriod, F::kBpfOutput})
    EXPECT_TRUE(sw & field_bit(x)) << field_name(x);
  EXPECT_FALSE(sw & field_bit(F::kTrace));
  EXPECT_TRUE(fields_of(f, kTracepoint) & field_bit(F::kTrace));
  EXPECT_FALSE(fields_of(f, kTracepoint) & field_bit(F::kIp));
  EXPECT_EQ(output_type(abi::kAttrTypeSynth), kOutSynth);
  EXPECT_EQ(output_type(9), kOutOther);
}

TEST(ScriptFields, SetAddRemoveAndPerType) {
  ScriptFields f;
  std::vector<std::string> warnings;
  auto warn = [&](const std::string& w) { warnings.push_back(w); };
  ASSERT_TRUE(f.parse("comm,tid,ip", warn));
  EXPECT_EQ(fields_of(f, kSoftware), field_bit(F::kComm) | field_bit(F::kTid) | field_bit(F::kIp));
  ASSERT_TRUE(f.parse("+sym,-tid", warn));
  EXPECT_EQ(fields_of(f, kSoftware), field_bit(F::kComm) | field_bit(F::kIp) | field_bit(F::kSym));
  ASSERT_TRUE(f.parse("sw:period", warn));
  EXPECT_EQ(fields_of(f, kSoftware), field_bit(F::kPeriod));
  EXPECT_EQ(fields_of(f, kTracepoint),
            field_bit(F::kComm) | field_bit(F::kIp) | field_bit(F::kSym));
  ASSERT_TRUE(f.parse("trace", warn));  // valid for tracepoints only: warned elsewhere
  EXPECT_FALSE(warnings.empty());
  EXPECT_TRUE(fields_of(f, kTracepoint) & field_bit(F::kTrace));
  ASSERT_TRUE(f.parse("+flags", warn));
  EXPECT_TRUE(f.print_flags());
}

TEST(ScriptFields, ErrorsArePerfs) {
  ScriptFields f;
  auto msg = [&](const char* arg) {
    auto st = f.parse(arg, {});
    return st ? std::string() : st.error().message();
  };
  EXPECT_EQ(msg("nosuch"), "Invalid field requested.");
  EXPECT_EQ(msg("comm,+ip"), "Cannot mix +-field with overridden fields");
  EXPECT_EQ(msg("+ip,comm"), "Cannot mix +-field with overridden fields");
  EXPECT_EQ(msg("xx:comm"), "Invalid event type in field string.");
  EXPECT_EQ(msg(""), "Cannot set fields to 'none' for all event types.");
  EXPECT_EQ(msg("sw:trace"), "'trace' not valid for software events.");
}

TEST(ScriptFields, CheckDropsWhatSamplesLackAndRejectsWhatUsersAsk) {
  perfdata::EventSet events;
  abi::EventAttr a;
  a.type = kSoftware;
  a.sample_type = abi::kSampleIp | abi::kSampleTid | abi::kSampleTime | abi::kSamplePeriod;
  events.add(a, {});
  RecordingTraits traits;
  bool use_callchain = true;
  ScriptFields defaults;
  ASSERT_TRUE(defaults.check(events, {"cpu-clock"}, traits, use_callchain));
  EXPECT_FALSE(fields_of(defaults, kSoftware) & field_bit(F::kCpu));  // dropped quietly
  EXPECT_FALSE(use_callchain);                                        // no event records callchains

  ScriptFields asked;
  ASSERT_TRUE(asked.parse("comm,cpu", {}));
  use_callchain = true;
  auto st = asked.check(events, {"cpu-clock"}, traits, use_callchain);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(),
            "Samples for 'cpu-clock' event do not have CPU attribute set. Cannot print 'cpu' "
            "field.");

  ScriptFields missing;
  ASSERT_TRUE(missing.parse("trace:", {}));  // perf: only an empty list keeps it per-type
  st = missing.check(events, {"cpu-clock"}, traits, use_callchain);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(),
            "tracepoint events do not exist. Remove corresponding -F option to proceed.");
}

TEST(ScriptTime, AbsoluteRanges) {
  auto r = session::parse_time_ranges("1.5,2.25", 0, 0, false);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].start, 1500000000u);
  EXPECT_EQ((*r)[0].end, 2250000000u);
  r = session::parse_time_ranges("1,2 3,4", 0, 0, false);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].start, 3000000000u);
  EXPECT_TRUE(session::skip_by_time(*r, 2500000000u));
  EXPECT_FALSE(session::skip_by_time(*r, 3500000000u));
  EXPECT_FALSE(session::skip_by_time(*r, 0));  // no time: never skipped
  r = session::parse_time_ranges("5,", 0, 0, false);
  ASSERT_TRUE(r);
  EXPECT_FALSE(session::skip_by_time(*r, 9000000000u));
  EXPECT_TRUE(session::skip_by_time(*r, 4000000000u));
  for (const char* bad : {"1.5", "2,1", "1,2 1,3", "1.1234567891,2", "x,2"})
    EXPECT_FALSE(session::parse_time_ranges(bad, 0, 0, false)) << bad;
}

TEST(ScriptTime, PercentSlices) {
  const std::uint64_t first = 1000, last = 2000;
  auto r = session::parse_time_ranges("10%/2", first, last, false);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].start, 1100u);
  EXPECT_EQ((*r)[0].end, 1199u);  // perf's end - 1 unless it is the last time
  r = session::parse_time_ranges("0%-10%,90%-100%", first, last, false);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].start, 1900u);
  EXPECT_EQ((*r)[1].end, 2000u);
  r = session::parse_time_ranges("50%", first, last, false);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].end, 1499u);
  EXPECT_FALSE(session::parse_time_ranges("150%", first, last, false));
  auto hint = session::parse_time_ranges("10%", 0, 0, false);
  ASSERT_FALSE(hint);
  EXPECT_NE(hint.error().message().find("no first/last sample time"), std::string::npos);
  r = session::parse_time_ranges("1,2", first, last, true);  // --reltime: from the first sample
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].start, 1000000000u + first);
}

}  // namespace
}  // namespace perfkit::script
