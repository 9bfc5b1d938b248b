// ScriptPrinter: the side-band records perf script shows with
// --show-{task,mmap,switch,namespace,cgroup,lost,round,bpf}-events, each
// after the start fields of the event it belongs to (perf's print_event and
// perf_event__fprintf).
#include "abi/names.h"
#include "abi/perf_event.h"
#include "base/alt_hex.h"
#include "dump/dump_records.h"
#include "record/records.h"
#include "script/script_printer.h"

namespace perfkit::script {

using namespace perfkit::abi;

bool ScriptPrinter::shows(std::uint32_t type) const {
  switch (type) {
    case kRecordComm:
    case kRecordFork:
    case kRecordExit:
      return opts_.show_task;
    case kRecordMmap:
    case kRecordMmap2:
      return opts_.show_mmap;
    case kRecordSwitch:
    case kRecordSwitchCpuWide:
      return opts_.show_switch;
    case kRecordNamespaces:
      return opts_.show_namespace;
    case kRecordCgroup:
      return opts_.show_cgroup;
    case kRecordLost:
      return opts_.show_lost;
    case kRecordKsymbol:
    case kRecordBpfEvent:
      return opts_.show_bpf;
    case kRecordTextPoke:
      return opts_.show_text_poke;
    default:
      return false;
  }
}

Status ScriptPrinter::before_record(const perfdata::ReadRecord& rec) {
  const auto& r = rec.view;
  if (r.type == kRecordExit && shows(r.type)) return print_side_band(rec);
  if (r.type == kRecordFinishedRound && opts_.show_round) {
    b_.append(std::string_view("PERF_RECORD_FINISHED_ROUND\n"));
    maybe_flush();
  }
  return ok();
}

Status ScriptPrinter::after_record(const perfdata::ReadRecord& rec) {
  const auto& r = rec.view;
  if (r.type == kRecordHeaderTracingData && !tracepoints_) {
    make_tracepoint_formatter();
    return ok();
  }
  if (r.type == kRecordHeaderAttr && traits_.pipe) {
    const auto& events = session_.reader().events();
    if (!events.empty()) {
      std::size_t i = events.size() - 1;
      PK_TRY(
          opts_.fields.check_pipe_attr(events, i, session_.event_name(i), traits_, use_callchain_));
    }
    return ok();
  }
  if (r.type == kRecordExit || !shows(r.type)) return ok();
  return print_side_band(rec);
}

// The pid and tid perf passes to print_event for each record type: the
// record's own for task, comm, mmap and namespaces records, the sample's
// otherwise. Returns false when the record is too short to parse.
static bool record_task(const record::RecordView& r, const record::SampleId& sid, std::int32_t& pid,
                        std::int32_t& tid, std::uint64_t& timestamp) {
  timestamp = 0;
  pid = (sid.sample_type & kSampleTid) && sid.present ? static_cast<std::int32_t>(sid.pid) : -1;
  tid = (sid.sample_type & kSampleTid) && sid.present ? static_cast<std::int32_t>(sid.tid) : -1;
  switch (r.type) {
    case kRecordComm: {
      auto c = record::parse_comm(r);
      if (!c) return false;
      pid = static_cast<std::int32_t>(c->pid), tid = static_cast<std::int32_t>(c->tid);
      return true;
    }
    case kRecordFork:
    case kRecordExit: {
      auto t = record::parse_task(r);
      if (!t) return false;
      pid = static_cast<std::int32_t>(t->pid), tid = static_cast<std::int32_t>(t->tid);
      timestamp = t->time;
      return true;
    }
    case kRecordMmap: {
      auto m = record::parse_mmap(r);
      if (!m) return false;
      pid = static_cast<std::int32_t>(m->pid), tid = static_cast<std::int32_t>(m->tid);
      return true;
    }
    case kRecordMmap2: {
      auto m = record::parse_mmap2(r);
      if (!m) return false;
      pid = static_cast<std::int32_t>(m->pid), tid = static_cast<std::int32_t>(m->tid);
      return true;
    }
    case kRecordNamespaces: {
      auto n = record::parse_namespaces(r);
      if (!n) return false;
      pid = static_cast<std::int32_t>(n->pid), tid = static_cast<std::int32_t>(n->tid);
      return true;
    }
    default:
      return true;
  }
}

Status ScriptPrinter::print_side_band(const perfdata::ReadRecord& rec) {
  const record::RecordView& r = rec.view;
  const auto& events = session_.reader().events();
  int idx = events.attr_index(r);
  record::SampleId sid;
  if (idx >= 0) sid = record::decode_sample_id(r, events[static_cast<std::size_t>(idx)].layout);
  std::int32_t pid, tid;
  std::uint64_t timestamp;
  if (!record_task(r, sid, pid, tid, timestamp)) return ok();

  // The start fields show the sample's (sample_id_all) values; the record's
  // own pid and tid only pick the thread, unless there is no sample id.
  StartFields f;
  f.record_type = r.type;
  f.misc = r.misc;
  const std::uint64_t st = sid.present ? sid.sample_type : 0;
  f.cpu = (st & kSampleCpu) ? sid.cpu : ~0u;
  f.time = (st & kSampleTime) ? sid.time : ~0ULL;
  f.pid = (st & kSampleTid) ? static_cast<std::int32_t>(sid.pid) : -1;
  f.tid = (st & kSampleTid) ? static_cast<std::int32_t>(sid.tid) : -1;
  if (idx >= 0 && !events[static_cast<std::size_t>(idx)].attr.sample_id_all()) {
    f.cpu = 0;
    f.time = timestamp;
    f.pid = pid;
    f.tid = tid;
  }
  if (filter_.skip_cpu(f.cpu)) return ok();
  machine::Machine* m = session_.machine_of(r);  // (a guest's records: its machine's)
  if (tid != -1 && m) f.comm = m->findnew_thread(pid, tid).comm;
  if (idx >= 0) {
    const auto& attr = events[static_cast<std::size_t>(idx)].attr;
    const OutputConfig& o = opts_.fields.of(attr.type);
    f.callchain_layout =
        o.has(ScriptField::kIp) && (attr.sample_type & kSampleCallchain) && use_callchain_;
    print_start(o, f);
  }
  print_record_body(r);
  maybe_flush();
  return ok();
}

bool ScriptPrinter::print_mmap2(const record::RecordView& r) {
  auto m = record::parse_mmap2(r);
  if (!m) return false;
  auto out = fmt::appender(b_);
  fmt::format_to(out, " {}/{}: [{}({}) @ {}", static_cast<std::int32_t>(m->pid),
                 static_cast<std::int32_t>(m->tid), AltHex{m->start}, AltHex{m->len},
                 AltHex{m->pgoff});
  if (r.misc & kMiscMmapBuildId) {
    b_.append(std::string_view(" <"));
    std::size_t n = std::min<std::size_t>(m->build_id_size, m->build_id.size());
    for (std::size_t i = 0; i < n; ++i) fmt::format_to(out, "{:02x}", m->build_id[i]);
    b_.push_back('>');
  } else {
    fmt::format_to(out, " {:02x}:{:02x} {} {}", m->maj, m->min, m->ino, m->ino_generation);
  }
  fmt::format_to(out, "]: {}{}{}{} {}\n", (m->prot & 1) ? 'r' : '-', (m->prot & 2) ? 'w' : '-',
                 (m->prot & 4) ? 'x' : '-', (m->flags & 1) ? 's' : 'p', m->filename);
  return true;
}

bool ScriptPrinter::print_namespaces(const record::RecordView& r) {
  static constexpr std::string_view kNs[] = {"net", "uts", "ipc", "pid", "user", "mnt", "cgroup"};
  auto n = record::parse_namespaces(r);
  if (!n) return false;
  auto out = fmt::appender(b_);
  fmt::format_to(out, " {}/{} - nr_namespaces: {}\n\t\t[", static_cast<std::int32_t>(n->pid),
                 static_cast<std::int32_t>(n->tid), static_cast<std::uint32_t>(n->nr));
  for (std::uint64_t i = 0; i < n->nr; ++i) {
    if (i && i % 4 == 0) b_.append(std::string_view("\n\t\t "));
    fmt::format_to(out, "{}/{}: {}/{}{}", i, i < 7 ? kNs[i] : "UNKNOWN", n->dev(i),
                   AltHex{n->ino(i)}, i + 1 != n->nr ? ", " : "]\n");
  }
  return true;
}

bool ScriptPrinter::print_switch(const record::RecordView& r) {
  const bool is_out = r.misc & kMiscSwitchOut;
  std::string_view in_out = !is_out                             ? "IN         "
                            : !(r.misc & kMiscSwitchOutPreempt) ? "OUT        "
                                                                : "OUT preempt";
  auto out = fmt::appender(b_);
  if (r.type == kRecordSwitch) {
    fmt::format_to(out, " {}\n", in_out);
    return true;
  }
  auto s = record::parse_switch_cpu_wide(r);
  if (!s) return false;
  fmt::format_to(out, " {}  {} pid/tid: {:5}/{:<5}\n", in_out, is_out ? "next" : "prev",
                 static_cast<std::int32_t>(s->next_prev_pid),
                 static_cast<std::int32_t>(s->next_prev_tid));
  return true;
}

// perf_event__fprintf.
void ScriptPrinter::print_record_body(const record::RecordView& r) {
  auto out = fmt::appender(b_);
  fmt::format_to(out, "PERF_RECORD_{}", abi::perf_record_name(r.type));
  switch (r.type) {
    case kRecordComm: {
      auto c = record::parse_comm(r);
      if (!c) {
        b_.push_back('\n');
        return;
      }
      fmt::format_to(out, "{}: {}:{}/{}\n", (r.misc & kMiscCommExec) ? " exec" : "", c->comm,
                     static_cast<std::int32_t>(c->pid), static_cast<std::int32_t>(c->tid));
      return;
    }
    case kRecordFork:
    case kRecordExit: {
      auto t = record::parse_task(r);
      if (!t) {
        b_.push_back('\n');
        return;
      }
      fmt::format_to(out, "({}:{}):({}:{})\n", static_cast<std::int32_t>(t->pid),
                     static_cast<std::int32_t>(t->tid), static_cast<std::int32_t>(t->ppid),
                     static_cast<std::int32_t>(t->ptid));
      return;
    }
    case kRecordMmap: {
      auto m = record::parse_mmap(r);
      if (!m) {
        b_.push_back('\n');
        return;
      }
      fmt::format_to(out, " {}/{}: [{}({}) @ {}]: {} {}\n", static_cast<std::int32_t>(m->pid),
                     static_cast<std::int32_t>(m->tid), AltHex{m->start}, AltHex{m->len},
                     AltHex{m->pgoff}, (r.misc & kMiscMmapData) ? 'r' : 'x', m->filename);
      return;
    }
    case kRecordMmap2:
      if (!print_mmap2(r)) b_.push_back('\n');
      return;
    case kRecordNamespaces:
      if (!print_namespaces(r)) b_.push_back('\n');
      return;
    case kRecordCgroup: {
      auto c = record::parse_cgroup(r);
      if (!c) {
        b_.push_back('\n');
        return;
      }
      fmt::format_to(out, " cgroup: {} {}\n", c->id, c->path);
      return;
    }
    case kRecordSwitch:
    case kRecordSwitchCpuWide:
      if (!print_switch(r)) b_.push_back('\n');
      return;
    case kRecordLost: {
      auto l = record::parse_lost(r);
      if (!l) {
        b_.push_back('\n');
        return;
      }
      fmt::format_to(out, " lost {}\n", l->lost);
      return;
    }
    case kRecordKsymbol: {
      auto k = record::parse_ksymbol(r);
      if (!k) {
        b_.push_back('\n');
        return;
      }
      fmt::format_to(out, " addr {:x} len {} type {} flags 0x{:x} name {}\n", k->addr, k->len,
                     k->ksym_type, k->flags, k->name);
      return;
    }
    case kRecordBpfEvent: {
      auto e = record::parse_bpf_event(r);
      if (!e) {
        b_.push_back('\n');
        return;
      }
      fmt::format_to(out, " type {}, flags {}, id {}\n", e->type, e->flags, e->id);
      return;
    }
    case kRecordTextPoke: {
      auto t = record::parse_text_poke(r);
      if (!t) {
        b_.push_back('\n');
        return;
      }
      // The kernel symbol at the address, as "name+0xoff".
      machine::Machine& m = session_.machine();
      const machine::Location loc = m.resolve(m.findnew_thread(0, 0), kMiscKernel, t->addr);
      std::string symbol;
      if (loc.symbol >= 0 && loc.dso) {
        const auto& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
        symbol = fmt::format("{}+{:#x}", m.symbol_name(loc), loc.addr - sym.start);
      }
      dump::print_text_poke(*t, b_, symbol);
      return;
    }
    default:
      b_.push_back('\n');
  }
}

}  // namespace perfkit::script
