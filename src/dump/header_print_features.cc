// perf 6.1's text for each header feature (tools/perf/util/header.c print_*).
#include "dump/header_print_features.h"

#include <bit>
#include <ctime>
#include <map>

#include "abi/event_names.h"
#include "abi/names.h"
#include "dump/header_print.h"
#include "perfdata/feature_bpf.h"

namespace perfkit::dump {

using namespace perfkit::abi;
using namespace perfkit::perfdata;

namespace {

// perf's sizes of the sections it hides without -I.
bool full_only(std::uint32_t id) {
  return id == kFeatCpuTopology || id == kFeatNumaTopology || id == kFeatCache ||
         id == kFeatMemTopology || id == kFeatHybridTopology;
}

template <class T>
const T& or_empty(const std::optional<T>& v) {
  static const T empty{};
  return v ? *v : empty;
}

// perf's unit_number__scnprintf: divides by 1024 while the result stays above 1.
std::string unit_number(std::uint64_t n) {
  static constexpr char kUnits[] = "BKMG";
  int i = 0;
  while (n / 1024 > 1 && i < 3) {
    n /= 1024;
    ++i;
  }
  return fmt::format("{}{}", n, kUnits[i]);
}

// perf's bitmap_scnprintf into its 100-byte buffer: ranges of set bits.
std::string bitmap_ranges(const MemoryNode& n) {
  // The next set bit at or after `bit`, or n.size; zero words are skipped.
  auto next_set = [&](std::uint64_t bit) {
    while (bit < n.size && bit / 64 < n.set.size()) {
      std::uint64_t word = n.set[bit / 64] >> (bit % 64);
      if (word) return std::min(n.size, bit + static_cast<std::uint64_t>(std::countr_zero(word)));
      bit = (bit / 64 + 1) * 64;
    }
    return n.size;
  };
  auto next_clear = [&](std::uint64_t bit) {
    while (bit < n.size && bit / 64 < n.set.size()) {
      std::uint64_t word = ~n.set[bit / 64] >> (bit % 64);
      if (word) return std::min(n.size, bit + static_cast<std::uint64_t>(std::countr_zero(word)));
      bit = (bit / 64 + 1) * 64;
    }
    return std::min(bit, n.size);
  };
  std::string out;
  for (std::uint64_t bit = next_set(0); bit < n.size && out.size() < 100;) {
    std::uint64_t end = next_clear(bit) - 1;
    if (!out.empty()) out += ',';
    out += end == bit ? fmt::format("{}", bit) : fmt::format("{}-{}", bit, end);
    bit = next_set(end + 1);
  }
  if (out.size() > 99) out.resize(99);
  return out;
}

std::uint64_t bitmap_weight(const MemoryNode& n) {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < n.set.size(); ++i) {
    std::uint64_t word = n.set[i];
    std::uint64_t first = i * 64;
    if (first >= n.size) break;
    if (n.size - first < 64) word &= (std::uint64_t{1} << (n.size - first)) - 1;
    w += static_cast<std::uint64_t>(std::popcount(word));
  }
  return w;
}

std::string_view clockid_name(std::uint32_t clockid) {
  switch (clockid) {
    case 1:
      return "monotonic";
    case 4:
      return "monotonic_raw";
    case 0:
      return "realtime";
    case 7:
      return "boottime";
    case 11:
      return "tai";
    default:
      return "(not found)";
  }
}

// perf_attr_check: attrs with bits perf 6.1 does not know make EVENT_DESC unreadable.
bool perf_knows_attr(const EventAttr& a) {
  constexpr std::uint64_t kKnownFlags = (std::uint64_t{1} << 38) - 1;
  if ((a.flags & ~kKnownFlags) || a.reserved_2 || a.reserved_3) return false;
  if (a.sample_type & ~(kSampleMax - 1)) return false;
  if (a.read_format & ~(kFormatMax - 1)) return false;
  constexpr std::uint64_t kBranchMax = std::uint64_t{1} << 19;
  if ((a.sample_type & kSampleBranchStack) && (a.branch_sample_type & ~(kBranchMax - 1)))
    return false;
  return true;
}

void print_caps(std::string_view pmu, const std::vector<PmuCapability>& caps, FdWriter& out) {
  if (caps.empty()) {
    out.print("# {} pmu capabilities: not available\n", pmu);
    return;
  }
  out.print("# {} pmu capabilities: ", pmu);
  const char* sep = "";
  for (const auto& c : caps) {
    out.print("{}{}={}", sep, c.name, c.value);
    sep = ", ";
  }
  out.print("\n");
}

}  // namespace

