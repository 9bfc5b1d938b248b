#include "itrace/itrace_recording.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "abi/perf_event.h"
#include "elf/vdso.h"
#include "machine/machine.h"
#include "perfdata/record_stream.h"
#include "record/records.h"
#include "record/sample.h"
#include "symbol/symbolizer.h"

namespace perfkit::itrace {

namespace {

class Builder {
 public:
  Builder(perfdata::Reader& reader, const ItraceDecodeOptions& opts, PtRecording& out)
      : reader_(reader), opts_(opts), out_(out), symbolizer_({}), machine_(symbolizer_) {
    machine_.keep_history();
  }

  Status read();

 private:
  std::uint64_t tsc_of(const record::RecordView& v) const {
    return tsc_of_time(perfdata::record_timestamp(reader_.events(), v));
  }
  std::uint64_t tsc_of_time(std::uint64_t t) const {
    if (!t || t == perfdata::kNoTimestamp || !out_.cfg.time_mult) return 0;
    return out_.cfg.perf_time_to_tsc(t);
  }
  record::SampleId sample_id(const record::RecordView& v) const {
    int idx = reader_.events().attr_index(v);
    if (idx < 0) return {};
    return record::decode_sample_id(v, reader_.events()[static_cast<std::size_t>(idx)].layout);
  }
  void warn(const std::string& m) {
    if (opts_.warn && warned_.insert(m).second) opts_.warn(m);
  }
  const intelpt::Image* image(const std::string& path);
  const intelpt::Image* kernel_image(std::string_view name) {
    return image("[kernel] " + std::string(name));
  }
  void note_mapping(std::int32_t pid, std::string_view name);
  // A kernel map, as machine::Machine takes it (a guest kernel's too).
  static bool kernel_mode(const record::RecordView& v) {
    return v.cpumode() == abi::kMiscKernel || v.cpumode() == abi::kMiscGuestKernel;
  }
  // The records the machine takes (maps, threads, forks), kept to be
  // applied in time order once read: the records come in the file's order,
  // where a child's maps may precede its FORK.
  static bool machine_record(std::uint32_t type) {
    return type == abi::kRecordMmap || type == abi::kRecordMmap2 || type == abi::kRecordComm ||
           type == abi::kRecordFork || type == abi::kRecordExit;
  }
  struct SideBand {
    std::uint64_t time;
    record::RecordView view;  // its bytes: `bytes`
    std::vector<std::uint8_t> bytes;
  };
  Status apply_side_band();
  void build_spaces();
  Status record(const perfdata::ReadRecord& rec);
  Status auxtrace(const perfdata::ReadRecord& rec);
  Status sample(const record::RecordView& v);
  void mark_migrations();
  void route_samples();

