// Parsing of header feature sections into the typed model (features.h).
// Every read goes through a Cursor over the section; a count is checked
// against the bytes left before anything is allocated for it.
#include <algorithm>

#include "abi/event_names.h"
#include "abi/names.h"
#include "perfdata/features.h"

namespace perfkit::perfdata {

using namespace perfkit::abi;

namespace {

std::string feature_label(std::uint32_t id) {
  auto name = feature_name(id);
  return name.empty() ? fmt::format("#{}", id) : std::string(name);
}

// A cursor over one section that words its errors as
// "feature NAME at offset 0x..: ...".
class Section {
 public:
  Section(std::uint32_t id, Bytes data, bool swap, std::uint64_t offset)
      : id_(id), c(data, swap, offset) {}

  // The error for the first failed read of `what`.
  Error truncated(std::string_view what) const {
    return make_error("feature {} at offset {:#x}: {} runs past the end of the section at {:#x}",
                      feature_label(id_), c.fail_offset(), what, c.file_offset() + c.remaining());
  }
  template <class... Args>
  Error invalid(std::uint64_t at, fmt::format_string<Args...> format, Args&&... args) const {
    return make_error("feature {} at offset {:#x}: {}", feature_label(id_), at,
                      fmt::format(format, std::forward<Args>(args)...));
  }
  // Checks a value read as `what` (if the read failed, the truncation error).
  Status ok(std::string_view what) const {
    if (c.failed()) return truncated(what);
    return perfkit::ok();
  }
  // A count read at `at`: each element takes at least `min_each` bytes.
  Status check_count(std::uint64_t at, std::uint64_t n, std::uint64_t min_each,
                     std::string_view what) const {
    if (c.failed()) return truncated(what);
    if (min_each && n > c.remaining() / min_each)
      return invalid(at, "{} {} needs at least {} bytes, the section has {} left", what, n,
                     n * min_each, c.remaining());
    return perfkit::ok();
  }
  Expected<std::string> string(std::string_view what) {
    std::uint64_t at = c.file_offset();
    std::uint32_t len = c.u32();
    if (c.failed()) return truncated(fmt::format("length of {}", what));
    if (len > c.remaining())
      return invalid(at, "{} of {} bytes runs past the end of the section at {:#x}", what, len,
                     c.file_offset() + c.remaining());
    return std::string(c_string(c.bytes(len)));
  }
  Expected<std::uint32_t> count32(std::uint64_t min_each, std::string_view what) {
    std::uint64_t at = c.file_offset();
    std::uint32_t n = c.u32();
    PK_TRY(check_count(at, n, min_each, what));
    return n;
  }

