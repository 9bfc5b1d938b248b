// perf's own records (types 64 and up) as `perf report -D` prints them: the
// records perf report handles print their fields, the others ": unhandled!"
// after whatever perf's stub prints for them.
#include <array>

#include "abi/perf_event.h"
#include "dump/dump_records_impl.h"
#include "record/records.h"

namespace perfkit::dump::detail {

using namespace perfkit::abi;
using record::RecordView;

namespace {

constexpr std::string_view kUnhandled = ": unhandled!\n";

void print_cpu_map(const record::CpuMapData& m, Buf& b) {
  bool any = false;
  m.for_each([&](std::int32_t) { any = true; });
  if (!any) {
    put(b, "-1\n");  // perf prints its map's out-of-range sentinel for an empty map
    return;
  }
  cpu_list(b, [&](auto&& f) { m.for_each(f); });
  b.push_back('\n');
}

void print_id_index(const RecordView& r, Buf& b) {
  auto out = fmt::appender(b);
  // nr entries of {id, idx, cpu, tid}, then (newer perf, when there is room)
  // nr entries of {machine_pid, vcpu}.
  const std::size_t body = r.bytes.size() - std::min<std::size_t>(16, r.bytes.size());
  const std::uint64_t nr =
      r.bytes.size() >= 16 ? load<std::uint64_t>(r.bytes.data() + 8, r.swap) : 0;
  const std::uint64_t max_nr = body / 32;
  if (nr > max_nr) {
    fmt::format_to(out, "Too big: nr {} max_nr {}\n", nr, max_nr);
    return;
  }
  const bool has_e2 = body >= nr * 48;
  const std::uint8_t* e1 = r.bytes.data() + 16;
  const std::uint8_t* e2 = e1 + nr * 32;
  auto u64 = [&](const std::uint8_t* p) { return load<std::uint64_t>(p, r.swap); };
  fmt::format_to(out, " nr: {}\n", nr);
  for (std::uint64_t i = 0; i < nr; ++i) {
    const std::uint8_t* e = e1 + 32 * i;
    fmt::format_to(out, " ... id: {}  idx: {}  cpu: {}  tid: {}", u64(e), u64(e + 8),
                   static_cast<std::int64_t>(u64(e + 16)), static_cast<std::int64_t>(u64(e + 24)));
    if (has_e2)
      fmt::format_to(out, "  machine_pid: {}  vcpu: {}\n",
                     static_cast<std::int64_t>(u64(e2 + 16 * i)), u64(e2 + 16 * i + 8));
    else
      b.push_back('\n');
  }
}

void print_thread_map(const record::ThreadMapRecord& t, Buf& b) {
  auto out = fmt::appender(b);
  fmt::format_to(out, " nr: {} thread{}: ", static_cast<std::int32_t>(t.nr), t.nr > 1 ? "s" : "");
  for (std::uint64_t i = 0; i < t.nr; ++i)
    fmt::format_to(out, "{}{}", i ? ", " : "", static_cast<std::int32_t>(t.pid(i)));
  b.push_back('\n');
}

void print_stat_config(const record::StatConfigRecord& c, Buf& b) {
  std::int32_t aggr_mode = 0;
  bool scale = false;
  std::uint32_t interval = 0;
  for (std::uint64_t i = 0; i < c.nr; ++i) {
    switch (c.tag(i)) {
      case 0:
        aggr_mode = static_cast<std::int32_t>(c.val(i));
        break;
      case 1:
        interval = static_cast<std::uint32_t>(c.val(i));
        break;
      case 2:
        scale = c.val(i) != 0;
        break;
      default:
        break;
    }
  }
  fmt::format_to(fmt::appender(b), "\n... aggr_mode {}\n... scale     {}\n... interval  {}\n",
                 aggr_mode, scale ? 1 : 0, interval);
}

void print_time_conv(const RecordView& r, Buf& b) {
  auto out = fmt::appender(b);
  auto u64_at = [&](std::size_t off) {
    return off + 8 <= r.bytes.size() ? load<std::uint64_t>(r.bytes.data() + off, r.swap) : 0;
  };
  auto u8_at = [&](std::size_t off) { return off < r.bytes.size() ? r.bytes[off] : 0; };
  fmt::format_to(out, "\n... Time Shift      {}\n... Time Muliplier  {}\n... Time Zero       {}\n",
                 u64_at(8), u64_at(16), u64_at(24));
  if (r.size > 32) {  // perf prints the extended fields when the record reaches them
    fmt::format_to(out, "... Time Cycles     {}\n... Time Mask       {}\n", u64_at(32),
                   AltHex{u64_at(40)});
    fmt::format_to(out, "... Cap Time Zero   {}\n... Cap Time Short  {}\n", u8_at(48), u8_at(49));
  }
}

void print_event_update(const record::EventUpdateRecord& u, Buf& b) {
  auto out = fmt::appender(b);
  fmt::format_to(out, "\n... id:    {}\n", u.id);
  switch (u.type) {
    case record::EventUpdateRecord::kScale:
      fmt::format_to(out, "... scale: {:f}\n", u.scale);
      break;
    case record::EventUpdateRecord::kUnit:
      fmt::format_to(out, "... unit:  {}\n", u.text);
      break;
    case record::EventUpdateRecord::kName:
      fmt::format_to(out, "... name:  {}\n", u.text);
      break;
    case record::EventUpdateRecord::kCpus:
      put(b, "... ");
      print_cpu_map(u.cpus, b);
      break;
    default:
      put(b, "... unknown type\n");
      break;
  }
}

Status print_auxtrace(PrinterState& st, const RecordView& r, Buf& b, FdWriter& out) {
  auto a = record::parse_auxtrace(r);
  if (!a) return ok();
  fmt::format_to(fmt::appender(b), " size: {}  offset: {}  ref: {}  idx: {}  tid: {}  cpu: {}\n",
                 AltHex{a->size}, AltHex{a->offset}, AltHex{a->reference}, a->idx,
                 static_cast<std::int32_t>(a->tid), static_cast<std::int32_t>(a->cpu));
  if (!st.opts.auxtrace_dump) return ok();
  AuxtraceDumpRequest req;
  req.auxtrace_type = st.auxtrace_type;
  req.info_priv = st.auxtrace_priv;
  req.swap = r.swap;
  req.record = &r;
  req.data = r.trailing;
  return st.opts.auxtrace_dump(req, out);
}

// AUXTRACE_INFO (its type, and Intel PT's fields) and AUXTRACE (its
// header, then the trace's packets when there is a dumper).
Status print_auxtrace_record(PrinterState& st, const RecordView& r, Buf& b, FdWriter& out) {
  if (r.type == kRecordAuxtrace) {
    out.maybe_flush();
    return print_auxtrace(st, r, b, out);
  }
  if (auto a = record::parse_auxtrace_info(r)) {
    fmt::format_to(fmt::appender(b), " type: {}\n", a->type);
    st.auxtrace_type = a->type;
    Bytes priv = a->priv.bytes();
    st.auxtrace_priv.assign(priv.begin(), priv.end());
    if (a->type == kAuxtraceIntelPt) print_intel_pt_info(b, priv, r.swap);
  }
  return ok();
}

}  // namespace

void print_intel_pt_info(Buf& b, Bytes priv, bool swap) {
  // perf's intel_pt_info_fmts: name, and whether the value prints in hex.
  struct Field {
    std::string_view name;
    bool hex;
  };
  static constexpr std::array<Field, 17> kFields = {{
      {"PMU Type", false},
      {"Time Shift", false},
      {"Time Muliplier", false},
      {"Time Zero", false},
      {"Cap Time Zero", false},
      {"TSC bit", true},
      {"NoRETComp bit", true},
      {"Have sched_switch", false},
      {"Snapshot mode", false},
      {"Per-cpu maps", false},
      {"MTC bit", true},
      {"MTC freq bits", true},
      {"TSC:CTC numerator", false},
      {"TSC:CTC denominator", false},
      {"CYC bit", true},
      {"Max non-turbo ratio", false},
      {"Filter string len.", false},
  }};
  const std::size_t n = priv.size() / 8;
  auto value = [&](std::size_t i) { return load<std::uint64_t>(priv.data() + 8 * i, swap); };
  auto print_range = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i <= to; ++i) {
      if (kFields[i].hex)
        fmt::format_to(fmt::appender(b), "  {:<20}{}\n", kFields[i].name, AltHex{value(i)});
      else
        fmt::format_to(fmt::appender(b), "  {:<20}{}\n", kFields[i].name, value(i));
    }
  };
  if (n < 10) return;  // perf refuses an Intel PT info shorter than its per-cpu field
  print_range(0, 9);
  if (n > 14) print_range(10, 14);
  if (n > 15) print_range(15, 15);
  std::size_t next = 17;  // the first u64 after the filter string length
  if (n > 16) {
    print_range(16, 16);
    const std::uint64_t len = value(16);
    std::string_view filter;
    if (len) {
      const std::uint64_t words = (len + 1 + 7) / 8;
      if (17 + words <= n) filter = c_string(priv.subspan(8 * 17, 8 * words));
      next = 17 + static_cast<std::size_t>(words);
    }
    fmt::format_to(fmt::appender(b), "  {:<20}{}\n", "Filter string", filter);
  }
  if (n > 16 && next < n)
    fmt::format_to(fmt::appender(b), "  Cap Event Trace     {}\n",
                   static_cast<std::int32_t>(value(next)));
}

