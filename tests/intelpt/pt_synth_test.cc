// Ground truth: real programs single-stepped by pt-synth and encoded as Intel
// PT with every encoding option. Three decoders must give back exactly the
// recorded instruction sequence: perfkit's flow decoder, /usr/bin/perf
// (`perf script --itrace=i0ns -F ip` on the perf.data file pt-synth writes)
// and libipt's pt_insn decoder (the libipt_oracle program).
#include "pt_synth/pt_synth.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "intelpt/flow_decoder.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

using pt_synth::PtSynthOptions;
using pt_synth::PtSynthResult;

struct Collector : intelpt::FlowSink {
  std::vector<std::uint64_t> ips;
  std::vector<std::string> errors;
  void on_step(const intelpt::Step& s) override {
    if (s.kind == intelpt::StepKind::kError) {
      errors.push_back(fmt::format("{:#x} at trace offset {:#x}: {}", s.from, s.offset, s.error));
      return;
    }
    if (s.kind != intelpt::StepKind::kRun) return;
    std::uint64_t ip = s.ip;
    for (std::uint32_t i = 0; i < s.ninsn; ++i) {
      ips.push_back(ip);
      ip += s.lengths[i];
    }
  }
};

Collector perfkit_decode(const PtSynthResult& r) {
  intelpt::ImageSet images;
  auto space = pt_synth::pt_synth_address_space(r, images);
  EXPECT_TRUE(space);
  intelpt::FlowOptions fo;
  fo.return_compression = r.config.return_compression();
  intelpt::FlowDecoder d(r.encoded.bytes, r.config, &*space, fo, 0, r.encoded.end_tsc);
  Collector c;
  d.run(c);
  return c;
}

void expect_same_ips(const std::vector<std::uint64_t>& want, const std::vector<std::uint64_t>& got,
                     const std::string& who) {
  std::size_t n = std::min(want.size(), got.size());
  std::size_t i = 0;
  while (i < n && want[i] == got[i]) ++i;
  if (i < n || want.size() != got.size()) {
    std::string ctx;
    for (std::size_t k = i >= 3 ? i - 3 : 0; k < std::min(i + 3, std::max(want.size(), got.size()));
         ++k)
      ctx += fmt::format("\n  [{}] want {:#x} got {:#x}", k, k < want.size() ? want[k] : 0,
                         k < got.size() ? got[k] : 0);
    ADD_FAILURE() << who << ": first difference at instruction " << i << " of " << want.size()
                  << " (decoded " << got.size() << ")" << ctx;
  }
}

std::vector<std::uint64_t> parse_ips(const std::string& text) {
  std::vector<std::uint64_t> ips;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto p = line.find_first_not_of(' ');
    if (p == std::string::npos) continue;
    ips.push_back(std::stoull(line.substr(p), nullptr, 16));
  }
  return ips;
}

std::string ptflow(bool static_link) {
  return std::string(PT_WORKLOAD_DIR) + (static_link ? "/ptflow-static" : "/ptflow");
}

// Each program is traced once (single-stepping is slow); every option set
// re-encodes the same execution.
const PtSynthResult& traced(const std::vector<std::string>& argv) {
  static std::map<std::vector<std::string>, PtSynthResult> cache;
  auto it = cache.find(argv);
  if (it != cache.end()) return it->second;
  PtSynthOptions o;
  auto r = pt_synth::pt_synth_run(argv, o);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return cache.emplace(argv, r ? std::move(*r) : PtSynthResult{}).first->second;
}

PtSynthResult reencode(const PtSynthResult& base, const PtSynthOptions& o) {
  PtSynthResult r;
  r.trace = base.trace;
  r.argv = base.argv;
  r.encoded = intelpt::encode_trace(r.trace.exec, o.encode);
  pt_synth::pt_synth_configure(r, o);
  return r;
}

