#include "capture/record_options.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <initializer_list>
#include <optional>

#include "abi/perf_event.h"
#include "base/bytes.h"
#include "base/text.h"

namespace perfkit::capture {

using namespace perfkit::abi;

Expected<CallGraphOptions> parse_call_graph(std::string_view text) {
  CallGraphOptions o;
  auto parts = split(text, ',');
  std::string_view mode = parts[0];
  if (mode == "fp") {
    o.mode = CallGraphMode::kFp;
  } else if (mode == "dwarf") {
    o.mode = CallGraphMode::kDwarf;
  } else if (mode == "lbr") {
    o.mode = CallGraphMode::kLbr;
  } else if (mode == "no") {
    o.mode = CallGraphMode::kNone;
  } else {
    return make_error("unknown --call-graph mode '{}' (fp, dwarf[,size], lbr or no)", text);
  }
  if (parts.size() > 2 || (parts.size() == 2 && o.mode != CallGraphMode::kDwarf))
    return make_error("--call-graph '{}': only dwarf takes a size", text);
  if (parts.size() == 2) {
    std::uint64_t size = 0;
    if (!parse_u64(parts[1], size, 10) || size == 0)
      return make_error("--call-graph '{}': bad dump size '{}'", text, parts[1]);
    size = align_up(size, 8);
    // The kernel caps the user stack dump below 64 KiB (USHRT_MAX rounded down).
    if (size > 65528) return make_error("--call-graph '{}': size is limited to 65528", text);
    o.dump_size = static_cast<std::uint32_t>(size);
  }
  return o;
}

namespace {

struct ClockName {
  std::string_view name;
  int id;
};
constexpr std::array<ClockName, 9> kClocks = {{
    {"monotonic", CLOCK_MONOTONIC},
    {"monotonic_raw", CLOCK_MONOTONIC_RAW},
    {"realtime", CLOCK_REALTIME},
    {"boottime", CLOCK_BOOTTIME},
    {"tai", CLOCK_TAI},
    {"mono", CLOCK_MONOTONIC},
    {"raw", CLOCK_MONOTONIC_RAW},
    {"real", CLOCK_REALTIME},
    {"boot", CLOCK_BOOTTIME},
}};

constexpr std::array<std::string_view, 24> kRegs = {
    "AX", "BX", "CX", "DX", "SI", "DI", "BP",  "SP",  "IP",  "FLAGS", "CS",  "SS",
    "DS", "ES", "FS", "GS", "R8", "R9", "R10", "R11", "R12", "R13",   "R14", "R15",
};
// perf's PERF_REGS_MASK for x86-64: every general register but DS/ES/FS/GS.
constexpr std::uint64_t kDefaultRegs = 0xff0fffULL;

struct BranchMode {
  std::string_view name;
  std::uint64_t bits;
};
constexpr std::array<BranchMode, 15> kBranchModes = {{
    {"u", kBranchUser},
    {"k", kBranchKernel},
    {"hv", kBranchHv},
    {"any", kBranchAny},
    {"any_call", kBranchAnyCall},
    {"any_ret", kBranchAnyReturn},
    {"ind_call", kBranchIndCall},
    {"abort_tx", kBranchAbortTx},
    {"in_tx", kBranchInTx},
    {"no_tx", kBranchNoTx},
    {"cond", kBranchCond},
    {"ind_jmp", kBranchIndJump},
    {"call", kBranchCall},
    {"save_type", kBranchTypeSave},
    {"stack", kBranchCallStack},
}};

}  // namespace

Expected<int> parse_clockid(std::string_view text) {
  std::int64_t n = 0;
  if (parse_i64(text, n)) return static_cast<int>(n);
  std::string_view t = text;
  if (t.size() > 6 && iequals(t.substr(0, 6), "CLOCK_")) t.remove_prefix(6);
  for (const auto& c : kClocks)
    if (iequals(t, c.name)) return c.id;
  return make_error(
      "unknown clockid '{}' (monotonic, monotonic_raw, realtime, boottime, tai, or a number)",
      text);
}

std::string_view clockid_name(int clockid) {
  switch (clockid) {
    case CLOCK_MONOTONIC:
      return "CLOCK_MONOTONIC";
    case CLOCK_MONOTONIC_RAW:
      return "CLOCK_MONOTONIC_RAW";
    case CLOCK_REALTIME:
      return "CLOCK_REALTIME";
    case CLOCK_BOOTTIME:
      return "CLOCK_BOOTTIME";
    case CLOCK_TAI:
      return "CLOCK_TAI";
    default:
      return "";
  }
}

std::string_view reg_name(unsigned bit) { return bit < kRegs.size() ? kRegs[bit] : ""; }

Expected<std::uint64_t> parse_regs(std::string_view text, bool intr) {
  if (trim(text).empty()) return kDefaultRegs;
  std::uint64_t mask = 0;
  for (auto name : split(text, ',')) {
    name = trim(name);
    bool found = false;
    for (unsigned i = 0; i < kRegs.size(); ++i)
      if (iequals(name, kRegs[i])) {
        mask |= 1ULL << i;
        found = true;
      }
    // XMM registers (two bits each from bit 32) exist only for interrupt regs.
    if (!found && intr && name.size() > 3 && iequals(name.substr(0, 3), "xmm")) {
      std::uint64_t n = 0;
      if (parse_u64(name.substr(3), n, 10) && n < 16) {
        mask |= 3ULL << (32 + 2 * n);
        found = true;
      }
    }
    if (!found)
      return make_error("unknown register '{}' (use '{}=?' to list them)", name,
                        intr ? "--intr-regs" : "--user-regs");
  }
  return mask;
}

Expected<std::uint64_t> parse_branch_filter(std::string_view text) {
  std::uint64_t mode = 0;
  for (auto name : split(text, ',')) {
    name = trim(name);
    bool found = false;
    for (const auto& m : kBranchModes)
      if (name == m.name) {
        mode |= m.bits;
        found = true;
      }
    if (!found)
      return make_error(
          "unknown branch filter '{}' (any, any_call, any_ret, ind_call, ind_jmp, "
          "call, cond, abort_tx, in_tx, no_tx, stack, save_type, u, k, hv)",
          name);
  }
  // perf: with only privilege levels given, sample any branch.
  const std::uint64_t plm = kBranchUser | kBranchKernel | kBranchHv;
  if ((mode & ~plm) == 0) mode = kBranchAny;
  return mode;
}

Expected<std::uint64_t> parse_size(std::string_view text) {
  text = trim(text);
  if (text.empty()) return make_error("empty size");
  std::uint64_t mult = 1;
  char last = text.back();
  switch (last) {
    case 'B':
    case 'b':
      mult = 1;
      break;
    case 'K':
    case 'k':
      mult = 1ULL << 10;
      break;
    case 'M':
    case 'm':
      mult = 1ULL << 20;
      break;
    case 'G':
    case 'g':
      mult = 1ULL << 30;
      break;
    default:
      last = 0;
  }
  std::uint64_t v = 0;
  if (!parse_u64(last ? text.substr(0, text.size() - 1) : text, v, 10))
    return make_error("bad size '{}' (a number with an optional B, K, M or G)", text);
  return v * mult;
}

Expected<std::uint32_t> parse_mmap_pages(std::string_view text, std::size_t page_size) {
  text = trim(text);
  std::uint64_t pages = 0;
  if (!parse_u64(text, pages, 10)) {
    auto bytes = parse_size(text);
    if (!bytes) return make_error("bad -m value '{}' (pages, or a size like 512K)", text);
    pages = (*bytes + page_size - 1) / page_size;
  }
  if (pages == 0) return make_error("bad -m value '{}': at least one page", text);
  pages = std::bit_ceil(pages);
  if (pages > (1ULL << 30)) return make_error("-m '{}' is too large", text);
  return static_cast<std::uint32_t>(pages);
}

Expected<unsigned> parse_synth(std::string_view text) {
  auto is = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == y;
           });
  };
  // perf's parse_synth_opt: "no" and "all" end the list where they stand;
  // an unknown part spoils it unless one of those comes after.
  bool bad = false;
  unsigned parts = 0;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view p = text.substr(at, comma - at);
    at = comma + 1;
    if (is(p, "no") || is(p, "none")) return 0u;
    if (is(p, "all")) return kSynthAll;
    if (is(p, "task"))
      parts |= kSynthTask;
    else if (is(p, "mmap"))
      parts |= kSynthTask | kSynthMmap;
    else if (is(p, "cgroup"))
      parts |= kSynthCgroup;
    else
      bad = true;
  }
  if (bad) return make_error("Invalid synth option: {}", text);
  return parts;
}