void FeaturePrinter::print(const FeatureBlob& blob, FdWriter& out) const {
  const std::uint32_t id = blob.id;
  if (full_only(id) && !full) {
    out.print("# {} info available, use -I to display\n", feature_name(id));
    return;
  }
  switch (id) {
    case kFeatHostname:
      return string_line("hostname", f.hostname, id, out);
    case kFeatOsrelease:
      return string_line("os release", f.osrelease, id, out);
    case kFeatVersion:
      return string_line("perf version", f.version, id, out);
    case kFeatArch:
      return string_line("arch", f.arch, id, out);
    case kFeatCpudesc:
      return string_line("cpudesc", f.cpudesc, id, out);
    case kFeatCpuid:
      return string_line("cpuid", f.cpuid, id, out);
    case kFeatNrcpus:
      out.print("# nrcpus online : {}\n", or_empty(f.nrcpus).online);
      out.print("# nrcpus avail : {}\n", or_empty(f.nrcpus).available);
      return;
    case kFeatTotalMem:
      out.print("# total memory : {} kB\n", f.total_mem_kb.value_or(0));
      return;
    case kFeatCmdline:
      return cmdline(out);
    case kFeatEventDesc:
      return event_desc(out);
    case kFeatCpuTopology:
      return cpu_topology(blob, out);
    case kFeatNumaTopology:
      return numa_topology(out);
    case kFeatBranchStack:
      out.print("# contains samples with branch stack\n");
      return;
    case kFeatPmuMappings:
      return pmu_mappings(out);
    case kFeatGroupDesc:
      return group_desc(out);
    case kFeatAuxtrace:
      out.print("# contains AUX area data (e.g. instruction trace)\n");
      return;
    case kFeatStat:
      out.print("# contains stat data\n");
      return;
    case kFeatCache:
      return cache(out);
    case kFeatSampleTime:
      return sample_time(out);
    case kFeatMemTopology:
      return mem_topology(out);
    case kFeatClockid:
      out.print("# clockid frequency: {} MHz\n", f.clockid_res_ns.value_or(0) * 1000);
      return;
    case kFeatDirFormat:
      // perf reads the version only for a perf.data directory; of a single
      // file it prints 0 (and reads no section after it).
      out.print("# directory data version : {}\n", f.dir_format.value_or(0));
      return;
    case kFeatBpfProgInfo:
      return bpf_prog_info(out);
    case kFeatBpfBtf:
      return bpf_btf(out);
    case kFeatCompressed: {
      const auto& c = or_empty(f.compressed);
      out.print("# compressed : {}, level = {}, ratio = {}\n", c.type == 1 ? "Zstd" : "Unknown",
                static_cast<std::int32_t>(c.level), static_cast<std::int32_t>(c.ratio));
      return;
    }
    case kFeatCpuPmuCaps:
      return print_caps("cpu", or_empty(f.cpu_pmu_caps), out);
    case kFeatClockData:
      return clock_data(out);
    case kFeatHybridTopology:
      out.print("# hybrid cpu system:\n");
      for (const auto& n : or_empty(f.hybrid_topology))
        out.print("# {} cpu list : {}\n", n.pmu_name, n.cpus);
      return;
    case kFeatPmuCaps:
      return pmu_caps(out);
    default:
      return;  // TRACING_DATA and BUILD_ID print nothing
  }
}

void FeaturePrinter::string_line(std::string_view label, const std::optional<std::string>& v,
                                 std::uint32_t id, FdWriter& out) const {
  // A string perf could not read is a NULL pointer, which printf shows so.
  bool null = !v || failed.count(id);
  out.print("# {} : {}\n", label, null ? std::string_view("(null)") : std::string_view(*v));
}

void FeaturePrinter::cmdline(FdWriter& out) const {
  out.print("# cmdline : ");
  for (const auto& arg : or_empty(f.cmdline)) {
    std::string_view rest = arg;
    for (auto q = rest.find('\''); q != std::string_view::npos; q = rest.find('\'')) {
      out.print("{}\\'", rest.substr(0, q));
      rest.remove_prefix(q + 1);
    }
    out.print("{} ", rest);
  }
  out.print("\n");
}

