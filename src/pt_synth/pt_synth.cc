#include "pt_synth/pt_synth.h"

#include <sys/mman.h>
#include <sys/utsname.h>

#include <algorithm>
#include <bit>

#include "abi/perf_event.h"
#include "intelpt/packet.h"
#include "perfdata/features.h"
#include "perfdata/writer.h"
#include "record/encode.h"

namespace perfkit::pt_synth {

namespace {

constexpr std::uint64_t kPtId = 1, kDummyId = 2, kClockId = 3;
constexpr std::uint64_t kSampleType =
    abi::kSampleIp | abi::kSampleTid | abi::kSampleTime | abi::kSampleCpu | abi::kSampleIdentifier;

std::uint64_t attr_config(const intelpt::TraceEncodeOptions& e) {
  std::uint64_t c = 0x1 | 0x2000;  // pt, branch
  if (e.tsc) c |= 0x400;
  if (!e.return_compression) c |= 0x800;
  if (e.mtc) c |= 0x200 | (static_cast<std::uint64_t>(e.mtc_period & 0xf) << 14);
  if (e.cyc) c |= 0x2;
  unsigned psb = std::bit_width(std::max<std::uint32_t>(e.psb_period, 2048)) - 1;
  c |= static_cast<std::uint64_t>(std::min(psb - 11, 15u)) << 24;
  return c;
}

intelpt::PtConfig pt_config(const PtSynthOptions& o, std::uint64_t config) {
  intelpt::PtConfig c;
  c.pmu_type = o.pmu_type;
  c.time_shift = 31;
  c.time_mult = 1u << 30;  // 0.5 ns per TSC tick: a 2 GHz TSC
  c.time_zero = 0;
  c.cap_user_time_zero = true;
  c.per_cpu_mmaps = o.per_cpu;
  c.tsc_ctc_ratio_n = o.encode.tsc_ctc_ratio_n;
  c.tsc_ctc_ratio_d = o.encode.tsc_ctc_ratio_d;
  c.max_non_turbo_ratio = o.encode.max_non_turbo_ratio;
  c.config = config;
  c.have_config = true;
  return c;
}

abi::EventAttr make_attr(std::uint32_t type, std::uint64_t config, bool tracking) {
  abi::EventAttr a;
  a.type = type;
  a.size = abi::kAttrSizeVer7;
  a.config = config;
  a.sample_period = 1;
  a.sample_type = kSampleType;
  a.flags = abi::kAttrExcludeKernel | abi::kAttrExcludeHv | abi::kAttrSampleIdAll |
            abi::kAttrEnableOnExec | abi::kAttrDisabled;
  if (tracking)
    a.flags |=
        abi::kAttrMmap | abi::kAttrComm | abi::kAttrTask | abi::kAttrMmap2 | abi::kAttrCommExec;
  return a;
}

// The recorded event of PtSynthOptions::sample_every.
abi::EventAttr clock_attr() {
  abi::EventAttr a = make_attr(abi::kTypeSoftware, 0 /* cpu-clock */, false);
  a.sample_period = 250000;
  a.sample_type |= abi::kSamplePeriod;
  a.flags &= ~abi::kAttrDisabled;
  return a;
}

struct TimedRecord {
  std::uint64_t time;
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> trailing;  // AUXTRACE data
  bool auxtrace = false;
};

// One traced process as the recording shows it.
struct ProcView {
  const TraceResult* t = nullptr;
  const intelpt::EncodedTrace* e = nullptr;
  std::uint32_t pid = 0, ppid = 0;
  std::uint32_t cpu = 0;        // the cpu its samples and side-band name
  std::uint64_t fork_time = 0;  // ns; the first process: 0
};

// An AUX area: one process's trace on one cpu (per-cpu) or its own (per-thread).
struct Queue {
  std::size_t proc = 0;
  std::uint32_t cpu = 0xffffffffu;
};

class RecordingWriter {
 public:
  RecordingWriter(const PtSynthResult& r, const PtSynthOptions& o);

  std::vector<TimedRecord> records();

