#include "capture/event_terms.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "base/text.h"

namespace perfkit::capture {

using namespace perfkit::abi;

namespace {

constexpr std::string_view kGenericTerms =
    "config,config1,config2,config3,name,period,freq,branch_type,time,call-graph,stack-size,"
    "no-inherit,inherit,max-stack,nr,no-overwrite,overwrite,driver-config,percore,aux-output,"
    "aux-sample-size,metric-id";

template <class... Args>
Error syntax_error(std::string_view spec, fmt::format_string<Args...> f, Args&&... args) {
  return make_error("event syntax error: '{}': {}", spec,
                    fmt::format(f, std::forward<Args>(args)...));
}

Expected<std::uint64_t> number(const Term& t, std::string_view spec) {
  if (!t.value) return std::uint64_t{1};
  std::uint64_t v = 0;
  if (!parse_u64(*t.value, v))
    return syntax_error(spec, "term '{}' needs a number, not '{}'", t.name, *t.value);
  return v;
}

Expected<std::string> text(const Term& t, std::string_view spec) {
  if (!t.value || t.value->empty())
    return syntax_error(spec, "term '{}' needs a value ({}=...)", t.name, t.name);
  return *t.value;
}

// Applies one generic term. Returns false when `t` is not a generic term.
Expected<bool> apply_generic(const Term& t, EventSpec& e, std::string_view spec) {
  ConfigTerms& c = e.terms;
  const std::string& n = t.name;
  auto num = [&](auto& field) -> Status {
    PK_ASSIGN(std::uint64_t v, number(t, spec));
    field = static_cast<std::remove_reference_t<decltype(field)>>(v);
    return ok();
  };
  auto flag = [&](std::optional<bool>& field) -> Status {
    PK_ASSIGN(std::uint64_t v, number(t, spec));
    field = v != 0;
    return ok();
  };
  if (n == "config") {
    PK_TRY(num(e.attr.config));
  } else if (n == "config1") {
    PK_TRY(num(e.attr.config1));
  } else if (n == "config2") {
    PK_TRY(num(e.attr.config2));
  } else if (n == "config3") {
    PK_TRY(num(e.attr.config3));
  } else if (n == "name") {
    PK_ASSIGN(std::string v, text(t, spec));
    if (e.attr.type != kTypeTracepoint) e.name = v;
  } else if (n == "period") {
    PK_ASSIGN(std::uint64_t v, number(t, spec));
    c.period = v;
  } else if (n == "freq") {
    PK_ASSIGN(std::uint64_t v, number(t, spec));
    c.freq = v;
  } else if (n == "time") {
    PK_TRY(flag(c.time));
  } else if (n == "call-graph") {
    PK_ASSIGN(std::string v, text(t, spec));
    std::string_view mode = std::string_view(v).substr(0, v.find(','));
    if (mode != "fp" && mode != "dwarf" && mode != "lbr" && mode != "no")
      return syntax_error(spec, "unknown call-graph mode '{}' (fp, dwarf, lbr or no)", v);
    c.call_graph = v;
  } else if (n == "stack-size") {
    PK_ASSIGN(std::uint64_t v, number(t, spec));
    if (v > 0xffffffffULL) return syntax_error(spec, "stack-size {} too large", v);
    c.stack_size = static_cast<std::uint32_t>(v);
  } else if (n == "max-stack") {
    PK_ASSIGN(std::uint64_t v, number(t, spec));
    if (v > 0xffff) return syntax_error(spec, "max-stack {} too large", v);
    c.max_stack = static_cast<std::uint32_t>(v);
  } else if (n == "nr") {
    PK_ASSIGN(std::uint64_t v, number(t, spec));
    c.max_events = v;
  } else if (n == "inherit") {
    PK_TRY(flag(c.inherit));
  } else if (n == "no-inherit") {
    c.inherit = false;
  } else if (n == "overwrite") {
    PK_TRY(flag(c.overwrite));
  } else if (n == "no-overwrite") {
    c.overwrite = false;
  } else if (n == "branch_type") {
    PK_ASSIGN(std::string v, text(t, spec));
    c.branch_type = v;
  } else if (n == "driver-config") {
    PK_ASSIGN(std::string v, text(t, spec));
    c.driver_config = v;
  } else if (n == "percore") {
    PK_TRY(flag(c.percore));
  } else if (n == "aux-output") {
    PK_TRY(flag(c.aux_output));
  } else if (n == "aux-sample-size") {
    PK_ASSIGN(std::uint64_t v, number(t, spec));
    if (v > 0xffffffffULL) return syntax_error(spec, "aux-sample-size {} too large", v);
    c.aux_sample_size = static_cast<std::uint32_t>(v);
  } else if (n == "metric-id") {
    PK_ASSIGN(std::string v, text(t, spec));
    c.metric_id = v;
  } else {
    return false;
  }
  return true;
}

// Applies the terms of a sysfs event definition, noting "?" parameters the
// user must give.
Status apply_alias_terms(const Pmu& pmu, std::string_view alias_terms, EventSpec& e,
                         std::vector<std::string>& required, std::string_view spec) {
  if (trim(alias_terms).empty()) return ok();
  PK_ASSIGN(auto terms, parse_terms(alias_terms, spec));
  for (const auto& t : terms) {
    if (t.value && *t.value == "?") {
      required.push_back(t.name);
      continue;
    }
    if (const FormatField* f = pmu.format(t.name)) {
      PK_ASSIGN(std::uint64_t v, number(t, spec));
      if (auto st = apply_format(*f, v, e.attr); !st)
        return syntax_error(spec, "{}", st.error().message());
      continue;
    }
    PK_ASSIGN(bool generic, apply_generic(t, e, spec));
    if (!generic)
      return syntax_error(spec, "sysfs event of PMU '{}' uses unknown term '{}'", pmu.name, t.name);
  }
  return ok();
}

std::string valid_pmu_terms(const Pmu& pmu) {
  std::vector<std::string> names;
  for (const auto& f : pmu.formats) names.push_back(f.name);
  names.emplace_back(kGenericTerms);
  return fmt::format("{}", fmt::join(names, ","));
}

}  // namespace

std::string_view generic_term_names() { return kGenericTerms; }

EventSpec new_event_spec(std::uint32_t type, std::uint64_t config, std::string_view name) {
  EventSpec e;
  e.attr.type = type;
  e.attr.config = config;
  e.attr.size = kAttrSizeVer7;
  e.attr.set(kAttrExcludeGuest);
  e.name = std::string(name);
  return e;
}

Expected<std::vector<Term>> parse_terms(std::string_view text, std::string_view spec) {
  std::vector<Term> out;
  if (trim(text).empty()) return out;
  for (auto piece : split(text, ',')) {
    piece = trim(piece);
    if (piece.empty()) return syntax_error(spec, "empty term in '{}'", text);
    Term t;
    auto eq = piece.find('=');
    t.name = std::string(trim(piece.substr(0, eq)));
    if (t.name.empty()) return syntax_error(spec, "term without a name in '{}'", text);
    if (eq != std::string_view::npos) t.value = std::string(trim(piece.substr(eq + 1)));
    out.push_back(std::move(t));
  }
  return out;
}

Status apply_pmu_terms(const Pmu& pmu, std::string_view alias_terms,
                       const std::vector<Term>& user_terms, EventSpec& e, std::string_view spec) {
  std::vector<std::string> required;
  PK_TRY(apply_alias_terms(pmu, alias_terms, e, required, spec));
  for (const auto& t : user_terms) {
    std::erase(required, t.name);
    if (const FormatField* f = pmu.format(t.name)) {
      PK_ASSIGN(std::uint64_t v, number(t, spec));
      if (auto st = apply_format(*f, v, e.attr); !st)
        return syntax_error(spec, "{}", st.error().message());
      continue;
    }
    if (const PmuEvent* alias = t.value ? nullptr : pmu.event(t.name)) {
      PK_TRY(apply_alias_terms(pmu, alias->terms, e, required, spec));
      e.unit = alias->unit;
      e.scale = alias->scale;
      continue;
    }
    PK_ASSIGN(bool generic, apply_generic(t, e, spec));
    if (!generic)
      return syntax_error(spec, "unknown term '{}' for pmu '{}' (valid terms: {})", t.name,
                          pmu.name, valid_pmu_terms(pmu));
  }
  if (!required.empty())
    return syntax_error(spec, "required parameter '{}' not set", required.front());
  return ok();
}

Status apply_generic_terms(const std::vector<Term>& terms, EventSpec& e, std::string_view spec) {
  for (const auto& t : terms) {
    PK_ASSIGN(bool generic, apply_generic(t, e, spec));
    if (!generic)
      return syntax_error(spec, "unknown term '{}' (valid terms: {})", t.name, kGenericTerms);
  }
  return ok();
}

Expected<std::vector<EventSpec>> resolve_tracepoints(std::string_view system, std::string_view name,
                                                     const EventSources& src,
                                                     std::string_view spec) {
  if (!src.tracefs)
    return syntax_error(spec, "tracepoint '{}:{}' but tracefs is not available", system, name);
  std::vector<Tracepoint> tps;
  if (has_glob(system) || has_glob(name)) {
    tps = src.tracefs->match(system, name);
    if (tps.empty()) return syntax_error(spec, "no tracepoint matches '{}:{}'", system, name);
  } else {
    tps.push_back({std::string(system), std::string(name)});
  }
  std::vector<EventSpec> out;
  for (auto& tp : tps) {
    auto id = src.tracefs->event_id(tp.system, tp.name);
    if (!id) {
      auto close = suggest_events(tp.full(), src);
      if (close.empty())
        return syntax_error(spec, "unknown tracepoint '{}': {}", tp.full(), id.error().message());
      return syntax_error(spec, "unknown tracepoint '{}': {}; did you mean '{}'?", tp.full(),
                          id.error().message(), fmt::join(close, "', '"));
    }
    EventSpec e = new_event_spec(kTypeTracepoint, *id, tp.full());
    e.attr.sample_period = 1;
    e.attr.sample_type = kSampleRaw | kSampleTime | kSampleCpu | kSamplePeriod;
    e.tracepoint = std::move(tp);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace perfkit::capture
