// pt_bench: Intel PT decode throughput, for bench/run.
//
//   pt_bench gen DIR PROGRAM ARGS...   single-steps PROGRAM once, repeats its
//       execution to --insns instructions, and writes DIR/pt.data (1 queue),
//       DIR/pt2.data (the same trace on 2 cpus), DIR/trace.bin (raw trace) and
//       DIR/images (the libipt_oracle image arguments)
//   pt_bench flow TRACE FILE:OFFSET:SIZE:VADDR...
//       the flow decoder alone on a raw trace with the images libipt_oracle
//       gets: every instruction's IP is visited (summed), like pt_insn_next
//   pt_bench decode FILE [--serial] [--print] [--itrace=STR]
//       decodes every queue with decode_itrace (default i0ns), optionally
//       printing each IP like `perf script -F ip`, and prints
//       "instructions N bytes N seconds S insn/s R MB/s R"
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "base/output.h"
#include "intelpt/flow_decoder.h"
#include "itrace/itrace.h"
#include "pt_synth/pt_synth.h"

using namespace perfkit;

namespace {

int gen(const std::string& dir, std::vector<std::string> argv, std::uint64_t target) {
  pt_synth::PtSynthOptions o;
  auto r = pt_synth::pt_synth_run(argv, o);
  if (!r) {
    fmt::print(stderr, "pt_bench: {}\n", r.error().message());
    return 1;
  }
  // Repeat the execution: after its exit syscall (TIP.PGD) the next copy
  // starts with TIP.PGE at the entry, in the same address space.
  intelpt::Execution& exec = r->trace.exec;
  const std::size_t once = exec.steps.size();
  const auto interrupted = exec.interrupted;
  while (exec.steps.size() < target) {
    exec.steps.insert(exec.steps.end(), exec.steps.begin(), exec.steps.begin() + once);
    exec.interrupted.insert(exec.interrupted.end(), interrupted.begin(), interrupted.end());
  }
  r->encoded = intelpt::encode_trace(exec, o.encode);
  pt_synth::pt_synth_configure(*r, o);
  if (auto st = pt_synth::pt_synth_write(dir + "/pt.data", *r, o); !st) {
    fmt::print(stderr, "pt_bench: {}\n", st.error().message());
    return 1;
  }
  pt_synth::PtSynthOptions two = o;
  two.per_cpu = true;
  two.cpus = 2;
  pt_synth::pt_synth_configure(*r, two);
  if (auto st = pt_synth::pt_synth_write(dir + "/pt2.data", *r, two); !st) return 1;
  auto raw = FdWriter::create(dir + "/trace.bin");
  if (!raw) return 1;
  raw->write(Bytes(r->encoded.bytes));
  if (!raw->close()) return 1;
  std::string images;
  for (const auto& m : r->trace.mappings) {
    std::string path = m.path;
    std::uint64_t pgoff = m.pgoff;
    if (path == "[vdso]") {
      path = dir + "/vdso.so";
      pgoff = 0;
      auto v = FdWriter::create(path);
      if (!v) return 1;
      v->write(Bytes(r->trace.vdso));
      if (!v->close()) return 1;
    } else if (path.empty() || path[0] != '/') {
      continue;
    }
    images += fmt::format("{}:{:x}:{:x}:{:x} ", path, pgoff, m.end - m.start, m.start);
  }
  auto img = FdWriter::create(dir + "/images");
  if (!img) return 1;
  img->write(images);
  if (!img->close()) return 1;
  fmt::print("{} instructions ({} traced once), {} bytes of trace\n", exec.steps.size(), once,
             r->encoded.bytes.size());
  return 0;
}

// "000102...ff": two hex digits per byte value.
const char* const kHexPairs = [] {
  static char t[513];
  for (int i = 0; i < 256; ++i) {
    t[2 * i] = "0123456789abcdef"[i >> 4];
    t[2 * i + 1] = "0123456789abcdef"[i & 15];
  }
  return t;
}();

int decode(const std::string& file, bool serial, bool print, const std::string& itrace) {
  auto reader = perfdata::Reader::open(file);
  if (!reader) {
    fmt::print(stderr, "pt_bench: {}\n", reader.error().message());
    return 1;
  }
  itrace::ItraceDecodeOptions o;
  o.itrace = {};
  if (auto st = intelpt::parse_itrace(itrace, true, o.itrace); !st) {
    fmt::print(stderr, "pt_bench: {}\n", st.error().message());
    return 1;
  }
  o.jobs = serial ? 1 : 0;
  // Text goes through a 1 MiB buffer written straight to stdout.
  std::vector<char> text(1 << 20);
  std::size_t used = 0;
  auto drain = [&] {
    std::size_t done = 0;
    while (done < used) {
      ssize_t n = ::write(1, text.data() + done, used - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    used = 0;
  };
  std::uint64_t sum = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto st = itrace::decode_itrace(**reader, o, [&](const itrace::ItraceSample& s) {
    if (print) {
      // " %16lx\n", as perf script -F ip prints it.
      if (used + 18 > text.size()) drain();
      char* line = text.data() + used;
      std::uint64_t v = s.sample->ip;
      // Hex digits two at a time, right-aligned in 16 columns after a space.
      int digits = v ? (64 - __builtin_clzll(v) + 3) / 4 : 1;
      std::memset(line, ' ', 17 - digits);
      char* end = line + 17;
      while (digits >= 2) {
        end -= 2;
        std::memcpy(end, kHexPairs + 2 * (v & 0xff), 2);
        v >>= 8;
        digits -= 2;
      }
      if (digits) *--end = "0123456789abcdef"[v & 15];
      line[17] = '\n';
      used += 18;
    } else {
      sum += s.sample->ip;
    }
    return ok();
  });
  drain();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!st) {
    fmt::print(stderr, "pt_bench: {}\n", st.error().message());
    return 1;
  }
  fmt::print(stderr,
             "instructions {} bytes {} seconds {:.3f} insn/s {:.3g} MB/s {:.1f} (errors {}, "
             "checksum {:x})\n",
             st->instructions, st->trace_bytes, secs, st->instructions / secs,
             st->trace_bytes / secs / 1e6, st->errors, sum);
  return 0;
}

struct SumIps : intelpt::FlowSink {
  std::uint64_t sum = 0, insns = 0, errors = 0;
  void on_step(const intelpt::Step& s) override {
    if (s.kind == intelpt::StepKind::kError) ++errors;
    if (s.kind != intelpt::StepKind::kRun) return;
    std::uint64_t ip = s.ip;
    for (std::uint32_t i = 0; i < s.ninsn; ++i) {
      sum += ip;
      ip += s.lengths[i];
    }
    insns += s.ninsn;
  }
};

int flow(const std::string& trace, const std::vector<std::string>& specs) {
  auto data = MappedFile::open(trace);
  if (!data) {
    fmt::print(stderr, "pt_bench: {}\n", data.error().message());
    return 1;
  }
  intelpt::ImageSet images;
  intelpt::AddressSpace space;
  for (const auto& spec : specs) {
    // FILE:OFFSET:SIZE:VADDR, numbers in hex (libipt_oracle's form)
    auto c3 = spec.rfind(':'), c2 = spec.rfind(':', c3 - 1), c1 = spec.rfind(':', c2 - 1);
    auto img = images.file(spec.substr(0, c1));
    if (!img) continue;
    intelpt::Mapping m;
    m.pgoff = std::stoull(spec.substr(c1 + 1, c2 - c1 - 1), nullptr, 16);
    m.start = std::stoull(spec.substr(c3 + 1), nullptr, 16);
    m.end = m.start + std::stoull(spec.substr(c2 + 1, c3 - c2 - 1), nullptr, 16);
    m.image = *img;
    space.add(m);
  }
  intelpt::PtConfig cfg;
  auto t0 = std::chrono::steady_clock::now();
  intelpt::FlowDecoder dec(data->bytes(), cfg, &space);
  SumIps sink;
  dec.run(sink);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{}\n", sink.insns);
  fmt::print(stderr,
             "instructions {} bytes {} seconds {:.3f} insn/s {:.3g} MB/s {:.1f} (errors {}, "
             "checksum {:x})\n",
             sink.insns, data->size(), secs, sink.insns / secs, data->size() / secs / 1e6,
             sink.errors, sink.sum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && !std::strcmp(argv[1], "flow"))
    return flow(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  if (argc >= 4 && !std::strcmp(argv[1], "gen")) {
    std::uint64_t target = 20'000'000;
    std::vector<std::string> args;
    for (int i = 3; i < argc; ++i) {
      if (!std::strncmp(argv[i], "--insns=", 8))
        target = std::stoull(argv[i] + 8);
      else
        args.push_back(argv[i]);
    }
    return gen(argv[2], args, target);
  }
  if (argc >= 3 && !std::strcmp(argv[1], "decode")) {
    bool serial = false, print = false;
    std::string itrace = "i0ns";
    for (int i = 3; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--serial")) serial = true;
      if (!std::strcmp(argv[i], "--print")) print = true;
      if (!std::strncmp(argv[i], "--itrace=", 9)) itrace = argv[i] + 9;
    }
    return decode(argv[2], serial, print, itrace);
  }
  fmt::print(stderr,
             "usage: pt_bench gen DIR [--insns=N] PROGRAM ARGS... | pt_bench decode FILE "
             "[--serial] [--print] [--itrace=STR]\n");
  return 2;
}
