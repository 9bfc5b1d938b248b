#include "inject/inject_vm_time.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "abi/perf_event.h"
#include "intelpt/config.h"
#include "intelpt/vm_time.h"
#include "perfdata/reader.h"
#include "record/records.h"

namespace perfkit::inject {

namespace {

struct Queue {
  std::vector<intelpt::VmTimeBuffer> buffers;
  std::vector<std::uint64_t> file_offsets;  // of each buffer's first byte
};

struct Patch {
  std::uint64_t file_offset;
  std::uint8_t bytes[8];
  std::uint8_t n;
};

class Sink : public intelpt::VmTimeSink {
 public:
  Sink(const Queue& q, std::vector<Patch>& patches,
       const std::function<void(std::string_view)>& message)
      : q_(q), patches_(patches), message_(message) {}
  void message(std::string_view line) override { message_(line); }
  void patch(std::size_t buffer, std::size_t offset, const std::uint8_t* bytes,
             std::size_t n) override {
    Patch p{q_.file_offsets[buffer] + offset, {}, static_cast<std::uint8_t>(n)};
    std::memcpy(p.bytes, bytes, n);
    patches_.push_back(p);
  }

 private:
  const Queue& q_;
  std::vector<Patch>& patches_;
  const std::function<void(std::string_view)>& message_;
};

// perf's intel_pt_timeless_decoding: no TSC in the trace, or an event without
// sample times, means no time to correlate.
bool timeless(const intelpt::PtConfig& cfg, const perfdata::EventSet& events, bool asked) {
  if (!cfg.tsc_bit || !cfg.cap_user_time_zero || asked) return true;
  bool no_tsc = true;
  for (const auto& e : events.events()) {
    if (!(e.attr.sample_type & abi::kSampleTime)) return true;
    if (e.attr.type != cfg.pmu_type) continue;
    if (!(e.attr.config & cfg.tsc_bit)) return true;
    no_tsc = false;
  }
  return no_tsc;
}

bool have_mtc(const intelpt::PtConfig& cfg, const perfdata::EventSet& events) {
  for (const auto& e : events.events())
    if (e.attr.type == cfg.pmu_type && (e.attr.config & cfg.mtc_bit)) return true;
  return false;
}

// The order perf decodes its queues in: all go on its heap with the same
// time (1: the decoder's time after synchronizing), in queue order, and
// come off as its binary heap gives up equal keys.
std::vector<std::uint32_t> heap_order(const std::vector<std::uint32_t>& added) {
  std::vector<std::uint32_t> heap(added), order;
  while (!heap.empty()) {
    order.push_back(heap[0]);
    // perf's auxtrace_heap__pop with all keys equal: the hole goes down
    // the right children (left where there is no right), and the last item
    // fills it.
    const std::size_t n = heap.size();
    std::size_t pos = 0;
    bool filled = false;
    for (;;) {
      const std::size_t left = 2 * pos + 1, right = left + 1;
      if (left >= n) break;
      if (right >= n) {
        heap[pos] = heap[left];
        filled = true;
        break;
      }
      heap[pos] = heap[right];
      pos = right;
    }
    if (!filled) heap[pos] = heap[n - 1];
    heap.pop_back();
  }
  return order;
}

Status write_patches(const std::string& path, const std::vector<Patch>& patches) {
  if (patches.empty()) return ok();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return make_error("{}: cannot open for update: {}", path, std::strerror(errno));
  for (const Patch& p : patches) {
    const ssize_t n = ::pwrite(fd, p.bytes, p.n, static_cast<off_t>(p.file_offset));
    if (n != static_cast<ssize_t>(p.n)) {
      const int e = n < 0 ? errno : EIO;
      ::close(fd);
      return make_error("{}: cannot write at offset {:#x}: {}", path, p.file_offset,
                        std::strerror(e));
    }
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    return make_error("{}: cannot write: {}", path, std::strerror(errno));
  return ok();
}

}  // namespace

void parse_vm_time_option(std::string_view value, bool& dry_run, std::string& args) {
  std::size_t start = 0;
  while (start < value.size() && std::isspace(static_cast<unsigned char>(value[start]))) ++start;
  constexpr std::string_view kDryRun = "dry-run";
  dry_run = value.substr(start, kDryRun.size()) == kDryRun;
  args = std::string(dry_run ? value.substr(start + kDryRun.size()) : value);
}

namespace {

// What the pass needs from the recording: perf's checks at its AUXTRACE_INFO
// (failing as perf does), the decoder parameters and the trace queues.
struct Trace {
  std::optional<intelpt::PtConfig> cfg;  // none: no Intel PT
  std::optional<intelpt::VmcsTable> vmcs;
  std::map<std::uint32_t, Queue> queues;  // by idx: perf's queue numbers
};

Status check_info(const record::RecordView& v, const perfdata::Reader& reader,
                  const VmTimeOptions& opts, const std::function<void(std::string_view)>& message,
                  int& status, Trace& out) {
  PK_ASSIGN(auto info, record::parse_auxtrace_info(v));
  if (info.type != abi::kAuxtraceIntelPt) return ok();
  PK_ASSIGN(auto cfg, intelpt::parse_auxtrace_info(info));
  // perf fails the record: its line, then the session's.
  auto refuse = [&](std::string_view why, int err_no) -> Status {
    message(why);
    status = 256 - err_no;
    return make_error("{:#x} [{:#x}]: failed to process type: {} [{}]", v.offset, v.size, v.type,
                      std::strerror(err_no));
  };
  if (timeless(cfg, reader.events(), opts.timeless))
    return refuse("Intel PT has no time information for VM Time Correlation", EINVAL);
  if (!have_mtc(cfg, reader.events()))
    return refuse("MTC packets must have been enabled for VM Time Correlation", EINVAL);
  int err_no = EINVAL;
  auto table = intelpt::VmcsTable::parse(opts.args, &err_no);
  if (!table) return refuse(table.error().message(), err_no);
  for (const auto& e : reader.events().events())
    if (e.attr.type == cfg.pmu_type) {
      cfg.config = e.attr.config;
      cfg.have_config = true;
      break;
    }
  out.vmcs = std::move(*table);
  out.cfg = cfg;
  return ok();
}

Status read_trace(perfdata::Reader& reader, const std::string& path, bool dry_run,
                  const VmTimeOptions& opts, const std::function<void(std::string_view)>& message,
                  int& status, Trace& out) {
  perfdata::ReadRecord rec;
  for (;;) {
    PK_ASSIGN(bool more, reader.next(rec));
    if (!more) return ok();
    const record::RecordView& v = rec.view;
    if (v.type == abi::kRecordAuxtraceInfo && !out.cfg) {
      PK_TRY(check_info(v, reader, opts, message, status, out));
      continue;
    }
    if (v.type != abi::kRecordAuxtrace || !out.cfg) continue;
    PK_ASSIGN(auto a, record::parse_auxtrace(v));
    if (rec.transient && !dry_run)
      return make_error("{}: the trace at offset {:#x} is not in the file's mapping", path,
                        v.offset);
    Queue& q = out.queues[a.idx];
    q.buffers.push_back({v.trailing, a.reference});
    q.file_offsets.push_back(v.offset + v.size);  // (the trace follows its record)
  }
}

}  // namespace

Status run_vm_time_correlation(const std::string& path, bool dry_run, const VmTimeOptions& opts,
                               const std::function<void(std::string_view)>& message, int& status) {
  status = 1;
  PK_ASSIGN(auto reader, perfdata::Reader::open(path));
  if (reader->is_dir())
    return make_error("{}: a perf.data directory cannot be updated in place", path);
  Trace trace;
  PK_TRY(read_trace(*reader, path, dry_run, opts, message, status, trace));
  if (!trace.cfg) {
    status = 0;
    return ok();  // no Intel PT: nothing to correlate
  }
  intelpt::VmTimeParams params;
  params.timer.mtc_period = trace.cfg->mtc_period();
  params.timer.tsc_ctc_ratio_n = trace.cfg->tsc_ctc_ratio_n;
  params.timer.tsc_ctc_ratio_d = trace.cfg->tsc_ctc_ratio_d;
  params.timer.max_non_turbo_ratio = trace.cfg->max_non_turbo_ratio;
  params.dry_run = dry_run;

  std::vector<Patch> patches;
  std::map<std::uint32_t, std::unique_ptr<Sink>> sinks;
  std::map<std::uint32_t, std::unique_ptr<intelpt::VmTimeCorrelator>> passes;
  std::vector<std::uint32_t> synced;
  for (auto& [idx, q] : trace.queues) {
    auto& sink = sinks[idx] = std::make_unique<Sink>(q, patches, message);
    auto pass = std::make_unique<intelpt::VmTimeCorrelator>(q.buffers, params, *trace.vmcs, *sink);
    if (!pass->sync()) continue;  // no PSB: perf never decodes the queue
    synced.push_back(idx);
    passes[idx] = std::move(pass);
  }
  for (std::uint32_t idx : heap_order(synced)) passes[idx]->run();
  if (!dry_run) PK_TRY(write_patches(path, patches));
  status = 0;
  return ok();
}

}  // namespace perfkit::inject
