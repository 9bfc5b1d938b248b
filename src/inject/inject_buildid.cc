#include "inject/inject_buildid.h"

#include "abi/perf_event.h"
#include "elf/vdso.h"
#include "record/sample.h"

namespace perfkit::inject {

using namespace perfkit::abi;

void encode_build_id_entry(std::vector<std::uint8_t>& out, std::uint32_t type, std::uint16_t misc,
                           std::int32_t pid, const elf::BuildId& id, std::string_view name,
                           bool swap) {
  constexpr std::size_t kNameAlign = 64;
  std::size_t len = align_up(name.size() + 1, kNameAlign);
  append<std::uint32_t>(out, type, swap);
  append<std::uint16_t>(out, static_cast<std::uint16_t>(misc | kMiscExtReserved),
                        swap);  // BUILD_ID_SIZE
  append<std::uint16_t>(out, static_cast<std::uint16_t>(kHeaderSize + 4 + 24 + len), swap);
  append<std::int32_t>(out, pid, swap);
  std::uint8_t bid[24] = {};
  std::copy(id.bytes.begin(), id.bytes.begin() + id.size, bid);
  bid[20] = id.size;
  append_bytes(out, Bytes(bid, 24));
  std::size_t at = out.size();
  out.resize(at + len, 0);
  std::copy(name.begin(), name.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
}

BuildIdInjector::BuildIdInjector(const perfdata::Reader& in)
    : in_(in),
      symbolizer_(std::make_unique<symbol::Symbolizer>(symbol::SymbolizerOptions{})),
      machine_(std::make_unique<machine::Machine>(*symbolizer_)) {}

BuildIdInjector::~BuildIdInjector() = default;

Expected<std::vector<std::uint8_t>> BuildIdInjector::observe(const record::RecordView& r,
                                                             bool swap_output) {
  std::vector<std::uint8_t> out;
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
  if (d.build_id.empty()) {
    if (d.kind == machine::DsoKind::kKernel) {
      if (auto id = elf::kernel_build_id()) d.build_id = *id;
      return out;  // perf has the kernel's from the start: no record for it
    }
    auto id = elf::read_build_id(d.long_name);
    if (!id || id->empty()) return out;
    d.build_id = *id;
  } else if (d.kind == machine::DsoKind::kKernel) {
    return out;
  }
  encode_build_id_entry(out, kRecordHeaderBuildId, static_cast<std::uint16_t>(r.cpumode()), -1,
                        d.build_id, d.long_name, swap_output);
  return out;
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
