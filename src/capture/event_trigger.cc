#include "capture/event_trigger.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "abi/perf_event.h"
#include "capture/system_info.h"

namespace perfkit::capture {

Expected<std::unique_ptr<EventTrigger>> EventTrigger::start(const EventList& events,
                                                            const SystemPaths& paths,
                                                            int notify_fd) {
  std::unique_ptr<EventTrigger> t(new EventTrigger());
  t->notify_fd_ = notify_fd;
  const OpenErrorContext ctx = OpenErrorContext::read(paths);
  for (const EventSpec& spec : events.events) {
    abi::EventAttr attr = spec.attr;
    // A sample for every event, a wake-up for every sample: each asks for
    // a switch as it comes.
    if (!attr.freq() && attr.sample_period == 0) attr.sample_period = 1;
    attr.wakeup_events = 1;
    attr.set(abi::kAttrDisabled, false);
    attr.set(abi::kAttrInherit, false);
    for (int cpu : online_cpus(paths)) {
      OpenTarget target;
      target.cpu = cpu;
      PK_ASSIGN(EventFd fd, open_event(attr, target, spec.name, ctx));
      PK_ASSIGN(RingBuffer ring, RingBuffer::map(fd.get(), 1));
      t->fds_.push_back(std::move(fd));
      t->rings_.push_back(std::move(ring));
    }
  }
  if (::pipe2(t->stop_, O_CLOEXEC) != 0)
    return make_error("--switch-output-event: pipe: {}", std::strerror(errno));
  t->thread_ = std::thread([p = t.get()] { p->run(); });
  return t;
}

EventTrigger::~EventTrigger() {
  if (thread_.joinable()) {
    char c = 1;
    ssize_t n = ::write(stop_[1], &c, 1);
    (void)n;
    thread_.join();
  }
  for (int fd : stop_)
    if (fd >= 0) ::close(fd);
}

void EventTrigger::run() {
  std::vector<pollfd> polls;
  polls.push_back({stop_[0], POLLIN, 0});
  for (const EventFd& fd : fds_) polls.push_back({fd.get(), POLLIN, 0});
  while (true) {
    if (::poll(polls.data(), polls.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (polls[0].revents) return;
    bool fired = false;
    for (RingBuffer& ring : rings_) {
      const std::size_t n = ring.pending().size();
      if (!n) continue;
      ring.consume(n);
      fired = true;
    }
    if (fired) {
      char c = 1;
      ssize_t n = ::write(notify_fd_, &c, 1);
      (void)n;
    }
  }
}

}  // namespace perfkit::capture