struct OptionSet {
  const char* name;
  void (*apply)(PtSynthOptions&);
  // libipt binds a PTWRITE without FUP to the next ptwrite instruction; the
  // injected packets have none (a real trace would), so libipt sits this out.
  bool libipt = true;
};

const OptionSet kOptionSets[] = {
    {"default", [](PtSynthOptions&) {}},
    {"noretcomp", [](PtSynthOptions& o) { o.encode.return_compression = false; }},
    {"long_tnt", [](PtSynthOptions& o) { o.encode.long_tnt = true; }},
    {"psb256", [](PtSynthOptions& o) { o.encode.psb_period = 256; }},
    {"no_tsc", [](PtSynthOptions& o) { o.encode.tsc = false; }},
    {"mtc0",
     [](PtSynthOptions& o) {
       o.encode.mtc = true;
       o.encode.mtc_period = 0;
     }},
    {"mtc3_cyc",
     [](PtSynthOptions& o) {
       o.encode.mtc = true;
       o.encode.cyc = true;
     }},
    {"cyc_cbr_change",
     [](PtSynthOptions& o) {
       o.encode.cyc = true;
       o.encode.cbr_change_every = 997;
     }},
    {"ovf",
     [](PtSynthOptions& o) {
       o.encode.ovf_every = 3001;
       o.encode.ovf_length = 250;
     }},
    {"ptwrite_fup", [](PtSynthOptions& o) { o.encode.ptwrite_every = 499; }},
    {"ptwrite_nofup",
     [](PtSynthOptions& o) {
       o.encode.ptwrite_every = 499;
       o.encode.fup_on_ptw = false;
     },
     false},
    {"per_cpu", [](PtSynthOptions& o) { o.per_cpu = true; }},
    {"split_buffers", [](PtSynthOptions& o) { o.aux_buffer_size = 1000; }},
    {"per_cpu_split",
     [](PtSynthOptions& o) {
       o.per_cpu = true;
       o.aux_buffer_size = 1000;
     }},
};

class PtSynthMatrix : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  static std::vector<std::vector<std::string>> programs() {
    return {{ptflow(true), "300"}, {ptflow(false), "50"}, {"/bin/true"}};
  }
  PtSynthResult make(PtSynthOptions& o) {
    auto [prog, set] = GetParam();
    kOptionSets[set].apply(o);
    const auto& base = traced(programs()[prog]);
    return reencode(base, o);
  }
};

TEST_P(PtSynthMatrix, PerfkitDecodesTheSteppedSequence) {
  PtSynthOptions o;
  auto r = make(o);
  ASSERT_GT(r.trace.exec.steps.size(), 1000u);
  auto c = perfkit_decode(r);
  EXPECT_TRUE(c.errors.empty()) << c.errors.size() << " errors, first: " << c.errors.front();
  expect_same_ips(pt_synth::pt_synth_expected_ips(r), c.ips, "perfkit");
}

TEST_P(PtSynthMatrix, PerfDecodesTheSteppedSequence) {
  PK_SKIP_WITHOUT_PERF();
  PtSynthOptions o;
  auto r = make(o);
  test::TempDir dir;
  std::string file = dir.path("pt.data");
  auto st = pt_synth::pt_synth_write(file, r, o);
  ASSERT_TRUE(st) << st.error().message();
  auto out = test::run("perf script --itrace=i0ns -F ip -i " + test::sh(file));
  expect_same_ips(pt_synth::pt_synth_expected_ips(r), parse_ips(out.out), "perf");
}

