// pt-synth: ground-truth Intel PT recordings from real programs, on any x86-64
// machine. The program runs under single-step ptrace (pt_synth_tracer.h); the
// exact instruction sequence is encoded as the packet stream the hardware
// would have written (intelpt/trace_encoder.h); and a perf.data file is
// written as `perf record -e intel_pt//u` writes one: AUXTRACE_INFO of type
// intel_pt with perf's priv fields, the intel_pt and dummy:u attrs, COMM,
// MMAP2, ITRACE_START, AUX and AUXTRACE records (the trace), EXIT, and the
// header features perf needs (CPUID, AUXTRACE index, EVENT_DESC ...).
// /usr/bin/perf, libipt and perfkit all decode the result; the tests compare
// them with the recorded sequence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "intelpt/config.h"
#include "intelpt/image.h"
#include "intelpt/trace_encoder.h"
#include "pt_synth/pt_synth_tracer.h"

namespace perfkit::pt_synth {

struct PtSynthOptions {
  intelpt::TraceEncodeOptions encode;
  TracerOptions tracer;
  bool per_cpu = false;  // per-cpu AUX buffer (cpu 0) instead of per-thread
  std::uint32_t cpu = 0;
  // With per_cpu: the same trace on this many cpus (cpu, cpu+1, ...), as if
  // the program ran on each; for benchmarks of parallel decoding.
  std::uint32_t cpus = 1;
  // Splits the trace into AUXTRACE records of at most this many bytes (0: one).
  std::uint64_t aux_buffer_size = 0;
  // A recorded event beside the trace (cpu-clock:u, as with perf record -e
  // intel_pt//u,cpu-clock:u): a SAMPLE every this many instructions, at the
  // instruction's IP and time (0: none).
  std::uint64_t sample_every = 0;
  std::uint32_t pmu_type = 6;                 // the intel_pt PMU type (the corpus recording's)
  std::string cpuid = "GenuineIntel,6,85,4";  // Skylake-SP: no errata workarounds in perf
  bool pipe = false;                          // write a pipe-mode stream
};

struct PtSynthResult {
  TraceResult trace;
  intelpt::EncodedTrace encoded;
  // The trace of each process in trace.forked, in its own queue: its time
  // starts where its parent's fork returned.
  std::vector<intelpt::EncodedTrace> forked_encoded;
  intelpt::PtConfig config;       // what AUXTRACE_INFO says
  std::uint64_t attr_config = 0;  // the intel_pt event's config
  std::vector<std::string> argv;
};

// Traces `argv` and encodes its trace (and its forked processes'). Errors: the program cannot be
// run or traced.
Expected<PtSynthResult> pt_synth_run(const std::vector<std::string>& argv,
                                     const PtSynthOptions& opts);

// Sets r.attr_config and r.config (what the recording says about the trace)
// from the options; pt_synth_run does it. For re-encoding an execution.
void pt_synth_configure(PtSynthResult& r, const PtSynthOptions& opts);

// Encodes the forked processes' traces (r.forked_encoded) after r.encoded's;
// pt_synth_run does it.
void pt_synth_encode_forked(PtSynthResult& r, const PtSynthOptions& opts);

// Writes the recording to `path` ("-" for stdout, pipe mode). Errors name the path.
Status pt_synth_write(const std::string& path, const PtSynthResult& r, const PtSynthOptions& opts);

// The traced process's code as a decoder sees it: files by path, the vdso from
// the bytes the tracer read, each mapping from its time on.
Expected<intelpt::AddressSpace> pt_synth_address_space(const PtSynthResult& r,
                                                       intelpt::ImageSet& images);

// The IPs a decoder must report, in order: every recorded step except those
// lost in injected overflows.
std::vector<std::uint64_t> pt_synth_expected_ips(const PtSynthResult& r);

// The perf time (ns) of a TSC value under the recording's TIME_CONV.
std::uint64_t pt_synth_perf_time(const PtSynthResult& r, std::uint64_t tsc);

}  // namespace perfkit::pt_synth
