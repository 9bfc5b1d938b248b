#include "session/event_switch.h"

#include "session/session.h"

namespace perfkit::session {
namespace {

Expected<long> find_event(Session& session, const std::string& name, const char* which) {
  const std::size_t n = session.reader().events().size();
  for (std::size_t i = 0; i < n; ++i)
    if (session.event_name(i) == name) return static_cast<long>(i);
  return make_error("switch-{} event not found ({}): 'perfkit evlist' shows the event names", which,
                    name);
}

}  // namespace

Status EventSwitch::setup(const EventSwitchOptions& o, Session& session) {
  show_ = o.show_on_off;
  if (!o.on.empty()) {
    PK_ASSIGN(on_, find_event(session, o.on, "on"));
    discarding_ = true;
  }
  if (!o.off.empty()) {
    PK_ASSIGN(off_, find_event(session, o.off, "off"));
  }
  return ok();
}

bool EventSwitch::discard(std::size_t event) {
  const auto ev = static_cast<long>(event);
  if (on_ >= 0 && discarding_) {
    if (ev != on_) return true;
    discarding_ = false;
    return !show_;
  }
  if (off_ >= 0 && !discarding_ && ev == off_) {
    discarding_ = true;
    return !show_;
  }
  return false;
}

}  // namespace perfkit::session