TEST_P(PtSynthMatrix, LibiptDecodesTheSteppedSequence) {
  if (!kOptionSets[std::get<1>(GetParam())].libipt)
    GTEST_SKIP() << "PTWRITE without FUP needs a ptwrite instruction for libipt";
  PtSynthOptions o;
  auto r = make(o);
  test::TempDir dir;
  test::write_file(dir.path("trace.bin"), std::string(as_chars(r.encoded.bytes)));
  std::string cmd = test::sh(LIBIPT_ORACLE) + " " + test::sh(dir.path("trace.bin"));
  for (const auto& m : r.trace.mappings) {
    std::string path = m.path;
    std::uint64_t pgoff = m.pgoff;
    if (path == "[vdso]") {
      path = dir.path("vdso.so");
      test::write_file(path, std::string(as_chars(r.trace.vdso)));
      pgoff = 0;
    } else if (path.empty() || path[0] != '/') {
      continue;
    }
    cmd += " " + test::sh(fmt::format("{}:{:x}:{:x}:{:x}", path, pgoff, m.end - m.start, m.start));
  }
  auto out = test::run(cmd);
  auto want = pt_synth::pt_synth_expected_ips(r);
  auto got = parse_ips(out.out);
  expect_same_ips(want, got, "libipt");
  if (HasFailure()) ADD_FAILURE() << "libipt errors: " << out.err.substr(0, 1000);
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<int, int>>& p) {
  static const char* progs[] = {"ptflow_static", "ptflow", "true"};
  return std::string(progs[std::get<0>(p.param)]) + "_" + kOptionSets[std::get<1>(p.param)].name;
}

INSTANTIATE_TEST_SUITE_P(
    Programs, PtSynthMatrix,
    ::testing::Combine(::testing::Values(0, 1, 2),
                       ::testing::Range(0, static_cast<int>(std::size(kOptionSets)))),
    param_name);

// A process forked without exec is traced too, from the return of its fork,
// in a queue of its own (per thread and per cpu): perf decodes each
// process's trace into exactly its recorded sequence.
TEST(PtSynthFork, PerfDecodesEveryProcess) {
  PK_SKIP_WITHOUT_PERF();
  const auto& base = traced({ptflow(true), "20", "fork"});
  ASSERT_EQ(base.trace.forked.size(), 1u);
  const auto& child = base.trace.forked[0];
  EXPECT_EQ(child.ppid, base.trace.pid);
  EXPECT_EQ(child.parent, -1);
  // The parent's step at fork_step is the system call; the child starts after it.
  const auto& steps = base.trace.exec.steps;
  ASSERT_LT(child.fork_step + 1, steps.size());
  const auto& sys = base.trace.exec.insns[steps[child.fork_step].insn];
  EXPECT_EQ(sys.op, intelpt::InsnOp::kSyscall);
  ASSERT_GT(child.exec.steps.size(), 500u);
  EXPECT_EQ(child.exec.steps[0].ip, steps[child.fork_step].ip + sys.length);
  EXPECT_EQ(steps[child.fork_step + 1].ip, child.exec.steps[0].ip);
  for (bool per_cpu : {false, true}) {
    PtSynthOptions o;
    o.per_cpu = per_cpu;
    PtSynthResult r = reencode(base, o);
    pt_synth::pt_synth_encode_forked(r, o);
    test::TempDir dir;
    const std::string file = dir.path("fork.data");
    auto st = pt_synth::pt_synth_write(file, r, o);
    ASSERT_TRUE(st) << st.error().message();
    auto out = test::run("perf script --itrace=i0ns -F pid,ip -i " + test::sh(file));
    ASSERT_EQ(out.status, 0) << out.err;
    std::map<long, std::vector<std::uint64_t>> by_pid;
    std::istringstream in(out.out);
    long pid = 0;
    std::string ip;
    while (in >> pid >> ip) by_pid[pid].push_back(std::stoull(ip, nullptr, 16));
    const std::string how = per_cpu ? "per-cpu" : "per-thread";
    expect_same_ips(pt_synth::pt_synth_expected_ips(r), by_pid[base.trace.pid], "parent " + how);
    std::vector<std::uint64_t> want;
    for (const auto& s : child.exec.steps) want.push_back(s.ip);
    expect_same_ips(want, by_pid[child.pid], "child " + how);
  }
}

}  // namespace
}  // namespace perfkit
