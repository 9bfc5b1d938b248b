#include "record/records.h"

#include "abi/names.h"
#include "base/cursor.h"

namespace perfkit::record {

using namespace perfkit::abi;

namespace {

Cursor body(const RecordView& r) { return Cursor(r.payload(), r.swap, r.offset + kHeaderSize); }

Error short_record(const RecordView& r) {
  auto name = record_type_name(r.type);
  return make_error("offset {:#x}: {} record of {} bytes is truncated", r.offset,
                    name.empty() ? std::string_view("unknown") : name, r.size);
}

template <class T>
Expected<T> done(const Cursor& c, const RecordView& r, T value) {
  if (!c.ok()) return short_record(r);
  return value;
}

}  // namespace

Expected<MmapRecord> parse_mmap(const RecordView& r) {
  Cursor c = body(r);
  MmapRecord m;
  m.pid = c.u32();
  m.tid = c.u32();
  m.start = c.u64();
  m.len = c.u64();
  m.pgoff = c.u64();
  m.filename = c.rest_string();
  return done(c, r, m);
}

Expected<Mmap2Record> parse_mmap2(const RecordView& r) {
  Cursor c = body(r);
  Mmap2Record m;
  m.pid = c.u32();
  m.tid = c.u32();
  m.start = c.u64();
  m.len = c.u64();
  m.pgoff = c.u64();
  if (r.misc & kMiscMmapBuildId) {
    m.has_build_id = true;
    m.build_id_size = c.u8();
    c.skip(3);
    m.build_id = c.bytes(20);
    if (m.build_id_size > 20) m.build_id_size = 20;
  } else {
    m.maj = c.u32();
    m.min = c.u32();
    m.ino = c.u64();
    m.ino_generation = c.u64();
  }
  m.prot = c.u32();
  m.flags = c.u32();
  m.filename = c.rest_string();
  return done(c, r, m);
}

Expected<CommRecord> parse_comm(const RecordView& r) {
  Cursor c = body(r);
  CommRecord m;
  m.pid = c.u32();
  m.tid = c.u32();
  m.comm = c.rest_string();
  return done(c, r, m);
}

Expected<TaskRecord> parse_task(const RecordView& r) {
  Cursor c = body(r);
  TaskRecord m;
  m.pid = c.u32();
  m.ppid = c.u32();
  m.tid = c.u32();
  m.ptid = c.u32();
  m.time = c.u64();
  return done(c, r, m);
}

Expected<LostRecord> parse_lost(const RecordView& r) {
  Cursor c = body(r);
  LostRecord m;
  m.id = c.u64();
  m.lost = c.u64();
  return done(c, r, m);
}

Expected<ThrottleRecord> parse_throttle(const RecordView& r) {
  Cursor c = body(r);
  ThrottleRecord m;
  m.time = c.u64();
  m.id = c.u64();
  m.stream_id = c.u64();
  return done(c, r, m);
}

Expected<ReadRecord> parse_read(const RecordView& r, std::uint64_t read_format) {
  Cursor c = body(r);
  ReadRecord m;
  m.pid = c.u32();
  m.tid = c.u32();
  if (!c.ok()) return short_record(r);
  Bytes rest = c.rest();
  const std::uint8_t* next = nullptr;
  if (!decode_read_values(rest.data(), rest.data() + rest.size(), read_format, r.swap, m.values,
                          &next))
    return short_record(r);
  return m;
}

Expected<AuxRecord> parse_aux(const RecordView& r) {
  Cursor c = body(r);
  AuxRecord m;
  m.aux_offset = c.u64();
  m.aux_size = c.u64();
  m.flags = c.u64();
  return done(c, r, m);
}

Expected<ItraceStartRecord> parse_itrace_start(const RecordView& r) {
  Cursor c = body(r);
  ItraceStartRecord m;
  m.pid = c.u32();
  m.tid = c.u32();
  return done(c, r, m);
}

Expected<LostSamplesRecord> parse_lost_samples(const RecordView& r) {
  Cursor c = body(r);
  LostSamplesRecord m;
  m.lost = c.u64();
  return done(c, r, m);
}

Expected<SwitchCpuWideRecord> parse_switch_cpu_wide(const RecordView& r) {
  Cursor c = body(r);
  SwitchCpuWideRecord m;
  m.next_prev_pid = c.u32();
  m.next_prev_tid = c.u32();
  return done(c, r, m);
}

Expected<NamespacesRecord> parse_namespaces(const RecordView& r) {
  Cursor c = body(r);
  NamespacesRecord m;
  m.pid = c.u32();
  m.tid = c.u32();
  m.nr = c.u64();
  m.swap = r.swap;
  if (c.ok() && m.nr > c.remaining() / 16) c.fail();
  m.links = c.bytes(m.nr * 16).data();
  return done(c, r, m);
}

Expected<KsymbolRecord> parse_ksymbol(const RecordView& r) {
  Cursor c = body(r);
  KsymbolRecord m;
  m.addr = c.u64();
  m.len = c.u32();
  m.ksym_type = c.u16();
  m.flags = c.u16();
  m.name = c.rest_string();
  return done(c, r, m);
}

Expected<BpfEventRecord> parse_bpf_event(const RecordView& r) {
  Cursor c = body(r);
  BpfEventRecord m;
  m.type = c.u16();
  m.flags = c.u16();
  m.id = c.u32();
  m.tag = c.bytes(8);
  return done(c, r, m);
}

Expected<CgroupRecord> parse_cgroup(const RecordView& r) {
  Cursor c = body(r);
  CgroupRecord m;
  m.id = c.u64();
  m.path = c.rest_string();
  return done(c, r, m);
}

Expected<TextPokeRecord> parse_text_poke(const RecordView& r) {
  Cursor c = body(r);
  TextPokeRecord m;
  m.addr = c.u64();
  m.old_len = c.u16();
  m.new_len = c.u16();
  m.old_bytes = c.bytes(m.old_len);
  m.new_bytes = c.bytes(m.new_len);
  return done(c, r, m);
}

Expected<AuxOutputHwIdRecord> parse_aux_output_hw_id(const RecordView& r) {
  Cursor c = body(r);
  AuxOutputHwIdRecord m;
  m.hw_id = c.u64();
  return done(c, r, m);
}

Expected<HeaderAttrRecord> parse_header_attr(const RecordView& r) {
  Bytes p = r.payload();
  if (p.size() < kAttrSizeVer0) return short_record(r);
  std::uint32_t size = load<std::uint32_t>(p.data() + 4, r.swap);
  if (size == 0) size = kAttrSizeVer0;
  if (size < kAttrSizeVer0 || size > p.size())
    return make_error("offset {:#x}: ATTR record has attr size {} but only {} bytes", r.offset,
                      size, p.size());
  PK_ASSIGN(abi::EventAttr attr, parse_attr(p.subspan(0, size), r.swap));
  HeaderAttrRecord m;
  m.attr = attr;
  m.ids = U64Array(p.data() + size, (p.size() - size) / 8, r.swap);
  return m;
}

Expected<EventTypeRecord> parse_event_type(const RecordView& r) {
  Cursor c = body(r);
  EventTypeRecord m;
  m.event_id = c.u64();
  m.name = c.fixed_string(std::min<std::uint64_t>(64, c.remaining()));
  return done(c, r, m);
}

Expected<TracingDataRecord> parse_tracing_data(const RecordView& r) {
  Cursor c = body(r);
  TracingDataRecord m;
  m.size = c.u32();
  return done(c, r, m);
}

Expected<BuildIdRecord> parse_build_id(const RecordView& r) {
  Cursor c = body(r);
  BuildIdRecord m;
  m.pid = c.i32();
  Bytes id = c.bytes(24);
  std::size_t n = 20;
  if (c.ok() && (r.misc & kMiscExtReserved) && id[20] <= 20) n = id[20];  // BUILD_ID_SIZE
  m.build_id = id.subspan(0, c.ok() ? n : 0);
  m.filename = c.rest_string();
  return done(c, r, m);
}

IdIndexRecord::Entry IdIndexRecord::at(std::uint64_t i) const {
  const std::uint8_t* p = entries + 32 * i;
  Entry e;
  e.id = load<std::uint64_t>(p, swap);
  e.idx = load<std::uint64_t>(p + 8, swap);
  e.cpu = load<std::uint64_t>(p + 16, swap);
  e.tid = load<std::uint64_t>(p + 24, swap);
  if (entries2) {
    e.machine_pid = load<std::uint64_t>(entries2 + 16 * i, swap);
    e.vcpu = load<std::uint64_t>(entries2 + 16 * i + 8, swap);
  }
  return e;
}

Expected<IdIndexRecord> parse_id_index(const RecordView& r) {
  Cursor c = body(r);
  IdIndexRecord m;
  m.nr = c.u64();
  m.swap = r.swap;
  if (!c.ok() || m.nr > c.remaining() / 32) return short_record(r);
  // perf >= 5.19 appends an array of machine_pid and vcpu when there is room.
  const bool second = m.nr > 0 && c.remaining() >= m.nr * 48;
  m.entries = c.bytes(m.nr * 32).data();
  if (second) m.entries2 = c.bytes(m.nr * 16).data();
  return done(c, r, m);
}

Expected<AuxtraceInfoRecord> parse_auxtrace_info(const RecordView& r) {
  Cursor c = body(r);
  AuxtraceInfoRecord m;
  m.type = c.u32();
  c.skip(4);
  if (!c.ok()) return short_record(r);
  m.priv = U64Array(c.view().data() + c.position(), c.remaining() / 8, r.swap);
  return m;
}

Expected<AuxtraceRecord> parse_auxtrace(const RecordView& r) {
  Cursor c = body(r);
  AuxtraceRecord m;
  m.size = c.u64();
  m.offset = c.u64();
  m.reference = c.u64();
  m.idx = c.u32();
  m.tid = c.u32();
  m.cpu = c.u32();
  return done(c, r, m);
}

Expected<AuxtraceErrorRecord> parse_auxtrace_error(const RecordView& r) {
  Cursor c = body(r);
  AuxtraceErrorRecord m;
  m.type = c.u32();
  m.code = c.u32();
  m.cpu = c.u32();
  m.pid = c.u32();
  m.tid = c.u32();
  m.fmt = c.u32();
  m.ip = c.u64();
  if (m.fmt >= 1) m.time = c.u64();
  if (!c.ok()) return short_record(r);
  // fmt 0 has no time; its msg starts where time would be.
  m.msg = c.fixed_string(std::min<std::uint64_t>(64, c.remaining()));
  if (m.fmt >= 2 && c.remaining() >= 8) {
    m.machine_pid = c.u32();
    m.vcpu = c.u32();
  }
  return done(c, r, m);
}

Expected<ThreadMapRecord> parse_thread_map(const RecordView& r) {
  Cursor c = body(r);
  ThreadMapRecord m;
  m.nr = c.u64();
  m.swap = r.swap;
  if (!c.ok() || m.nr > c.remaining() / 24) return short_record(r);
  m.entries = c.bytes(m.nr * 24).data();
  return done(c, r, m);
}

bool parse_cpu_map_data(Cursor& c, CpuMapData& m) {
  m.swap = c.swapped();
  m.type = c.u16();
  if (m.type == CpuMapData::kCpus) {
    m.nr = c.u16();
    m.cpus = c.bytes(2ULL * m.nr).data();
  } else if (m.type == CpuMapData::kMask) {
    m.nr = c.u16();
    m.long_size = c.u16();
    if (m.long_size == 8) {
      c.skip(4);
      m.mask = c.bytes(8ULL * m.nr).data();
    } else if (m.long_size == 4) {
      m.mask = c.bytes(4ULL * m.nr).data();
    } else {
      c.fail();
    }
  } else if (m.type == CpuMapData::kRangeCpus) {
    m.any_cpu = c.u8() != 0;
    c.skip(1);
    m.start_cpu = c.u16();
    m.end_cpu = c.u16();
    if (m.end_cpu < m.start_cpu) c.fail();
  } else {
    c.fail();
  }
  return c.ok();
}

Expected<CpuMapData> parse_cpu_map(const RecordView& r) {
  Cursor c = body(r);
  CpuMapData m;
  if (!parse_cpu_map_data(c, m)) return short_record(r);
  return m;
}

Expected<StatConfigRecord> parse_stat_config(const RecordView& r) {
  Cursor c = body(r);
  StatConfigRecord m;
  m.nr = c.u64();
  m.swap = r.swap;
  if (!c.ok() || m.nr > c.remaining() / 16) return short_record(r);
  m.data = c.bytes(m.nr * 16).data();
  return done(c, r, m);
}

Expected<StatRecord> parse_stat(const RecordView& r) {
  Cursor c = body(r);
  StatRecord m;
  m.id = c.u64();
  m.cpu = c.u32();
  m.thread = c.u32();
  m.val = c.u64();
  m.ena = c.u64();
  m.run = c.u64();
  return done(c, r, m);
}

Expected<StatRoundRecord> parse_stat_round(const RecordView& r) {
  Cursor c = body(r);
  StatRoundRecord m;
  m.type = c.u64();
  m.time = c.u64();
  return done(c, r, m);
}

Expected<EventUpdateRecord> parse_event_update(const RecordView& r) {
  Cursor c = body(r);
  EventUpdateRecord m;
  m.type = c.u64();
  m.id = c.u64();
  if (!c.ok()) return short_record(r);
  Cursor d(c.rest(), r.swap, c.file_offset());
  m.data = d.view();
  switch (m.type) {
    case EventUpdateRecord::kUnit:
    case EventUpdateRecord::kName:
      m.text = c_string(m.data);
      break;
    case EventUpdateRecord::kScale:
      m.scale = d.f64();
      break;
    case EventUpdateRecord::kCpus:
      parse_cpu_map_data(d, m.cpus);
      break;
    default:
      break;
  }
  if (!d.ok()) return short_record(r);
  return m;
}

Expected<TimeConvRecord> parse_time_conv(const RecordView& r) {
  Cursor c = body(r);
  TimeConvRecord m;
  m.time_shift = c.u64();
  m.time_mult = c.u64();
  m.time_zero = c.u64();
  if (c.ok() && c.remaining() >= 24) {
    m.has_cycles = true;
    m.time_cycles = c.u64();
    m.time_mask = c.u64();
    m.cap_user_time_zero = c.u8();
    m.cap_user_time_short = c.u8();
  }
  return done(c, r, m);
}

Expected<HeaderFeatureRecord> parse_header_feature(const RecordView& r) {
  Cursor c = body(r);
  HeaderFeatureRecord m;
  m.feat_id = c.u64();
  m.data = c.rest();
  return done(c, r, m);
}

Expected<CompressedRecord> parse_compressed(const RecordView& r) {
  Cursor c = body(r);
  CompressedRecord m;
  if (r.type == kRecordCompressed2) {
    std::uint64_t data_size = c.u64();
    if (c.ok() && data_size > c.remaining()) c.fail();
    m.data = c.bytes(data_size);
  } else {
    m.data = c.rest();
  }
  return done(c, r, m);
}

std::uint64_t trailing_payload_size(const RecordView& r) {
  if (r.type == kRecordHeaderTracingData && r.bytes.size() >= 12) {
    std::uint64_t size = load<std::uint32_t>(r.bytes.data() + 8, r.swap);
    // simpleperf embeds the data in the record itself; perf appends it.
    if (r.bytes.size() >= 12 + size) return 0;
    return align_up(size, 8);
  }
  if (r.type == kRecordAuxtrace && r.bytes.size() >= 16)
    return load<std::uint64_t>(r.bytes.data() + 8, r.swap);
  return 0;
}

}  // namespace perfkit::record
