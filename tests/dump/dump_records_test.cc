// RecordPrinter in process (the differential tests run the binary against
// perf): lines perf 6.1 prints for records no recording here has, the same
// output for both byte orders, and malformed records printed without harm.
#include "dump/dump_records.h"

#include <gtest/gtest.h>

#include "abi/perf_event.h"
#include "cli/dump_records_synthetic.h"
#include "dump/dump.h"
#include "inject/inject.h"
#include "perfdata/writer.h"
#include "record/encode.h"
#include "support/test_support.h"

namespace perfkit::dump {
namespace {

using namespace perfkit::abi;

// perfkit dump's record section for the file at `path`.
std::string dump_of(const std::string& path) {
  auto reader = perfdata::Reader::open(path);
  EXPECT_TRUE(reader) << reader.error().message();
  if (!reader) return "";
  test::TempDir dir;
  std::string out_path = dir.path("out.txt");
  {
    auto out = FdWriter::create(out_path);
    EXPECT_TRUE(out);
    DumpOptions opts;
    opts.header = false;
    auto st = run_dump(**reader, opts, *out);
    EXPECT_TRUE(st) << st.error().message();
    EXPECT_TRUE(out->close());
  }
  return test::read_file(out_path);
}

TEST(RecordPrinter, PrintsRecordsLikePerf) {
  test::TempDir dir;
  std::string path = dir.path("synthetic.data");
  ASSERT_EQ(test::write_synthetic_recording(path), "");
  std::string out = dump_of(path);
  // Lines as perf 6.1 prints them (checked against it by dump_records_diff_test).
  for (const char* line : {
           "PERF_RECORD_SWITCH_CPU_WIDE OUT          next pid/tid: 123456/7    \n",
           "PERF_RECORD_CPU_MAP: -1,2-4\n: unhandled!\n",
           "PERF_RECORD_TEXT_POKE ffffffff81000040  old len 3 new len 20\n"
           "            Old bytes: 90 91 92\n",
           "... branch callstack: nr:4\n",
           "... weight: 1234,0x56,0x0\n",
           " .. code page size: 1024M\n",
           ".... XMM0  0x0000000000002005\n",
           "\nAggregated stats:\n           TOTAL events:",
       })
    EXPECT_NE(out.find(line), std::string::npos) << "missing: " << line;
}

TEST(RecordPrinter, BigEndianRecordsPrintAsTheirHostOrderTwins) {
  test::TempDir dir;
  std::string src = dir.path("synthetic.data"), le = dir.path("le.data"), be = dir.path("be.data");
  ASSERT_EQ(test::write_synthetic_recording(src), "");
  for (auto [path, swap] : {std::pair{le, false}, std::pair{be, true}}) {
    auto reader = perfdata::Reader::open(src);
    ASSERT_TRUE(reader);
    inject::InjectOptions opts;
    opts.swap_output = swap;
    ASSERT_TRUE(inject::run_inject(**reader, path, opts));
  }
  std::string a = dump_of(le), b = dump_of(be);
  // The file name differs; everything else is the same.
  auto strip = [](std::string s, const std::string& name) {
    for (auto at = s.find(name); at != std::string::npos; at = s.find(name, at))
      s.erase(at, name.size());
    return s;
  };
  EXPECT_EQ(strip(a, le), strip(b, be));
}

TEST(RecordPrinter, MalformedRecordsPrintTheirHeaderAndMoveOn) {
  // A sample shorter than its sample_type, a namespaces record whose count
  // runs past its end, a record of a type perf does not know.
  perfdata::EventSet events;
  EventAttr a;
  a.sample_type = kSampleIp | kSampleTid | kSampleTime | kSampleCallchain;
  events.add(a, {});
  test::TempDir dir;
  std::string path = dir.path("bad.data");
  {
    auto w = perfdata::Writer::create(path, {});
    ASSERT_TRUE(w);
    ASSERT_TRUE((*w)->begin(events));
    ASSERT_TRUE(
        (*w)->write(record::RecordBuilder(kRecordSample).u64(0x401000).u32(1).u32(1).finish()));
    ASSERT_TRUE(
        (*w)->write(record::RecordBuilder(kRecordNamespaces).u32(1).u32(1).u64(99).finish()));
    ASSERT_TRUE((*w)->write(record::RecordBuilder(40).u64(7).finish()));
    ASSERT_TRUE((*w)->finish(events, {}));
  }
  std::string out = dump_of(path);
  EXPECT_NE(out.find("PERF_RECORD_SAMPLE\n"), std::string::npos) << out;
  EXPECT_NE(out.find("PERF_RECORD_NAMESPACES\n"), std::string::npos) << out;
  EXPECT_NE(out.find("PERF_RECORD_UNKNOWN\n"), std::string::npos) << out;
  EXPECT_NE(out.find("          SAMPLE events:          1  (33.3%)\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace perfkit::dump
