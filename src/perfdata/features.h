// Features: a typed model of every perf.data header feature section (the
// HEADER_* bits of the file header, or HEADER_FEATURE records in pipe mode),
// parsed from a section's bytes in either byte order and encoded back.
//
// Layouts follow perf's writers (tools/perf/util/header.c): strings are
// perf_header_string (u32 length including the NUL and zero padding to 64
// bytes, then the bytes); counts are u32 unless noted. encode(parse(bytes))
// gives back the same bytes for every section perf writes; sections this model
// does not know (simpleperf's ids >= 128, newer perf's) are kept byte for byte.
//
// Writers (perfkit record) fill the members they know and encode them:
//
//   Features f;
//   f.hostname = "vm";
//   f.nrcpus = NrCpus{.available = 2, .online = 2};
//   f.cmdline = {"/usr/bin/perfkit", "record", "--", "./app"};
//   std::vector<FeatureData> sections = encode_features(f, /*swap=*/false);
//   writer->finish(events, sections);
//
// Readers parse what a file has:
//
//   PK_ASSIGN(Features f, parse_features(reader.features(), reader.swapped()));
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "abi/attr.h"
#include "base/bytes.h"
#include "base/cursor.h"
#include "base/error.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"

namespace perfkit::perfdata {

// PERF_RECORD_MISC_BUILD_ID_SIZE: the entry's size byte is valid.
inline constexpr std::uint16_t kBuildIdMiscSize = 1u << 15;
// pid of the host kernel's and of the default guest's build-id entries.
inline constexpr std::int32_t kHostKernelPid = -1;
inline constexpr std::int32_t kDefaultGuestKernelPid = 0;

// One BUILD_ID entry (perf_record_header_build_id): a DSO and its build-id.
struct BuildIdEntry {
  std::int32_t pid = kHostKernelPid;
  // cpumode (kernel, user, guest) | kBuildIdMiscSize when build_id may be shorter than 20.
  std::uint16_t misc = 0;
  std::vector<std::uint8_t> build_id;  // at most 20 bytes
  std::string filename;
  // The name as stored: with its NUL and padding (64-byte aligned by perf up to
  // 6.x, 8-byte by newer perf, with stray bytes after the NUL from perf 3.x).
  // Encoding re-uses it while it still holds `filename`; empty: perf's layout.
  std::vector<std::uint8_t> stored_name;
  bool operator==(const BuildIdEntry&) const = default;
};

struct BuildIdTable {
  std::vector<BuildIdEntry> entries;
  // Files from perf before 2.6.34 stored entries without the pid field; perf
  // recognises them by the kernel's "[kernel.kallsyms]" name cut by 4 bytes.
  bool legacy_without_pid = false;
  bool operator==(const BuildIdTable&) const = default;
};

struct NrCpus {
  std::uint32_t available = 0;  // written first: max present cpu + 1
  std::uint32_t online = 0;
  bool operator==(const NrCpus&) const = default;
};

// One EVENT_DESC entry: an attr as recorded, its name and its sample ids.
struct EventDescEntry {
  abi::EventAttr attr;
  std::string name;
  std::vector<std::uint64_t> ids;
  bool operator==(const EventDescEntry&) const = default;
};

struct EventDescList {
  // Bytes stored per attr (sizeof(perf_event_attr) of the writer: 128 for perf 6.1).
  std::uint32_t attr_size = abi::kAttrSizeVer7;
  std::vector<EventDescEntry> events;
  bool operator==(const EventDescList&) const = default;
};

// The per-cpu ids perf >= 4.1 appends to CPU_TOPOLOGY (die_id since 5.2).
struct CpuTopologyIds {
  std::int32_t core_id = 0;
  std::int32_t socket_id = 0;
  std::int32_t die_id = 0;  // only stored when die lists are present
  bool operator==(const CpuTopologyIds&) const = default;
};

struct CpuTopology {
  std::vector<std::string> package_cpus_lists;  // printed as "sibling sockets"
  std::vector<std::string> core_cpus_lists;     // printed as "sibling threads"
  // One entry per available cpu (NRCPUS.available); empty in files from old perf.
  std::vector<CpuTopologyIds> cpus;
  bool has_cpu_ids = false;  // the section has the per-cpu core/socket ids
  // "sibling dies"; stored (with die_id per cpu) only when non-empty.
  std::vector<std::string> die_cpus_lists;
  bool operator==(const CpuTopology&) const = default;
};

struct NumaNode {
  std::uint32_t node = 0;
  std::uint64_t mem_total_kb = 0;
  std::uint64_t mem_free_kb = 0;
  std::string cpus;  // cpu list, "0-3,8"
  bool operator==(const NumaNode&) const = default;
};

struct PmuMapping {
  std::uint32_t type = 0;
  std::string name;
  bool operator==(const PmuMapping&) const = default;
};

struct GroupDesc {
  std::string name;  // "{anon_group}" for a group without a name
  std::uint32_t leader_idx = 0;
  std::uint32_t nr_members = 0;
  bool operator==(const GroupDesc&) const = default;
};

// AUXTRACE: where each PERF_RECORD_AUXTRACE sits in the file (a u64 count first).
struct AuxtraceIndexEntry {
  std::uint64_t file_offset = 0;
  std::uint64_t size = 0;
  bool operator==(const AuxtraceIndexEntry&) const = default;
};

struct CacheLevel {
  std::uint32_t level = 0;
  std::uint32_t line_size = 0;
  std::uint32_t sets = 0;
  std::uint32_t ways = 0;
  std::string type;  // "Data", "Instruction", "Unified"
  std::string size;  // "32K"
  std::string map;   // shared cpu list
  bool operator==(const CacheLevel&) const = default;
};

struct CacheInfo {
  std::uint32_t version = 1;
  std::vector<CacheLevel> levels;
  bool operator==(const CacheInfo&) const = default;
};

struct SampleTime {
  std::uint64_t first_ns = 0;
  std::uint64_t last_ns = 0;
  bool operator==(const SampleTime&) const = default;
};

// MEM_TOPOLOGY: which memory blocks belong to each node (all fields u64).
struct MemoryNode {
  std::uint64_t node = 0;
  std::uint64_t size = 0;          // bits in `set`
  std::vector<std::uint64_t> set;  // ceil(size / 64) words, bit i = memory block i
  bool operator==(const MemoryNode&) const = default;
};

struct MemTopology {
  std::uint64_t version = 1;
  std::uint64_t block_size = 0;  // bytes per memory block
  std::vector<MemoryNode> nodes;
  bool operator==(const MemTopology&) const = default;
};

// One BPF_PROG_INFO entry: perf's bpil (u32 info_len, u32 data_len, u64 arrays,
// then struct bpf_prog_info and its arrays, with pointers stored as offsets
// into `data`). Kept as bytes; feature_bpf.h reads what perf prints.
struct BpfProgInfo {
  std::uint64_t arrays = 0;        // bit per bpf_prog_info array that `data` holds
  std::vector<std::uint8_t> info;  // info_len bytes of struct bpf_prog_info
  std::vector<std::uint8_t> data;  // data_len bytes
  bool operator==(const BpfProgInfo&) const = default;
};

struct BpfBtf {
  std::uint32_t id = 0;
  std::vector<std::uint8_t> data;  // the BTF blob
  bool operator==(const BpfBtf&) const = default;
};

// COMPRESSED: how PERF_RECORD_COMPRESSED payloads were made (type 1 = zstd).
struct CompressionInfo {
  std::uint32_t version = 0;
  std::uint32_t type = 0;
  std::uint32_t level = 0;
  std::uint32_t ratio = 0;
  std::uint32_t mmap_len = 0;
  bool operator==(const CompressionInfo&) const = default;
};

struct PmuCapability {
  std::string name;
  std::string value;
  bool operator==(const PmuCapability&) const = default;
};

struct PmuCaps {
  std::vector<PmuCapability> caps;
  std::string pmu_name;  // stored after the caps
  bool operator==(const PmuCaps&) const = default;
};

// CLOCK_DATA: a reference point between the time of day and the sample clock.
struct ClockData {
  std::uint32_t version = 1;
  std::uint32_t clockid = 0;
  std::uint64_t tod_ns = 0;
  std::uint64_t clockid_ns = 0;
  bool operator==(const ClockData&) const = default;
};

struct HybridNode {
  std::string pmu_name;
  std::string cpus;
  bool operator==(const HybridNode&) const = default;
};

struct Features {
  std::optional<std::vector<std::uint8_t>> tracing_data;  // trace event formats, as stored
  std::optional<BuildIdTable> build_id;
  std::optional<std::string> hostname;
  std::optional<std::string> osrelease;
  std::optional<std::string> version;  // perf's version string
  std::optional<std::string> arch;
  std::optional<NrCpus> nrcpus;
  std::optional<std::string> cpudesc;
  std::optional<std::string> cpuid;
  std::optional<std::uint64_t> total_mem_kb;
  std::optional<std::vector<std::string>> cmdline;  // argv, the tool's path first
  std::optional<EventDescList> event_desc;
  std::optional<CpuTopology> cpu_topology;
  std::optional<std::vector<NumaNode>> numa_topology;
  bool branch_stack = false;  // an empty section: samples have branch stacks
  std::optional<std::vector<PmuMapping>> pmu_mappings;
  std::optional<std::vector<GroupDesc>> group_desc;
  std::optional<std::vector<AuxtraceIndexEntry>> auxtrace;
  bool stat = false;  // an empty section: a perf stat record file
  std::optional<CacheInfo> cache;
  std::optional<SampleTime> sample_time;
  std::optional<MemTopology> mem_topology;
  std::optional<std::uint64_t> clockid_res_ns;
  std::optional<std::uint64_t> dir_format;  // directory data version
  std::optional<std::vector<BpfProgInfo>> bpf_prog_info;
  std::optional<std::vector<BpfBtf>> bpf_btf;
  std::optional<CompressionInfo> compressed;
  std::optional<std::vector<PmuCapability>> cpu_pmu_caps;
  std::optional<ClockData> clock_data;
  std::optional<std::vector<HybridNode>> hybrid_topology;
  std::optional<std::vector<PmuCaps>> pmu_caps;

