// record --switch-output-event: events opened on every online cpu (as
// perf's side-band thread opens them, whatever the recording's target) whose
// records are not recorded: each only asks for the next output file. A
// thread waits on their rings, drops what they hold and writes a byte to
// the notify fd (the pipe --switch-output=signal's SIGUSR2 writes to).
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include "base/error.h"
#include "capture/event_spec.h"
#include "capture/perf_event.h"
#include "capture/ring_buffer.h"
#include "capture/system_paths.h"

namespace perfkit::capture {

class EventTrigger {
 public:
  // Opens and enables `events` on every online cpu and starts the thread.
  // Errors: an event that cannot be opened or mapped (perf_event_open's
  // explanation), the thread's pipe.
  static Expected<std::unique_ptr<EventTrigger>> start(const EventList& events,
                                                       const SystemPaths& paths, int notify_fd);
  ~EventTrigger();  // stops the thread; the events close
  EventTrigger(const EventTrigger&) = delete;
  EventTrigger& operator=(const EventTrigger&) = delete;

 private:
  EventTrigger() = default;
  void run();

  int notify_fd_ = -1;
  int stop_[2] = {-1, -1};
  std::vector<EventFd> fds_;
  std::vector<RingBuffer> rings_;
  std::thread thread_;
};

}  // namespace perfkit::capture
