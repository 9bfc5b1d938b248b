// perfkit script against perf script on the corpus: files recorded on other
// machines and by other tools. perf lacks their binaries too, so both must
// agree on what stays unresolved. Files perf cannot read are skipped (perfkit
// must then fail cleanly or print something, never crash); the known
// differences are listed with their reasons.
#include <gtest/gtest.h>

#include "cli/script_diff.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

struct Exception {
  const char* file;
  const char* reason;
};

// Differences that are not script's: they come from machine state the
// report engineer owns (Machine, Symbolizer) or from features not built yet.
const Exception kExceptions[] = {
    {"perfparser/vector_static_gcc/perf.lbr.data",
     "LBR call-stack stitching of callchains (perf's resolve_lbr_callchain_sample) is not built"},
};

const char* exception_for(const std::string& path) {
  for (const auto& e : kExceptions)
    if (path.ends_with(e.file)) return e.reason;
  return nullptr;
}

TEST(ScriptCorpus, SameAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  int compared = 0, same = 0, excepted = 0;
  std::string failures;
  for (const auto& file : test::corpus_files()) {
    test::ScriptDiff d = test::diff_script(file, "");
    if (!d.perf_ok) {
      // perf refuses it; perfkit may read more, but must not crash.
      auto k = test::run(test::perfkit_bin() + " script -i " + test::sh(file) + " >/dev/null");
      EXPECT_TRUE(k.status == 0 || k.status == 1) << file << ": exit " << k.status << k.err;
      continue;
    }
    if (exception_for(file)) {
      ++excepted;
      continue;
    }
    ++compared;
    if (d.perf_lines == 0 && !d.perfkit_ok &&
        d.perfkit_error.find("truncated") != std::string::npos) {
      // perf skips a truncated record without a word and prints nothing;
      // perfkit names it and fails, as bad input must.
      ++same;
      continue;
    }
    if (d.perfkit_ok && d.match() == 1.0) {
      ++same;
      continue;
    }
    failures += file + ": " + d.summary().substr(0, 900) + "\n";
  }
  RecordProperty("compared", compared);
  RecordProperty("same", same);
  RecordProperty("excepted", excepted);
  EXPECT_TRUE(failures.empty()) << same << "/" << compared << " match\n" << failures;
  EXPECT_GT(compared, 50);
}

// The corpus's real Intel PT recording (kernel and user, two per-cpu
// queues, a cycles event beside it), whose code is nowhere here: perf's
// decoder loses the IP at each instruction it cannot read and finds it
// again at the next whole IP, reports each DSO's first failures only, and
// prints the recorded samples between the synthesized ones by time.
TEST(ScriptCorpus, IntelPtRecordingWithoutItsCodeLikePerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_SKIP_WITHOUT_CORPUS();
  const std::string file = test::corpus_dir() + "/quipper/perf.data.intel_pt-4.14";
  for (const char* args : {"", "--itrace=be -F+flags", "--call-trace", "--call-ret-trace",
                           "--itrace=ige", "--itrace=i0ns", "--itrace=bcrpwx", "--itrace=bexg"}) {
    test::ScriptDiff d = test::diff_script(file, args);
    ASSERT_TRUE(d.perf_ok) << args << d.perf_error;
    EXPECT_TRUE(d.perfkit_ok) << args << d.perfkit_error;
    EXPECT_EQ(d.same, d.perf_lines) << args << "\n" << d.summary().substr(0, 1500);
    EXPECT_EQ(d.perfkit_lines, d.perf_lines) << args;
  }
}

}  // namespace
}  // namespace perfkit
