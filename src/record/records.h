// Typed views of every non-SAMPLE record type, kernel and user. Each parse_*
// reads the fixed fields of a RecordView's payload; strings and arrays stay
// views into the record. Errors name the record's offset and type.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "abi/attr.h"
#include "base/cursor.h"
#include "base/error.h"
#include "record/record_view.h"
#include "record/sample.h"

namespace perfkit::record {

struct MmapRecord {
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t start = 0, len = 0, pgoff = 0;
  std::string_view filename;
};

struct Mmap2Record {
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t start = 0, len = 0, pgoff = 0;
  bool has_build_id = false;  // misc has MMAP_BUILD_ID: build-id replaces dev/inode
  std::uint32_t maj = 0, min = 0;
  std::uint64_t ino = 0, ino_generation = 0;
  std::uint8_t build_id_size = 0;
  Bytes build_id;  // 20 bytes
  std::uint32_t prot = 0, flags = 0;
  std::string_view filename;
};

struct CommRecord {
  std::uint32_t pid = 0, tid = 0;
  std::string_view comm;
};

// EXIT and FORK share a layout.
struct TaskRecord {
  std::uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  std::uint64_t time = 0;
};

struct LostRecord {
  std::uint64_t id = 0, lost = 0;
};

// THROTTLE and UNTHROTTLE share a layout.
struct ThrottleRecord {
  std::uint64_t time = 0, id = 0, stream_id = 0;
};

struct ReadRecord {
  std::uint32_t pid = 0, tid = 0;
  ReadValues values;
};

struct AuxRecord {
  std::uint64_t aux_offset = 0, aux_size = 0, flags = 0;
};

struct ItraceStartRecord {
  std::uint32_t pid = 0, tid = 0;
};

struct LostSamplesRecord {
  std::uint64_t lost = 0;
};

struct SwitchCpuWideRecord {
  std::uint32_t next_prev_pid = 0, next_prev_tid = 0;
};

struct NamespacesRecord {
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t nr = 0;
  const std::uint8_t* links = nullptr;  // nr × {u64 dev, u64 ino}
  bool swap = false;
  std::uint64_t dev(std::uint64_t i) const { return load<std::uint64_t>(links + 16 * i, swap); }
  std::uint64_t ino(std::uint64_t i) const { return load<std::uint64_t>(links + 16 * i + 8, swap); }
};

struct KsymbolRecord {
  std::uint64_t addr = 0;
  std::uint32_t len = 0;
  std::uint16_t ksym_type = 0, flags = 0;
  std::string_view name;
};

struct BpfEventRecord {
  std::uint16_t type = 0, flags = 0;
  std::uint32_t id = 0;
  Bytes tag;  // 8 bytes
};

struct CgroupRecord {
  std::uint64_t id = 0;
  std::string_view path;
};

struct TextPokeRecord {
  std::uint64_t addr = 0;
  std::uint16_t old_len = 0, new_len = 0;
  Bytes old_bytes, new_bytes;
};

struct AuxOutputHwIdRecord {
  std::uint64_t hw_id = 0;
};

// ---- user records (perf's own, types 64 and up) ----

struct HeaderAttrRecord {
  abi::EventAttr attr;
  U64Array ids;
};

struct EventTypeRecord {
  std::uint64_t event_id = 0;
  std::string_view name;
};

struct TracingDataRecord {
  std::uint32_t size = 0;  // bytes of trace data following the record
};

struct BuildIdRecord {
  std::int32_t pid = 0;
  Bytes build_id;  // 20 bytes, or `size` when misc has BUILD_ID_SIZE
  std::string_view filename;
};

struct IdIndexRecord {
  std::uint64_t nr = 0;
  const std::uint8_t* entries = nullptr;  // nr × {u64 id, idx, cpu, tid}
  // Then, where the record has room, nr × {u64 machine_pid, vcpu} (perf's
  // id_index_entry_2 array after the entries); nullptr without.
  const std::uint8_t* entries2 = nullptr;
  bool swap = false;
  struct Entry {
    std::uint64_t id = 0, idx = 0, cpu = 0, tid = 0, machine_pid = 0, vcpu = 0;
  };
  Entry at(std::uint64_t i) const;
};

struct AuxtraceInfoRecord {
  std::uint32_t type = 0;
  U64Array priv;
};

struct AuxtraceRecord {
  std::uint64_t size = 0, offset = 0, reference = 0;
  std::uint32_t idx = 0, tid = 0, cpu = 0;
};

struct AuxtraceErrorRecord {
  std::uint32_t type = 0, code = 0, cpu = 0, pid = 0, tid = 0, fmt = 0;
  std::uint64_t ip = 0, time = 0;
  std::string_view msg;
  std::uint32_t machine_pid = 0, vcpu = 0;
};

struct ThreadMapRecord {
  std::uint64_t nr = 0;
  const std::uint8_t* entries = nullptr;  // nr × {u64 pid, char comm[16]}
  bool swap = false;
  std::uint64_t pid(std::uint64_t i) const { return load<std::uint64_t>(entries + 24 * i, swap); }
  std::string_view comm(std::uint64_t i) const { return c_string(Bytes(entries + 24 * i + 8, 16)); }
};

// cpu_map_data as used by CPU_MAP and EVENT_UPDATE(CPUS).
struct CpuMapData {
  enum Type : std::uint16_t { kCpus = 0, kMask = 1, kRangeCpus = 2 };
  std::uint16_t type = 0;
  // kCpus
  std::uint16_t nr = 0;
  const std::uint8_t* cpus = nullptr;
  // kMask
  std::uint16_t long_size = 0;
  const std::uint8_t* mask = nullptr;
  // kRangeCpus
  bool any_cpu = false;
  std::uint16_t start_cpu = 0, end_cpu = 0;
  bool swap = false;