void FeaturePrinter::event_desc(FdWriter& out) const {
  bool readable = f.event_desc && !failed.count(kFeatEventDesc);
  if (readable)
    for (const auto& e : f.event_desc->events) readable = readable && perf_knows_attr(e.attr);
  if (!readable) {
    out.print("# event desc: not available or unable to read\n");
    return;
  }
  for (const auto& e : f.event_desc->events) {
    if (e.attr.size == 0) break;  // perf's end-of-list marker
    out.print("# event : name = {}, ", e.name);
    if (!e.ids.empty()) {
      out.print(", id = {{");
      for (std::size_t i = 0; i < e.ids.size(); ++i) out.print("{} {}", i ? "," : "", e.ids[i]);
      out.print(" }}");
    }
    // perf 6.1 reads 128 bytes of each attr: config3 is not its to print.
    EventAttr a = e.attr;
    a.config3 = 0;
    for_each_attr_field(a, [&](std::string_view name, std::string_view value) {
      out.print(", {} = {}", name, value);
    });
    out.print("\n");
  }
}

void FeaturePrinter::cpu_topology(const FeatureBlob& blob, FdWriter& out) const {
  const CpuTopology& t = or_empty(f.cpu_topology);
  // perf sized its per-cpu table by NRCPUS, and decides from its own count of
  // the section's bytes whether the ids are there.
  const std::uint32_t nr_cpus = or_empty(f.nrcpus).available;
  const CpuTopologyView view = perf_cpu_topology_view(blob.data, swapped, nr_cpus);
  const bool dies = view.dies && !t.die_cpus_lists.empty();
  for (const auto& s : t.package_cpus_lists) out.print("# sibling sockets : {}\n", s);
  if (dies)
    for (const auto& s : t.die_cpus_lists) out.print("# sibling dies    : {}\n", s);
  for (const auto& s : t.core_cpus_lists) out.print("# sibling threads : {}\n", s);
  if (!t.has_cpu_ids || !view.cpu_ids || failed.count(kFeatCpuTopology)) {
    out.write(dies ? "# Core ID, Die ID and Socket ID information is not available\n"
                   : "# Core ID and Socket ID information is not available\n");
    return;
  }
  std::size_t n = std::min<std::size_t>(t.cpus.size(), nr_cpus);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = t.cpus[i];
    if (dies)
      out.print("# CPU {}: Core ID {}, Die ID {}, Socket ID {}\n", i, c.core_id, c.die_id,
                c.socket_id);
    else
      out.print("# CPU {}: Core ID {}, Socket ID {}\n", i, c.core_id, c.socket_id);
  }
}

void FeaturePrinter::numa_topology(FdWriter& out) const {
  for (const auto& n : or_empty(f.numa_topology)) {
    out.print("# node{} meminfo  : total = {} kB, free = {} kB\n", n.node, n.mem_total_kb,
              n.mem_free_kb);
    out.print("# node{} cpu list : {}\n", n.node, normalize_cpu_list(n.cpus));
  }
}

void FeaturePrinter::pmu_mappings(FdWriter& out) const {
  const auto& pmus = or_empty(f.pmu_mappings);
  if (pmus.empty()) {
    out.print("# pmu mappings: not available\n");
    return;
  }
  const char* sep = "# pmu mappings: ";
  for (const auto& p : pmus) {
    out.print("{}{} = {}", sep, p.name, p.type);
    sep = ", ";
  }
  out.print("\n");
}

void FeaturePrinter::group_desc(FdWriter& out) const {
  // perf rebuilds the groups on its event list from the descriptions, then
  // prints each leader of more than one member with its members.
  const auto& groups = or_empty(f.group_desc);
  const std::size_t n = events.size();
  std::vector<std::size_t> leader(n);
  std::vector<std::uint32_t> members(n, 1);
  std::vector<std::string> group_name(n);
  for (std::size_t i = 0; i < n; ++i) leader[i] = i;
  std::size_t g = 0, left = 0, current = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (g < groups.size() && i == groups[g].leader_idx) {
      leader[i] = i;
      if (groups[g].name != "{anon_group}") group_name[i] = groups[g].name;
      members[i] = groups[g].nr_members;
      if (left > 0) break;  // perf: "invalid group desc", keeping what it set
      current = i;
      left = groups[g].nr_members ? groups[g].nr_members - 1 : 0;
      ++g;
    } else if (left) {
      leader[i] = current;
      --left;
    }
  }
  std::uint32_t rest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = events[i].name.empty() ? default_event_name(events[i].attr) : events[i].name;
    if (leader[i] == i && members[i] > 1) {
      out.print("# group: {}{{{}", group_name[i], name);
      rest = members[i] - 1;
    } else if (rest) {
      out.print(",{}", name);
      if (--rest == 0) out.print("}}\n");
    }
  }
}

