#include "inject/inject_buildid.h"

#include <algorithm>
#include <cctype>

#include "abi/perf_event.h"
#include "elf/vdso.h"
#include "record/sample.h"

namespace perfkit::inject {

using namespace perfkit::abi;

void encode_build_id_entry(std::vector<std::uint8_t>& out, std::uint32_t type, std::uint16_t misc,
                           std::int32_t pid, const elf::BuildId& id, std::string_view name,
                           bool swap, bool sized) {
  constexpr std::size_t kNameAlign = 64;
  std::size_t len = align_up(name.size() + 1, kNameAlign);
  append<std::uint32_t>(out, type, swap);
  append<std::uint16_t>(out, static_cast<std::uint16_t>(sized ? misc | kMiscExtReserved : misc),
                        swap);  // BUILD_ID_SIZE
  append<std::uint16_t>(out, static_cast<std::uint16_t>(kHeaderSize + 4 + 24 + len), swap);
  append<std::int32_t>(out, pid, swap);
  std::uint8_t bid[24] = {};
  std::copy(id.bytes.begin(), id.bytes.begin() + id.size, bid);
  bid[20] = sized ? id.size : 0;
  append_bytes(out, Bytes(bid, 24));
  std::size_t at = out.size();
  out.resize(at + len, 0);
  std::copy(name.begin(), name.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
}

KnownBuildIds parse_known_build_ids(std::string_view list) {
  std::vector<std::string> items;  // perf's strlist: in byte order, each once
  for (std::size_t at = 0; at <= list.size();) {
    std::size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) items.emplace_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  KnownBuildIds known;
  for (const std::string& item : items) {
    std::size_t id_at = item.find_first_not_of(" \t\n\v\f\r");
    if (id_at == std::string::npos) continue;
    const std::size_t space = item.find(' ', id_at);
    if (space == std::string::npos) continue;
    // perf measures the id from the item's start, spaces before it included.
    if (space % 2 != 0 || space > 40) continue;
    const std::string_view hex = std::string_view(item).substr(id_at, space - id_at);
    auto id = elf::BuildId::from_hex(hex.substr(0, hex.size() & ~std::size_t{1}));
    if (!id || (hex.size() % 2 && !std::isxdigit(static_cast<unsigned char>(hex.back())))) continue;
    std::size_t name_at = item.find_first_not_of(" \t\n\v\f\r", space);
    known.emplace(item.substr(name_at == std::string::npos ? item.size() : name_at), *id);
  }
  return known;
}

BuildIdInjector::BuildIdInjector(const perfdata::Reader& in, bool all, KnownBuildIds known)
    : in_(in),
      all_(all),
      known_(std::move(known)),
      symbolizer_(std::make_unique<symbol::Symbolizer>(symbol::SymbolizerOptions{})),
      machine_(std::make_unique<machine::Machine>(*symbolizer_)) {
  // perf's session reads the input's build-id table first: its DSOs come
  // first in the table written (in its order), then the others as met.
  // (With -b perf's records come with the hits whatever the table says.)
  auto feat = all ? in.feature(kFeatBuildId) : std::nullopt;
  if (!feat) return;
  Bytes b = feat->data;
  for (std::size_t at = 0; at + kHeaderSize <= b.size();) {
    record::RecordView v = record::view_header(b.data() + at, in.swapped());
    if (v.size < kHeaderSize || at + v.size > b.size()) break;
    v.bytes = b.subspan(at, v.size);
    v.offset = feat->offset + at;
    if (auto e = record::parse_build_id(v)) {
      const std::uint16_t mode = v.cpumode();
      machine_->add_build_id(e->filename, elf::BuildId::from_bytes(e->build_id),
                             mode == kMiscKernel || mode == kMiscGuestKernel);
    }
    at += v.size;
  }
}

BuildIdInjector::~BuildIdInjector() = default;

Expected<std::vector<std::uint8_t>> BuildIdInjector::observe(const record::RecordView& r,
                                                             bool swap_output) {
  std::vector<std::uint8_t> out;
  if (all_ && (r.type == kRecordMmap || r.type == kRecordMmap2)) return observe_map(r, swap_output);
  if (all_ && r.type == kRecordSample) return out;  // hits do not matter then
  if (r.type != kRecordSample) {
    if (r.type < kRecordUserTypeStart) PK_TRY(machine_->apply(r));
    if (r.type == kRecordHeaderBuildId) {
      PK_ASSIGN(auto b, record::parse_build_id(r));
      std::uint16_t mode = r.cpumode();
      machine_->add_build_id(b.filename, elf::BuildId::from_bytes(b.build_id),
                             mode == kMiscKernel || mode == kMiscGuestKernel);
    }
    return out;
  }
  int idx = in_.events().attr_index(r);
  if (idx < 0) return out;
  PK_TRY(record::decode_sample(r, in_.events()[static_cast<std::size_t>(idx)].layout, sample_));
  bool tid = sample_.sample_type & kSampleTid;
  machine::Thread& t = machine_->findnew_thread(tid ? static_cast<std::int32_t>(sample_.pid) : -1,
                                                tid ? static_cast<std::int32_t>(sample_.tid) : -1);
  const machine::Map* m = machine_->find_map(t, static_cast<std::uint8_t>(r.cpumode()), sample_.ip);
  if (!m || m->dso->hit) return out;
  machine::Dso& d = *m->dso;
  d.hit = true;
  if (d.kind == machine::DsoKind::kNoDso || m->identity) return out;
  return record_for(d, static_cast<std::uint16_t>(r.cpumode()), swap_output);
}

std::vector<std::uint8_t> BuildIdInjector::record_for(machine::Dso& d, std::uint16_t misc,
                                                      bool swap_output) {
  std::vector<std::uint8_t> out;
  if (auto k = known_.find(d.long_name); k != known_.end()) {
    d.build_id = k->second;  // --known-build-ids: in the table, no record
    return out;
  }
  if (d.build_id.empty()) {
    if (d.kind == machine::DsoKind::kKernel) {
      if (auto id = elf::kernel_build_id()) d.build_id = *id;
      return out;  // perf has the kernel's from the start: no record for it
    }
    if (d.kind == machine::DsoKind::kVdso && d.long_name == "[vdso]") {
      d.build_id = elf::own_vdso_build_id();  // perf's own vdso, as it reads it
    } else {
      auto id = elf::read_build_id(d.long_name);
      if (!id || id->empty()) return out;
      d.build_id = *id;
    }
    if (d.build_id.empty()) return out;
  } else if (d.kind == machine::DsoKind::kKernel) {
    return out;
  }
  encode_build_id_entry(out, kRecordHeaderBuildId, misc, -1, d.build_id, d.long_name, swap_output,
                        !all_);
  return out;
}

// --buildid-all: the map's DSO, the first time a map names it.
Expected<std::vector<std::uint8_t>> BuildIdInjector::observe_map(const record::RecordView& r,
                                                                 bool swap_output) {
  PK_TRY(machine_->apply(r));
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t start = 0;
  if (r.type == kRecordMmap) {
    PK_ASSIGN(auto m, record::parse_mmap(r));
    pid = m.pid, tid = m.tid, start = m.start;
  } else {
    PK_ASSIGN(auto m, record::parse_mmap2(r));
    pid = m.pid, tid = m.tid, start = m.start;
  }
  const auto mode = static_cast<std::uint8_t>(r.cpumode());
  machine::Thread& t =
      machine_->findnew_thread(static_cast<std::int32_t>(pid), static_cast<std::int32_t>(tid));
  const machine::Map* m = machine_->find_map(t, mode, start);
  if (!m || m->dso->hit || m->dso->kind == machine::DsoKind::kNoDso || m->identity)
    return std::vector<std::uint8_t>{};
  m->dso->hit = true;
  return record_for(*m->dso, mode, swap_output);
}

std::vector<std::uint8_t> BuildIdInjector::feature_table(bool swap_output) const {
  std::vector<std::uint8_t> out;
  for (const auto& dso : machine_->dsos()) {
    machine::Dso d = dso;
    // perf lists [vdso] hit or not, with the build-id of its own vdso.
    if (d.kind == machine::DsoKind::kVdso && d.build_id.empty() && d.long_name == "[vdso]")
      d.build_id = elf::own_vdso_build_id();
    if (d.build_id.empty()) continue;
    if (!d.hit && d.kind != machine::DsoKind::kVdso) continue;
    bool kernel = d.kind == machine::DsoKind::kKernel || d.kind == machine::DsoKind::kModule;
    encode_build_id_entry(out, 0, kernel ? kMiscKernel : kMiscUser, -1, d.build_id,
                          d.kind == machine::DsoKind::kVdso ? d.short_name : d.long_name,
                          swap_output);
  }
  return out;
}

}  // namespace perfkit::inject
