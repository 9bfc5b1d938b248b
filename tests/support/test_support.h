// Helpers shared by the tests: where the corpus and the perf-recorded
// fixtures are, running commands, temporary files.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace perfkit::test {

// The perf.data corpus directory ($PERFKIT_CORPUS overrides), or "" if absent.
std::string corpus_dir();
// Every perf.data-like file in the corpus (not the references or raw PT).
std::vector<std::string> corpus_files();
// A fixture recorded by tests/fixtures/record.sh, or "" when it is missing.
std::string fixture(const std::string& name);
std::string perfkit_bin();
std::string workload(const std::string& name);
bool have_perf();
// Whether an execute breakpoint on a function of this process counts its
// calls: some hypervisors never deliver the debug-register traps (perf
// then counts 0 as well).
bool breakpoints_count();
// The path of `rel` under the npm consumers' node_modules, or "" when it
// is not installed (tests/consumers/install.sh).
std::string npm_consumer(const std::string& rel);
// The path of `name` found in $PATH, or "" (a consumer the tests run).
std::string find_tool(const std::string& name);
// Whether this is a CI run (CI=true in the environment): an oracle missing
// there fails the test instead of skipping it.
bool in_ci();

struct RunResult {
  int status = -1;  // exit status, or -1 if it did not exit normally
  std::string out;
  std::string err;
};
// Runs `cmd` with /bin/sh, capturing stdout and stderr.
RunResult run(const std::string& cmd);

// perf's command and ours, run one after the other. Both read the live
// system (kallsyms, ~/.debug, the DSOs on disk) that tests running beside
// this one can change between the two runs: when the outputs differ, perf
// runs again, and only if perf's own output moved (the system changed under
// the oracle) do both run once more and that pair counts. A difference that
// perf's second run confirms stays a failure.
struct RunPair {
  RunResult theirs;
  RunResult ours;
};
RunPair run_pair(const std::string& perf_cmd, const std::string& ours_cmd);

// A file in a fresh temporary directory, removed with it at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& data);

// Shell-quotes a string.
std::string sh(const std::string& s);

// The first line where `ours` and `theirs` differ, both shown, for a
// failure message; "" when they are the same.
std::string first_difference(const std::string& ours, const std::string& theirs);

}  // namespace perfkit::test

#define PK_SKIP_WITHOUT_PERF()                                                           \
  do {                                                                                   \
    if (perfkit::test::have_perf()) break;                                               \
    if (perfkit::test::in_ci()) FAIL() << "/usr/bin/perf, the oracle, is missing in CI"; \
    GTEST_SKIP() << "/usr/bin/perf is not installed";                                    \
  } while (0)
// `var` = the fixture `name`'s path; a missing fixture skips the test, or
// fails it in CI.
#define PK_FIXTURE_OR_SKIP(var, name)                                                  \
  const std::string var = perfkit::test::fixture(name);                                \
  do {                                                                                 \
    if (!var.empty()) break;                                                           \
    if (perfkit::test::in_ci()) FAIL() << "fixture " << (name) << " is missing in CI"; \
    GTEST_SKIP() << "fixture " << (name) << " was not recorded";                       \
  } while (0)
// `missing` (e.g. a fixture path that came back empty): skips the test, or
// fails it in CI, saying `what` is missing.
#define PK_SKIP_IF_MISSING(missing, what)                              \
  do {                                                                 \
    if (!(missing)) break;                                             \
    if (perfkit::test::in_ci()) FAIL() << what << " is missing in CI"; \
    GTEST_SKIP() << what << " is missing";                             \
  } while (0)
// In a loop over fixtures: true when `path` is missing (skip it), after
// failing the test in CI.
#define PK_FIXTURE_MISSING_IN_LOOP(path, name)                                                    \
  ((path).empty() &&                                                                              \
   (perfkit::test::in_ci() ? (ADD_FAILURE() << "fixture " << (name) << " is missing in CI", true) \
                           : true))
// `var` = the path of the consumer tool `name` ($PATH); a missing one skips
// the test, or fails it in CI (scripts/setup installs the consumers).
#define PK_TOOL_OR_SKIP(var, name)                                                      \
  const std::string var = perfkit::test::find_tool(name);                               \
  do {                                                                                  \
    if (!var.empty()) break;                                                            \
    if (perfkit::test::in_ci()) FAIL() << "consumer " << (name) << " is missing in CI"; \
    GTEST_SKIP() << "consumer " << (name) << " is not installed (scripts/setup)";       \
  } while (0)
// `var` = the npm consumer file `rel` (under node_modules); a missing one
// skips the test, or fails it in CI.
#define PK_NPM_OR_SKIP(var, rel)                                                           \
  const std::string var = perfkit::test::npm_consumer(rel);                                \
  do {                                                                                     \
    if (!var.empty()) break;                                                               \
    if (perfkit::test::in_ci()) FAIL() << "npm consumer " << (rel) << " is missing in CI"; \
    GTEST_SKIP() << "npm consumer " << (rel) << " is not installed";                       \
  } while (0)
// Skips a test whose counts come from hardware breakpoints on a machine
// that does not deliver them (a capability, as a PMU: skipped in CI too).
#define PK_SKIP_WITHOUT_BREAKPOINTS()                                                      \
  if (!perfkit::test::breakpoints_count())                                                 \
  GTEST_SKIP() << "hardware breakpoints do not fire on this machine (its hypervisor does " \
                  "not deliver debug-register traps; perf counts 0 too)"
#define PK_SKIP_WITHOUT_CORPUS() \
  if (perfkit::test::corpus_dir().empty()) GTEST_SKIP() << "perf-corpus not found"
