// Counter values as read(2) of a perf event fd returns them, in the layout
// the attr's read_format selects, and the scaling of a multiplexed count by
// time_enabled / time_running. Shared by counting (perfkit stat, the
// self-monitoring API) and by readers of PERF_RECORD_STAT.
//
// Layouts (perf_event_open(2), "Reading results"):
//   without GROUP: value [enabled] [running] [id] [lost]
//   with GROUP:    nr [enabled] [running] { value [id] [lost] } x nr
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "abi/perf_event.h"
#include "base/error.h"

namespace perfkit::abi {

// One event's reading. enabled and running are 0 when read_format lacks them.
struct CounterValue {
  std::uint64_t value = 0;
  std::uint64_t enabled = 0;  // time_enabled, ns
  std::uint64_t running = 0;  // time_running, ns
  std::uint64_t id = 0;
  std::uint64_t lost = 0;
  bool operator==(const CounterValue&) const = default;
};

// The number of u64 words one read returns: for a group read, `members` is
// the number of events in the group; otherwise it must be 1.
inline std::size_t read_format_words(std::uint64_t read_format, std::size_t members = 1) {
  std::size_t per_value =
      1 + ((read_format & kFormatId) ? 1 : 0) + ((read_format & kFormatLost) ? 1 : 0);
  std::size_t times = ((read_format & kFormatTotalTimeEnabled) ? 1 : 0) +
                      ((read_format & kFormatTotalTimeRunning) ? 1 : 0);
  if (read_format & kFormatGroup) return 1 + times + per_value * members;
  return times + per_value;
}

// Decodes one read. A group read gives one value per member, leader first,
// each carrying the group's enabled and running times. Errors: fewer words
// than the layout needs (the read was short), a group count larger than the
// words hold.
inline Expected<std::vector<CounterValue>> parse_read_values(std::span<const std::uint64_t> words,
                                                             std::uint64_t read_format) {
  std::size_t at = 0;
  auto next = [&](std::uint64_t& out) {
    if (at >= words.size()) return false;
    out = words[at++];
    return true;
  };
  std::vector<CounterValue> values;
  std::uint64_t nr = 1, enabled = 0, running = 0;
  bool group = (read_format & kFormatGroup) != 0;
  if (group && !next(nr)) return make_error("counter read of {} words has no group count", 0);
  if (group && nr > words.size())
    return make_error("counter read: group count {} exceeds the {} words read", nr, words.size());
  CounterValue first;
  if (!group && !next(first.value))
    return make_error("counter read of {} words is empty", words.size());
  if ((read_format & kFormatTotalTimeEnabled) && !next(enabled))
    return make_error("counter read of {} words ends before time_enabled", words.size());
  if ((read_format & kFormatTotalTimeRunning) && !next(running))
    return make_error("counter read of {} words ends before time_running", words.size());
  for (std::uint64_t i = 0; i < nr; ++i) {
    CounterValue v = group ? CounterValue{} : first;
    v.enabled = enabled;
    v.running = running;
    bool ok = (!group || next(v.value)) && (!(read_format & kFormatId) || next(v.id)) &&
              (!(read_format & kFormatLost) || next(v.lost));
    if (!ok)
      return make_error("counter read of {} words ends inside value {} of {}", words.size(), i, nr);
    values.push_back(v);
  }
  return values;
}

// What scaling did to a count.
enum class ScaleState : std::int8_t {
  kNotRunning = -1,  // time_running is 0: the event never got a counter
  kExact = 0,        // ran the whole time it was enabled (or scaling is off)
  kScaled = 1,       // multiplexed: estimated from the fraction of time it ran
};

struct ScaledCount {
  std::uint64_t value = 0;
  ScaleState state = ScaleState::kExact;
};

// The manual's estimate for a multiplexed count, computed as perf does:
// value * enabled / running in double precision, truncated to an integer,
// when running < enabled; 0 and kNotRunning when the event never ran. With
// `scale` false (perf stat --no-scale) the raw value is kept.
inline ScaledCount scale_count(std::uint64_t value, std::uint64_t enabled, std::uint64_t running,
                               bool scale = true) {
  if (!scale) return {value, ScaleState::kExact};
  if (running == 0) return {0, ScaleState::kNotRunning};
  if (running < enabled)
    return {static_cast<std::uint64_t>(static_cast<double>(value) * static_cast<double>(enabled) /
                                       static_cast<double>(running)),
            ScaleState::kScaled};
  return {value, ScaleState::kExact};
}

inline ScaledCount scale_count(const CounterValue& v, bool scale = true) {
  return scale_count(v.value, v.enabled, v.running, scale);
}

}  // namespace perfkit::abi
