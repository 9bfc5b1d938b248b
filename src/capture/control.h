// ControlChannel: perf's --control fifo:CTL[,ACK] / fd:CTL[,ACK], shared by
// record and stat. Commands come one per line ("enable [EVENT]", "disable
// [EVENT]", "snapshot", "ping", "stop", "evlist"); each one handled is
// acknowledged with "ack\n" when there is an ack channel.
//
//   PK_ASSIGN(auto ch, ControlChannel::open(opts.control));
//   poll on ch.fd(); then for (auto& c : ch.read()) { ...; ch.ack(); }
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "capture/record_options.h"

namespace perfkit::capture {

class ControlChannel {
 public:
  ControlChannel() = default;
  ControlChannel(ControlChannel&& o) noexcept;
  ControlChannel& operator=(ControlChannel&& o) noexcept;
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;
  ~ControlChannel();

  // Opens the FIFOs (read-write, so that opening never waits for the other
  // side) or takes the fds. Errors: a FIFO that cannot be opened.
  static Expected<ControlChannel> open(const ControlOptions& o);

  bool enabled() const { return ctl_ >= 0; }
  int fd() const { return ctl_; }  // poll it for input

  struct Command {
    std::string verb;  // "enable", "disable", "stop", ...
    std::string arg;   // what follows the verb ("" for none)
  };
  // The whole lines that arrived since the last call (a partial one waits).
  std::vector<Command> read();
  void ack() const;

 private:
  int ctl_ = -1, ack_ = -1;
  bool owns_ = false;
  std::string pending_;
};

}  // namespace perfkit::capture
