// inject --vm-time-correlation against perf inject on the same files: Intel
// PT recordings of a program traced as a VM guest's (pt-synth --vm-tsc-offset:
// guest TSCs in the TSC and PEBS packets, VM exits with PSB+ of host time),
// in context (PIP and VMCS packets) and out of it, in one queue and several,
// whole and in small AUXTRACE buffers. Each run is on a copy of its own; the
// dry run's report (stderr), the exit status and the file's bytes after the
// in-place update must be perf's. perf's errors too (no MTC, no time, bad
// options, no --force, an output name, stdin). (vm_time_unit_test has the
// pass on streams built packet by packet, and the option syntax.)
#include "intelpt/vm_time.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>

#include "intelpt/trace_encoder.h"
#include "pt_synth/pt_synth.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

// The recordings: ptflow-static (with a forked child: two queues) traced
// once, encoded once per variant (single-stepping is slow).
struct Variant {
  const char* name;
  void (*apply)(pt_synth::PtSynthOptions&);
};

void vm(pt_synth::PtSynthOptions& o, std::uint64_t offset, std::uint64_t exit_every) {
  o.encode.mtc = true;
  o.encode.vm = true;
  o.encode.vm_tsc_offset = offset;
  o.encode.vm_exit_every = exit_every;
}

const Variant kVariants[] = {
    // In context: PIP and VMCS in PSB+, VM exits, PEBS records with guest TSCs.
    {"in-context",
     [](pt_synth::PtSynthOptions& o) {
       vm(o, 0x123456789, 1500);
       o.encode.psb_period = 256;
       o.encode.pebs_every = 997;
     }},
    // Out of context: where each TSC ran is a guess (time ranges, CTC); CYC.
    {"out-of-context",
     [](pt_synth::PtSynthOptions& o) {
       vm(o, -0x100000ULL, 1000);
       o.encode.vm_out_of_context = true;
       o.encode.cyc = true;
       o.encode.psb_period = 1024;
       o.encode.pebs_every = 1201;
     }},
    // perf's documented offset, MTC bits beyond the TMA's, small buffers,
    // one per-cpu queue, overflows.
    {"buffers",
     [](pt_synth::PtSynthOptions& o) {
       vm(o, 0xffffe42722c64c41, 800);
       o.encode.vmcs = 0x1cbc08;
       o.encode.mtc_period = 9;
       o.encode.ovf_every = 9000;
       o.aux_buffer_size = 1500;
       o.per_cpu = true;
     }},
};

class VmTimeCorrelation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    pt_synth::PtSynthOptions o;
    auto base =
        pt_synth::pt_synth_run({std::string(PT_WORKLOAD_DIR) + "/ptflow-static", "50", "fork"}, o);
    ASSERT_TRUE(base) << base.error().message();
    auto write = [&](const std::string& name, void (*apply)(pt_synth::PtSynthOptions&)) {
      pt_synth::PtSynthOptions v;
      apply(v);
      pt_synth::PtSynthResult r;
      r.trace = base->trace;
      r.argv = base->argv;
      r.encoded = intelpt::encode_trace(r.trace.exec, v.encode);
      pt_synth::pt_synth_configure(r, v);
      pt_synth::pt_synth_encode_forked(r, v);
      const std::string path = dir_->path(name + ".data");
      auto st = pt_synth::pt_synth_write(path, r, v);
      ASSERT_TRUE(st) << st.error().message();
      files_[name] = path;
    };
    for (const Variant& v : kVariants) write(v.name, v.apply);
    write_queue_order(*base);
    write("no-mtc", [](pt_synth::PtSynthOptions& o) { vm(o, 0x10, 0), o.encode.mtc = false; });
    write("no-tsc", [](pt_synth::PtSynthOptions& o) { o.encode.mtc = true, o.encode.tsc = false; });
  }
  // Four queues (the parent and three copies of its child), the third
  // alone with VM exits: the offset is learned there only, and whether the
  // second queue gets it depends on the order perf decodes queues in
  // (0, 2, 3, 1: the order its heap gives up equal keys).
  static void write_queue_order(const pt_synth::PtSynthResult& base) {
    ASSERT_EQ(base.trace.forked.size(), 1u);
    pt_synth::PtSynthOptions v;
    vm(v, 0x123456789, 0);
    v.encode.psb_period = 256;
    pt_synth::PtSynthResult r;
    r.trace = base.trace;
    r.argv = base.argv;
    for (int copy = 1; copy <= 2; ++copy) {
      pt_synth::TraceResult child = base.trace.forked[0];
      child.pid += 1000 * copy;
      r.trace.forked.push_back(std::move(child));
    }
    r.encoded = intelpt::encode_trace(r.trace.exec, v.encode);
    pt_synth::pt_synth_configure(r, v);
    pt_synth::pt_synth_encode_forked(r, v);
    intelpt::TraceEncodeOptions exits = v.encode;
    exits.vm_exit_every = 1500;
    exits.tsc_start = r.forked_encoded[1].step_tsc.empty() ? 0 : r.forked_encoded[1].step_tsc[0];
    r.forked_encoded[1] = intelpt::encode_trace(r.trace.forked[1].exec, exits);
    const std::string path = dir_->path("queue-order.data");
    auto st = pt_synth::pt_synth_write(path, r, v);
    ASSERT_TRUE(st) << st.error().message();
    files_["queue-order"] = path;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static const std::string& file(const std::string& name) { return files_[name]; }

  static test::TempDir* dir_;
  static std::map<std::string, std::string> files_;
};

test::TempDir* VmTimeCorrelation::dir_ = nullptr;
std::map<std::string, std::string> VmTimeCorrelation::files_;

struct Outcome {
  test::RunResult run;
  std::string bytes;  // the file after the command
};

