#include "capture/control.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "base/text.h"

namespace perfkit::capture {

ControlChannel::ControlChannel(ControlChannel&& o) noexcept { *this = std::move(o); }

ControlChannel& ControlChannel::operator=(ControlChannel&& o) noexcept {
  if (this != &o) {
    std::swap(ctl_, o.ctl_);
    std::swap(ack_, o.ack_);
    std::swap(owns_, o.owns_);
    std::swap(pending_, o.pending_);
  }
  return *this;
}

ControlChannel::~ControlChannel() {
  if (!owns_) return;
  if (ctl_ >= 0) ::close(ctl_);
  if (ack_ >= 0) ::close(ack_);
}

Expected<ControlChannel> ControlChannel::open(const ControlOptions& o) {
  ControlChannel c;
  if (!o.enabled()) return c;
  if (o.ctl_fd >= 0) {
    c.ctl_ = o.ctl_fd;
    c.ack_ = o.ack_fd;
    return c;
  }
  c.owns_ = true;
  c.ctl_ = ::open(o.ctl_fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (c.ctl_ < 0)
    return make_error("--control: cannot open {}: {}", o.ctl_fifo, std::strerror(errno));
  if (!o.ack_fifo.empty()) {
    c.ack_ = ::open(o.ack_fifo.c_str(), O_RDWR | O_CLOEXEC);
    if (c.ack_ < 0)
      return make_error("--control: cannot open {}: {}", o.ack_fifo, std::strerror(errno));
  }
  return c;
}

std::vector<ControlChannel::Command> ControlChannel::read() {
  std::vector<Command> out;
  if (ctl_ < 0) return out;
  char buf[256];
  ssize_t n;
  while ((n = ::read(ctl_, buf, sizeof buf)) > 0) pending_.append(buf, static_cast<std::size_t>(n));
  std::size_t nl;
  while ((nl = pending_.find('\n')) != std::string::npos) {
    std::string line(trim(std::string_view(pending_).substr(0, nl)));
    pending_.erase(0, nl + 1);
    if (line.empty()) continue;
    Command c;
    c.verb = line.substr(0, line.find(' '));
    if (line.size() > c.verb.size()) c.arg = std::string(trim(line.substr(c.verb.size())));
    out.push_back(std::move(c));
  }
  return out;
}

void ControlChannel::ack() const {
  if (ack_ < 0) return;
  ssize_t w = ::write(ack_, "ack\n", 4);
  (void)w;
}

}  // namespace perfkit::capture
