#include "capture/event_spec.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "base/text.h"
#include "capture/event_terms.h"

namespace perfkit::capture {

using namespace perfkit::abi;

namespace {

constexpr std::array<SymbolicEvent, 22> kSymbolic = {{
    {"cpu-cycles", "cycles", kTypeHardware, 0},
    {"instructions", "", kTypeHardware, 1},
    {"cache-references", "", kTypeHardware, 2},
    {"cache-misses", "", kTypeHardware, 3},
    {"branch-instructions", "branches", kTypeHardware, 4},
    {"branch-misses", "", kTypeHardware, 5},
    {"bus-cycles", "", kTypeHardware, 6},
    {"stalled-cycles-frontend", "idle-cycles-frontend", kTypeHardware, 7},
    {"stalled-cycles-backend", "idle-cycles-backend", kTypeHardware, 8},
    {"ref-cycles", "", kTypeHardware, 9},
    {"cpu-clock", "", kTypeSoftware, 0},
    {"task-clock", "", kTypeSoftware, 1},
    {"page-faults", "faults", kTypeSoftware, 2},
    {"context-switches", "cs", kTypeSoftware, 3},
    {"cpu-migrations", "migrations", kTypeSoftware, 4},
    {"minor-faults", "", kTypeSoftware, 5},
    {"major-faults", "", kTypeSoftware, 6},
    {"alignment-faults", "", kTypeSoftware, 7},
    {"emulation-faults", "", kTypeSoftware, 8},
    {"dummy", "", kTypeSoftware, 9},
    {"bpf-output", "", kTypeSoftware, 10},
    {"cgroup-switches", "", kTypeSoftware, 11},
}};

// perf's spellings of the cache levels, ops and results (evsel__hw_cache*).
using Aliases = std::vector<std::string_view>;
const std::array<Aliases, 7> kCacheTypeAliases = {{
    {"L1-dcache", "l1-d", "l1d", "L1-data"},
    {"L1-icache", "l1-i", "l1i", "L1-instruction"},
    {"LLC", "L2"},
    {"dTLB", "d-tlb", "Data-TLB"},
    {"iTLB", "i-tlb", "Instruction-TLB"},
    {"branch", "branches", "bpu", "btb", "bpc"},
    {"node"},
}};
const std::array<Aliases, 3> kCacheOpAliases = {{
    {"load", "loads", "read"},
    {"store", "stores", "write"},
    {"prefetch", "prefetches", "speculative-read", "speculative-load"},
}};
const std::array<Aliases, 2> kCacheResultAliases = {{
    {"refs", "Reference", "ops", "access"},
    {"misses", "miss"},
}};
// Which ops each level supports (bit 0 read, 1 write, 2 prefetch), as perf's
// evsel__hw_cache_stat: L1I read+prefetch, ITLB and BPU read only.
constexpr std::array<unsigned, 7> kCacheOpsValid = {7, 5, 7, 7, 1, 1, 7};

// Length of the longest alias in `table` that prefixes `s` and ends at a '-'
// or the end of `s`; sets `index`. 0 if none.
template <std::size_t N>
std::size_t match_alias(std::string_view s, const std::array<Aliases, N>& table, unsigned& index) {
  std::size_t best = 0;
  for (unsigned i = 0; i < N; ++i)
    for (auto a : table[i]) {
      if (a.size() <= best || a.size() > s.size()) continue;
      if (!iequals(s.substr(0, a.size()), a)) continue;
      if (a.size() < s.size() && s[a.size()] != '-') continue;
      best = a.size();
      index = i;
    }
  return best;
}

constexpr std::string_view kModifierChars = "ukhpPGHSDIWeb";

}  // namespace

std::span<const SymbolicEvent> symbolic_events() { return kSymbolic; }

std::size_t EventList::group_size(std::size_t leader) const {
  std::size_t n = 0;
  for (const auto& e : events) n += e.leader == leader;
  return n;
}

std::optional<std::uint64_t> parse_cache_event(std::string_view name) {
  unsigned type = 0;
  std::size_t n = match_alias(name, kCacheTypeAliases, type);
  if (n == 0) return std::nullopt;
  std::string_view rest = name.substr(n);
  int op = -1, result = -1;
  for (int words = 0; !rest.empty(); ++words) {
    if (words == 2 || rest[0] != '-') return std::nullopt;
    rest.remove_prefix(1);
    unsigned idx = 0;
    std::size_t len = 0;
    if (op < 0 && (len = match_alias(rest, kCacheOpAliases, idx)) > 0) {
      op = static_cast<int>(idx);
    } else if (result < 0 && (len = match_alias(rest, kCacheResultAliases, idx)) > 0) {
      result = static_cast<int>(idx);
    } else {
      return std::nullopt;
    }
    rest.remove_prefix(len);
  }
  if (op < 0) op = 0;
  if (result < 0) result = 0;
  if (!(kCacheOpsValid[type] & (1u << op))) return std::nullopt;
  return type | (static_cast<std::uint64_t>(op) << 8) | (static_cast<std::uint64_t>(result) << 16);
}

namespace {

// Every name an event can be given, for suggestions.
std::vector<std::string> known_names(const EventSources& src, bool with_tracepoints) {
  std::vector<std::string> names;
  for (const auto& s : kSymbolic) {
    names.emplace_back(s.name);
    if (!s.alias.empty()) names.emplace_back(s.alias);
  }
  for (unsigned t = 0; t < kCacheTypeAliases.size(); ++t)
    for (unsigned op = 0; op < 3; ++op) {
      if (!(kCacheOpsValid[t] & (1u << op))) continue;
      names.push_back(fmt::format("{}-{}", kCacheTypeAliases[t][0], kCacheOpAliases[op][1]));
      names.push_back(fmt::format("{}-{}-misses", kCacheTypeAliases[t][0], kCacheOpAliases[op][0]));
    }
  if (src.pmus)
    for (const auto& p : src.pmus->pmus())
      for (const auto& e : p.events) {
        names.push_back(e.name);
        names.push_back(fmt::format("{}/{}/", p.name, e.name));
      }
  if (with_tracepoints && src.tracefs)
    for (const auto& tp : src.tracefs->list()) names.push_back(tp.full());
  return names;
}

}  // namespace

std::vector<std::string> suggest_events(std::string_view name, const EventSources& src,
                                        std::size_t max) {
  auto names = known_names(src, name.find(':') != std::string_view::npos);
  std::vector<std::pair<std::size_t, std::string>> scored;
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  for (auto& n : names) {
    std::size_t d = edit_distance(name, n);
    bool prefix =
        name.size() >= 3 && n.size() > name.size() && iequals(n.substr(0, name.size()), name);
    if (d <= limit || prefix) scored.emplace_back(prefix ? std::min(d, limit) : d, std::move(n));
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (auto& [d, n] : scored) {
    if (std::find(out.begin(), out.end(), n) != out.end()) continue;
    out.push_back(std::move(n));
    if (out.size() == max) break;
  }
  return out;
}

void group_all(EventList& list) {
  if (list.events.size() < 2) return;
  list.groups.clear();
  list.groups.push_back({"", 0, list.events.size()});
  for (auto& e : list.events) {
    e.leader = 0;
    e.group = 0;
  }
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, const EventSources& src, EventList& list)
      : text_(text), src_(src), list_(list) {}

  Status run();

 private:
  template <class... Args>
  Error fail(fmt::format_string<Args...> f, Args&&... args) const {
    return make_error("event syntax error: '{}': {}", text_,
                      fmt::format(f, std::forward<Args>(args)...));
  }
  Status parse_group(std::size_t& pos, std::string_view group_name);
  // Scans one event at `pos` (not a group); returns its text.
  Expected<std::string_view> scan_event(std::size_t& pos);
  Status add_event(std::string_view token);
  Expected<std::vector<EventSpec>> resolve(std::string_view token);
  Expected<std::vector<EventSpec>> resolve_plain(std::string_view base);
  Expected<std::vector<EventSpec>> resolve_with_terms(std::string_view head,
                                                      std::string_view terms);
  Expected<EventSpec> parse_breakpoint(std::string_view token);
  Error unknown_event(std::string_view name) const;
  Status apply_modifiers(std::string_view mods, EventSpec& e, bool group_level) const;

  std::string_view text_;
  const EventSources& src_;
  EventList& list_;
  int current_group_ = -1;
};

Status Parser::run() {
  if (trim(text_).empty()) return make_error("event syntax error: empty event list");
  std::size_t pos = 0;
  for (;;) {
    if (pos >= text_.size()) return fail("empty event after ','");
    std::size_t brace = text_.find_first_of("{,/}:", pos);
    if (brace != std::string_view::npos && text_[brace] == '{') {
      std::string_view name = text_.substr(pos, brace - pos);
      pos = brace;
      PK_TRY(parse_group(pos, name));
    } else {
      PK_ASSIGN(std::string_view token, scan_event(pos));
      PK_TRY(add_event(token));
    }
    if (pos == text_.size()) return ok();
    if (text_[pos] == '}') return fail("unbalanced '}}' at column {}", pos);
    if (text_[pos] != ',') return fail("expected ',' at column {}", pos);
    ++pos;
  }
}

Expected<std::string_view> Parser::scan_event(std::size_t& pos) {
  const std::size_t start = pos;
  std::string_view rest = text_.substr(pos);
  std::size_t end;
  if (rest.starts_with("mem:")) {
    end = text_.find_first_of(",{}", pos);
  } else {
    end = text_.find_first_of(",{}/", pos);
    if (end != std::string_view::npos && text_[end] == '/') {
      std::size_t close = text_.find('/', end + 1);
      if (close == std::string_view::npos)
        return fail("missing '/' closing the terms at column {}", end);
      end = text_.find_first_of(",{}/", close + 1);
      if (end != std::string_view::npos && text_[end] == '/')
        return fail("unexpected '/' at column {}", end);
    }
  }
  if (end == std::string_view::npos) end = text_.size();
  if (end < text_.size() && text_[end] == '{') return fail("unexpected '{{' at column {}", end);
  pos = end;
  std::string_view token = text_.substr(start, end - start);
  if (token.empty()) return fail("empty event at column {}", start);
  return token;
}

Status Parser::parse_group(std::size_t& pos, std::string_view group_name) {
  const std::size_t open = pos++;
  const std::size_t first = list_.events.size();
  current_group_ = static_cast<int>(list_.groups.size());
  list_.groups.push_back({std::string(group_name), first, 0});
  for (;;) {
    if (pos >= text_.size()) return fail("missing '}}' for the group opened at column {}", open);
    if (text_[pos] == '{') return fail("nested group at column {}", pos);
    if (text_[pos] == '}') return fail("empty event at column {}", pos);
    PK_ASSIGN(std::string_view token, scan_event(pos));
    PK_TRY(add_event(token));
    if (pos >= text_.size()) return fail("missing '}}' for the group opened at column {}", open);
    if (text_[pos] == '}') break;
    if (text_[pos] == '{') return fail("nested group at column {}", pos);
    ++pos;  // ','
  }
  ++pos;  // '}'
  current_group_ = -1;
  auto& g = list_.groups.back();
  g.nr_members = list_.events.size() - first;
  for (std::size_t i = first; i < list_.events.size(); ++i) list_.events[i].leader = first;
  if (pos < text_.size() && text_[pos] == ':') {
    std::size_t end = text_.find_first_of(",{}", pos);
    if (end == std::string_view::npos) end = text_.size();
    std::string_view mods = text_.substr(pos + 1, end - pos - 1);
    for (std::size_t i = first; i < list_.events.size(); ++i)
      PK_TRY(apply_modifiers(mods, list_.events[i], true));
    pos = end;
  }
  return ok();
}

Status Parser::add_event(std::string_view token) {
  PK_ASSIGN(auto specs, resolve(token));
  for (auto& e : specs) {
    e.leader = list_.events.size();
    e.group = current_group_;
    list_.events.push_back(std::move(e));
  }
  return ok();
}

bool modifier_like(std::string_view s) {
  return !s.empty() && s.find_first_not_of(kModifierChars) == std::string_view::npos;
}

Expected<std::vector<EventSpec>> Parser::resolve(std::string_view token) {
  if (token.starts_with("mem:")) {
    PK_ASSIGN(EventSpec e, parse_breakpoint(token));
    return std::vector<EventSpec>{std::move(e)};
  }
  std::vector<EventSpec> specs;
  std::string_view mods;
  if (auto slash = token.find('/'); slash != std::string_view::npos) {
    std::size_t close = token.find('/', slash + 1);
    PK_ASSIGN(specs, resolve_with_terms(token.substr(0, slash),
                                        token.substr(slash + 1, close - slash - 1)));
    mods = token.substr(close + 1);
    if (mods.starts_with(':')) mods.remove_prefix(1);
    if (token.size() > close + 1 && mods.empty()) return fail("empty modifier after '{}'", token);
  } else {
    auto colon = token.rfind(':');
    bool split_mods = colon != std::string_view::npos && modifier_like(token.substr(colon + 1));
    auto whole = resolve_plain(token);
    if (whole) {
      specs = std::move(*whole);
    } else if (split_mods) {
      PK_ASSIGN(specs, resolve_plain(token.substr(0, colon)));
      mods = token.substr(colon + 1);
    } else if (colon != std::string_view::npos && resolve_plain(token.substr(0, colon))) {
      return fail("invalid modifier '{}' (valid: u k h G H p pp ppp P S D I W e)",
                  token.substr(colon + 1));
    } else {
      return std::move(whole).error();
    }
  }
  for (auto& e : specs) {
    if (e.attr.type != kTypeTracepoint && e.name.empty()) e.name = std::string(token);
    if (!mods.empty()) PK_TRY(apply_modifiers(mods, e, false));
  }
  return specs;
}

Error Parser::unknown_event(std::string_view name) const {
  auto close = suggest_events(name, src_);
  if (close.empty())
    return fail("unknown event '{}' (run 'perfkit list' for the events of this machine)", name);
  return fail("unknown event '{}'; did you mean '{}'?", name, fmt::join(close, "', '"));
}

Expected<std::vector<EventSpec>> Parser::resolve_plain(std::string_view base) {
  if (base.empty()) return fail("empty event name");
  for (const auto& s : kSymbolic)
    if (base == s.name || (!s.alias.empty() && base == s.alias))
      return std::vector<EventSpec>{new_event_spec(s.type, s.config, "")};
  if (auto cache = parse_cache_event(base))
    return std::vector<EventSpec>{new_event_spec(kTypeHwCache, *cache, "")};
  std::uint64_t v = 0, t = 0;
  if (base.size() > 1 && base[0] == 'r' && parse_u64(base.substr(1), v, 16))
    return std::vector<EventSpec>{new_event_spec(kTypeRaw, v, "")};
  if (auto colon = base.find(':'); colon != std::string_view::npos) {
    std::string_view a = base.substr(0, colon), b = base.substr(colon + 1);
    if (parse_u64(a, t) && parse_u64(b, v) && t <= 0xffffffffULL)
      return std::vector<EventSpec>{new_event_spec(static_cast<std::uint32_t>(t), v, "")};
    if (a.empty() || b.empty() || b.find(':') != std::string_view::npos) return unknown_event(base);
    return resolve_tracepoints(a, b, src_, text_);
  }
  // A named event of some PMU ("tsc", "mem-loads"): one event per PMU having it.
  std::vector<EventSpec> specs;
  if (src_.pmus) {
    for (const auto& p : src_.pmus->pmus()) {
      const PmuEvent* pe = p.event(base);
      if (!pe) continue;
      EventSpec e = new_event_spec(p.type, 0, "");
      e.pmu = p.name;
      PK_TRY(apply_pmu_terms(p, pe->terms, {}, e, text_));
      e.unit = pe->unit;
      e.scale = pe->scale;
      specs.push_back(std::move(e));
    }
  }
  if (!specs.empty()) return specs;
  return unknown_event(base);
}

Expected<std::vector<EventSpec>> Parser::resolve_with_terms(std::string_view head,
                                                            std::string_view terms) {
  PK_ASSIGN(auto parsed, parse_terms(terms, text_));
  const Pmu* pmu = src_.pmus ? src_.pmus->find(head) : nullptr;
  if (pmu) {
    EventSpec e = new_event_spec(pmu->type, 0, "");
    e.pmu = pmu->name;
    PK_TRY(apply_pmu_terms(*pmu, "", parsed, e, text_));
    return std::vector<EventSpec>{std::move(e)};
  }
  auto base = resolve_plain(head);
  if (!base) {
    if (head.find(':') != std::string_view::npos) return std::move(base).error();
    std::vector<std::string> names;
    if (src_.pmus)
      for (const auto& p : src_.pmus->pmus()) names.push_back(p.name);
    return fail("unknown PMU or event '{}' (PMUs here: {})", head, fmt::join(names, ", "));
  }
  for (auto& e : *base) PK_TRY(apply_generic_terms(parsed, e, text_));
  return base;
}

Expected<EventSpec> Parser::parse_breakpoint(std::string_view token) {
  // mem:ADDR[/LEN][:rwx][:modifiers]
  std::string_view rest = token.substr(4);
  auto parts = split(rest, ':');
  if (parts.size() > 3) return fail("malformed breakpoint '{}'", token);
  std::string_view addr_len = parts[0];
  std::string_view addr_text = addr_len.substr(0, addr_len.find('/'));
  std::uint64_t addr = 0, len = 0;
  if (!parse_u64(addr_text, addr))
    return fail("bad breakpoint address '{}' (expected mem:ADDR[/LEN][:rwx])", addr_text);
  if (auto slash = addr_len.find('/'); slash != std::string_view::npos) {
    if (!parse_u64(addr_len.substr(slash + 1), len) ||
        (len != 1 && len != 2 && len != 4 && len != 8))
      return fail("bad breakpoint length '{}' (1, 2, 4 or 8)", addr_len.substr(slash + 1));
  }
  std::uint32_t bp_type = 0;
  std::string_view mods;
  if (parts.size() >= 2) {
    std::string_view access = parts[1];
    bool is_access = !access.empty() && access.size() <= 3 &&
                     access.find_first_not_of("rwx") == std::string_view::npos;
    if (is_access) {
      for (char c : access) {
        std::uint32_t bit = c == 'r' ? 1 : c == 'w' ? 2 : 4;
        if (bp_type & bit) return fail("repeated breakpoint access '{}'", access);
        bp_type |= bit;
      }
      if (parts.size() == 3) mods = parts[2];
    } else if (parts.size() == 2) {
      mods = access;
    } else {
      return fail("bad breakpoint access '{}' (r, w, x or a mix of r and w)", access);
    }
  }
  if (bp_type == 0) bp_type = 1 | 2;  // HW_BREAKPOINT_RW by default
  if ((bp_type & 4) && (bp_type & 3))
    return fail("breakpoint access '{}' mixes execute with read/write", parts[1]);
  if (len == 0) len = (bp_type == 4) ? sizeof(long) : 4;
  // perf's lexer stops an event name at '/', so "mem:0x10/8:w" is named "mem:0x10".
  std::string_view name = token.substr(0, token.find('/'));
  EventSpec e = new_event_spec(kTypeBreakpoint, 0, name);
  e.attr.bp_type = bp_type;
  e.attr.config1 = addr;  // bp_addr
  e.attr.config2 = len;   // bp_len
  e.attr.sample_period = 1;
  if (!mods.empty()) PK_TRY(apply_modifiers(mods, e, false));
  return e;
}

Status Parser::apply_modifiers(std::string_view mods, EventSpec& e, bool group_level) const {
  // perf rejects a repeated modifier other than 'p'.
  for (std::size_t i = 0; i < mods.size(); ++i) {
    if (kModifierChars.find(mods[i]) == std::string_view::npos)
      return fail("invalid modifier '{}' in ':{}' (valid: u k h G H p pp ppp P S D I W e)", mods[i],
                  mods);
    if (mods[i] != 'p' && mods.find(mods[i], i + 1) != std::string_view::npos)
      return fail("modifier '{}' repeated in ':{}'", mods[i], mods);
  }
  EventAttr& a = e.attr;
  // Event modifiers start from nothing excluded; group modifiers from the
  // event's current state (perf's get_event_modifier with and without evsel).
  bool eu = group_level && a.has(kAttrExcludeUser);
  bool ek = group_level && a.has(kAttrExcludeKernel);
  bool eh = group_level && a.has(kAttrExcludeHv);
  bool e_host = group_level && a.has(kAttrExcludeHost);
  bool e_guest = group_level && a.has(kAttrExcludeGuest);
  bool ei = group_level && a.has(kAttrExcludeIdle);
  unsigned precise = group_level ? a.precise_ip() : 0;
  bool pinned = group_level && a.has(kAttrPinned);
  bool exclusive = group_level && a.has(kAttrExclusive);
  bool exclude = eu || ek || eh;
  bool exclude_gh = group_level && e.exclude_gh;
  bool precise_max = false, sample_read = false, weak = false;
  for (char c : mods) {
    switch (c) {
      case 'u':
        if (!exclude) exclude = eu = ek = eh = true;
        if (!exclude_gh) e_guest = true;
        eu = false;
        break;
      case 'k':
        if (!exclude) exclude = eu = ek = eh = true;
        ek = false;
        break;
      case 'h':
        if (!exclude) exclude = eu = ek = eh = true;
        eh = false;
        break;
      case 'G':
        if (!exclude_gh) exclude_gh = e_guest = e_host = true;
        e_guest = false;
        break;
      case 'H':
        if (!exclude_gh) exclude_gh = e_guest = e_host = true;
        e_host = false;
        break;
      case 'I':
        ei = true;
        break;
      case 'p':
        ++precise;
        if (!exclude_gh) e_guest = true;
        break;
      case 'P':
        precise_max = true;
        break;
      case 'S':
        sample_read = true;
        break;
      case 'D':
        pinned = true;
        break;
      case 'e':
        exclusive = true;
        break;
      case 'W':
        weak = true;
        break;
      default:
        break;  // 'b': a perf stat BPF counter; nothing for the attr
    }
  }
  if (precise > 3) return fail("precise level ':{}' too high (at most ppp)", mods);
  a.set(kAttrExcludeUser, eu);
  a.set(kAttrExcludeKernel, ek);
  a.set(kAttrExcludeHv, eh);
  a.set(kAttrExcludeHost, e_host);
  a.set(kAttrExcludeGuest, e_guest);
  a.set(kAttrExcludeIdle, ei);
  a.set_precise_ip(precise);
  e.exclude_gh = exclude_gh;
  e.sample_read = sample_read;
  e.precise_max = precise_max;
  e.weak_group = weak;
  if (!group_level || e.leader == static_cast<std::size_t>(&e - list_.events.data())) {
    a.set(kAttrPinned, pinned);
    a.set(kAttrExclusive, exclusive);
  }
  return ok();
}

}  // namespace

Status parse_events(std::string_view text, const EventSources& sources, EventList& list) {
  Parser p(text, sources, list);
  return p.run();
}

}  // namespace perfkit::capture
