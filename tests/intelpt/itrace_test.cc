// --itrace over whole recordings: pt-synth writes perf.data files, perfkit's
// decode_itrace reads them back (queues, side-band, parallel decode, merge)
// and its synthesized samples are compared with the ground truth and with
// `perf script` on the same file: instructions (i0ns), branches with flags
// (be), calls and returns (cr), errors (e).
#include "itrace/itrace.h"

#include <gtest/gtest.h>

#include <sstream>

#include "pt_test_util.h"

namespace perfkit {
namespace {

using pt_synth::PtSynthOptions;
using pt_synth::PtSynthResult;

std::string collapse(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

struct Got {
  intelpt::SynthSample sample;  // call chains and branch stacks are not kept
  std::int32_t pid = -1, tid = -1;
};

struct Decoded {
  std::vector<Got> samples;
  itrace::ItraceStats stats;
};

Decoded decode(const std::string& file, std::string_view itrace, unsigned jobs = 0) {
  Decoded d;
  auto reader = perfdata::Reader::open(file);
  EXPECT_TRUE(reader) << (reader ? "" : reader.error().message());
  if (!reader) return d;
  itrace::ItraceDecodeOptions o;
  o.itrace = {};
  EXPECT_TRUE(intelpt::parse_itrace(itrace, true, o.itrace));
  o.jobs = jobs;
  auto st = itrace::decode_itrace(**reader, o, [&](const itrace::ItraceSample& s) {
    d.samples.push_back({*s.sample, s.pid, s.tid});
    return ok();
  });
  EXPECT_TRUE(st) << (st ? "" : st.error().message());
  if (st) d.stats = *st;
  return d;
}

std::string write(const PtSynthResult& r, const PtSynthOptions& o, const test::TempDir& dir,
                  const std::string& name) {
  std::string file = dir.path(name);
  auto st = pt_synth::pt_synth_write(file, r, o);
  EXPECT_TRUE(st) << (st ? "" : st.error().message());
  return file;
}

std::vector<std::string> branch_lines(const std::vector<Got>& ss) {
  std::vector<std::string> out;
  for (const auto& s : ss)
    if (s.sample.kind == intelpt::SampleKind::kBranches)
      out.push_back(fmt::format("{} {:x} => {:x}",
                                collapse(intelpt::format_ip_flags(s.sample.flags)), s.sample.ip,
                                s.sample.addr));
  return out;
}

std::vector<std::string> perf_branch_lines(const std::string& file, const std::string& itrace) {
  auto r = test::run("perf script --itrace=" + itrace + " -F flags,ip,addr -i " + test::sh(file));
  std::vector<std::string> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (line.find("=>") != std::string::npos) out.push_back(collapse(line));
  return out;
}

struct Case {
  const char* name;
  void (*apply)(PtSynthOptions&);
};

const Case kCases[] = {
    {"default", [](PtSynthOptions&) {}},
    {"noretcomp", [](PtSynthOptions& o) { o.encode.return_compression = false; }},
    {"per_cpu_split",
     [](PtSynthOptions& o) {
       o.per_cpu = true;
       o.aux_buffer_size = 3000;
     }},
    {"mtc_cyc",
     [](PtSynthOptions& o) {
       o.encode.mtc = true;
       o.encode.cyc = true;
       o.encode.psb_period = 512;
     }},
};

class ItraceMatrix : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  PtSynthResult make(PtSynthOptions& o) {
    static const std::vector<std::vector<std::string>> programs = {{pttest::ptflow(true), "200"},
                                                                   {pttest::ptflow(false), "30"}};
    auto [prog, c] = GetParam();
    kCases[c].apply(o);
    return pttest::reencode(pttest::traced(programs[prog]), o);
  }
  void stream_in_stretches(unsigned jobs, bool runs);
};

TEST_P(ItraceMatrix, InstructionsAreTheSteppedSequence) {
  PtSynthOptions o;
  auto r = make(o);
  test::TempDir dir;
  auto file = write(r, o, dir, "pt.data");
  for (unsigned jobs : {0u, 1u}) {
    auto d = decode(file, "i0nse", jobs);
    std::vector<std::uint64_t> ips;
    for (const auto& s : d.samples) {
      ASSERT_NE(s.sample.kind, intelpt::SampleKind::kError) << s.sample.error_msg;
      ips.push_back(s.sample.ip);
      EXPECT_EQ(s.pid, r.trace.pid);
      EXPECT_EQ(s.tid, r.trace.pid);
    }
    pttest::expect_same_seq(pt_synth::pt_synth_expected_ips(r), ips, "perfkit i0ns",
                            pttest::show_hex);
    EXPECT_EQ(d.stats.instructions, ips.size());
  }
}

TEST_P(ItraceMatrix, BranchesMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  PtSynthOptions o;
  auto r = make(o);
  test::TempDir dir;
  auto file = write(r, o, dir, "pt.data");
  auto mine = branch_lines(decode(file, "be").samples);
  ASSERT_GT(mine.size(), 100u);
  pttest::expect_same_seq(perf_branch_lines(file, "be"), mine, "branches vs perf",
                          pttest::show_str);
}

TEST_P(ItraceMatrix, CallsAndReturnsMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  PtSynthOptions o;
  auto r = make(o);
  test::TempDir dir;
  auto file = write(r, o, dir, "pt.data");
  auto mine = branch_lines(decode(file, "cr").samples);
  pttest::expect_same_seq(perf_branch_lines(file, "cr"), mine, "calls/returns vs perf",
                          pttest::show_str);
}

// ItraceStream taken in stretches (as script takes it, up to each recorded
// event's time) gives decode_itrace's samples in its order, each stretch
// those before its TSC: with one job one queue pauses its decoder on the
// calling thread; otherwise queues come over from worker threads. Runs of
// instruction samples, where asked for, stand for the same samples.
TEST_P(ItraceMatrix, StreamInStretchesIsTheWholeDecode) {
  for (unsigned jobs : {1u, 2u})
    for (bool runs : {false, true}) {
      SCOPED_TRACE(fmt::format("jobs {} runs {}", jobs, runs));
      stream_in_stretches(jobs, runs);
    }
}

void ItraceMatrix::stream_in_stretches(unsigned jobs, bool runs) {
  PtSynthOptions o;
  auto r = make(o);
  test::TempDir dir;
  auto file = write(r, o, dir, "pt.data");
  auto whole = decode(file, "i0nsbe");
  ASSERT_GT(whole.samples.size(), 1000u);
  // Cuts at sample TSCs (several samples share one), at a TSC between two,
  // twice at the same TSC, and before the first.
  std::vector<std::uint64_t> cuts = {0, whole.samples[0].sample.tsc};
  for (std::size_t i = 7; i < whole.samples.size(); i += whole.samples.size() / 13) {
    cuts.push_back(whole.samples[i].sample.tsc);
    cuts.push_back(whole.samples[i].sample.tsc);
    cuts.push_back(whole.samples[i].sample.tsc + 1);
  }
  cuts.push_back(~0ULL);
  itrace::ItraceDecodeOptions opts;
  opts.itrace = {};
  opts.jobs = jobs;
  opts.insn_runs = runs;
  ASSERT_TRUE(intelpt::parse_itrace("i0nsbe", true, opts.itrace));
  auto stream = itrace::ItraceStream::start(file, opts);
  std::vector<Got> got;
  std::uint64_t limit = 0;
  std::size_t run_samples = 0;
  const itrace::ItraceVisitor visit = [&](const itrace::ItraceSample& s) {
    EXPECT_LT(s.sample->tsc, limit);
    if (!s.run_n) {
      got.push_back({*s.sample, s.pid, s.tid});
      return ok();
    }
    intelpt::SynthSample one = *s.sample;
    for (std::uint32_t i = 0; i < s.run_n; ++i, ++run_samples) {
      one.insn_len = s.run_lengths[i];
      got.push_back({one, s.pid, s.tid});
      one.ip += s.run_lengths[i];
    }
    return ok();
  };
  for (std::uint64_t cut : cuts) {
    limit = cut;
    std::size_t before = got.size();
    ASSERT_TRUE(stream->visit_before(cut, visit));
    // A stretch ends at the first sample at or after its TSC.
    if (got.size() < whole.samples.size() && cut != ~0ULL)
      EXPECT_GE(whole.samples[got.size()].sample.tsc, cut) << "stretch from " << before;
  }
  auto st = stream->finish();
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(st->samples, whole.stats.samples);
  EXPECT_EQ(st->instructions, whole.stats.instructions);
  ASSERT_EQ(got.size(), whole.samples.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto &a = got[i].sample, &b = whole.samples[i].sample;
    ASSERT_TRUE(a.kind == b.kind && a.ip == b.ip && a.addr == b.addr && a.tsc == b.tsc &&
                a.time == b.time && a.flags == b.flags && a.insn_len == b.insn_len &&
                got[i].tid == whole.samples[i].tid)
        << "sample " << i;
  }
  // Every instruction but each block's last comes in a run.
  if (runs) EXPECT_GT(run_samples, whole.samples.size() / 8);
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<int, int>>& p) {
  static const char* progs[] = {"ptflow_static", "ptflow"};
  return std::string(progs[std::get<0>(p.param)]) + "_" + kCases[std::get<1>(p.param)].name;
}

INSTANTIATE_TEST_SUITE_P(Programs, ItraceMatrix,
                         ::testing::Combine(::testing::Values(0, 1),
                                            ::testing::Range(0,
                                                             static_cast<int>(std::size(kCases)))),
                         case_name);

TEST(ItraceTest, OverflowsAreErrorsAtPerfsIps) {
  PK_SKIP_WITHOUT_PERF();
  PtSynthOptions o;
  o.encode.ovf_every = 2501;
  o.encode.ovf_length = 300;
  auto r = pttest::reencode(pttest::traced({pttest::ptflow(true), "200"}), o);
  ASSERT_GT(r.encoded.overflows, 3u);
  test::TempDir dir;
  auto file = write(r, o, dir, "ovf.data");
  std::vector<std::string> mine;
  for (const auto& s : decode(file, "e").samples)
    if (s.sample.kind == intelpt::SampleKind::kError)
      mine.push_back(fmt::format("ip {:#x} code {}: {}", s.sample.ip,
                                 static_cast<int>(s.sample.error), s.sample.error_msg));
  EXPECT_EQ(mine.size(), r.encoded.overflows);
  auto out = test::run("perf script --itrace=e -i " + test::sh(file));
  std::vector<std::string> perf;
  std::istringstream in(out.out);
  std::string line;
  while (std::getline(in, line)) {
    auto at = line.find(" ip ");
    if (line.find("instruction trace error") != std::string::npos && at != std::string::npos)
      perf.push_back(line.substr(at + 1));
  }
  pttest::expect_same_seq(perf, mine, "errors vs perf", pttest::show_str);
  // e-o suppresses overflow errors.
  for (const auto& s : decode(file, "e-o").samples)
    EXPECT_NE(s.sample.kind, intelpt::SampleKind::kError);
}

TEST(ItraceTest, NoIntelPtDataIsAnError) {
  test::TempDir dir;
  auto reader = perfdata::Reader::open(test::corpus_dir().empty()
                                           ? std::string("/nonexistent")
                                           : test::corpus_dir() + "/quipper/perf.data.branch-4.14");
  if (!reader) GTEST_SKIP() << "corpus not found";
  itrace::ItraceDecodeOptions opts;
  auto st = itrace::decode_itrace(**reader, opts, [](const itrace::ItraceSample&) { return ok(); });
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "no Intel PT data: there is no AUXTRACE_INFO of type intel_pt");
}

}  // namespace
}  // namespace perfkit