void FeaturePrinter::cache(FdWriter& out) const {
  out.print("# CPU cache info:\n");
  for (const auto& l : or_empty(f.cache).levels)
    out.print("#  L{} {:<15} {:>8} [{}]\n", l.level, l.type, l.size, l.map);
}

void FeaturePrinter::sample_time(FdWriter& out) const {
  const SampleTime& t = or_empty(f.sample_time);
  auto usec = [](std::uint64_t ns) {
    return fmt::format("{}.{:06}", ns / 1000000000, ns % 1000000000 / 1000);
  };
  out.print("# time of first sample : {}\n", usec(t.first_ns));
  out.print("# time of last sample : {}\n", usec(t.last_ns));
  double ms = static_cast<double>(t.last_ns - t.first_ns) / 1e6;
  out.print("# sample duration : {:10.3f} ms\n", ms);
}

void FeaturePrinter::mem_topology(FdWriter& out) const {
  const MemTopology& m = or_empty(f.mem_topology);
  out.print("# memory nodes (nr {}, block size {:#x}):\n",
            static_cast<std::int32_t>(m.nodes.size()), m.block_size);
  for (const auto& n : m.nodes)
    out.print("#  {:>3} [{}]: {}\n", n.node, unit_number(m.block_size * bitmap_weight(n)),
              bitmap_ranges(n));
}

void FeaturePrinter::clock_data(FdWriter& out) const {
  if (!f.clock_data || failed.count(kFeatClockData)) {
    out.print("# reference time disabled\n");
    return;
  }
  const ClockData& c = *f.clock_data;
  std::time_t tod_sec = static_cast<std::time_t>(c.tod_ns / 1000000000);
  int tod_usec = static_cast<int>(c.tod_ns % 1000000000 / 1000);
  std::string when = "<error>";
  std::tm tm{};
  if (::localtime_r(&tod_sec, &tm)) {
    char date[64];
    std::strftime(date, sizeof date, "%F %T", &tm);
    when = fmt::format("{}.{:06}", date, tod_usec);
  }
  auto name = clockid_name(c.clockid);
  out.print("# clockid: {} ({})\n", name, c.clockid);
  out.print("# reference time: {} = {}.{:06} (TOD) = {}.{:09} ({})\n", when,
            static_cast<std::int64_t>(tod_sec), tod_usec,
            static_cast<std::int64_t>(c.clockid_ns / 1000000000), c.clockid_ns % 1000000000, name);
}

void FeaturePrinter::bpf_prog_info(FdWriter& out) const {
  // perf does not read BPF sections of a file from the other byte order; it
  // keeps programs and BTF by id (the first of an id wins) and prints by id.
  if (swapped || !f.bpf_prog_info) return;
  std::map<std::uint32_t, BpfProgSummary> progs;
  for (const auto& p : *f.bpf_prog_info) {
    auto s = summarize_bpf_prog(p, swapped);
    if (s) progs.emplace(s->id, std::move(*s));
  }
  std::map<std::uint32_t, const BpfBtf*> btfs;
  for (const auto& b : or_empty(f.bpf_btf)) btfs.emplace(b.id, &b);
  for (const auto& [id, s] : progs) {
    std::uint32_t subs = s.nr_jited_ksyms;
    if (subs != s.nr_prog_tags || subs != s.nr_jited_func_lens) continue;
    const BpfBtf* btf = nullptr;
    if (s.btf_id) {
      auto it = btfs.find(s.btf_id);
      if (it != btfs.end()) btf = it->second;
    }
    if (subs == 1) {
      out.print("# bpf_prog_info {}: {} addr {:#x} size {}\n", id, bpf_prog_name(s, 0, btf),
                s.jited_ksyms[0], s.jited_func_lens[0]);
      continue;
    }
    out.print("# bpf_prog_info {}:\n", id);
    for (std::uint32_t i = 0; i < subs; ++i)
      out.print("# \tsub_prog {}: {} addr {:#x} size {}\n", i, bpf_prog_name(s, i, btf),
                s.jited_ksyms[i], s.jited_func_lens[i]);
  }
}

void FeaturePrinter::bpf_btf(FdWriter& out) const {
  if (swapped || !f.bpf_btf) return;
  std::map<std::uint32_t, bool> ids;
  for (const auto& b : *f.bpf_btf) ids.emplace(b.id, true);
  for (const auto& [id, _] : ids) out.print("# btf info of id {}\n", id);
}

void FeaturePrinter::pmu_caps(FdWriter& out) const {
  for (const auto& p : or_empty(f.pmu_caps)) print_caps(p.pmu_name, p.caps, out);
}

}  // namespace perfkit::dump
