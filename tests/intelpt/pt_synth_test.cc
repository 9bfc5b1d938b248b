// Ground truth: real programs single-stepped by pt-synth, encoded as Intel PT
// with every encoding option, decoded by perfkit's flow decoder, must give
// back exactly the recorded instruction sequence.
#include "analysis/pt_synth.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "intelpt/flow_decoder.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

using analysis::PtSynthOptions;
using analysis::PtSynthResult;

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

Collector decode(const PtSynthResult& r) {
  intelpt::ImageSet images;
  auto space = analysis::pt_synth_address_space(r, images);
  EXPECT_TRUE(space);
  intelpt::FlowOptions fo;
  fo.return_compression = r.config.return_compression();
  intelpt::FlowDecoder d(r.encoded.bytes, r.config, &*space, fo, 0, r.encoded.end_tsc);
  Collector c;
  d.run(c);
  return c;
}

void expect_same_ips(const std::vector<std::uint64_t>& want,
                     const std::vector<std::uint64_t>& got) {
  std::size_t n = std::min(want.size(), got.size());
  std::size_t i = 0;
  while (i < n && want[i] == got[i]) ++i;
  if (i < n || want.size() != got.size()) {
    std::string ctx;
    for (std::size_t k = i >= 3 ? i - 3 : 0; k < std::min(i + 3, std::max(want.size(), got.size()));
         ++k)
      ctx += fmt::format("\n  [{}] want {:#x} got {:#x}", k, k < want.size() ? want[k] : 0,
                         k < got.size() ? got[k] : 0);
    ADD_FAILURE() << "first difference at instruction " << i << " of " << want.size()
                  << " (decoded " << got.size() << ")" << ctx;
  }
}

PtSynthResult synth(const std::vector<std::string>& argv, const PtSynthOptions& o) {
  auto r = analysis::pt_synth_run(argv, o);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  if (!r) return {};
  return std::move(*r);
}

TEST(PtSynthTest, TrueDecodesToTheSteppedSequence) {
  PtSynthOptions o;
  auto r = synth({"/bin/true"}, o);
  ASSERT_GT(r.trace.exec.steps.size(), 1000u);
  auto c = decode(r);
  EXPECT_TRUE(c.errors.empty()) << c.errors.front();
  expect_same_ips(analysis::pt_synth_expected_ips(r), c.ips);
}

}  // namespace
}  // namespace perfkit

namespace perfkit {
namespace {

std::vector<std::uint64_t> perf_ips(const std::string& file, std::string* err) {
  auto r = test::run("perf script --itrace=i0ns -F ip -i " + test::sh(file));
  *err = r.err;
  std::vector<std::uint64_t> ips;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    auto p = line.find_first_not_of(' ');
    if (p == std::string::npos) continue;
    ips.push_back(std::stoull(line.substr(p), nullptr, 16));
  }
  return ips;
}

TEST(PtSynthPerfTest, PerfDecodesTrueToTheSteppedSequence) {
  PK_SKIP_WITHOUT_PERF();
  PtSynthOptions o;
  auto r = synth({"/bin/true"}, o);
  test::TempDir dir;
  std::string file = dir.path("true.data");
  auto st = analysis::pt_synth_write(file, r, o);
  ASSERT_TRUE(st) << st.error().message();
  std::string err;
  auto ips = perf_ips(file, &err);
  expect_same_ips(analysis::pt_synth_expected_ips(r), ips);
  EXPECT_EQ(err.find("error"), std::string::npos) << err.substr(0, 2000);
}

}  // namespace
}  // namespace perfkit