  // Sections of ids this model does not know, byte for byte, in file order.
  std::vector<FeatureData> unknown;
  // Bytes after the parsed content of a known section (padding some writers
  // add), re-appended by the encoder so the section comes back unchanged.
  std::map<std::uint32_t, std::vector<std::uint8_t>> trailing;

  // Whether the feature `id` is present (known or unknown id).
  bool has(std::uint32_t id) const;
  // Ids of every present feature: known ones in id order, then the unknown ones.
  std::vector<std::uint32_t> ids() const;

  bool operator==(const Features&) const = default;
};

// Parses one section into `out` (replacing that feature). `file_offset` is where
// `data` starts in the file, for messages. CPU_TOPOLOGY reads as many per-cpu
// ids as `out.nrcpus` says (parse NRCPUS first, as file order does); without
// NRCPUS the count is inferred from the section size. Unknown ids go to
// out.unknown. Errors: "feature NAME at offset 0x..: ..." for a section shorter
// than its counts say, a string running past the end, an unsupported version
// (CACHE, MEM_TOPOLOGY, CLOCK_DATA), an attr smaller than 64 bytes.
Status parse_feature(std::uint32_t id, Bytes data, bool swap, std::uint64_t file_offset,
                     Features& out);
// Parses every section, in the order given (the reader's order).
Expected<Features> parse_features(std::span<const FeatureBlob> blobs, bool swap);

// Encodes the feature `id` of `f` in perf's layout, in the given byte order.
// Errors: `f` does not have the feature; a build-id longer than 20 bytes; an
// attr_size smaller than 64.
Expected<std::vector<std::uint8_t>> encode_feature(const Features& f, std::uint32_t id, bool swap);
// Every present feature as sections for Writer::finish, in f.ids() order.
// Errors: as encode_feature.
Expected<std::vector<FeatureData>> encode_features(const Features& f, bool swap);

// What perf reads of a CPU_TOPOLOGY section: it takes the per-cpu ids (and
// then the die lists) to be there when the section is longer than its count
// of the bytes before them, which pads every string to 64 bytes. For writers
// that pad less (quipper) perf sees no ids where the model has them.
struct CpuTopologyView {
  bool cpu_ids = false;
  bool dies = false;
};
CpuTopologyView perf_cpu_topology_view(Bytes section, bool swap, std::uint32_t nr_cpus);

// Names events from an EVENT_DESC section, as perf does: event i gets the
// name of entry i unless it already has one. A section that does not parse
// names nothing; its error is returned for the caller to warn about.
Status name_events_from_event_desc(const FeatureBlob& event_desc, bool swap, EventSet& events);
// Gives each event still without a name perf's name for its attr
// (abi::default_event_name: "cycles:u", "raw 0x1cd", ...).
void name_events_by_default(EventSet& events);

// Reads/writes one perf_header_string at the cursor; exposed for the tests.
// The string is cut at its first NUL; errors name `what`.
Expected<std::string> read_header_string(Cursor& c, std::string_view what);
void append_header_string(std::vector<std::uint8_t>& out, std::string_view s, bool swap);

}  // namespace perfkit::perfdata