Status print_user_record(PrinterState& st, const RecordView& r, Buf& b, FdWriter& out) {
  auto o = fmt::appender(b);
  switch (r.type) {
    case kRecordHeaderAttr:
      ++st.attrs_known;
      break;  // perf report prints nothing more for these
    case kRecordHeaderEventType:
    case kRecordHeaderTracingData:
    case kRecordHeaderBuildId:
    case kRecordHeaderFeature:
      break;
    case kRecordFinishedRound:
      if (st.opts.unordered)
        put(b, kUnhandled);
      else
        b.push_back('\n');
      break;
    case kRecordIdIndex:
      if (st.opts.diff_tool)
        put(b, kUnhandled);
      else
        print_id_index(r, b);
      break;
    case kRecordAuxtraceInfo:
    case kRecordAuxtrace:
      if (!st.opts.diff_tool) return print_auxtrace_record(st, r, b, out);
      put(b, kUnhandled);  // perf diff's tool has no AUX area handling
      break;
    case kRecordThreadMap:
      if (auto t = record::parse_thread_map(r)) print_thread_map(*t, b);
      if (!st.opts.script_tool) put(b, kUnhandled);
      break;
    case kRecordCpuMap:
      put(b, ": ");
      if (auto m = record::parse_cpu_map(r))
        print_cpu_map(*m, b);
      else
        put(b, "failed to get cpumap from event\n");
      if (!st.opts.script_tool) put(b, kUnhandled);
      break;
    case kRecordStatConfig:
      if (auto c = record::parse_stat_config(r)) print_stat_config(*c, b);
      put(b, kUnhandled);
      break;
    case kRecordStat:
      if (auto s = record::parse_stat(r))
        fmt::format_to(o, "\n... id {}, cpu {}, thread {}\n... value {}, enabled {}, running {}\n",
                       s->id, static_cast<std::int32_t>(s->cpu),
                       static_cast<std::int32_t>(s->thread), s->val, s->ena, s->run);
      put(b, kUnhandled);
      break;
    case kRecordStatRound:
      if (auto s = record::parse_stat_round(r))
        fmt::format_to(o, "\n... time {}, type {}\n", s->time, s->type == 1 ? "FINAL" : "INTERVAL");
      put(b, kUnhandled);
      break;
    case kRecordEventUpdate:
      if (auto u = record::parse_event_update(r)) print_event_update(*u, b);
      if (st.opts.diff_tool) put(b, kUnhandled);
      break;
    case kRecordTimeConv:
      print_time_conv(r, b);
      put(b, kUnhandled);
      break;
    case kRecordAuxtraceError:
    case kRecordFinishedInit:
      put(b, kUnhandled);
      break;
    default:
      break;
  }
  return ok();
}

}  // namespace perfkit::dump::detail