  std::uint32_t id_;
  Cursor c;
};

// The smallest perf_header_string: its length word.
constexpr std::uint64_t kMinString = 4;

Expected<std::vector<std::string>> string_list(Section& s, std::string_view what) {
  PK_ASSIGN(std::uint32_t n, s.count32(kMinString, what));
  std::vector<std::string> out;
  out.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    PK_ASSIGN(std::string str, s.string(what));
    out.push_back(std::move(str));
  }
  return out;
}

Expected<std::vector<PmuCapability>> capability_list(Section& s) {
  PK_ASSIGN(std::uint32_t n, s.count32(2 * kMinString, "capability count"));
  std::vector<PmuCapability> caps(n);
  for (auto& cap : caps) {
    PK_ASSIGN(cap.name, s.string("capability name"));
    PK_ASSIGN(cap.value, s.string("capability value"));
  }
  return caps;
}

// perf_record_header_build_id: header (type, misc, size), pid, 24 bytes of
// build-id (20 bytes, size byte, padding), then the padded file name.
constexpr std::uint64_t kBuildIdArea = 24;
constexpr std::uint64_t kBuildIdEntryHeader = 8 + 4 + kBuildIdArea;
constexpr std::uint64_t kLegacyBuildIdEntryHeader = 8 + kBuildIdArea;

bool legacy_build_id_table(Bytes data, bool swap) {
  if (data.size() < kBuildIdEntryHeader) return false;
  std::uint16_t size = load<std::uint16_t>(data.data() + 6, swap);
  if (size <= kBuildIdEntryHeader || size > data.size()) return false;
  auto name = as_chars(data.subspan(kBuildIdEntryHeader, size - kBuildIdEntryHeader));
  return name.starts_with("nel.kallsyms]");
}

Expected<BuildIdTable> parse_build_ids(Section& s) {
  BuildIdTable t;
  t.legacy_without_pid = legacy_build_id_table(s.c.view(), s.c.swapped());
  const std::uint64_t fixed =
      t.legacy_without_pid ? kLegacyBuildIdEntryHeader : kBuildIdEntryHeader;
  while (!s.c.at_end()) {
    std::uint64_t at = s.c.file_offset();
    s.c.u32();  // header.type: 0 as perf writes it
    std::uint16_t misc = s.c.u16();
    std::uint16_t size = s.c.u16();
    PK_TRY(s.ok("build-id entry header"));
    if (size < fixed || size - kHeaderSize > s.c.remaining())
      return s.invalid(at, "build-id entry of {} bytes does not fit (header {} bytes, {} left)",
                       size, fixed, s.c.remaining() + kHeaderSize);
    BuildIdEntry e;
    e.misc = misc;
    if (t.legacy_without_pid) {
      bool guest = misc == kMiscGuestUser || misc == kMiscGuestKernel;
      e.pid = guest ? kDefaultGuestKernelPid : kHostKernelPid;
    } else {
      e.pid = s.c.i32();
    }
    Bytes area = s.c.bytes(kBuildIdArea);
    std::size_t n = 20;
    if (misc & kBuildIdMiscSize) {
      if (area[20] > 20) return s.invalid(at, "build-id size {} is larger than 20", area[20]);
      n = area[20];
    }
    e.build_id.assign(area.begin(), area.begin() + static_cast<std::ptrdiff_t>(n));
    Bytes name = s.c.bytes(size - fixed);
    e.filename = std::string(c_string(name));
    e.stored_name.assign(name.begin(), name.end());
    PK_TRY(s.ok("build-id entry"));
    t.entries.push_back(std::move(e));
  }
  return t;
}

Expected<EventDescList> parse_event_desc(Section& s) {
  EventDescList d;
  std::uint64_t at = s.c.file_offset();
  std::uint32_t n = s.c.u32();
  d.attr_size = s.c.u32();
  PK_TRY(s.ok("event count and attr size"));
  if (d.attr_size < kAttrSizeVer0)
    return s.invalid(at + 4, "attr size {} is smaller than {}", d.attr_size, kAttrSizeVer0);
  PK_TRY(s.check_count(at, n, std::uint64_t{d.attr_size} + 4 + kMinString, "event count"));
  d.events.reserve(n);
  std::vector<std::uint8_t> attr_bytes;
  for (std::uint32_t i = 0; i < n; ++i) {
    EventDescEntry e;
    std::uint64_t attr_at = s.c.file_offset();
    Bytes raw = s.c.bytes(d.attr_size);
    PK_TRY(s.ok("attr"));
    // perf copies all attr_size bytes whatever the attr's own size field says.
    attr_bytes.assign(raw.begin(), raw.end());
    std::uint32_t stored_size = load<std::uint32_t>(attr_bytes.data() + 4, s.c.swapped());
    store<std::uint32_t>(attr_bytes.data() + 4, d.attr_size, s.c.swapped());
    auto attr = parse_attr(attr_bytes, s.c.swapped());
    if (!attr) return s.invalid(attr_at, "{}", attr.error().message());
    e.attr = *attr;
    e.attr.size = stored_size;
    std::uint64_t ids_at = s.c.file_offset();
    std::uint32_t nr_ids = s.c.u32();
    PK_TRY(s.ok("id count"));
    PK_ASSIGN(e.name, s.string("event name"));
    PK_TRY(s.check_count(ids_at, nr_ids, 8, "id count"));
    e.ids.resize(nr_ids);
    for (auto& id : e.ids) id = s.c.u64();
    d.events.push_back(std::move(e));
  }
  return d;
}

// The per-cpu id count of a CPU_TOPOLOGY without NRCPUS: the die layout if
// one fits the remaining bytes exactly (strings padded as perf pads them),
// else core and socket ids only.
std::uint32_t infer_topology_cpus(const Cursor& c) {
  const std::uint64_t left = c.remaining();
  for (std::uint64_t n = 0; n * 12 + 4 <= left; ++n) {
    Cursor probe = c;
    probe.skip(n * 8);
    std::uint32_t dies = probe.u32();
    bool padded = dies > 0;
    for (std::uint32_t i = 0; i < dies && probe.ok() && padded; ++i) {
      std::uint32_t len = probe.u32();
      padded = len > 0 && len % 64 == 0 && probe.skip(len);
    }
    if (padded && probe.ok() && probe.remaining() == n * 4) return static_cast<std::uint32_t>(n);
  }
  return static_cast<std::uint32_t>(left / 8);
}

Expected<CpuTopology> parse_cpu_topology(Section& s, const std::optional<NrCpus>& nrcpus) {
  CpuTopology t;
  PK_ASSIGN(t.package_cpus_lists, string_list(s, "package cpu list"));
  PK_ASSIGN(t.core_cpus_lists, string_list(s, "core cpu list"));
  // Older perf stops here; 4.1 added core and socket ids, 5.2 dies. (perf
  // itself decides from its own count of the bytes read, see
  // perf_reads_cpu_ids.)
  if (s.c.at_end()) return t;
  std::uint32_t nr = nrcpus ? nrcpus->available : infer_topology_cpus(s.c);
  PK_TRY(s.check_count(s.c.file_offset(), nr, 8, "per-cpu core and socket ids of cpu count"));
  t.has_cpu_ids = true;
  t.cpus.resize(nr);
  for (auto& cpu : t.cpus) {
    cpu.core_id = s.c.i32();
    cpu.socket_id = s.c.i32();
  }
  if (s.c.at_end()) return t;
  Cursor probe = s.c;
  if (probe.u32() == 0) return t;  // no die lists: perf writes none then; kept as trailing bytes
  PK_ASSIGN(t.die_cpus_lists, string_list(s, "die cpu list"));
  PK_TRY(s.check_count(s.c.file_offset(), nr, 4, "die ids of cpu count"));
  for (auto& cpu : t.cpus) cpu.die_id = s.c.i32();
  return t;
}

Expected<std::vector<NumaNode>> parse_numa(Section& s) {
  PK_ASSIGN(std::uint32_t n, s.count32(4 + 16 + kMinString, "node count"));
  std::vector<NumaNode> nodes(n);
  for (auto& node : nodes) {
    node.node = s.c.u32();
    node.mem_total_kb = s.c.u64();
    node.mem_free_kb = s.c.u64();
    PK_TRY(s.ok("numa node"));
    PK_ASSIGN(node.cpus, s.string("node cpu list"));
  }
  return nodes;
}

Expected<std::vector<PmuMapping>> parse_pmu_mappings(Section& s) {
  PK_ASSIGN(std::uint32_t n, s.count32(4 + kMinString, "pmu count"));
  std::vector<PmuMapping> pmus(n);
  for (auto& p : pmus) {
    p.type = s.c.u32();
    PK_TRY(s.ok("pmu type"));
    PK_ASSIGN(p.name, s.string("pmu name"));
  }
  return pmus;
}

Expected<std::vector<GroupDesc>> parse_group_desc(Section& s) {
  PK_ASSIGN(std::uint32_t n, s.count32(kMinString + 8, "group count"));
  std::vector<GroupDesc> groups(n);
  for (auto& g : groups) {
    PK_ASSIGN(g.name, s.string("group name"));
    g.leader_idx = s.c.u32();
    g.nr_members = s.c.u32();
    PK_TRY(s.ok("group leader and size"));
  }
  return groups;
}

Expected<std::vector<AuxtraceIndexEntry>> parse_auxtrace(Section& s) {
  std::uint64_t at = s.c.file_offset();
  std::uint64_t n = s.c.u64();
  PK_TRY(s.check_count(at, n, 16, "index entry count"));
  std::vector<AuxtraceIndexEntry> entries(n);
  for (auto& e : entries) {
    e.file_offset = s.c.u64();
    e.size = s.c.u64();
  }
  return entries;
}

Expected<CacheInfo> parse_cache(Section& s) {
  CacheInfo info;
  std::uint64_t at = s.c.file_offset();
  info.version = s.c.u32();
  PK_TRY(s.ok("version"));
  if (info.version != 1)
    return s.invalid(at, "unsupported version {} (perf knows 1)", info.version);
  PK_ASSIGN(std::uint32_t n, s.count32(16 + 3 * kMinString, "cache count"));
  info.levels.resize(n);
  for (auto& l : info.levels) {
    l.level = s.c.u32();
    l.line_size = s.c.u32();
    l.sets = s.c.u32();
    l.ways = s.c.u32();
    PK_TRY(s.ok("cache level"));
    PK_ASSIGN(l.type, s.string("cache type"));
    PK_ASSIGN(l.size, s.string("cache size"));
    PK_ASSIGN(l.map, s.string("cache cpu map"));
  }
  return info;
}

Expected<MemTopology> parse_mem_topology(Section& s) {
  MemTopology m;
  std::uint64_t at = s.c.file_offset();
  m.version = s.c.u64();
  PK_TRY(s.ok("version"));
  if (m.version != 1) return s.invalid(at, "unsupported version {} (perf knows 1)", m.version);
  m.block_size = s.c.u64();
  std::uint64_t count_at = s.c.file_offset();
  std::uint64_t n = s.c.u64();
  PK_TRY(s.check_count(count_at, n, 24, "node count"));
  m.nodes.resize(n);
  for (auto& node : m.nodes) {
    std::uint64_t node_at = s.c.file_offset();
    node.node = s.c.u64();
    node.size = s.c.u64();
    std::uint64_t bits = s.c.u64();
    PK_TRY(s.ok("memory node"));
    if (bits != node.size)
      return s.invalid(node_at, "memory node {} has size {} but a bitmap of {} bits", node.node,
                       node.size, bits);
    std::uint64_t words = bits / 64 + (bits % 64 != 0);
    PK_TRY(s.check_count(node_at + 16, words, 8, "bitmap words of bit count"));
    node.set.resize(words);
    for (auto& w : node.set) w = s.c.u64();
  }
  return m;
}

Expected<std::vector<BpfProgInfo>> parse_bpf_prog_info(Section& s) {
  PK_ASSIGN(std::uint32_t n, s.count32(16, "program count"));
  std::vector<BpfProgInfo> progs(n);
  for (auto& p : progs) {
    std::uint64_t at = s.c.file_offset();
    std::uint32_t info_len = s.c.u32();
    std::uint32_t data_len = s.c.u32();
    p.arrays = s.c.u64();
    PK_TRY(s.ok("bpf_prog_info header"));
    if (std::uint64_t{info_len} + data_len > s.c.remaining())
      return s.invalid(at, "bpf_prog_info of {} + {} bytes runs past the end of the section",
                       info_len, data_len);
    Bytes info = s.c.bytes(info_len);
    Bytes data = s.c.bytes(data_len);
    p.info.assign(info.begin(), info.end());
    p.data.assign(data.begin(), data.end());
  }
  return progs;
}

Expected<std::vector<BpfBtf>> parse_bpf_btf(Section& s) {
  PK_ASSIGN(std::uint32_t n, s.count32(8, "btf count"));
  std::vector<BpfBtf> btfs(n);
  for (auto& b : btfs) {
    std::uint64_t at = s.c.file_offset();
    b.id = s.c.u32();
    std::uint32_t size = s.c.u32();
    PK_TRY(s.ok("btf header"));
    if (size > s.c.remaining())
      return s.invalid(at, "btf {} of {} bytes runs past the end of the section", b.id, size);
    Bytes data = s.c.bytes(size);
    b.data.assign(data.begin(), data.end());
  }
  return btfs;
}

Expected<ClockData> parse_clock_data(Section& s) {
  ClockData d;
  std::uint64_t at = s.c.file_offset();
  d.version = s.c.u32();
  PK_TRY(s.ok("version"));
  if (d.version != 1) return s.invalid(at, "unsupported version {} (perf knows 1)", d.version);
  d.clockid = s.c.u32();
  d.tod_ns = s.c.u64();
  d.clockid_ns = s.c.u64();
  PK_TRY(s.ok("clock data"));
  return d;
}

Expected<std::vector<PmuCaps>> parse_pmu_caps(Section& s) {
  PK_ASSIGN(std::uint32_t n, s.count32(4 + kMinString, "pmu count"));
  std::vector<PmuCaps> pmus(n);
  for (auto& p : pmus) {
    PK_ASSIGN(p.caps, capability_list(s));
    PK_ASSIGN(p.pmu_name, s.string("pmu name"));
  }
  return pmus;
}

// Parses the fixed-size and string features; false if `id` is not one of them.
Expected<bool> parse_simple(Section& s, std::uint32_t id, Features& f) {
  auto str = [&](std::optional<std::string>& field, std::string_view what) -> Status {
    PK_ASSIGN(field, s.string(what));
    return ok();
  };
  switch (id) {
    case kFeatHostname:
      PK_TRY(str(f.hostname, "hostname"));
      break;
    case kFeatOsrelease:
      PK_TRY(str(f.osrelease, "os release"));
      break;
    case kFeatVersion:
      PK_TRY(str(f.version, "version"));
      break;
    case kFeatArch:
      PK_TRY(str(f.arch, "arch"));
      break;
    case kFeatCpudesc:
      PK_TRY(str(f.cpudesc, "cpu description"));
      break;
    case kFeatCpuid:
      PK_TRY(str(f.cpuid, "cpuid"));
      break;
    case kFeatNrcpus: {
      NrCpus n;
      n.available = s.c.u32();
      n.online = s.c.u32();
      PK_TRY(s.ok("cpu counts"));
      f.nrcpus = n;
      break;
    }
    case kFeatTotalMem:
      f.total_mem_kb = s.c.u64();
      PK_TRY(s.ok("total memory"));
      break;
    case kFeatSampleTime: {
      SampleTime t;
      t.first_ns = s.c.u64();
      t.last_ns = s.c.u64();
      PK_TRY(s.ok("sample times"));
      f.sample_time = t;
      break;
    }
    case kFeatClockid:
      f.clockid_res_ns = s.c.u64();
      PK_TRY(s.ok("clock resolution"));
      break;
    case kFeatDirFormat:
      f.dir_format = s.c.u64();
      PK_TRY(s.ok("directory version"));
      break;
    case kFeatCompressed: {
      CompressionInfo ci;
      ci.version = s.c.u32();
      ci.type = s.c.u32();
      ci.level = s.c.u32();
      ci.ratio = s.c.u32();
      ci.mmap_len = s.c.u32();
      PK_TRY(s.ok("compression parameters"));
      f.compressed = ci;
      break;
    }
    case kFeatBranchStack:
      f.branch_stack = true;
      break;
    case kFeatStat:
      f.stat = true;
      break;
    case kFeatTracingData: {
      Bytes all = s.c.rest();
      f.tracing_data.emplace(all.begin(), all.end());
      break;
    }
    default:
      return false;
  }
  return true;
}

template <class T>
Status assign(std::optional<T>& field, Expected<T> v) {
  if (!v) return std::move(v).error();
  field = std::move(*v);
  return ok();
}

Status parse_known(Section& s, std::uint32_t id, Features& f) {
  PK_ASSIGN(bool simple, parse_simple(s, id, f));
  if (simple) return ok();
  switch (id) {
    case kFeatBuildId:
      return assign(f.build_id, parse_build_ids(s));
    case kFeatCmdline:
      return assign(f.cmdline, string_list(s, "command line argument"));
    case kFeatEventDesc:
      return assign(f.event_desc, parse_event_desc(s));
    case kFeatCpuTopology:
      return assign(f.cpu_topology, parse_cpu_topology(s, f.nrcpus));
    case kFeatNumaTopology:
      return assign(f.numa_topology, parse_numa(s));
    case kFeatPmuMappings:
      return assign(f.pmu_mappings, parse_pmu_mappings(s));
    case kFeatGroupDesc:
      return assign(f.group_desc, parse_group_desc(s));
    case kFeatAuxtrace:
      return assign(f.auxtrace, parse_auxtrace(s));
    case kFeatCache:
      return assign(f.cache, parse_cache(s));
    case kFeatMemTopology:
      return assign(f.mem_topology, parse_mem_topology(s));
    case kFeatBpfProgInfo:
      return assign(f.bpf_prog_info, parse_bpf_prog_info(s));
    case kFeatBpfBtf:
      return assign(f.bpf_btf, parse_bpf_btf(s));
    case kFeatCpuPmuCaps:
      return assign(f.cpu_pmu_caps, capability_list(s));
    case kFeatClockData:
      return assign(f.clock_data, parse_clock_data(s));
    case kFeatHybridTopology: {
      PK_ASSIGN(std::uint32_t n, s.count32(2 * kMinString, "node count"));
      std::vector<HybridNode> nodes(n);
      for (auto& node : nodes) {
        PK_ASSIGN(node.pmu_name, s.string("pmu name"));
        PK_ASSIGN(node.cpus, s.string("cpu list"));
      }
      f.hybrid_topology = std::move(nodes);
      return ok();
    }
    case kFeatPmuCaps:
      return assign(f.pmu_caps, parse_pmu_caps(s));
    default:
      return s.invalid(s.c.file_offset(), "no parser for this feature");
  }
}

}  // namespace

