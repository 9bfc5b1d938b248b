// Encoding of the typed header features (features.h) in perf's layouts.
#include "abi/names.h"
#include "perfdata/features.h"

namespace perfkit::perfdata {

using namespace perfkit::abi;

namespace {

// perf pads strings and build-id file names to this.
constexpr std::size_t kNameAlign = 64;

class Out {
 public:
  explicit Out(bool swap) : swap_(swap) {}
  Out& u16(std::uint16_t v) { return put(v); }
  Out& u32(std::uint32_t v) { return put(v); }
  Out& u64(std::uint64_t v) { return put(v); }
  Out& i32(std::int32_t v) { return put(static_cast<std::uint32_t>(v)); }
  Out& str(std::string_view s) {
    append_header_string(bytes, s, swap_);
    return *this;
  }
  Out& raw(Bytes b) {
    append_bytes(bytes, b);
    return *this;
  }
  Out& strings(const std::vector<std::string>& list) {
    u32(static_cast<std::uint32_t>(list.size()));
    for (const auto& s : list) str(s);
    return *this;
  }
  Out& caps(const std::vector<PmuCapability>& caps) {
    u32(static_cast<std::uint32_t>(caps.size()));
    for (const auto& c : caps) str(c.name).str(c.value);
    return *this;
  }
  bool swap() const { return swap_; }

  std::vector<std::uint8_t> bytes;