namespace perfkit {
namespace {

std::vector<std::string> timed_branch_lines(const std::vector<Got>& ss) {
  std::vector<std::string> out;
  for (const auto& s : ss)
    if (s.sample.kind == intelpt::SampleKind::kBranches)
      out.push_back(fmt::format("{}.{:09}: {:x} => {:x}", s.sample.time / 1000000000,
                                s.sample.time % 1000000000, s.sample.ip, s.sample.addr));
  return out;
}

std::vector<std::string> perf_timed_branch_lines(const std::string& file) {
  auto r = test::run("perf script --itrace=be -F time,ip,addr --ns -i " + test::sh(file));
  std::vector<std::string> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (line.find("=>") != std::string::npos) out.push_back(collapse(line));
  return out;
}

TEST_P(ItraceMatrix, BranchTimesMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  PtSynthOptions o;
  auto r = make(o);
  test::TempDir dir;
  auto file = write(r, o, dir, "pt.data");
  pttest::expect_same_seq(perf_timed_branch_lines(file),
                          timed_branch_lines(decode(file, "be").samples), "timed branches vs perf",
                          pttest::show_str);
}

}  // namespace
}  // namespace perfkit

namespace perfkit {
namespace {

TEST_P(ItraceMatrix, InstructionTimesMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  PtSynthOptions o;
  auto r = make(o);
  test::TempDir dir;
  auto file = write(r, o, dir, "pt.data");
  std::vector<std::string> mine;
  for (const auto& s : decode(file, "i0ns").samples)
    mine.push_back(fmt::format("{}.{:09}: {:x}", s.sample.time / 1000000000,
                               s.sample.time % 1000000000, s.sample.ip));
  auto out = test::run("perf script --itrace=i0ns -F time,ip --ns -i " + test::sh(file));
  std::vector<std::string> perf;
  std::istringstream in(out.out);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) perf.push_back(collapse(line));
  pttest::expect_same_seq(perf, mine, "timed instructions vs perf", pttest::show_str);
}

}  // namespace
}  // namespace perfkit

