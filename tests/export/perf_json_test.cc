// perfkit data convert --to-json against perf's (perf 6.1 data convert
// --to-json) on every fixture, byte for byte, with perf's messages and
// refusals; on a pipe-mode recording (where perf 6.1 crashes) the JSON is
// valid and holds every sample perf script shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "support/test_support.h"

namespace perfkit::test {
namespace {

const char* const kFixtures[] = {
    "fp.data",         "dwarf.data",  "nocg.data",    "syswide.data",    "syswide_g.data",
    "multi.data",      "group.data",  "mixedcg.data", "tracepoint.data", "tponly.data",
    "compressed.data", "switch.data", "faults.data",  "dwarf_vdso.data"};

TEST(PerfJson, MatchesPerf) {
  PK_SKIP_WITHOUT_PERF();
  TempDir tmp;
  int compared = 0;
  for (const char* name : kFixtures) {
    PK_FIXTURE_OR_SKIP(f, name);
    const std::string theirs = tmp.path(std::string(name) + ".perf.json");
    const std::string ours = tmp.path(std::string(name) + ".perfkit.json");
    auto p = run("perf data convert -i " + sh(f) + " --to-json " + sh(theirs));
    ASSERT_EQ(p.status, 0) << name << p.err;
    auto k = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-json " + sh(ours));
    ASSERT_EQ(k.status, 0) << name << k.err;
    const std::string want = read_file(theirs);
    ASSERT_GT(want.size(), 200u);
    EXPECT_TRUE(read_file(ours) == want) << name << ": the JSON differs from perf's";
    // The two summary lines, the same but for the names (warnings aside:
    // perfkit says which maps it could not read; perf 6.1 does not).
    auto lines = [](const std::string& s, const std::string& from, const std::string& to) {
      std::string kept;
      std::istringstream in(s);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("[ perf data convert:", 0) == 0) kept += line + "\n";
      for (auto at = kept.find(from); at != std::string::npos; at = kept.find(from, at + to.size()))
        kept.replace(at, from.size(), to);
      return kept;
    };
    EXPECT_EQ(lines(k.err, ours, "OUT"), lines(p.err, theirs, "OUT")) << name;
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(std::size(kFixtures)));
}

TEST(PerfJson, RefusesAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "nocg.data");
  TempDir tmp;
  const std::string out = tmp.path("x.json");
  write_file(out, "keep");
  for (const std::string& extra :
       std::vector<std::string>{"", " --all", " --tod", " --to-ctf " + tmp.path("ctf")}) {
    auto p = run("perf data convert -i " + sh(f) + " --to-json " + sh(out) + extra);
    auto k = run(perfkit_bin() + " data convert -i " + sh(f) + " --to-json " + sh(out) + extra);
    EXPECT_EQ(k.status, p.status) << extra;
    EXPECT_EQ(k.err, p.err) << extra;
    EXPECT_EQ(read_file(out), "keep") << extra;
  }
  auto none = run(perfkit_bin() + " data convert -i " + sh(f));
  EXPECT_EQ(none.status, 255);
  EXPECT_EQ(none.err, "You must specify one of --to-ctf or --to-json.\n");
  // --force overwrites.
  auto forced = run(perfkit_bin() + " data convert -f -i " + sh(f) + " --to-json " + sh(out));
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_EQ(read_file(out).rfind("{\n\t\"linux-perf-json-version\": 1,", 0), 0u);
}

TEST(PerfJson, PipeRecordingGivesEverySample) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(f, "pipe.data");
  TempDir tmp;
  const std::string out = tmp.path("pipe.json");
  auto k = run("cat " + sh(f) + " | " + perfkit_bin() + " data convert -i - --to-json " + sh(out));
  ASSERT_EQ(k.status, 0) << k.err;
  auto count =
      run("python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))[\"samples\"]))' " +
          sh(out));
  ASSERT_EQ(count.status, 0) << count.err;
  // The header comes from the stream's feature records: the host and perf
  // version perf report --header-only shows for the stream.
  auto header =
      run("python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))[\"headers\"]; "
          "print(h[\"hostname\"], h[\"perf-version\"])' " +
          sh(out));
  auto perf_header = run("perf report --header-only -i " + sh(f) +
                         " 2>/dev/null | sed -n 's/^# hostname : //p; s/^# perf version : //p'");
  ASSERT_EQ(header.status, 0) << header.err;
  std::string want = perf_header.out;
  std::replace(want.begin(), want.end(), '\n', ' ');
  EXPECT_EQ(header.out, want.substr(0, want.size() - 1) + "\n");
  auto perf_samples = run("perf script -i " + sh(f) + " -G -F period 2>/dev/null | grep -c .");
  ASSERT_EQ(perf_samples.status, 0);
  EXPECT_EQ(count.out, perf_samples.out);
}

}  // namespace
}  // namespace perfkit::test
