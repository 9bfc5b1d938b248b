// The term lists of the event-spec syntax (EVENT/term=value,term/): parsing
// them, resolving PMU format terms and named-event aliases, and perf's generic
// config terms (period=, freq=, call-graph=, name=, ...). Internal to the
// parser (event_spec.cc); errors carry the whole -e text like the parser's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "capture/event_spec.h"

namespace perfkit::capture {

struct Term {
  std::string name;
  std::optional<std::string> value;  // nullopt for a bare term ("no-inherit", "edge")
};

// "event=0x3c,umask=1,edge" into terms. Errors: an empty term, "=value" without
// a name.
Expected<std::vector<Term>> parse_terms(std::string_view text, std::string_view spec);

// Applies a sysfs named event's terms (`alias_terms`, may be empty), then
// `user_terms`, to an event of `pmu`: format terms set config bits, event
// names used as terms expand to their own terms, generic terms go to
// e.terms. Errors: an unknown term (listing the valid ones), a value too big
// for its format, a required "?" parameter left unset, a bad number.
Status apply_pmu_terms(const Pmu& pmu, std::string_view alias_terms,
                       const std::vector<Term>& user_terms, EventSpec& e, std::string_view spec);

// Applies perf's generic config terms to a non-PMU event. Errors: a term that
// is not one of them (listing them), a bad value.
Status apply_generic_terms(const std::vector<Term>& terms, EventSpec& e, std::string_view spec);

// Events for SYSTEM:NAME (globs allowed in either part). Errors: no tracefs,
// no such tracepoint (naming the missing file, with suggestions), a glob that
// matches nothing.
Expected<std::vector<EventSpec>> resolve_tracepoints(std::string_view system, std::string_view name,
                                                     const EventSources& src,
                                                     std::string_view spec);

// A fresh event as perf's parser makes one (event_attr_init: exclude_guest
// set, attr size 128).
EventSpec new_event_spec(std::uint32_t type, std::uint64_t config, std::string_view name);

// perf's list of generic terms, for messages: "config,config1,...".
std::string_view generic_term_names();

}  // namespace perfkit::capture
