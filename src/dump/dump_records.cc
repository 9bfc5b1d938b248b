#include "dump/dump_records.h"

#include <algorithm>
#include <cstring>

#include "abi/event_names.h"
#include "abi/names.h"
#include "abi/registers.h"
#include "dump/dump_records_impl.h"
#include "perfdata/byte_order.h"
#include "record/records.h"
#include "record/swap.h"

namespace perfkit::dump {

using namespace perfkit::abi;
using namespace detail;
using record::RecordView;

namespace detail {

void raw_event_dump(Buf& b, Bytes rec) {
  static constexpr char kHex[] = "0123456789abcdef";
  fmt::format_to(fmt::appender(b), ".\n. ... raw event: size {} bytes\n", rec.size());
  char line[96];
  for (std::size_t at = 0; at < rec.size(); at += 16) {
    const std::size_t n = std::min<std::size_t>(16, rec.size() - at);
    char* p = line;
    *p++ = '.';
    *p++ = ' ';
    *p++ = ' ';
    // "%04x: " (at is below 0x10000: a record is at most 64 KiB)
    for (int shift = 12; shift >= 0; shift -= 4) *p++ = kHex[(at >> shift) & 0xf];
    *p++ = ':';
    *p++ = ' ';
    for (std::size_t i = 0; i < 16; ++i) {
      *p++ = ' ';
      if (i < n) {
        *p++ = kHex[rec[at + i] >> 4];
        *p++ = kHex[rec[at + i] & 0xf];
      } else {
        *p++ = ' ';
        *p++ = ' ';
      }
    }
    *p++ = ' ';
    *p++ = ' ';
    for (std::size_t i = 0; i < 16; ++i) {
      if (i < n) {
        const std::uint8_t c = rec[at + i];
        *p++ = (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '.';
      } else {
        *p++ = ' ';
      }
    }
    *p++ = '\n';
    b.append(line, p);
  }
  b.push_back('\n');
}

PrinterState::PrinterState(const perfdata::Reader& r, RecordPrinterOptions o)
    : reader(r), events(r.events()), opts(std::move(o)) {
  pipe = r.is_pipe();
  file_path = pipe ? "pipe" : r.name();
  // perf report sorts by branch when the file says samples have branch
  // stacks (never for streams: their features arrive too late for it).
  if (!pipe && !opts.per_sample_counts && r.feature(kFeatBranchStack)) {
    std::uint64_t combined = 0;
    for (const auto& e : r.events().events()) combined |= e.attr.sample_type;
    branch_mode = !(combined & kSampleStackUser);
  }
}

std::uint64_t PrinterState::combined_sample_type() const {
  std::uint64_t t = 0;
  const std::size_t n = std::min(known_attrs(), events.size());
  for (std::size_t i = 0; i < n; ++i) t |= events[i].attr.sample_type;
  return t;
}

bool PrinterState::sample_id_all() const {
  return known_attrs() > 0 && !events.empty() && events[0].attr.sample_id_all();
}

const std::string& PrinterState::regs_arch() {
  if (!arch_resolved) {
    arch_resolved = true;
    std::string machine = "x86_64";  // perf falls back to the host's uname
    if (auto f = reader.feature(kFeatArch); f && f->data.size() > 4) {
      std::string_view s = c_string(f->data.subspan(4));
      if (!s.empty()) machine = std::string(s);
    }
    arch = normalize_arch(machine);
  }
  return arch;
}

std::string PrinterState::event_name(std::size_t i) const {
  if (i < events.size() && !events[i].name.empty() && !opts.attr_names_only) return events[i].name;
  return i < events.size() ? default_event_name(events[i].attr) : std::string("unknown");
}

}  // namespace detail

namespace {

// The cpu and time perf's sample struct holds for a record (what
// evlist__print_tstamp shows): from the SAMPLE, or the sample_id_all trailer.
struct Stamp {
  std::uint32_t cpu = 0xffffffffu;
  std::uint64_t time = ~0ULL;
  std::uint64_t id = ~0ULL;
};

Stamp trailer_stamp(const PrinterState& st, const RecordView& r, int idx) {
  Stamp s;
  if (idx < 0) return s;
  const auto& ev = st.events[static_cast<std::size_t>(idx)];
  record::SampleId sid = record::decode_sample_id(r, ev.layout);
  if (!sid.present) return s;
  if (sid.sample_type & kSampleCpu) s.cpu = sid.cpu;
  if (sid.sample_type & kSampleTime) s.time = sid.time;
  if (sid.sample_type & kSampleIdentifier)
    s.id = sid.identifier;
  else if (sid.sample_type & kSampleId)
    s.id = sid.id;
  return s;
}

void print_tstamp(const PrinterState& st, const RecordView& r, const Stamp& s, Buf& b) {
  if (r.type != kRecordSample && !st.sample_id_all()) {
    put(b, "-1 -1 ");
    return;
  }
  const std::uint64_t combined = st.combined_sample_type();
  if (combined & kSampleCpu) fmt::format_to(fmt::appender(b), "{} ", s.cpu);
  if (combined & kSampleTime) fmt::format_to(fmt::appender(b), "{} ", s.time);
}

std::uint64_t display_offset(const PrinterState& st, const RecordView& r) {
  return st.pipe && r.offset >= perfdata::kPipeHeaderSize ? r.offset - perfdata::kPipeHeaderSize
                                                          : r.offset;
}

void print_namespaces(const record::NamespacesRecord& n, Buf& b) {
  static constexpr std::string_view kNames[] = {"net",  "uts", "ipc",   "pid",
                                                "user", "mnt", "cgroup"};
  const auto nr = static_cast<std::uint32_t>(n.nr);
  fmt::format_to(fmt::appender(b), " {}/{} - nr_namespaces: {}\n\t\t[",
                 static_cast<std::int32_t>(n.pid), static_cast<std::int32_t>(n.tid), nr);
  for (std::uint32_t i = 0; i < nr; ++i) {
    if (i && i % 4 == 0) put(b, "\n\t\t ");
    std::string_view name = i < std::size(kNames) ? kNames[i] : std::string_view("UNKNOWN");
    fmt::format_to(fmt::appender(b), "{}/{}: {}/{}{}", i, name, n.dev(i), AltHex{n.ino(i)},
                   i + 1 != nr ? ", " : "]\n");
  }
}

void print_mmap2(const record::Mmap2Record& m, Buf& b) {
  auto out = fmt::appender(b);
  fmt::format_to(out, " {}/{}: [{}({}) @ {}", static_cast<std::int32_t>(m.pid),
                 static_cast<std::int32_t>(m.tid), AltHex{m.start}, AltHex{m.len}, AltHex{m.pgoff});
  if (m.has_build_id) {
    put(b, " <");
    for (std::size_t i = 0; i < m.build_id_size && i < m.build_id.size(); ++i)
      fmt::format_to(out, "{:02x}", m.build_id[i]);
    b.push_back('>');
  } else {
    fmt::format_to(out, " {:02x}:{:02x} {} {}", m.maj, m.min, m.ino, m.ino_generation);
  }
  fmt::format_to(out, "]: {}{}{}{} {}\n", (m.prot & 1) ? 'r' : '-', (m.prot & 2) ? 'w' : '-',
                 (m.prot & 4) ? 'x' : '-', (m.flags & 1) ? 's' : 'p', m.filename);
}

// PERF_RECORD_READ as perf 6.1's dump_read() shows it: the event's name and
// the fields at perf_record_read's fixed offsets, whatever the read_format.
void print_read(PrinterState& st, const RecordView& r, const Stamp& s, Buf& b) {
  auto u64_at = [&](std::size_t off) {
    return off + 8 <= r.bytes.size() ? load<std::uint64_t>(r.bytes.data() + off, r.swap) : 0;
  };
  auto u32_at = [&](std::size_t off) {
    return off + 4 <= r.bytes.size() ? load<std::uint32_t>(r.bytes.data() + off, r.swap) : 0;
  };
  // perf looks the event up by the trailer's id (evlist__id2evsel).
  int ev = st.events.size() == 1 || s.id == 0 ? 0 : st.events.index_of_id(s.id);
  if (ev < 0 && !st.sample_id_all()) ev = 0;
  if (st.events.size() == 0) ev = -1;  // a file without attrs
  std::string name = ev >= 0 ? st.event_name(static_cast<std::size_t>(ev)) : "(null)";
  fmt::format_to(fmt::appender(b), ": {} {} {} {}\n", static_cast<std::int32_t>(u32_at(8)),
                 static_cast<std::int32_t>(u32_at(12)), name, u64_at(16));
  if (ev < 0) return;
  const std::uint64_t rf = st.events[static_cast<std::size_t>(ev)].attr.read_format;
  auto out = fmt::appender(b);
  if (rf & kFormatTotalTimeEnabled) fmt::format_to(out, "... time enabled : {}\n", u64_at(24));
  if (rf & kFormatTotalTimeRunning) fmt::format_to(out, "... time running : {}\n", u64_at(32));
  if (rf & kFormatId) fmt::format_to(out, "... id           : {}\n", u64_at(40));
  if (rf & kFormatLost) fmt::format_to(out, "... lost         : {}\n", u64_at(48));
}

// The tail of a kernel record's line (after "PERF_RECORD_<NAME>") and what
// perf report prints for it.
void print_kernel_record(PrinterState& st, const RecordView& r, const Stamp& s, Buf& b) {
  auto out = fmt::appender(b);
  auto unhandled = [&] { put(b, ": unhandled!\n"); };
  switch (r.type) {
    case kRecordMmap:
      if (auto m = record::parse_mmap(r))
        fmt::format_to(out, " {}/{}: [{}({}) @ {}]: {} {}\n", static_cast<std::int32_t>(m->pid),
                       static_cast<std::int32_t>(m->tid), AltHex{m->start}, AltHex{m->len},
                       AltHex{m->pgoff}, (r.misc & kMiscMmapData) ? 'r' : 'x', m->filename);
      break;
    case kRecordMmap2:
      if (auto m = record::parse_mmap2(r)) print_mmap2(*m, b);
      break;
    case kRecordComm:
      if (auto c = record::parse_comm(r))
        fmt::format_to(out, "{}: {}:{}/{}\n", (r.misc & kMiscCommExec) ? " exec" : "", c->comm,
                       static_cast<std::int32_t>(c->pid), static_cast<std::int32_t>(c->tid));
      break;
    case kRecordExit:
    case kRecordFork:
      if (auto t = record::parse_task(r))
        fmt::format_to(out, "({}:{}):({}:{})\n", static_cast<std::int32_t>(t->pid),
                       static_cast<std::int32_t>(t->tid), static_cast<std::int32_t>(t->ppid),
                       static_cast<std::int32_t>(t->ptid));
      break;
    case kRecordLost:
      if (auto l = record::parse_lost(r)) fmt::format_to(out, ": id:{}: lost:{}\n", l->id, l->lost);
      break;
    case kRecordLostSamples:
      if (auto l = record::parse_lost_samples(r))
        fmt::format_to(out, ": id:{}: lost samples :{}\n", s.id, l->lost);
      break;
    case kRecordThrottle:
    case kRecordUnthrottle:
      // perf script's handler prints nothing, not even the line's end
      if (!st.opts.script_tool) unhandled();
      break;
    case kRecordRead:
      print_read(st, r, s, b);
      break;
    case kRecordAux:
      if (auto a = record::parse_aux(r))
        fmt::format_to(out, " offset: {} size: {} flags: {} [{}{}{}]\n", AltHex{a->aux_offset},
                       AltHex{a->aux_size}, AltHex{a->flags}, (a->flags & 1) ? "T" : "",
                       (a->flags & 2) ? "O" : "", (a->flags & 4) ? "P" : "");
      break;
    case kRecordItraceStart:
      if (auto t = record::parse_itrace_start(r))
        fmt::format_to(out, " pid: {} tid: {}\n", t->pid, t->tid);
      break;
    case kRecordSwitch:
    case kRecordSwitchCpuWide: {
      const bool is_out = r.misc & kMiscSwitchOut;
      std::string_view in_out = !is_out                             ? "IN         "
                                : !(r.misc & kMiscSwitchOutPreempt) ? "OUT        "
                                                                    : "OUT preempt";
      if (r.type == kRecordSwitch) {
        fmt::format_to(out, " {}\n", in_out);
      } else if (auto w = record::parse_switch_cpu_wide(r)) {
        fmt::format_to(out, " {}  {} pid/tid: {:5}/{:<5}\n", in_out, is_out ? "next" : "prev",
                       static_cast<std::int32_t>(w->next_prev_pid),
                       static_cast<std::int32_t>(w->next_prev_tid));
      }
      break;
    }
    case kRecordNamespaces:
      if (auto n = record::parse_namespaces(r)) print_namespaces(*n, b);
      break;
    case kRecordKsymbol:
      if (auto k = record::parse_ksymbol(r))
        fmt::format_to(out, " addr {:x} len {} type {} flags {:#x} name {}\n", k->addr, k->len,
                       k->ksym_type, k->flags, k->name);
      break;
    case kRecordBpfEvent:
      if (auto e = record::parse_bpf_event(r))
        fmt::format_to(out, " type {}, flags {}, id {}\n", e->type, e->flags, e->id);
      break;
    case kRecordCgroup:
      if (auto c = record::parse_cgroup(r)) fmt::format_to(out, " cgroup: {} {}\n", c->id, c->path);
      break;
    case kRecordTextPoke:
      if (auto t = record::parse_text_poke(r)) print_text_poke(*t, b);
      break;
    case kRecordAuxOutputHwId:
      if (auto h = record::parse_aux_output_hw_id(r))
        fmt::format_to(out, " hw_id: {}\n", AltHex{h->hw_id});
      break;
    default:
      break;  // perf stops at a kernel record type it does not know
  }
}

}  // namespace

void print_text_poke(const record::TextPokeRecord& t, fmt::memory_buffer& b,
                     std::string_view symbol) {
  fmt::format_to(fmt::appender(b), " {:x} {} old len {} new len {}\n", t.addr, symbol, t.old_len,
                 t.new_len);
  auto bytes = [&](Bytes data, std::string_view which) {
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (i % 16 == 0) fmt::format_to(fmt::appender(b), "            {} bytes:", which);
      fmt::format_to(fmt::appender(b), " {:02x}", data[i]);
      if (i % 16 == 15 || i + 1 == data.size()) b.push_back('\n');
    }
  };
  bytes(t.old_bytes, "Old");
  bytes(t.new_bytes, "New");
}

struct RecordPrinter::Impl {
  Impl(const perfdata::Reader& r, RecordPrinterOptions o) : st(r, std::move(o)) {}
  PrinterState st;
};

RecordPrinter::RecordPrinter(const perfdata::Reader& reader, RecordPrinterOptions opts)
    : impl_(std::make_unique<Impl>(reader, std::move(opts))) {}
RecordPrinter::~RecordPrinter() = default;

bool RecordPrinter::perf_orders(const perfdata::Reader& reader) {
  return reader.is_pipe() || reader.events().empty() || reader.events()[0].attr.sample_id_all();
}

std::string_view RecordPrinter::ordering_warning(const perfdata::Reader& reader) {
  if (perf_orders(reader)) return {};
  return "WARNING: No sample_id_all support, falling back to unordered processing\n";
}

void RecordPrinter::count(const RecordView& r) { impl_->st.stats.count(r.type); }

Status RecordPrinter::deliver(const perfdata::ReadRecord& rec, FdWriter& out) {
  const auto type = rec.view.type;
  if (type == kRecordCompressed || type == kRecordCompressed2) {
    count(rec.view);
    return ok();
  }
  return print(rec, out);
}

void RecordPrinter::tally(const RecordView& r) {
  PrinterState& st = impl_->st;
  st.stats.count(r.type);
  if (r.type == kRecordLostSamples) {
    // perf report --stats adds each one's count to the event its id names.
    const int at = st.events.attr_index(r);
    auto lost = record::parse_lost_samples(r);
    if (at < 0 || !lost) return;
    if (st.event_lost.size() < st.events.size()) st.event_lost.resize(st.events.size());
    st.event_lost[static_cast<std::size_t>(at)] += lost->lost;
    return;
  }
  if (r.type != kRecordSample) return;
  const int idx = st.events.attr_index(r);
  if (idx < 0) return;
  const auto& ev = st.events[static_cast<std::size_t>(idx)];
  if (record::decode_sample(r, ev.layout, st.sample)) count_sample(st, idx, st.sample);
}

Status RecordPrinter::print(const perfdata::ReadRecord& rec, FdWriter& out) {
  PrinterState& st = impl_->st;
  RecordView r = rec.view;
  st.stats.count(r.type);
  if (r.swap) {
    // Print the record in host order, as perf does after swapping it.
    int idx = st.events.attr_index(r);
    st.scratch.resize(r.bytes.size());
    const abi::RecordLayout* layout =
        idx >= 0 ? &st.events[static_cast<std::size_t>(idx)].layout : nullptr;
    bool converted = false;
    if (r.type == kRecordHeaderFeature)
      converted = static_cast<bool>(perfdata::convert_feature_record(r, st.scratch));
    else
      converted = static_cast<bool>(record::swap_record(r, layout, st.scratch.data()));
    if (!converted) {
      st.scratch.resize(r.bytes.size());
      // A malformed record: like perf, show at least its header in host order.
      std::memcpy(st.scratch.data(), r.bytes.data(), r.bytes.size());
      store<std::uint32_t>(st.scratch.data(), r.type, false);
      store<std::uint16_t>(st.scratch.data() + 4, r.misc, false);
      store<std::uint16_t>(st.scratch.data() + 6, r.size, false);
    }
    r.bytes = Bytes(st.scratch.data(), st.scratch.size());
    r.swap = false;
  }
  Buf& b = out.buffer();
  auto o = fmt::appender(b);
  const std::uint64_t off = display_offset(st, r);
  const std::string& path = st.reader.is_dir() ? st.reader.file_path(rec.file) : st.file_path;
  fmt::format_to(o, "\n{}@{} [{}]: event: {}\n", AltHex{off}, path, AltHex{r.size}, r.type);
  if (st.opts.raw_dump) raw_event_dump(b, r.bytes);

  if (r.type >= kRecordUserTypeStart) {
    print_tstamp(st, r, Stamp{0, 0, 0}, b);
    fmt::format_to(o, "{} [{}]: PERF_RECORD_{}", AltHex{off}, AltHex{r.size},
                   perf_record_name(r.type));
    PK_TRY(print_user_record(st, r, b, out));
    out.maybe_flush();
    return out.status();
  }

  const int idx = st.events.attr_index(r);
  Stamp stamp;
  bool sample_ok = false;
  if (r.type == kRecordSample) {
    if (idx >= 0) {
      const auto& ev = st.events[static_cast<std::size_t>(idx)];
      sample_ok = static_cast<bool>(record::decode_sample(r, ev.layout, st.sample));
      if (sample_ok) {
        if (ev.attr.sample_type & kSampleCpu) stamp.cpu = st.sample.cpu;
        if (ev.attr.sample_type & kSampleTime) stamp.time = st.sample.time;
      }
    }
  } else {
    stamp = trailer_stamp(st, r, idx);
  }
  print_tstamp(st, r, stamp, b);
  fmt::format_to(o, "{} [{}]: PERF_RECORD_{}", AltHex{off}, AltHex{r.size},
                 perf_record_name(r.type));
  if (r.type == kRecordSample) {
    if (sample_ok) {
      print_sample(st, r, st.events[static_cast<std::size_t>(idx)], st.sample, b);
      count_sample(st, idx, st.sample);
    }
  } else {
    print_kernel_record(st, r, stamp, b);
  }
  out.maybe_flush();
  return out.status();
}

void RecordPrinter::print_stats(FdWriter& out) const {
  const PrinterState& st = impl_->st;
  out.print("\nAggregated stats:{}\n",
            st.reader.feature(kFeatAuxtrace)
                ? " (excludes AUX area (e.g. instruction trace) decoded / synthesized events)"
                : "");
  st.stats.print_perf_dump(out);
  const std::size_t n = std::max(st.event_samples.size(), st.event_lost.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t samples = i < st.event_samples.size() ? st.event_samples[i] : 0;
    std::uint64_t lost = i < st.event_lost.size() ? st.event_lost[i] : 0;
    if (!samples && !lost) continue;
    out.print("{} stats:\n", st.event_name(i));
    if (samples) out.print("{:>16} events: {:>10}\n", "SAMPLE", samples);
    if (lost) out.print("{:>16} events: {:>10}\n", "LOST_SAMPLES", lost);
  }
}

}  // namespace perfkit::dump