 private:
  template <class T>
  Out& put(T v) {
    append<T>(bytes, v, swap_);
    return *this;
  }
  bool swap_;
};

Status encode_build_ids(Out& o, const BuildIdTable& t) {
  for (const auto& e : t.entries) {
    if (e.build_id.size() > 20)
      return make_error("feature BUILD_ID: build-id of {} has {} bytes, more than 20", e.filename,
                        e.build_id.size());
    const bool keep = !e.stored_name.empty() && c_string(e.stored_name) == e.filename &&
                      e.stored_name.size() > e.filename.size();
    std::size_t name_len =
        keep ? e.stored_name.size() : align_up(e.filename.size() + 1, kNameAlign);
    std::size_t fixed = t.legacy_without_pid ? 32 : 36;
    std::size_t size = fixed + name_len;
    if (size > 0xffff)
      return make_error("feature BUILD_ID: file name of {} bytes is too long", e.filename.size());
    o.u32(0).u16(e.misc).u16(static_cast<std::uint16_t>(size));
    if (!t.legacy_without_pid) o.i32(e.pid);
    std::uint8_t area[24] = {};
    std::copy(e.build_id.begin(), e.build_id.end(), area);
    if (e.misc & kBuildIdMiscSize) area[20] = static_cast<std::uint8_t>(e.build_id.size());
    o.raw(Bytes(area, sizeof area));
    if (keep)
      o.raw(e.stored_name);
    else
      append_padded_string(o.bytes, e.filename, kNameAlign);
  }
  return ok();
}

Status encode_event_desc(Out& o, const EventDescList& d) {
  if (d.attr_size < kAttrSizeVer0)
    return make_error("feature EVENT_DESC: attr size {} is smaller than {}", d.attr_size,
                      kAttrSizeVer0);
  o.u32(static_cast<std::uint32_t>(d.events.size())).u32(d.attr_size);
  for (const auto& e : d.events) {
    std::size_t at = o.bytes.size();
    encode_attr(e.attr, d.attr_size, o.swap(), o.bytes);
    // The attr keeps its own size field (an older attr copied by inject keeps
    // its size); 0 means "the stored size", which perf requires to be non-zero.
    std::uint32_t own = e.attr.size ? e.attr.size : d.attr_size;
    store<std::uint32_t>(o.bytes.data() + at + 4, own, o.swap());
    o.u32(static_cast<std::uint32_t>(e.ids.size())).str(e.name);
    for (std::uint64_t id : e.ids) o.u64(id);
  }
  return ok();
}

void encode_cpu_topology(Out& o, const CpuTopology& t) {
  o.strings(t.package_cpus_lists).strings(t.core_cpus_lists);
  if (!t.has_cpu_ids) return;
  for (const auto& c : t.cpus) o.i32(c.core_id).i32(c.socket_id);
  if (t.die_cpus_lists.empty()) return;
  o.strings(t.die_cpus_lists);
  for (const auto& c : t.cpus) o.i32(c.die_id);
}

void encode_mem_topology(Out& o, const MemTopology& m) {
  o.u64(m.version).u64(m.block_size).u64(m.nodes.size());
  for (const auto& n : m.nodes) {
    o.u64(n.node).u64(n.size).u64(n.size);
    std::uint64_t words = n.size / 64 + (n.size % 64 != 0);
    for (std::uint64_t i = 0; i < words; ++i) o.u64(i < n.set.size() ? n.set[i] : 0);
  }
}

// Encodes the fixed-size and string features; false if `id` is not one of them.
bool encode_simple(Out& o, const Features& f, std::uint32_t id) {
  switch (id) {
    case kFeatHostname:
      o.str(*f.hostname);
      break;
    case kFeatOsrelease:
      o.str(*f.osrelease);
      break;
    case kFeatVersion:
      o.str(*f.version);
      break;
    case kFeatArch:
      o.str(*f.arch);
      break;
    case kFeatCpudesc:
      o.str(*f.cpudesc);
      break;
    case kFeatCpuid:
      o.str(*f.cpuid);
      break;
    case kFeatNrcpus:
      o.u32(f.nrcpus->available).u32(f.nrcpus->online);
      break;
    case kFeatTotalMem:
      o.u64(*f.total_mem_kb);
      break;
    case kFeatSampleTime:
      o.u64(f.sample_time->first_ns).u64(f.sample_time->last_ns);
      break;
    case kFeatClockid:
      o.u64(*f.clockid_res_ns);
      break;
    case kFeatDirFormat:
      o.u64(*f.dir_format);
      break;
    case kFeatCompressed: {
      const auto& c = *f.compressed;
      o.u32(c.version).u32(c.type).u32(c.level).u32(c.ratio).u32(c.mmap_len);
      break;
    }
    case kFeatClockData: {
      const auto& c = *f.clock_data;
      o.u32(c.version).u32(c.clockid).u64(c.tod_ns).u64(c.clockid_ns);
      break;
    }
    case kFeatBranchStack:
    case kFeatStat:
      break;
    case kFeatTracingData:
      o.raw(*f.tracing_data);
      break;
    case kFeatCmdline:
      o.strings(*f.cmdline);
      break;
    case kFeatCpuPmuCaps:
      o.caps(*f.cpu_pmu_caps);
      break;
    default:
      return false;
  }
  return true;
}

Status encode_known(Out& o, const Features& f, std::uint32_t id) {
  if (encode_simple(o, f, id)) return ok();
  switch (id) {
    case kFeatBuildId:
      return encode_build_ids(o, *f.build_id);
    case kFeatEventDesc:
      return encode_event_desc(o, *f.event_desc);
    case kFeatCpuTopology:
      encode_cpu_topology(o, *f.cpu_topology);
      break;
    case kFeatNumaTopology:
      o.u32(static_cast<std::uint32_t>(f.numa_topology->size()));
      for (const auto& n : *f.numa_topology)
        o.u32(n.node).u64(n.mem_total_kb).u64(n.mem_free_kb).str(n.cpus);
      break;
    case kFeatPmuMappings:
      o.u32(static_cast<std::uint32_t>(f.pmu_mappings->size()));
      for (const auto& p : *f.pmu_mappings) o.u32(p.type).str(p.name);
      break;
    case kFeatGroupDesc:
      o.u32(static_cast<std::uint32_t>(f.group_desc->size()));
      for (const auto& g : *f.group_desc) o.str(g.name).u32(g.leader_idx).u32(g.nr_members);
      break;
    case kFeatAuxtrace:
      o.u64(f.auxtrace->size());
      for (const auto& e : *f.auxtrace) o.u64(e.file_offset).u64(e.size);
      break;
    case kFeatCache:
      o.u32(f.cache->version).u32(static_cast<std::uint32_t>(f.cache->levels.size()));
      for (const auto& l : f.cache->levels)
        o.u32(l.level).u32(l.line_size).u32(l.sets).u32(l.ways).str(l.type).str(l.size).str(l.map);
      break;
    case kFeatMemTopology:
      encode_mem_topology(o, *f.mem_topology);
      break;
    case kFeatBpfProgInfo:
      o.u32(static_cast<std::uint32_t>(f.bpf_prog_info->size()));
      for (const auto& p : *f.bpf_prog_info) {
        o.u32(static_cast<std::uint32_t>(p.info.size()))
            .u32(static_cast<std::uint32_t>(p.data.size()))
            .u64(p.arrays);
        o.raw(p.info).raw(p.data);
      }
      break;
    case kFeatBpfBtf:
      o.u32(static_cast<std::uint32_t>(f.bpf_btf->size()));
      for (const auto& b : *f.bpf_btf)
        o.u32(b.id).u32(static_cast<std::uint32_t>(b.data.size())).raw(b.data);
      break;
    case kFeatHybridTopology:
      o.u32(static_cast<std::uint32_t>(f.hybrid_topology->size()));
      for (const auto& n : *f.hybrid_topology) o.str(n.pmu_name).str(n.cpus);
      break;
    case kFeatPmuCaps:
      o.u32(static_cast<std::uint32_t>(f.pmu_caps->size()));
      for (const auto& p : *f.pmu_caps) o.caps(p.caps).str(p.pmu_name);
      break;
    default:
      return make_error("feature #{}: no encoder", id);
  }
  return ok();
}

}  // namespace

void append_header_string(std::vector<std::uint8_t>& out, std::string_view s, bool swap) {
  std::size_t len = align_up(s.size() + 1, kNameAlign);
  append<std::uint32_t>(out, static_cast<std::uint32_t>(len), swap);
  append_padded_string(out, s, kNameAlign);
}

Expected<std::vector<std::uint8_t>> encode_feature(const Features& f, std::uint32_t id, bool swap) {
  if (!f.has(id)) {
    auto name = feature_name(id);
    return make_error("feature {} is not present",
                      name.empty() ? fmt::format("#{}", id) : std::string(name));
  }
  if (id == kFeatReserved || id >= kFeatLastKnown) {
    for (const auto& u : f.unknown)
      if (u.id == id) return u.bytes;
  }
  Out o(swap);
  PK_TRY(encode_known(o, f, id));
  if (auto t = f.trailing.find(id); t != f.trailing.end()) o.raw(t->second);
  return std::move(o.bytes);
}

Expected<std::vector<FeatureData>> encode_features(const Features& f, bool swap) {
  std::vector<FeatureData> out;
  for (std::uint32_t id : f.ids()) {
    PK_ASSIGN(auto bytes, encode_feature(f, id, swap));
    out.push_back(FeatureData{id, std::move(bytes)});
  }
  return out;
}

}  // namespace perfkit::perfdata