Expected<std::string> read_header_string(Cursor& c, std::string_view what) {
  std::uint64_t at = c.file_offset();
  std::uint32_t len = c.u32();
  if (c.failed())
    return make_error("offset {:#x}: length of {} runs past the end at {:#x}", at, what,
                      c.file_offset() + c.remaining());
  if (len > c.remaining()) {
    c.fail();
    return make_error("offset {:#x}: {} of {} bytes runs past the end at {:#x}", at, what, len,
                      c.file_offset() + c.remaining());
  }
  return std::string(c_string(c.bytes(len)));
}

Status parse_feature(std::uint32_t id, Bytes data, bool swap, std::uint64_t file_offset,
                     Features& out) {
  if (id == kFeatReserved || id >= kFeatLastKnown) {
    std::erase_if(out.unknown, [&](const FeatureData& d) { return d.id == id; });
    out.unknown.push_back(FeatureData{id, {data.begin(), data.end()}});
    return ok();
  }
  out.trailing.erase(id);
  Section s(id, data, swap, file_offset);
  PK_TRY(parse_known(s, id, out));
  if (s.c.failed()) return s.truncated("data");
  if (!s.c.at_end()) {
    Bytes rest = s.c.rest();
    out.trailing[id].assign(rest.begin(), rest.end());
  }
  return ok();
}

