#include "abi/event_names.h"

#include <fmt/format.h>

#include <array>

namespace perfkit::abi {

namespace {

constexpr std::array<std::string_view, 10> kHardware = {
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "bus-cycles",
    "stalled-cycles-frontend",
    "stalled-cycles-backend",
    "ref-cycles",
};

constexpr std::array<std::string_view, 12> kSoftware = {
    "cpu-clock",        "task-clock",   "page-faults",  "context-switches",
    "cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
    "emulation-faults", "dummy",        "bpf-output",   "cgroup-switches",
};

constexpr std::array<std::string_view, 7> kCacheTypes = {
    "L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node",
};

constexpr std::array<std::string_view, 3> kOpLoad = {"load", "loads", "read"};
constexpr std::array<std::string_view, 3> kOpStore = {"store", "stores", "write"};
constexpr std::array<std::string_view, 4> kOpPrefetch = {"prefetch", "prefetches",
                                                         "speculative-read", "speculative-load"};
constexpr std::array<std::span<const std::string_view>, 3> kOps = {kOpLoad, kOpStore, kOpPrefetch};

constexpr std::array<std::string_view, 4> kResAccess = {"refs", "Reference", "ops", "access"};
constexpr std::array<std::string_view, 2> kResMiss = {"misses", "miss"};
constexpr std::array<std::span<const std::string_view>, 2> kResults = {kResAccess, kResMiss};

// Which ops each cache type supports (bit 0 load, 1 store, 2 prefetch).
constexpr std::array<unsigned, 7> kCacheOps = {
    0b111,  // L1-dcache
    0b101,  // L1-icache
    0b111,  // LLC
    0b011,  // dTLB
    0b001,  // iTLB
    0b001,  // branch
    0b111,  // node
};

}  // namespace

std::span<const std::string_view> hardware_event_names() { return kHardware; }
std::span<const std::string_view> software_event_names() { return kSoftware; }
std::span<const std::string_view> cache_type_names() { return kCacheTypes; }
std::span<const std::span<const std::string_view>> cache_op_names() { return kOps; }
std::span<const std::span<const std::string_view>> cache_result_names() { return kResults; }

bool cache_op_valid(unsigned type, unsigned op) {
  return type < kCacheOps.size() && op < 3 && (kCacheOps[type] & (1u << op));
}

std::string cache_event_name(std::uint64_t config) {
  unsigned type = config & 0xff, op = (config >> 8) & 0xff, res = (config >> 16) & 0xff;
  if (type >= kCacheTypes.size() || op >= kOps.size() || res >= kResults.size()) return {};
  if (!cache_op_valid(type, op)) return {};
  if (res == 0) return fmt::format("{}-{}", kCacheTypes[type], kOps[op][1]);
  return fmt::format("{}-{}-{}", kCacheTypes[type], kOps[op][0], kResults[res][0]);
}

std::string event_modifiers(const EventAttr& a) {
  std::string mods;
  bool exclude_guest_default = false;
  auto mod = [&](bool excluded, char c) {
    if (!excluded) mods += c;
  };
  if (a.has(kAttrExcludeKernel) || a.has(kAttrExcludeUser) || a.has(kAttrExcludeHv)) {
    mod(a.has(kAttrExcludeKernel), 'k');
    mod(a.has(kAttrExcludeUser), 'u');
    mod(a.has(kAttrExcludeHv), 'h');
    exclude_guest_default = true;
  }
  if (a.precise_ip()) {
    mods.append(a.precise_ip(), 'p');
    exclude_guest_default = true;
  }
  if (a.has(kAttrExcludeHost) || a.has(kAttrExcludeGuest) == exclude_guest_default) {
    mod(a.has(kAttrExcludeHost), 'H');
    mod(a.has(kAttrExcludeGuest), 'G');
  }
  return mods.empty() ? mods : ":" + mods;
}

std::string default_event_name(const EventAttr& a) {
  std::string base;
  switch (a.type) {
    case kTypeHardware:
      base = a.config < kHardware.size() ? std::string(kHardware[a.config])
                                         : fmt::format("unknown-hardware:{:#x}", a.config);
      break;
    case kTypeSoftware:
      base = a.config < kSoftware.size() ? std::string(kSoftware[a.config])
                                         : fmt::format("unknown-software:{:#x}", a.config);
      break;
    case kTypeHwCache:
      base = cache_event_name(a.config);
      if (base.empty()) base = "invalid-cache";
      break;
    case kTypeRaw:
      base = fmt::format("raw {:#x}", a.config);
      break;
    case kTypeBreakpoint: {
      base = fmt::format("mem:{:#x}:", a.config1);
      if (a.bp_type & 1) base += 'r';
      if (a.bp_type & 2) base += 'w';
      if (a.bp_type & 4) base += 'x';
      break;
    }
    case kTypeTracepoint:
      return "unknown tracepoint";
    default:
      return fmt::format("unknown attr type: {}", a.type);
  }
  return base + event_modifiers(a);
}

}  // namespace perfkit::abi