namespace {

// perf's parse_tag_value: the first tag of `tags` found in `text` must
// follow its leading digits; the value is scaled by it. nullopt otherwise.
std::optional<std::uint64_t> tag_value(std::string_view text,
                                       std::initializer_list<std::pair<char, std::uint64_t>> tags) {
  for (const auto& [tag, mult] : tags) {
    const std::size_t at = text.find(tag);
    if (at == std::string_view::npos) continue;
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    std::uint64_t v = 0;
    if (digits != at || !parse_u64(text.substr(0, digits), v, 10) || v > UINT64_MAX / mult)
      return std::nullopt;
    return v * mult;
  }
  return std::nullopt;
}

}  // namespace

Expected<SwitchOutput> parse_switch_output(std::string_view text) {
  SwitchOutput s;
  if (text == "signal") {
    s.signal = true;
  } else if (auto size = tag_value(
                 text, {{'B', 1}, {'K', 1ULL << 10}, {'M', 1ULL << 20}, {'G', 1ULL << 30}})) {
    s.size = *size;
  } else if (auto time = tag_value(text, {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}})) {
    s.time_s = static_cast<unsigned>(std::min<std::uint64_t>(*time, UINT32_MAX));
  }
  if (!s.enabled())
    return make_error(
        "--switch-output '{}': expected signal, a size (B, K, M, G) or a time "
        "(s, m, h, d)",
        text);
  return s;
}

Expected<ControlOptions> parse_control(std::string_view text) {
  ControlOptions c;
  auto bad = [&] {
    return make_error("--control '{}': expected fifo:ctl-fifo[,ack-fifo] or fd:ctl-fd[,ack-fd]",
                      text);
  };
  if (text.starts_with("fifo:")) {
    auto parts = split(text.substr(5), ',');
    if (parts.size() > 2 || parts[0].empty()) return bad();
    c.ctl_fifo = std::string(parts[0]);
    if (parts.size() == 2) c.ack_fifo = std::string(parts[1]);
    return c;
  }
  if (text.starts_with("fd:")) {
    auto parts = split(text.substr(3), ',');
    std::uint64_t fd = 0;
    if (parts.size() > 2 || !parse_u64(parts[0], fd, 10)) return bad();
    c.ctl_fd = static_cast<int>(fd);
    if (parts.size() == 2) {
      if (!parse_u64(parts[1], fd, 10)) return bad();
      c.ack_fd = static_cast<int>(fd);
    }
    return c;
  }
  return bad();
}

}  // namespace perfkit::capture