Expected<Features> parse_features(std::span<const FeatureBlob> blobs, bool swap) {
  Features f;
  for (const auto& b : blobs) PK_TRY(parse_feature(b.id, b.data, swap, b.offset, f));
  return f;
}

CpuTopologyView perf_cpu_topology_view(Bytes section, bool swap, std::uint32_t nr_cpus) {
  // perf counts each string of the lists as padded to 64 bytes, whatever the
  // writer did, and compares that count with the section size.
  Cursor c(section, swap);
  std::uint64_t counted = 0;
  for (int list = 0; list < 2 && c.ok(); ++list) {
    std::uint32_t n = c.u32();
    counted += 4;
    for (std::uint32_t i = 0; i < n && c.ok(); ++i) {
      std::uint32_t len = c.u32();
      std::string_view str = c_string(c.bytes(len));
      counted += 4 + align_up(str.size() + 1, 64);
    }
  }
  CpuTopologyView v;
  v.cpu_ids = c.ok() && section.size() > counted;
  v.dies = v.cpu_ids && section.size() > counted + std::uint64_t{nr_cpus} * 8;
  return v;
}

Status name_events_from_event_desc(const FeatureBlob& event_desc, bool swap, EventSet& events) {
  Features f;
  PK_TRY(parse_feature(kFeatEventDesc, event_desc.data, swap, event_desc.offset, f));
  const auto& desc = f.event_desc->events;
  for (std::size_t i = 0; i < desc.size() && i < events.size(); ++i)
    if (events[i].name.empty() && !desc[i].name.empty()) events[i].name = desc[i].name;
  return ok();
}

