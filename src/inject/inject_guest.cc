#include "inject/inject_guest.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <unordered_set>

#include "abi/event_names.h"
#include "abi/perf_event.h"
#include "inject/inject_buildid.h"
#include "perfdata/features.h"
#include "perfdata/record_stream.h"
#include "record/encode.h"
#include "record/records.h"
#include "record/sample.h"

namespace perfkit::inject {

using namespace perfkit::abi;

namespace {

constexpr std::uint64_t kNoId = ~0ULL;                 // perf's sample->id without one
constexpr std::uint16_t kKsymbolOol = 2;               // PERF_RECORD_KSYMBOL_TYPE_OOL
constexpr std::size_t kIndexMax = (0xffff - 16) / 48;  // entries per ID_INDEX (perf's max_nr)

// The side-band records perf's guest session passes on, and before which
// its host session injects the guest's due.
bool sideband_type(std::uint32_t type) {
  switch (type) {
    case kRecordMmap:
    case kRecordMmap2:
    case kRecordComm:
    case kRecordFork:
    case kRecordExit:
    case kRecordLost:
    case kRecordSwitch:
    case kRecordSwitchCpuWide:
    case kRecordKsymbol:
    case kRecordTextPoke:
      return true;
    default:
      return false;
  }
}

// (of KSYMBOLs, out of line code only: no BPF)
bool injected_type(const record::RecordView& v) {
  if (!sideband_type(v.type)) return false;
  if (v.type != kRecordKsymbol) return true;
  auto k = record::parse_ksymbol(v);
  return k && k->ksym_type == kKsymbolOol;
}

// sscanf(comm, "CPU %u/KVM", &vcpu) > 0: the VCPU a QEMU thread runs.
bool vcpu_of_comm(std::string_view comm, unsigned long& vcpu) {
  if (!comm.starts_with("CPU")) return false;
  std::string rest(comm.substr(3));
  const char* p = rest.c_str();
  while (*p == ' ' || (*p >= '\t' && *p <= '\r')) ++p;
  char* end = nullptr;
  vcpu = std::strtoul(p, &end, 10);
  return end != p && (*p == '+' || *p == '-' || (*p >= '0' && *p <= '9'));
}

TscConversion tsc_conversion(const record::TimeConvRecord& t) {
  TscConversion c;
  c.time_shift = t.time_shift, c.time_mult = t.time_mult, c.time_zero = t.time_zero;
  c.time_cycles = t.time_cycles, c.time_mask = t.time_mask;
  c.cap_user_time_zero = t.cap_user_time_zero, c.cap_user_time_short = t.cap_user_time_short;
  return c;
}

}  // namespace

Expected<GuestData> parse_guest_data(std::string_view arg) {
  const auto bad = [] {
    return make_error(
        "--guest-data option requires guest perf.data file name, guest machine PID, and "
        "optionally guest timestamp offset, and guest timestamp scale factor, separated by "
        "commas.");
  };
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const std::size_t comma = arg.find(',', at);
    parts.emplace_back(arg.substr(at, comma - at));
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  if (parts.size() < 2) return bad();
  GuestData g;
  g.path = parts[0];
  // (strtoul and strtoull with base 0, as perf: 0x.. and 0.. too)
  g.machine_pid = static_cast<std::uint32_t>(std::strtoul(parts[1].c_str(), nullptr, 0));
  if (!g.machine_pid) return bad();
  if (parts.size() > 2) g.time_offset = std::strtoull(parts[2].c_str(), nullptr, 0);
  if (parts.size() > 3) {
    g.time_scale = std::strtod(parts[3].c_str(), nullptr);
    if (g.time_scale == 0) return bad();
  }
  return g;
}

std::uint64_t TscConversion::to_tsc(std::uint64_t ns) const {
  if (!time_mult) return ns;
  const std::uint64_t t = ns - time_zero;
  const std::uint64_t quot = t / time_mult, rem = t % time_mult;
  return (quot << time_shift) + (rem << time_shift) / time_mult;
}

std::uint64_t TscConversion::to_time(std::uint64_t tsc) const {
  if (cap_user_time_short) tsc = time_cycles + ((tsc - time_cycles) & time_mask);
  const std::uint64_t quot = tsc >> time_shift;
  const std::uint64_t rem = tsc & ((1ULL << time_shift) - 1);
  return time_zero + quot * time_mult + ((rem * time_mult) >> time_shift);
}

Expected<std::unique_ptr<GuestInjector>> GuestInjector::create(const perfdata::Reader& host,
                                                               const std::string& host_path,
                                                               const GuestData& g,
                                                               const std::string& guestmount) {
  std::unique_ptr<GuestInjector> in(new GuestInjector());
  in->g_ = g;
  in->host_ = &host;
  PK_ASSIGN(auto guest, perfdata::Reader::open(g.path));
  if (guest->swapped() || host.swapped())
    return make_error("--guest-data: {}: recordings of the other byte order are not supported",
                      guest->swapped() ? g.path : host_path);
  PK_TRY(in->read_host(host_path));
  PK_TRY(in->read_guest(*guest));
  PK_TRY(in->map_ids(host, *guest));
  if (!guestmount.empty() && !in->build_ids_.empty()) {
    // perf's findnew_machine for the guest's build-ids: its directory
    const std::string dir = guestmount + "/" + std::to_string(g.machine_pid);
    if (::access(dir.c_str(), R_OK) != 0)
      return make_error("Can't access file {}: Failed to add guest build IDs", dir);
  }
  return in;
}

Status GuestInjector::read_host(const std::string& host_path) {
  PK_ASSIGN(auto host, perfdata::Reader::open(host_path));
  perfdata::ReadRecord rec;
  for (;;) {
    PK_ASSIGN(bool got, host->next(rec));
    if (!got) break;
    const record::RecordView& v = rec.view;
    if (v.type == kRecordFinishedInit) host_has_init_ = true;
    if (v.type == kRecordTimeConv && !host_has_tc_) {
      PK_ASSIGN(auto t, record::parse_time_conv(v));
      host_tc_ = tsc_conversion(t), host_has_tc_ = true;
    }
    if (v.type != kRecordComm) continue;
    PK_ASSIGN(auto c, record::parse_comm(v));
    unsigned long vcpu = 0;
    if (c.pid != g_.machine_pid || !vcpu_of_comm(c.comm, vcpu)) continue;
    if (vcpu > INT_MAX) return make_error("Invalid VCPU {}", vcpu);
    if (vcpus_.size() <= vcpu) vcpus_.resize(vcpu + 1);
    Vcpu& slot = vcpus_[vcpu];
    if (slot.tid && slot.tid != c.tid)
      return make_error("Fatal error: Two threads found with the same VCPU");
    slot.tid = c.tid;
    vcpu_of_tid_[c.tid] = static_cast<std::uint32_t>(vcpu);
  }
  if (vcpus_.empty()) return make_error("No VCPU threads found for pid {}", g_.machine_pid);
  return ok();
}

Status GuestInjector::read_guest(perfdata::Reader& guest) {
  const auto& events = guest.events();
  std::uint64_t dflt_id = 0;
  for (const auto& e : events.events())
    if (!e.ids.empty()) {
      dflt_id = e.ids.front();
      break;
    }
  if (!dflt_id) return make_error("Guest data has no sample IDs");
  if (auto blob = guest.feature(kFeatBuildId)) {
    perfdata::Features f;
    PK_TRY(perfdata::parse_feature(kFeatBuildId, blob->data, false, blob->offset, f));
    if (f.build_id)
      for (const auto& b : f.build_id->entries)
        if (b.pid == perfdata::kHostKernelPid)
          build_ids_.push_back({b.misc, b.build_id, b.filename});
  }
  perfdata::RecordStreamOptions so;
  so.ordered = true;
  auto sink = [&](const perfdata::ReadRecord& rec, std::uint64_t) -> Status {
    const record::RecordView& v = rec.view;
    if (v.type == kRecordIdIndex) {
      PK_ASSIGN(auto ix, record::parse_id_index(v));
      for (std::uint64_t i = 0; i < ix.nr; ++i) {
        const auto e = ix.at(i);
        guest_id_cpu_[e.id] = static_cast<std::uint32_t>(e.cpu);
      }
    } else if (v.type == kRecordTimeConv) {
      PK_ASSIGN(auto t, record::parse_time_conv(v));
      guest_tc_ = tsc_conversion(t), guest_has_tc_ = true;
    } else if (v.type == kRecordHeaderBuildId) {
      PK_ASSIGN(auto b, record::parse_build_id(v));
      if (b.pid == perfdata::kHostKernelPid)
        build_ids_.push_back(
            {v.misc, {b.build_id.begin(), b.build_id.end()}, std::string(b.filename)});
    } else if (injected_type(v)) {
      // perf's sample defaults where the id sample has no such field
      Stored s;
      s.time = kNoId, s.id = kNoId, s.pid = s.tid = UINT32_MAX;
      const int idx = events.attr_index(v);
      std::size_t trailer = events[0].layout.trailer_size;  // perf's id_hdr_size
      if (idx >= 0) {
        const auto& layout = events[static_cast<std::size_t>(idx)].layout;
        const record::SampleId sid = record::decode_sample_id(v, layout);
        if (sid.present) {
          const std::uint64_t st = layout.sample_type;
          if (st & kSampleTid) s.pid = sid.pid, s.tid = sid.tid;
          if (st & kSampleTime) s.time = sid.time;
          if (st & kSampleIdentifier)
            s.id = sid.identifier;
          else if (st & kSampleId)
            s.id = sid.id;
          if (st & kSampleCpu) s.cpu = sid.cpu;
        }
        // (a synthesized record's zeroed id: perf's first id and id header size)
        if (s.id == 0)
          s.id = dflt_id;
        else if (int e = events.index_of_id(s.id); e >= 0)
          trailer = events[static_cast<std::size_t>(e)].layout.trailer_size;
      }
      if ((trailer & 7) || (v.bytes.size() & 7) || trailer + kHeaderSize > v.bytes.size())
        return make_error("{}: offset {:#x}: bad id sample size {} for a record of {} bytes",
                          g_.path, v.offset, trailer, v.bytes.size());
      s.bytes.assign(v.bytes.begin(), v.bytes.end() - static_cast<std::ptrdiff_t>(trailer));
      stored_.push_back(std::move(s));
    }
    return ok();
  };
  PK_TRY(perfdata::process_records(guest, so, sink));
  // perf's guest_session__convert_time
  for (Stored& s : stored_) {
    if (!s.time) continue;
    std::uint64_t tsc = guest_tc_.cap_user_time_zero ? guest_tc_.to_tsc(s.time) : s.time;
    tsc -= g_.time_offset;
    tsc = static_cast<std::uint64_t>(static_cast<double>(tsc) / g_.time_scale);
    s.time = host_tc_.cap_user_time_zero ? host_tc_.to_time(tsc) : tsc;
  }
  return ok();
}

Status GuestInjector::map_ids(const perfdata::Reader& host, const perfdata::Reader& guest) {
  events_ = host.events();
  host_events_ = events_.size();
  if (!host_has_init_) return ok();  // (perf adds nothing before a FINISHED_INIT)
  std::unordered_set<std::uint64_t> used;
  std::uint64_t highest = 1;
  for (const auto& e : events_.events())
    for (std::uint64_t id : e.ids) used.insert(id), highest = std::max(highest, id);
  for (const auto& e : guest.events().events())
    for (std::uint64_t id : e.ids) {
      auto cpu = guest_id_cpu_.find(id);
      if (cpu == guest_id_cpu_.end() || cpu->second == UINT32_MAX) continue;
      do ++highest;
      while (!highest || used.count(highest));
      mapped_[id] = {highest, cpu->second};
    }
  for (const auto& e : guest.events().events()) {
    std::vector<std::uint64_t> ids;
    for (std::uint64_t id : e.ids) {
      auto m = mapped_.find(id);
      if (m == mapped_.end()) return make_error("Failed to find guest id {}", id);
      ids.push_back(m->second.host_id);
    }
    EventAttr attr = e.attr;
    attr.sample_type |= kSampleIdentifier;
    attr.set(kAttrExcludeHost, true);
    attr.set(kAttrExcludeGuest, false);
    events_.add(attr, std::move(ids));
    events_[events_.size() - 1].name = default_event_name(attr);
  }
  return ok();
}

std::vector<std::uint8_t> GuestInjector::id_index() const {
  struct Entry {
    std::uint64_t id, tid, vcpu;
  };
  std::unordered_map<std::uint64_t, std::uint32_t> vcpu_of_id;
  for (const auto& [guest_id, m] : mapped_) vcpu_of_id[m.host_id] = m.vcpu;
  std::vector<Entry> all;
  for (std::size_t e = host_events_; e < events_.size(); ++e)
    for (std::uint64_t id : events_[e].ids) {
      const std::uint32_t vcpu = vcpu_of_id[id];
      // (a VCPU the host has no thread for: tid 0, its events fail when they come)
      all.push_back({id, vcpu < vcpus_.size() ? vcpus_[vcpu].tid : 0, vcpu});
    }
  std::vector<std::uint8_t> out;
  for (std::size_t at = 0; at < all.size(); at += kIndexMax) {
    const std::size_t n = std::min(kIndexMax, all.size() - at);
    record::RecordBuilder b(kRecordIdIndex);
    b.u64(n);
    for (std::size_t i = at; i < at + n; ++i)
      // (idx 0, as perf's attrs read back have; cpu -1: per thread)
      b.u64(all[i].id).u64(0).u64(~0ULL).u64(all[i].tid);
    for (std::size_t i = at; i < at + n; ++i) b.u64(g_.machine_pid).u64(all[i].vcpu);
    b.finish_into(out);
  }
  return out;
}

void GuestInjector::track_switch(const perfdata::ReadRecord& rec) {
  const record::RecordView& v = rec.view;
  // perf's host__context_switch reads next_prev_pid and _tid: for a
  // per-thread SWITCH, the first words of its id sample (its own thread)
  if ((v.misc & kMiscSwitchOut) || v.bytes.size() < kHeaderSize + 8) return;
  const auto pid = load<std::uint32_t>(v.bytes.data() + kHeaderSize, false);
  const auto tid = load<std::uint32_t>(v.bytes.data() + kHeaderSize + 4, false);
  if (pid != g_.machine_pid) return;
  auto vcpu = vcpu_of_tid_.find(tid);
  if (vcpu == vcpu_of_tid_.end()) return;
  const int idx = host_->events().attr_index(v);
  if (idx < 0) return;
  const auto& layout = host_->events()[static_cast<std::size_t>(idx)].layout;
  const record::SampleId sid = record::decode_sample_id(v, layout);
  if (sid.present && (layout.sample_type & kSampleCpu)) vcpus_[vcpu->second].cpu = sid.cpu;
}

Status GuestInjector::before(const perfdata::ReadRecord& rec, std::uint64_t time,
                             perfdata::Writer& w) {
  const record::RecordView& v = rec.view;
  switch (v.type) {
    case kRecordFinishedInit:
      if (!host_has_init_ || ready_) return ok();
      buf_ = id_index();
      for (std::size_t at = 0; at < buf_.size();) {
        const auto size = load<std::uint16_t>(buf_.data() + at + 6, false);
        PK_TRY(w.write(Bytes(buf_.data() + at, size)));
        at += size;
      }
      ready_ = true;
      return inject_until(0, w);
    case kRecordFinishedRound:
      return inject_until(last_time_, w);
    default:
      break;
  }
  if (time != perfdata::kNoTimestamp && v.type < kRecordUserTypeStart) last_time_ = time;
  if (!sideband_type(v.type)) return ok();
  if (v.type == kRecordSwitch || v.type == kRecordSwitchCpuWide) track_switch(rec);
  // (perf's sample time without one is all ones: everything is due)
  return inject_until(time, w);
}

Status GuestInjector::inject_until(std::uint64_t limit, perfdata::Writer& w) {
  if (!ready_) return ok();
  while (next_ < stored_.size() && stored_[next_].time <= limit)
    PK_TRY(write_stored(stored_[next_++], w));
  return ok();
}

Status GuestInjector::finish(perfdata::Writer& w) { return inject_until(~0ULL, w); }

Status GuestInjector::write_stored(const Stored& s, perfdata::Writer& w) {
  auto m = mapped_.find(s.id);
  if (m == mapped_.end()) return make_error("Guest event with unknown id {}", s.id);
  std::uint32_t cpu = s.cpu;
  if (cpu != UINT32_MAX) {
    if (cpu >= vcpus_.size()) return make_error("Guest event with unknown VCPU {}", cpu);
    cpu = vcpus_[cpu].cpu;  // the host CPU the VCPU runs on
  }
  const auto type = load<std::uint32_t>(s.bytes.data(), false);
  auto misc = load<std::uint16_t>(s.bytes.data() + 4, false);
  const std::uint16_t mode =
      (misc & kMiscCpumodeMask) & kMiscUser ? kMiscGuestUser : kMiscGuestKernel;
  misc = static_cast<std::uint16_t>((misc & ~kMiscCpumodeMask) | mode);
  const int e = events_.index_of_id(m->second.host_id);
  const auto& layout = events_[static_cast<std::size_t>(e)].layout;
  record::SampleId sid;
  sid.sample_type = layout.sample_type;
  sid.pid = s.pid, sid.tid = s.tid, sid.time = s.time, sid.cpu = cpu;
  sid.id = sid.stream_id = sid.identifier = m->second.host_id;
  sid.present = true;
  record::RecordBuilder b(std::move(buf_), type, misc, false);
  b.bytes(Bytes(s.bytes.data() + kHeaderSize, s.bytes.size() - kHeaderSize)).sample_id(sid, layout);
  buf_ = b.finish();
  return w.write(Bytes(buf_));
}

void GuestInjector::add_build_ids(std::vector<std::uint8_t>& table) const {
  for (const GuestBuildId& b : build_ids_) {
    const std::uint16_t mode = b.misc & kMiscCpumodeMask;
    const bool kernel = (mode == kMiscKernel || mode == kMiscGuestKernel) && b.name != "[vdso]";
    encode_build_id_entry(table, 0, kernel ? kMiscGuestKernel : kMiscGuestUser,
                          static_cast<std::int32_t>(g_.machine_pid),
                          elf::BuildId::from_bytes(Bytes(b.id)), b.name, false);
  }
}

}  // namespace perfkit::inject
