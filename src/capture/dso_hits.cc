#include "capture/dso_hits.h"

#include "abi/perf_event.h"

namespace perfkit::capture {

using namespace perfkit::abi;

namespace {

constexpr std::size_t kMaxPending = 1 << 20;

std::string_view record_string(Bytes rec, std::size_t offset) {
  if (rec.size() <= offset) return {};
  return c_string(rec.subspan(offset));
}

bool kernel_mode(std::uint16_t misc) {
  auto mode = misc & kMiscCpumodeMask;
  return mode == kMiscKernel || mode == kMiscGuestKernel;
}

}  // namespace

std::uint32_t DsoHits::dso_index(std::string_view filename, bool kernel) {
  // The kernel's map is named after its reference symbol; its DSO is the kernel.
  std::string name(filename);
  if (kernel && name.starts_with("[kernel.kallsyms]")) name = "[kernel.kallsyms]";
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  auto index = static_cast<std::uint32_t>(dsos_.size());
  dsos_.push_back({name, kernel, false});
  by_name_.emplace(std::move(name), index);
  return index;
}

void DsoHits::add_map(std::int32_t pid, bool kernel, std::uint64_t start, std::uint64_t len,
                      std::string_view filename) {
  Maps& maps = kernel ? kernel_maps_ : user_maps_[pid];
  const std::uint64_t end = start + len;
  // A new map replaces whatever it overlaps, as the kernel's mmap does.
  auto it = maps.lower_bound(start);
  if (it != maps.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > start) it = prev;
  }
  while (it != maps.end() && it->first < end) {
    if (it->first < start) {
      Map tail = it->second;
      it->second.end = start;
      if (tail.end > end) maps[end] = tail;
      ++it;
    } else if (it->second.end > end) {
      Map tail = it->second;
      it = maps.erase(it);
      maps[end] = tail;
      break;
    } else {
      it = maps.erase(it);
    }
  }
  maps[start] = Map{end, dso_index(filename, kernel)};
}

const DsoHits::Map* DsoHits::find(const Maps& maps, std::uint64_t ip) const {
  auto it = maps.upper_bound(ip);
  if (it == maps.begin()) return nullptr;
  --it;
  return ip < it->second.end ? &it->second : nullptr;
}

bool DsoHits::resolve(std::int32_t pid, bool kernel, std::uint64_t ip) {
  const Map* m = nullptr;
  if (kernel) {
    m = find(kernel_maps_, ip);
  } else {
    // A forked process uses its parent's maps until it maps its own.
    for (int depth = 0; !m && depth < 64; ++depth) {
      auto maps = user_maps_.find(pid);
      if (maps != user_maps_.end()) m = find(maps->second, ip);
      if (m) break;
      auto parent = parent_.find(pid);
      if (parent == parent_.end()) break;
      pid = parent->second;
    }
  }
  if (!m) return false;
  dsos_[m->dso].hit = true;
  return true;
}

void DsoHits::on_record(Bytes rec) {
  if (rec.size() < kHeaderSize) return;
  const std::uint32_t type = load<std::uint32_t>(rec.data(), false);
  const std::uint16_t misc = load<std::uint16_t>(rec.data() + 4, false);
  auto u32 = [&](std::size_t off) {
    return rec.size() >= off + 4 ? load<std::uint32_t>(rec.data() + off, false) : 0u;
  };
  auto u64 = [&](std::size_t off) {
    return rec.size() >= off + 8 ? load<std::uint64_t>(rec.data() + off, false) : 0ULL;
  };
  switch (type) {
    case kRecordSample: {
      const bool kernel = kernel_mode(misc);
      const std::uint64_t ip = u64(ip_offset_);
      const auto pid = static_cast<std::int32_t>(u32(ip_offset_ + 8));
      // Samples that never resolve (JIT code, hidden kernel maps) are not
      // kept without bound.
      if (!resolve(pid, kernel, ip) && pending_.size() < kMaxPending)
        pending_.push_back({pid, kernel, ip});
      break;
    }
    case kRecordMmap:
      add_map(static_cast<std::int32_t>(u32(8)), kernel_mode(misc), u64(16), u64(24),
              record_string(rec, 40));
      break;
    case kRecordMmap2:
      add_map(static_cast<std::int32_t>(u32(8)), kernel_mode(misc), u64(16), u64(24),
              record_string(rec, 72));
      break;
    case kRecordFork: {
      auto pid = static_cast<std::int32_t>(u32(8)), ppid = static_cast<std::int32_t>(u32(12));
      if (pid != ppid) parent_[pid] = ppid;
      break;
    }
    case kRecordComm:
      if (misc & kMiscCommExec) {
        auto pid = static_cast<std::int32_t>(u32(8));
        user_maps_.erase(pid);
        parent_.erase(pid);
      }
      break;
    default:
      break;
  }
}

void DsoHits::end_pass() {
  std::size_t kept = 0;
  for (const auto& p : pending_)
    if (!resolve(p.pid, p.kernel, p.ip)) pending_[kept++] = p;
  pending_.resize(kept);
}

}  // namespace perfkit::capture