  perfdata::Reader& reader_;
  const ItraceDecodeOptions& opts_;
  PtRecording& out_;
  bool have_info_ = false;
  std::map<std::uint32_t, std::size_t> queue_of_idx_;
  // The maps, threads and forks as report and script see them (no symbols
  // are ever loaded: the symbolizer only waits), with their history kept:
  // a queue's code at a time is the machine's map of that time.
  symbol::Symbolizer symbolizer_;
  machine::Machine machine_;
  std::unordered_map<std::string, const intelpt::Image*> by_path_;
  std::set<std::int32_t> typed_;  // processes with a readable DSO mapped
  std::vector<SideBand> side_band_;
  const intelpt::Image* vdso_ = nullptr;
  bool vdso_tried_ = false;
  std::set<std::string> warned_;
  std::vector<RecordedSample> samples_;
  record::Sample smp_;
};

Status Builder::sample(const record::RecordView& v) {
  const int idx = reader_.events().attr_index(v);
  if (idx < 0) return ok();
  const auto& ev = reader_.events()[static_cast<std::size_t>(idx)];
  if (ev.attr.sample_type & abi::kSampleCallchain) return ok();
  RecordedSample r;
  r.ordinal = static_cast<std::uint32_t>(samples_.size());
  if (record::decode_sample(v, ev.layout, smp_)) {
    r.tsc = tsc_of(v);
    r.ip = smp_.ip;
    r.tid = static_cast<std::int32_t>(smp_.tid);
    r.cpu = (ev.attr.sample_type & abi::kSampleCpu) ? static_cast<std::int32_t>(smp_.cpu) : -1;
  }
  samples_.push_back(r);
  return ok();
}

// perf keeps one call stack per thread and empties it when the thread's
// branches come from another cpu's trace: a thread that comes to a cpu from
// another traced one starts with an empty stack there. (The idle thread has
// a stack per cpu.)
void Builder::mark_migrations() {
  struct At {
    std::uint64_t tsc;
    std::int32_t cpu;
    ThreadSpan* span;
  };
  std::vector<At> all;
  for (auto& [cpu, spans] : out_.cpu_timeline)
    for (auto& sp : spans) all.push_back({sp.tsc, cpu, &sp});
  std::stable_sort(all.begin(), all.end(), [](const At& a, const At& b) { return a.tsc < b.tsc; });
  std::set<std::int32_t> traced;
  for (const auto& q : out_.queues) traced.insert(q.cpu);
  std::unordered_map<std::int32_t, std::int32_t> last_cpu;
  for (const At& a : all) {
    if (a.span->tid <= 0) continue;
    auto [it, fresh] = last_cpu.try_emplace(a.span->tid, a.cpu);
    if (!fresh && it->second != a.cpu && traced.count(it->second)) a.span->migrated = true;
    it->second = a.cpu;
  }
}

// Each recorded sample goes to the queue whose trace its thread's stack
// comes from: its cpu's, or its thread's. Timeless traces are decoded at
// the end, as perf does, so their samples see no stack.
void Builder::route_samples() {
  out_.late.assign(out_.queues.size(), {});
  if (!out_.cfg.tsc() || !out_.cfg.time_mult || opts_.itrace.timeless) return;
  // Queues by cpu (per-cpu traces) and by thread (per-thread ones).
  std::unordered_map<std::int32_t, std::size_t> by_cpu, by_tid;
  for (std::size_t qi = 0; qi < out_.queues.size(); ++qi) {
    const PtQueue& q = out_.queues[qi];
    if (out_.cfg.per_cpu_mmaps && q.cpu >= 0)
      by_cpu.try_emplace(q.cpu, qi);
    else
      by_tid.try_emplace(q.tid, qi);
  }
  auto queue_of = [&](const RecordedSample& r) -> std::size_t {
    if (auto it = by_cpu.find(r.cpu); it != by_cpu.end()) return it->second;
    if (auto it = by_tid.find(r.tid); it != by_tid.end()) return it->second;
    return out_.queues.size();
  };
  for (const RecordedSample& r : samples_)
    if (const std::size_t qi = queue_of(r); qi < out_.queues.size())
      out_.late[qi].push_back({r.tsc, r.ip, r.tid, r.ordinal});
  for (auto& l : out_.late)
    std::stable_sort(l.begin(), l.end(),
                     [](const auto& a, const auto& b) { return a.tsc < b.tsc; });
}

const intelpt::Image* Builder::image(const std::string& path) {
  if (auto it = by_path_.find(path); it != by_path_.end()) return it->second;
  const intelpt::Image* img = nullptr;
  if (path == "[vdso]") {
    if (!vdso_tried_) {
      vdso_tried_ = true;
      // The vdso of this process: the same kernel's vdso the traced
      // programs ran (perf makes the same assumption).
      if (auto image = elf::own_vdso_image())
        vdso_ = out_.images.add(intelpt::Image::from_bytes(
            path, std::vector<std::uint8_t>(image->begin(), image->end())));
    }
    img = vdso_;
  } else if (!path.empty() && path[0] == '/') {
    std::string file = opts_.locate ? opts_.locate(path) : std::string();
    auto r = out_.images.file(file.empty() ? path : file);
    if (r)
      img = *r;
    else
      warn(fmt::format("{}: cannot read its code, its instructions will not decode", path));
  }
  // Code that cannot be read is still mapped: perf tells an address in an
  // image it cannot read from one in no map (see FlowDecoder::no_insn).
  if (!img) {
    img = out_.images.add(intelpt::Image::from_bytes(path, {}));
    out_.unreadable[img->id()] = 2;
  }
  by_path_[path] = img;
  return img;
}

// What an MMAP tells before the maps are built: its image, read now (in
// the records' order, so that warnings come as perf's do), and whether its
// process has readable code (perf's decoder reports an unreadable image of a
// process that has none).
void Builder::note_mapping(std::int32_t pid, std::string_view name) {
  if (pid < 0) {
    // The kernel's code is not read (no kcore): its maps only tell kernel
    // addresses from unmapped ones.
    const intelpt::Image* img = kernel_image(name);
    if (img->bytes().empty()) out_.unreadable[img->id()] = 1;
    return;
  }
  const intelpt::Image* img = image(std::string(name));
  if (typed_.count(pid)) return;
  if (img->bytes().empty())
    out_.unreadable[img->id()] = 1;
  else
    typed_.insert(pid);
}

// The side-band records into the machine in time order (the file's order
// among equal times), as report's session applies them.
Status Builder::apply_side_band() {
  std::stable_sort(side_band_.begin(), side_band_.end(),
                   [](const SideBand& a, const SideBand& b) { return a.time < b.time; });
  for (SideBand& r : side_band_) {
    r.view.bytes = Bytes(r.bytes.data(), r.bytes.size());
    PK_TRY(machine_.apply(r.view, r.time));
  }
  side_band_ = {};
  return ok();
}

// The decoder's address spaces from the machine's map history: every
// process's executable maps with their times, after the kernel's, which
// every process sees (and a thread of no process sees alone).
void Builder::build_spaces() {
  auto mapping = [&](const machine::MapEvent& e, const intelpt::Image* img) {
    intelpt::Mapping m;
    m.start = e.map.start;
    m.end = e.map.end;
    m.pgoff = *e.name == "[vdso]" ? 0 : e.map.pgoff;
    m.image = img;
    m.time = tsc_of_time(e.time);
    return m;
  };
  std::vector<intelpt::Mapping> kernel;
  for (const machine::MapEvent& e : machine_.kernel_maps().history())
    kernel.push_back(mapping(e, kernel_image(*e.name)));
  for (const intelpt::Mapping& m : kernel) out_.kernel_space.add(m);
  for (const auto& [pid, maps] : machine_.address_spaces()) {
    if (maps->history().empty()) continue;
    intelpt::AddressSpace& space = out_.spaces[pid];
    if (space.empty())
      for (const intelpt::Mapping& m : kernel) space.add(m);
    for (const machine::MapEvent& e : maps->history())
      if (e.map.prot & PROT_EXEC) space.add(mapping(e, image(*e.name)));
  }
}

Status Builder::auxtrace(const perfdata::ReadRecord& rec) {
  PK_ASSIGN(auto a, record::parse_auxtrace(rec.view));
  auto [it, fresh] = queue_of_idx_.try_emplace(a.idx, out_.queues.size());
  if (fresh) {
    PtQueue q;
    q.idx = a.idx;
    q.cpu = static_cast<std::int32_t>(a.cpu);
    q.tid = static_cast<std::int32_t>(a.tid);
    out_.queues.push_back(std::move(q));
  }
  PtQueue& q = out_.queues[it->second];
  Bytes data = rec.view.trailing;
  if (rec.transient) {
    out_.owned.emplace_back(data.begin(), data.end());
    data = out_.owned.back();
  }
  q.buffers.push_back({data, a.offset, a.reference});
  q.bytes += data.size();
  return ok();
}

Status Builder::record(const perfdata::ReadRecord& rec) {
  const record::RecordView& v = rec.view;
  if (v.type < abi::kRecordUserTypeStart) {
    const std::uint64_t time = perfdata::record_timestamp(reader_.events(), v);
    if (const std::uint64_t tsc = tsc_of_time(time)) out_.event_tsc.push_back(tsc);
    // (One without a time goes first, as perf delivers it at once.)
    if (machine_record(v.type))
      side_band_.push_back(
          {time == perfdata::kNoTimestamp ? 0 : time, v, {v.bytes.begin(), v.bytes.end()}});
  }
  switch (v.type) {
    case abi::kRecordAuxtraceInfo: {
      PK_ASSIGN(auto info, record::parse_auxtrace_info(v));
      PK_ASSIGN(out_.cfg, intelpt::parse_auxtrace_info(info));
      have_info_ = true;
      return ok();
    }
    case abi::kRecordAuxtrace:
      return auxtrace(rec);
    case abi::kRecordMmap: {
      PK_ASSIGN(auto m, record::parse_mmap(v));
      if (v.misc & abi::kMiscMmapData) return ok();
      note_mapping(kernel_mode(v) ? -1 : static_cast<std::int32_t>(m.pid), m.filename);
      return ok();
    }
    case abi::kRecordMmap2: {
      PK_ASSIGN(auto m, record::parse_mmap2(v));
      if (!(m.prot & PROT_EXEC)) return ok();
      note_mapping(kernel_mode(v) ? -1 : static_cast<std::int32_t>(m.pid), m.filename);
      return ok();
    }
    case abi::kRecordComm: {
      PK_ASSIGN(auto c, record::parse_comm(v));
      out_.pid_of_tid[static_cast<std::int32_t>(c.tid)] = static_cast<std::int32_t>(c.pid);
      return ok();
    }
    case abi::kRecordFork: {
      PK_ASSIGN(auto t, record::parse_task(v));
      out_.pid_of_tid[static_cast<std::int32_t>(t.tid)] = static_cast<std::int32_t>(t.pid);
      // The child has its parent's code until it maps its own.
      if (t.pid != t.ppid && typed_.count(static_cast<std::int32_t>(t.ppid)))
        typed_.insert(static_cast<std::int32_t>(t.pid));
      return ok();
    }
    case abi::kRecordItraceStart: {
      PK_ASSIGN(auto s, record::parse_itrace_start(v));
      auto id = sample_id(v);
      if (id.present)
        out_.cpu_timeline[static_cast<std::int32_t>(id.cpu)].push_back(
            {tsc_of(v), static_cast<std::int32_t>(s.pid), static_cast<std::int32_t>(s.tid)});
      return ok();
    }
    case abi::kRecordSwitch:
    case abi::kRecordSwitchCpuWide: {
      auto id = sample_id(v);
      if (!id.present) return ok();
      bool out = v.misc & abi::kMiscSwitchOut;
      ThreadSpan span{tsc_of(v), static_cast<std::int32_t>(id.pid),
                      static_cast<std::int32_t>(id.tid)};
      if (out && v.type == abi::kRecordSwitchCpuWide) {
        PK_ASSIGN(auto sw, record::parse_switch_cpu_wide(v));
        span.pid = static_cast<std::int32_t>(sw.next_prev_pid);
        span.tid = static_cast<std::int32_t>(sw.next_prev_tid);
      } else if (out) {
        span.pid = span.tid = -1;
      }
      out_.cpu_timeline[static_cast<std::int32_t>(id.cpu)].push_back(span);
      return ok();
    }
    case abi::kRecordSample:
      return opts_.late_chains ? sample(v) : ok();
    default:
      return ok();
  }
}

Status Builder::read() {
  perfdata::RecordStreamOptions so;
  so.ordered = false;
  PK_TRY(perfdata::process_records(
      reader_, so, [&](const perfdata::ReadRecord& rec, std::uint64_t) { return record(rec); }));
  if (!have_info_)
    return make_error("no Intel PT data: there is no AUXTRACE_INFO of type intel_pt");
  PK_TRY(apply_side_band());
  build_spaces();
  for (const auto& e : reader_.events().events())
    if (e.attr.type == out_.cfg.pmu_type) {
      out_.cfg.config = e.attr.config;
      out_.cfg.have_config = true;
      break;
    }
  auto& ev = out_.event_tsc;
  if (out_.queues.size() > 1) {
    std::sort(ev.begin(), ev.end());
    ev.erase(std::unique(ev.begin(), ev.end()), ev.end());
  } else {
    ev = {};  // one queue: nothing to order
  }
  for (auto& [cpu, spans] : out_.cpu_timeline)
    std::stable_sort(spans.begin(), spans.end(),
                     [](const ThreadSpan& a, const ThreadSpan& b) { return a.tsc < b.tsc; });
  mark_migrations();
  if (opts_.late_chains) route_samples();
  return ok();
}

}  // namespace

ThreadSpan PtRecording::thread_on(std::int32_t cpu, std::uint64_t tsc,
                                  std::uint64_t* next_change) const {
  if (next_change) *next_change = ~0ULL;
  auto it = cpu_timeline.find(cpu);
  if (it == cpu_timeline.end() || it->second.empty()) return {};
  const auto& spans = it->second;
  auto after = std::upper_bound(spans.begin(), spans.end(), tsc,
                                [](std::uint64_t t, const ThreadSpan& s) { return t < s.tsc; });
  if (next_change && after != spans.end()) *next_change = after->tsc;
  if (after == spans.begin()) return spans.front();  // before the first record: the first thread
  return *(after - 1);
}

Expected<std::unique_ptr<PtRecording>> read_pt_recording(perfdata::Reader& reader,
                                                         const ItraceDecodeOptions& opts) {
  auto rec = std::make_unique<PtRecording>();
  Builder b(reader, opts, *rec);
  PK_TRY(b.read());
  return rec;
}

}  // namespace perfkit::itrace