  // Calls f(cpu) for each cpu in the map (-1 for "any cpu").
  template <class F>
  void for_each(F&& f) const {
    if (type == kCpus) {
      for (std::uint16_t i = 0; i < nr; ++i)
        f(static_cast<std::int32_t>(
            static_cast<std::int16_t>(load<std::uint16_t>(cpus + 2 * i, swap))));
    } else if (type == kMask) {
      for (std::uint32_t w = 0; w < nr; ++w) {
        std::uint64_t bits = long_size == 4 ? load<std::uint32_t>(mask + 4 * w, swap)
                                            : load<std::uint64_t>(mask + 8 * w, swap);
        for (unsigned b = 0; b < long_size * 8u; ++b)
          if (bits & (1ULL << b)) f(static_cast<std::int32_t>(w * long_size * 8 + b));
      }
    } else if (type == kRangeCpus) {
      if (any_cpu) f(-1);
      for (std::uint32_t c = start_cpu; c <= end_cpu; ++c) f(static_cast<std::int32_t>(c));
    }
  }
};

struct StatConfigRecord {
  std::uint64_t nr = 0;
  const std::uint8_t* data = nullptr;  // nr × {u64 tag, u64 val}
  bool swap = false;
  std::uint64_t tag(std::uint64_t i) const { return load<std::uint64_t>(data + 16 * i, swap); }
  std::uint64_t val(std::uint64_t i) const { return load<std::uint64_t>(data + 16 * i + 8, swap); }
};

struct StatRecord {
  std::uint64_t id = 0;
  std::uint32_t cpu = 0, thread = 0;
  std::uint64_t val = 0, ena = 0, run = 0;
};

struct StatRoundRecord {
  std::uint64_t type = 0, time = 0;
};

struct EventUpdateRecord {
  enum Type : std::uint64_t { kUnit = 0, kScale = 1, kName = 2, kCpus = 3 };
  std::uint64_t type = 0, id = 0;
  std::string_view text;  // kUnit, kName
  double scale = 0;       // kScale
  CpuMapData cpus;        // kCpus
  Bytes data;
};

struct TimeConvRecord {
  std::uint64_t time_shift = 0, time_mult = 0, time_zero = 0;
  bool has_cycles = false;  // the newer, longer layout
  std::uint64_t time_cycles = 0, time_mask = 0;
  std::uint8_t cap_user_time_zero = 0, cap_user_time_short = 0;
};

struct HeaderFeatureRecord {
  std::uint64_t feat_id = 0;
  Bytes data;
};

struct CompressedRecord {
  Bytes data;  // zstd frames
};

Expected<MmapRecord> parse_mmap(const RecordView& r);
Expected<Mmap2Record> parse_mmap2(const RecordView& r);
Expected<CommRecord> parse_comm(const RecordView& r);
Expected<TaskRecord> parse_task(const RecordView& r);  // EXIT, FORK
Expected<LostRecord> parse_lost(const RecordView& r);
Expected<ThrottleRecord> parse_throttle(const RecordView& r);
Expected<ReadRecord> parse_read(const RecordView& r, std::uint64_t read_format);
Expected<AuxRecord> parse_aux(const RecordView& r);
Expected<ItraceStartRecord> parse_itrace_start(const RecordView& r);
Expected<LostSamplesRecord> parse_lost_samples(const RecordView& r);
Expected<SwitchCpuWideRecord> parse_switch_cpu_wide(const RecordView& r);
Expected<NamespacesRecord> parse_namespaces(const RecordView& r);
Expected<KsymbolRecord> parse_ksymbol(const RecordView& r);
Expected<BpfEventRecord> parse_bpf_event(const RecordView& r);
Expected<CgroupRecord> parse_cgroup(const RecordView& r);
Expected<TextPokeRecord> parse_text_poke(const RecordView& r);
Expected<AuxOutputHwIdRecord> parse_aux_output_hw_id(const RecordView& r);

Expected<HeaderAttrRecord> parse_header_attr(const RecordView& r);
Expected<EventTypeRecord> parse_event_type(const RecordView& r);
Expected<TracingDataRecord> parse_tracing_data(const RecordView& r);
Expected<BuildIdRecord> parse_build_id(const RecordView& r);
Expected<IdIndexRecord> parse_id_index(const RecordView& r);
Expected<AuxtraceInfoRecord> parse_auxtrace_info(const RecordView& r);
Expected<AuxtraceRecord> parse_auxtrace(const RecordView& r);
Expected<AuxtraceErrorRecord> parse_auxtrace_error(const RecordView& r);
Expected<ThreadMapRecord> parse_thread_map(const RecordView& r);
Expected<CpuMapData> parse_cpu_map(const RecordView& r);
Expected<StatConfigRecord> parse_stat_config(const RecordView& r);
Expected<StatRecord> parse_stat(const RecordView& r);
Expected<StatRoundRecord> parse_stat_round(const RecordView& r);
Expected<EventUpdateRecord> parse_event_update(const RecordView& r);
Expected<TimeConvRecord> parse_time_conv(const RecordView& r);
Expected<HeaderFeatureRecord> parse_header_feature(const RecordView& r);
Expected<CompressedRecord> parse_compressed(const RecordView& r);  // COMPRESSED, COMPRESSED2

// Decodes cpu_map_data from a cursor positioned at its type field.
bool parse_cpu_map_data(Cursor& c, CpuMapData& out);

// Bytes of trailing payload after the record (TRACING_DATA's and AUXTRACE's
// data, padded to 8 for TRACING_DATA), 0 for every other type.
std::uint64_t trailing_payload_size(const RecordView& r);

}  // namespace perfkit::record
