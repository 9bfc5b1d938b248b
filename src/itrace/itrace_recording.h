// PtRecording: what decoding needs from a recording, read in one pass over
// its records: the decoder parameters, the trace queues with their buffers,
// the address space of every process over time, which thread ran on which
// cpu when, and the thread -> process map. Internal to itrace.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "intelpt/config.h"
#include "intelpt/flow_decoder.h"
#include "intelpt/image.h"
#include "intelpt/synth.h"
#include "itrace/itrace.h"

namespace perfkit::itrace {

struct PtBuffer {
  Bytes data;
  std::uint64_t offset = 0;     // offset in the AUX area
  std::uint64_t reference = 0;  // TSC when perf read it
};

struct PtQueue {
  std::uint32_t idx = 0;  // the AUXTRACE records' idx: perf's queue number
  std::int32_t cpu = -1;  // per-cpu queues
  std::int32_t tid = -1;  // per-thread queues
  std::vector<PtBuffer> buffers;
  std::uint64_t bytes = 0;
};

// Who runs on a cpu from `tsc` on.
struct ThreadSpan {
  std::uint64_t tsc = 0;
  std::int32_t pid = -1, tid = -1;
  bool migrated = false;  // the thread ran last on another traced cpu
};

// A recorded sample to give a call chain (ItraceDecodeOptions::late_chains).
struct RecordedSample {
  std::uint64_t tsc = 0, ip = 0;
  std::int32_t tid = -1, cpu = -1;
  std::uint32_t ordinal = 0;
};

struct PtRecording {
  intelpt::PtConfig cfg;
  std::vector<PtQueue> queues;
  intelpt::ImageSet images;
  std::unordered_map<std::int32_t, intelpt::AddressSpace> spaces;  // by pid
  std::unordered_map<std::int32_t, std::int32_t> pid_of_tid;
  std::map<std::int32_t, std::vector<ThreadSpan>> cpu_timeline;
  std::vector<std::vector<std::uint8_t>> owned;  // copies of pipe-mode buffers
  // Images whose code cannot be read, by id: how many failures to read it
  // perf reports (it goes on silently after). Twice, as perf marks a DSO
  // unreadable at its first failure and stops at its second; once for one
  // perf found unreadable before decoding: the kernel (no kcore), and a
  // process's first DSOs, which perf asks for their ELF class as they are
  // mapped until one answers.
  std::unordered_map<std::uint32_t, unsigned> unreadable;
  // The TSC of every timed side-band record and recorded sample, ascending,
  // each once: where perf's decode of several queues stops to let the
  // records it reads catch up (which orders the queues' samples).
  std::vector<std::uint64_t> event_tsc;
  // With late_chains: the call-chain requests of each queue, in TSC order.
  std::vector<std::vector<intelpt::LateChainRequest>> late;

  std::int32_t pid_of(std::int32_t tid) const {
    auto it = pid_of_tid.find(tid);
    return it == pid_of_tid.end() ? tid : it->second;
  }
  // A process's address space; one that mapped nothing (or an unknown
  // thread, pid -1) sees the kernel's maps (`kernel_space`).
  const intelpt::AddressSpace* space_of(std::int32_t pid) const {
    auto it = spaces.find(pid);
    if (it != spaces.end()) return &it->second;
    return kernel_space.empty() ? nullptr : &kernel_space;
  }
  intelpt::AddressSpace kernel_space;
  // The thread on `cpu` at `tsc` (pid -1 if unknown), and when that changes.
  ThreadSpan thread_on(std::int32_t cpu, std::uint64_t tsc, std::uint64_t* next_change) const;
};

// Reads the recording. Errors: no intel_pt AUXTRACE_INFO, bad priv fields,
// reader errors.
Expected<std::unique_ptr<PtRecording>> read_pt_recording(perfdata::Reader& reader,
                                                         const ItraceDecodeOptions& opts);

}  // namespace perfkit::itrace