 private:
  record::SampleId sid(const ProcView& p, std::uint64_t time, std::uint64_t id) const {
    record::SampleId s;
    s.pid = s.tid = p.pid;
    s.time = time;
    s.cpu = p.cpu;
    s.id = s.identifier = id;
    return s;
  }
  std::uint64_t ns(std::uint64_t tsc) const { return pt_synth_perf_time(r_, tsc); }
  // The perf time just before the step that follows a system call.
  std::uint64_t after_kernel(const ProcView& p, std::uint64_t step) const {
    const auto& steps = p.t->exec.steps;
    const std::uint64_t tsc = step < steps.size() ? p.e->step_tsc[step] : p.e->end_tsc;
    return ns(tsc - o_.encode.tsc_per_kernel_entry / 2);
  }
  void add(std::uint64_t time, record::RecordBuilder& b) { out_.push_back({time, b.finish(), {}}); }
  void comm(const ProcView& p, std::uint64_t time, const std::string& comm);
  void mmap2(const ProcView& p, std::uint64_t time, const TracedMapping& m);
  void task(const ProcView& p, std::uint32_t type, std::uint64_t time);
  void side_band(const ProcView& p, std::uint64_t start);
  void auxtrace(const Queue& q, std::uint32_t idx, std::uint64_t time);
  void samples(const ProcView& p);

