// Decoding the Intel PT trace of a recording: what perf script/report/inject
// do with --itrace. The AUXTRACE buffers form queues (per cpu or per thread,
// as AUXTRACE_INFO says); the side-band records (MMAP/MMAP2, COMM, FORK,
// ITRACE_START, SWITCH, SWITCH_CPU_WIDE) give each queue its threads and
// their code over time; each queue is decoded on its own thread
// (intelpt::FlowDecoder + intelpt::Synthesizer) and the synthesized samples
// are merged by time, in perf's order, for the visitor.
//
//   Reader --> PtRecording (queues, address spaces, cpu timelines)
//          --> one decoder thread per queue --bounded batches--> merge by time --> visitor
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "intelpt/itrace_options.h"
#include "intelpt/synth.h"
#include "perfdata/reader.h"
#include "record/sample.h"

namespace perfkit::itrace {

struct ItraceSample {
  // The sample; it and what its callchain and branch_stack point to are valid
  // only during the visit.
  const intelpt::SynthSample* sample = nullptr;
  std::int32_t pid = -1, tid = -1, cpu = -1;
  // With ItraceDecodeOptions::insn_runs, a visit may stand for a run of
  // instruction samples (run_n > 0): run_n samples like `sample` (same time,
  // flags and period), one after the other from sample->ip, of lengths
  // run_lengths[0..run_n) (sample->insn_len is the first's).
  const std::uint8_t* run_lengths = nullptr;
  std::uint32_t run_n = 0;
};

struct ItraceDecodeOptions {
  intelpt::ItraceOptions itrace = intelpt::itrace_defaults(true);
  // With c or r: also the branches they leave out (without IPC), for a
  // visitor that follows the call stack itself (perf script's callindent).
  bool every_branch = false;
  // Queues decoding at once, each on its own thread (0: as many as there are
  // cores; 1: one at a time). A recording with one queue decodes on the
  // calling thread and hands samples to the visitor straight away.
  unsigned jobs = 0;
  // perf's add_callchain (itrace G, perf report's default): the recorded
  // samples without call chains get one from the thread stack as of their
  // time, each as a kChain sample whose payload is the recorded sample's
  // ordinal among those (SAMPLE records of events without CALLCHAIN, in
  // file order). Samples the trace has no queue for get none.
  bool late_chains = false;
  // The visitor takes runs of instruction samples (ItraceSample::run_n):
  // the samples of a run share their time, so queues merge alike.
  bool insn_runs = false;
  // The file to read the code of a recorded path from ("": use the path).
  std::function<std::string(const std::string& path)> locate;
  // Problems that do not stop decoding (a DSO that cannot be read, ...).
  std::function<void(const std::string&)> warn;
  // For a progress bar: called now and then on the calling thread with
  // (trace bytes decoded, trace bytes in all), and once at the end with both
  // the total.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

struct ItraceStats {
  std::uint64_t instructions = 0;
  std::uint64_t trace_bytes = 0;
  std::uint64_t queues = 0;
  std::uint64_t samples = 0;
  std::uint64_t errors = 0;
};

using ItraceVisitor = std::function<Status(const ItraceSample&)>;

// perf's add_callchain (itrace G) for a reader of the recording: the chain
// the thread stacks give each recorded sample without one, as of its time
// (perf's thread_stack__sample_late), found by the sample's time, tid and ip.
class LateChains {
 public:
  // Decodes the trace of the file at `path` once, for its stacks alone.
  static Expected<LateChains> decode(const std::string& path, const ItraceDecodeOptions& opts);
  // The sample's chain; perf's [context, ip] for one the trace gave none.
  std::span<const std::uint64_t> of(const record::Sample& s);

 private:
  struct Key {
    std::uint64_t time, ip;
    std::uint32_t tid;
    bool operator<(const Key& o) const {
      return std::tie(time, ip, tid) < std::tie(o.time, o.ip, o.tid);
    }
  };
  std::map<Key, std::pair<std::size_t, std::size_t>> at_;  // (first word, count)
  std::vector<std::uint64_t> words_;
  std::uint64_t fallback_[2] = {};
};

// The last branches of `s` (itrace l) as a sample's branch stack in perf's
// layout, most recent first: from, to, and flags with in_tx and abort (no
// mispredict). Its entries live in `buf`.
record::BranchStack itrace_branch_stack(const intelpt::SynthSample& s,
                                        std::vector<std::uint8_t>& buf);

// Decodes every Intel PT queue of `reader` (which must be at its first
// record) and hands the samples to `visit` in time order (queue order for
// equal times; queue after queue when the trace has no timestamps).
// Errors: no AUXTRACE_INFO of type intel_pt, its priv fields, reader errors,
// and the visitor's own errors (which stop decoding).
Expected<ItraceStats> decode_itrace(perfdata::Reader& reader, const ItraceDecodeOptions& opts,
                                    const ItraceVisitor& visit);

// The samples of decode_itrace taken a stretch at a time, as perf takes
// them (intel_pt_process_queues up to each recorded event's time): the
// caller visits those before a TSC, handles its recorded event, and goes on.
// The file at `path` is read with a reader of its own. With jobs 1, a trace
// of one queue decodes on the caller's thread, as far as each visit asks;
// otherwise the queues decode on worker threads (one queue on one worker)
// and come over in bounded batches. Destroying the stream stops the decode.
class ItraceStream {
 public:
  static std::unique_ptr<ItraceStream> start(std::string path, ItraceDecodeOptions opts);
  ~ItraceStream();
  ItraceStream(const ItraceStream&) = delete;
  ItraceStream& operator=(const ItraceStream&) = delete;

  // Visits, in order, the samples not yet visited whose TSC is below `tsc`
  // (all of them with ~0). Errors: the visitor's, which stop the decode.
  Status visit_before(std::uint64_t tsc, const ItraceVisitor& visit);
  // Once every sample is visited: the decode's stats, or its error.
  Expected<ItraceStats> finish();

  struct Impl;

 private:
  explicit ItraceStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Whether the recording has Intel PT data (an AUXTRACE_INFO of type intel_pt
// must be read first; this only looks at the header's AUXTRACE feature).
bool has_auxtrace(const perfdata::Reader& reader);

}  // namespace perfkit::itrace