void name_events_by_default(EventSet& events) {
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].name.empty()) events[i].name = default_event_name(events[i].attr);
}

bool Features::has(std::uint32_t id) const {
  switch (id) {
    case kFeatTracingData:
      return tracing_data.has_value();
    case kFeatBuildId:
      return build_id.has_value();
    case kFeatHostname:
      return hostname.has_value();
    case kFeatOsrelease:
      return osrelease.has_value();
    case kFeatVersion:
      return version.has_value();
    case kFeatArch:
      return arch.has_value();
    case kFeatNrcpus:
      return nrcpus.has_value();
    case kFeatCpudesc:
      return cpudesc.has_value();
    case kFeatCpuid:
      return cpuid.has_value();
    case kFeatTotalMem:
      return total_mem_kb.has_value();
    case kFeatCmdline:
      return cmdline.has_value();
    case kFeatEventDesc:
      return event_desc.has_value();
    case kFeatCpuTopology:
      return cpu_topology.has_value();
    case kFeatNumaTopology:
      return numa_topology.has_value();
    case kFeatBranchStack:
      return branch_stack;
    case kFeatPmuMappings:
      return pmu_mappings.has_value();
    case kFeatGroupDesc:
      return group_desc.has_value();
    case kFeatAuxtrace:
      return auxtrace.has_value();
    case kFeatStat:
      return stat;
    case kFeatCache:
      return cache.has_value();
    case kFeatSampleTime:
      return sample_time.has_value();
    case kFeatMemTopology:
      return mem_topology.has_value();
    case kFeatClockid:
      return clockid_res_ns.has_value();
    case kFeatDirFormat:
      return dir_format.has_value();
    case kFeatBpfProgInfo:
      return bpf_prog_info.has_value();
    case kFeatBpfBtf:
      return bpf_btf.has_value();
    case kFeatCompressed:
      return compressed.has_value();
    case kFeatCpuPmuCaps:
      return cpu_pmu_caps.has_value();
    case kFeatClockData:
      return clock_data.has_value();
    case kFeatHybridTopology:
      return hybrid_topology.has_value();
    case kFeatPmuCaps:
      return pmu_caps.has_value();
    default:
      return std::any_of(unknown.begin(), unknown.end(),
                         [&](const FeatureData& d) { return d.id == id; });
  }
}

std::vector<std::uint32_t> Features::ids() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t id = 1; id < kFeatLastKnown; ++id)
    if (has(id)) out.push_back(id);
  for (const auto& u : unknown) out.push_back(u.id);
  return out;
}

}  // namespace perfkit::perfdata
