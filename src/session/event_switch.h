// --switch-on, --switch-off and --show-on-off-events of perf report and
// perf script (perf's evswitch): samples are dropped until a sample of the
// "on" event comes (with --switch-on), and from a sample of the "off" event
// on until the next "on"; the on and off samples themselves are dropped
// unless --show-on-off-events.
#pragma once

#include <cstddef>
#include <string>

#include "base/error.h"

namespace perfkit::session {

class Session;

struct EventSwitchOptions {
  std::string on, off;  // event names as perf evlist prints them; "" none
  bool show_on_off = false;
};

class EventSwitch {
 public:
  // Finds the events in `session`. Errors: an event the recording lacks
  // ("switch-on event not found (X)", as perf says).
  Status setup(const EventSwitchOptions& o, Session& session);
  bool active() const { return on_ >= 0 || off_ >= 0; }
  // Whether a sample of `event` (its index in the recording) is dropped;
  // advances the switch. Call once per sample, in delivery order.
  bool discard(std::size_t event);

 private:
  long on_ = -1, off_ = -1;
  bool discarding_ = false, show_ = false;
};

}  // namespace perfkit::session