  const PtSynthResult& r_;
  const PtSynthOptions& o_;
  abi::RecordLayout layout_;
  std::vector<ProcView> procs_;
  std::vector<Queue> queues_;
  std::vector<TimedRecord> out_;
};

RecordingWriter::RecordingWriter(const PtSynthResult& r, const PtSynthOptions& o)
    : r_(r), o_(o), layout_(abi::make_layout(make_attr(o.pmu_type, 0, false))) {
  const std::uint32_t copies = o.per_cpu ? std::max<std::uint32_t>(o.cpus, 1) : 1;
  ProcView first{
      &r.trace, &r.encoded, static_cast<std::uint32_t>(r.trace.pid), 0, o.per_cpu ? o.cpu : 0, 0};
  procs_.push_back(first);
  for (std::uint32_t c = 0; c < copies; ++c)
    queues_.push_back({0, o.per_cpu ? o.cpu + c : 0xffffffffu});
  for (std::size_t k = 0; k < r.trace.forked.size() && k < r.forked_encoded.size(); ++k) {
    const TraceResult& f = r.trace.forked[k];
    const ProcView& parent = procs_[static_cast<std::size_t>(f.parent + 1)];
    const std::uint32_t cpu = o.per_cpu ? o.cpu + copies + static_cast<std::uint32_t>(k) : 0;
    ProcView v{&f,
               &r.forked_encoded[k],
               static_cast<std::uint32_t>(f.pid),
               static_cast<std::uint32_t>(f.ppid),
               cpu,
               0};
    // In the middle of the parent's fork: after it entered, before either returns.
    v.fork_time = after_kernel(parent, f.fork_step + 1);
    procs_.push_back(v);
    queues_.push_back({procs_.size() - 1, o.per_cpu ? cpu : 0xffffffffu});
  }
}

void RecordingWriter::comm(const ProcView& p, std::uint64_t time, const std::string& comm) {
  record::RecordBuilder b(abi::kRecordComm, abi::kMiscCommExec);
  b.u32(p.pid).u32(p.pid);
  b.string(comm.substr(0, 15), 8).sample_id(sid(p, time, kDummyId), layout_);
  add(time, b);
}

void RecordingWriter::mmap2(const ProcView& p, std::uint64_t time, const TracedMapping& m) {
  record::RecordBuilder b(abi::kRecordMmap2, abi::kMiscUser);
  b.u32(p.pid).u32(p.pid);
  b.u64(m.start).u64(m.end - m.start).u64(m.pgoff);
  b.u32(m.maj).u32(m.min).u64(m.ino).u64(0);
  b.u32(m.prot).u32(MAP_PRIVATE);
  b.string(m.path, 8).sample_id(sid(p, time, kDummyId), layout_);
  add(time, b);
}

// FORK or EXIT of a process (the first one's parent is not traced: its own pid).
void RecordingWriter::task(const ProcView& p, std::uint32_t type, std::uint64_t time) {
  const std::uint32_t ppid = p.ppid ? p.ppid : p.pid;
  record::RecordBuilder b(type);
  b.u32(p.pid).u32(ppid).u32(p.pid).u32(ppid).u64(time);
  // The kernel writes a FORK in the parent's context.
  ProcView in = p;
  if (type == abi::kRecordFork)
    for (const auto& q : procs_)
      if (q.pid == p.ppid) in = q;
  b.sample_id(sid(in, time, kDummyId), layout_);
  add(time, b);
}

// Where the AUX area is cut into AUXTRACE records: at packet boundaries, as
// the kernel only moves the AUX head when tracing is stopped (perf does not
// join a packet split across records).
std::vector<std::uint64_t> split_points(Bytes data, std::uint64_t chunk) {
  std::vector<std::uint64_t> cuts;
  intelpt::PacketContext ctx = intelpt::PacketContext::kNone;
  std::uint64_t pos = 0, last = 0;
  while (pos < data.size()) {
    intelpt::Packet pkt;
    int r = intelpt::decode_packet(data.data() + pos, data.size() - pos, ctx, pkt);
    if (r <= 0) break;
    ctx = intelpt::next_context(pkt, ctx);
    pos += static_cast<std::uint64_t>(r);
    if (chunk && pos - last >= chunk && pos < data.size()) {
      cuts.push_back(pos);
      last = pos;
    }
  }
  cuts.push_back(data.size());
  return cuts;
}

void RecordingWriter::auxtrace(const Queue& q, std::uint32_t idx, std::uint64_t time) {
  const ProcView& p = procs_[q.proc];
  const auto& data = p.e->bytes;
  const auto cuts = split_points(data, o_.aux_buffer_size);
  std::uint64_t off = 0;
  for (std::uint64_t end : cuts) {
    // When perf read the buffer: the end of the trace, or (for a VM guest's
    // trace, whose heuristics look at it) the host time of the first TSC
    // after the buffer's bytes.
    std::uint64_t reference = p.e->end_tsc;
    if (o_.encode.vm) {
      const auto& marks = p.e->tsc_marks;
      auto it = std::lower_bound(marks.begin(), marks.end(), std::make_pair(end, std::uint64_t{0}));
      if (it != marks.end()) reference = it->second;
    }
    std::uint64_t n = end - off;
    std::uint64_t padded = (n + 7) & ~7ULL;
    // PERF_RECORD_AUX: where the data sat in the AUX area.
    record::SampleId id = sid(p, time, kPtId);
    id.cpu = o_.per_cpu ? q.cpu : 0;
    record::RecordBuilder aux(abi::kRecordAux);
    aux.u64(off).u64(n).u64(0).sample_id(id, layout_);
    add(time, aux);
    record::RecordBuilder b(abi::kRecordAuxtrace);
    b.u64(padded).u64(off).u64(reference).u32(idx);
    b.u32(p.pid).u32(q.cpu).u32(0);
    TimedRecord tr{time, b.finish(), {}, true};
    tr.trailing.assign(data.begin() + static_cast<std::ptrdiff_t>(off),
                       data.begin() + static_cast<std::ptrdiff_t>(end));
    tr.trailing.resize(padded, 0);
    out_.push_back(std::move(tr));
    off = end;
  }
}

// The recorded event's samples (PtSynthOptions::sample_every).
void RecordingWriter::samples(const ProcView& p) {
  if (!o_.sample_every) return;
  const auto& steps = p.t->exec.steps;
  const abi::RecordLayout layout = abi::make_layout(clock_attr());
  for (std::size_t i = o_.sample_every; i < steps.size(); i += o_.sample_every) {
    if (!p.e->lost.empty() && p.e->lost[i]) continue;
    record::Sample s;
    s.sample_type = layout.sample_type;
    s.ip = steps[i].ip;
    s.pid = s.tid = p.pid;
    s.time = ns(p.e->step_tsc[i]);
    s.cpu = p.cpu;
    s.id = s.identifier = kClockId;
    s.period = 250000;
    const std::uint64_t time = s.time;
    out_.push_back({time, record::encode_sample(s, layout, abi::kMiscUser, false), {}});
  }
}

// A process's FORK, COMMs, MMAP2s, ITRACE_STARTs and samples; `start` is
// when the recording began.
void RecordingWriter::side_band(const ProcView& p, std::uint64_t start) {
  const bool forked = p.fork_time != 0;
  const std::uint64_t begin = forked ? p.fork_time : start;
  if (forked) task(p, abi::kRecordFork, begin);
  for (const auto& x : p.t->execs)
    if (x.step != 0) {
      comm(p, after_kernel(p, x.step), x.comm);
    } else if (!forked) {
      comm(p, start, x.comm);  // a forked process has its parent's comm
    }
  for (const auto& m : p.t->mappings) mmap2(p, m.step > 0 ? after_kernel(p, m.step) : begin, m);
  for (const auto& q : queues_) {
    if (&procs_[q.proc] != &p) continue;
    record::SampleId id = sid(p, begin, kPtId);
    id.cpu = o_.per_cpu ? q.cpu : 0;
    record::RecordBuilder its(abi::kRecordItraceStart);
    its.u32(p.pid).u32(p.pid).sample_id(id, layout_);
    add(begin, its);
  }
  samples(p);
}

std::vector<TimedRecord> RecordingWriter::records() {
  std::uint64_t start = ns(o_.encode.tsc_start > 1000 ? o_.encode.tsc_start - 1000 : 0);
  // TIME_CONV (the 32-byte layout) and AUXTRACE_INFO come first, untimed.
  record::RecordBuilder tc(abi::kRecordTimeConv);
  tc.u64(r_.config.time_shift).u64(r_.config.time_mult).u64(r_.config.time_zero);
  add(0, tc);
  record::RecordBuilder info(abi::kRecordAuxtraceInfo);
  info.u32(abi::kAuxtraceIntelPt).u32(0);
  for (std::uint64_t v : intelpt::encode_auxtrace_priv(r_.config)) info.u64(v);
  add(0, info);
  std::uint64_t last = 0;
  for (const auto& p : procs_) {
    side_band(p, start);
    last = std::max(last, p.e->end_tsc);
  }
  const std::uint64_t end = ns(last + 10);
  for (std::size_t q = 0; q < queues_.size(); ++q)
    auxtrace(queues_[q], static_cast<std::uint32_t>(q), end);
  // Children exit before their parents are reaped: the EXITs in reverse.
  for (std::size_t i = procs_.size(); i-- > 0;) {
    const ProcView& p = procs_[i];
    const std::uint64_t t = i == 0 ? end + 1 : ns(p.e->end_tsc + 5);
    task(p, abi::kRecordExit, t);
  }
  std::stable_sort(out_.begin(), out_.end(),
                   [](const TimedRecord& a, const TimedRecord& b) { return a.time < b.time; });
  return std::move(out_);
}

perfdata::Features features(const PtSynthResult& r, const perfdata::EventSet& events,
                            const PtSynthOptions& o) {
  perfdata::Features f;
  utsname u{};
  uname(&u);
  f.hostname = std::string(u.nodename);
  f.osrelease = std::string(u.release);
  f.version = std::string("6.1.0 (perfkit pt-synth)");
  f.arch = std::string("x86_64");
  std::uint32_t n = o.cpu + (o.per_cpu ? std::max<std::uint32_t>(o.cpus, 1) +
                                             static_cast<std::uint32_t>(r.trace.forked.size())
                                       : 1);
  f.nrcpus = perfdata::NrCpus{n, n};
  f.cpudesc = std::string("Intel(R) Processor (synthesized by perfkit pt-synth)");
  f.cpuid = o.cpuid;
  std::vector<std::string> cmdline = {"perfkit", "pt-synth"};
  cmdline.insert(cmdline.end(), r.argv.begin(), r.argv.end());
  f.cmdline = cmdline;
  perfdata::EventDescList desc;
  const char* names[] = {"intel_pt//u", "dummy:u", "cpu-clock:u"};
  for (std::size_t i = 0; i < events.size(); ++i)
    desc.events.push_back({events[i].attr, names[i], events[i].ids});
  f.event_desc = desc;
  return f;
}

}  // namespace

std::uint64_t pt_synth_perf_time(const PtSynthResult& r, std::uint64_t tsc) {
  return r.config.tsc_to_perf_time(tsc);
}

Expected<PtSynthResult> pt_synth_run(const std::vector<std::string>& argv,
                                     const PtSynthOptions& opts) {
  PtSynthResult r;
  r.argv = argv;
  PK_ASSIGN(r.trace, single_step(argv, opts.tracer));
  r.encoded = intelpt::encode_trace(r.trace.exec, opts.encode);
  pt_synth_encode_forked(r, opts);
  pt_synth_configure(r, opts);
  return r;
}

void pt_synth_encode_forked(PtSynthResult& r, const PtSynthOptions& opts) {
  r.forked_encoded.clear();
  for (const auto& f : r.trace.forked) {
    const TraceResult& parent =
        f.parent < 0 ? r.trace : r.trace.forked[static_cast<std::size_t>(f.parent)];
    const intelpt::EncodedTrace& pe =
        f.parent < 0 ? r.encoded : r.forked_encoded[static_cast<std::size_t>(f.parent)];
    // The child returns from fork when its parent does.
    intelpt::TraceEncodeOptions e = opts.encode;
    const std::size_t after = f.fork_step + 1;
    e.tsc_start = after < parent.exec.steps.size() ? pe.step_tsc[after] : pe.end_tsc;
    r.forked_encoded.push_back(intelpt::encode_trace(f.exec, e));
  }
}

void pt_synth_configure(PtSynthResult& r, const PtSynthOptions& opts) {
  r.attr_config = attr_config(opts.encode);
  r.config = pt_config(opts, r.attr_config);
}

Status pt_synth_write(const std::string& path, const PtSynthResult& r, const PtSynthOptions& opts) {
  perfdata::EventSet events;
  events.add(make_attr(opts.pmu_type, r.attr_config, false), {kPtId});
  events.add(make_attr(abi::kTypeSoftware, 9 /* dummy */, true), {kDummyId});
  if (opts.sample_every) events.add(clock_attr(), {kClockId});
  perfdata::WriterOptions wo;
  wo.pipe = opts.pipe || path == "-";
  PK_ASSIGN(auto writer, perfdata::Writer::create(path, wo));
  perfdata::Features f = features(r, events, opts);
  std::vector<perfdata::FeatureData> pipe_features;
  if (wo.pipe) {
    PK_ASSIGN(pipe_features, perfdata::encode_features(f, false));
  }
  PK_TRY(writer->begin(events, pipe_features));
  RecordingWriter rw(r, opts);
  std::vector<perfdata::AuxtraceIndexEntry> index;
  for (const auto& rec : rw.records()) {
    if (rec.auxtrace)
      index.push_back({writer->bytes_written(), rec.bytes.size()});  // perf checks header.size
    PK_TRY(writer->write(rec.bytes, rec.trailing));
  }
  if (!wo.pipe) f.auxtrace = index;
  std::vector<perfdata::FeatureData> sections;
  if (!wo.pipe) {
    PK_ASSIGN(sections, perfdata::encode_features(f, false));
  }
  return writer->finish(events, sections);
}

Expected<intelpt::AddressSpace> pt_synth_address_space(const PtSynthResult& r,
                                                       intelpt::ImageSet& images) {
  intelpt::AddressSpace space;
  const auto& steps = r.trace.exec.steps;
  const intelpt::Image* vdso = nullptr;
  if (!r.trace.vdso.empty()) vdso = images.add(intelpt::Image::from_bytes("[vdso]", r.trace.vdso));
  for (const auto& m : r.trace.mappings) {
    intelpt::Mapping map;
    map.start = m.start;
    map.end = m.end;
    map.pgoff = m.pgoff;
    if (m.path == "[vdso]") {
      if (!vdso) continue;
      map.image = vdso;
      map.pgoff = 0;
    } else if (!m.path.empty() && m.path[0] == '/') {
      auto img = images.file(m.path);
      if (!img) continue;  // deleted or unreadable: its code cannot be decoded
      map.image = *img;
    } else {
      continue;
    }
    if (m.step > 0) {
      std::uint64_t tsc = m.step < steps.size() ? r.encoded.step_tsc[m.step] : r.encoded.end_tsc;
      map.time = tsc - 1;  // in place before the TSC the trace gives on return to user mode
    }
    space.add(map);
  }
  return space;
}

std::vector<std::uint64_t> pt_synth_expected_ips(const PtSynthResult& r) {
  std::vector<std::uint64_t> ips;
  const auto& steps = r.trace.exec.steps;
  ips.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (r.encoded.lost.empty() || !r.encoded.lost[i]) ips.push_back(steps[i].ip);
  return ips;
}

}  // namespace perfkit::pt_synth