// `inject_args` run by perf and by perfkit, each on a copy of `file`.
std::pair<Outcome, Outcome> both(const test::TempDir& dir, const std::string& file,
                                 const std::string& inject_args) {
  std::pair<Outcome, Outcome> out;
  Outcome* sides[] = {&out.first, &out.second};
  const std::string tools[] = {"perf", test::sh(test::perfkit_bin())};
  for (int i = 0; i < 2; ++i) {
    const std::string copy = dir.path(i ? "ours.data" : "theirs.data");
    test::write_file(copy, test::read_file(file));
    // (perf loops forever on some bad options: never wait for it)
    sides[i]->run = test::run("timeout 60 " + tools[i] + " inject -i " + test::sh(copy) + " " +
                              inject_args + " < /dev/null");
    sides[i]->bytes = test::read_file(copy);
  }
  return out;
}

void expect_same(const std::pair<Outcome, Outcome>& o, const std::string& what) {
  EXPECT_EQ(o.second.run.status, o.first.run.status) << what << "\n" << o.second.run.err;
  EXPECT_EQ(o.second.run.err, o.first.run.err) << what;
  EXPECT_TRUE(o.second.bytes == o.first.bytes)
      << what << ": the files differ after the update, at byte "
      << std::mismatch(o.first.bytes.begin(), o.first.bytes.end(), o.second.bytes.begin(),
                       o.second.bytes.end())
                 .first -
             o.first.bytes.begin();
}

TEST_F(VmTimeCorrelation, SameReportAndBytesAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  bool learned = false, changed = false;
  for (const Variant& v : kVariants) {
    const std::string original = test::read_file(file(v.name));
    for (const char* args :
         {"=dry-run", " --force", "=0x123456789 --force", "='dry-run 0x1111 : 0x1bff6a, 0x77 5'",
          "='0xffffe42722c64c41:0x1cbc08' -f", "='dry-run  0x10' --itrace=i100"}) {
      const std::string what = std::string(v.name) + " --vm-time-correlation" + args;
      auto o = both(dir, file(v.name), "--vm-time-correlation" + std::string(args));
      ASSERT_EQ(o.first.run.status, 0) << what << ": perf fails: " << o.first.run.err;
      expect_same(o, what);
      learned |= o.first.run.err.find("VMCS: 0x") != std::string::npos;
      changed |= o.first.bytes != original;
      if (std::string(args).find("dry-run") != std::string::npos)
        EXPECT_TRUE(o.second.bytes == original) << what << ": a dry run changed the file";
    }
  }
  // The recordings must have made perf learn an offset and change bytes.
  EXPECT_TRUE(learned);
  EXPECT_TRUE(changed);
}

TEST_F(VmTimeCorrelation, QueuesInPerfsOrder) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  const std::string original = test::read_file(file("queue-order"));
  for (const char* args : {"=dry-run", " --force"}) {
    auto o = both(dir, file("queue-order"), std::string("--vm-time-correlation") + args);
    ASSERT_EQ(o.first.run.status, 0) << o.first.run.err;
    EXPECT_NE(o.first.run.err.find("VMCS: 0x"), std::string::npos) << o.first.run.err;
    expect_same(o, args);
  }
}

TEST_F(VmTimeCorrelation, ErrorsAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  test::TempDir dir;
  const std::string& vm = file("in-context");
  const std::string& no_mtc = file("no-mtc");
  const std::string& no_tsc = file("no-tsc");
  const std::pair<const std::string*, const char*> cases[] = {
      {&no_mtc, "--vm-time-correlation=dry-run"},
      {&no_tsc, "--vm-time-correlation=dry-run"},
      {&vm, "--vm-time-correlation=dry-run --itrace=Z"},
      {&vm, "--vm-time-correlation='dry-run 99999999999999999999999'"},
      {&vm, "--vm-time-correlation='dry-run 0x10:0'"},
      {&vm, "--vm-time-correlation='dry-run 5 :'"},
      {&vm, "--vm-time-correlation='dry-run 0x10:5,'"},
      {&vm, "--vm-time-correlation"},
      {&vm, "--vm-time-correlation=DRY-RUN"},
      {&vm, "--vm-time-correlation=dry-run -o out.data"},
  };
  for (const auto& [file, args] : cases) {
    auto o = both(dir, *file, args);
    EXPECT_NE(o.first.run.status, 0) << args;
    expect_same(o, args);
  }
  // Only a named file can be updated in place.
  auto pipe = test::run("cat " + test::sh(vm) + " | perf inject --vm-time-correlation=dry-run");
  auto ours = test::run("cat " + test::sh(vm) + " | " + test::sh(test::perfkit_bin()) +
                        " inject --vm-time-correlation=dry-run");
  EXPECT_EQ(ours.status, pipe.status);
  EXPECT_EQ(ours.err, pipe.err);
  // Text that is no number: perf 6.1 never returns; perfkit says what perf
  // says of an option it cannot parse.
  auto junk = test::run(test::sh(test::perfkit_bin()) + " inject -i " + test::sh(vm) +
                        " --vm-time-correlation='dry-run,5'");
  auto bad = both(dir, vm, "--vm-time-correlation='dry-run 5 :'");
  EXPECT_EQ(junk.status, 234);
  EXPECT_EQ(junk.err, bad.first.run.err);
  // A recording without Intel PT is left as it is.
  const std::string fp = test::fixture("fp.data");
  if (!PK_FIXTURE_MISSING_IN_LOOP(fp, "fp.data")) {
    auto plain = both(dir, fp, "--vm-time-correlation -f");
    EXPECT_EQ(plain.first.run.status, 0) << plain.first.run.err;
    expect_same(plain, "fp.data");
  }
}

}  // namespace
}  // namespace perfkit