namespace perfkit {
namespace {

// perf script's synth field for the power and ptwrite events (perf 6.1).
std::string synth_text(const intelpt::SynthSample& s) {
  switch (s.kind) {
    case intelpt::SampleKind::kPsb:
      return s.payload ? fmt::format("psb offs: {:#x}", s.payload) : "psb offs: 0";
    case intelpt::SampleKind::kCbr:
      return fmt::format("cbr: {:2} freq: {:4} MHz ({:3}%)", s.aux, s.cbr_freq_mhz, s.cbr_percent);
    case intelpt::SampleKind::kPtwrite:
      return fmt::format("IP: {} payload: {:#x}", s.aux, s.payload);
    default:
      return "?";
  }
}

TEST(ItraceTest, PowerAndPtwriteEventsMatchPerf) {
  PK_SKIP_WITHOUT_PERF();
  PtSynthOptions o;
  o.encode.cbr_change_every = 2000;
  o.encode.ptwrite_every = 3000;
  o.encode.psb_period = 2048;
  auto r = pttest::reencode(pttest::traced({pttest::ptflow(true), "200"}), o);
  test::TempDir dir;
  auto file = write(r, o, dir, "pw.data");
  std::vector<std::string> mine;
  for (const auto& s : decode(file, "pw").samples)
    mine.push_back(collapse(fmt::format("{}: {} {} {:x}", intelpt::sample_kind_name(s.sample.kind),
                                        collapse(intelpt::format_ip_flags(s.sample.flags)),
                                        synth_text(s.sample), s.sample.ip)));
  auto out = test::run("perf script --itrace=pw -F event,flags,synth,ip -i " + test::sh(file));
  std::vector<std::string> perf;
  std::istringstream in(out.out);
  std::string line;
  while (std::getline(in, line)) {
    line = collapse(line);
    // perf shows a printable ptwrite payload as text too: drop it.
    if (line.starts_with("ptwrite:")) {
      auto p = line.find("payload: ");
      auto v = line.find(' ', p + 9);
      auto ip = line.rfind(' ');
      if (v != ip) line = line.substr(0, v) + line.substr(ip);
    }
    perf.push_back(line);
  }
  ASSERT_GT(perf.size(), 10u);
  pttest::expect_same_seq(perf, mine, "power/ptwrite events vs perf", pttest::show_str);
}

}  // namespace
}  // namespace perfkit
