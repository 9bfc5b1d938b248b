// Self-monitoring: a program counts events on its own calling thread, around
// the code it wants to measure, without perf or perfkit running it.
//
//   PK_ASSIGN(auto mon, SelfMonitor::open("{task-clock,page-faults,instructions}"));
//   PK_TRY(mon.reset());
//   PK_TRY(mon.enable());          // PERF_EVENT_IOC_ENABLE on the group
//   work();
//   PK_TRY(mon.disable());
//   PK_ASSIGN(auto counts, mon.read());
//   for (const auto& c : counts) printf("%s %llu\n", c.name.c_str(), c.scaled);
//
// The events form one group led by the first (perf's -e syntax; braces are
// optional), opened disabled on the calling thread (pid 0, any cpu, no
// inherit), so they count together or not at all. Each event's first page is
// mapped: when the kernel sets cap_user_rdpmc and gives the event a counter
// index (a hardware event that is scheduled), a read takes the count with
// rdpmc inside the page's seqlock, without a system call; otherwise (software
// events, no PMU, event not running) it reads the group with one read(2).
// Counts come scaled by time_enabled / time_running (abi::scale_count).
//
// enable_all()/disable_all() are prctl(PR_TASK_PERF_EVENTS_ENABLE/DISABLE):
// they switch every event group this process opened on itself, at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "abi/attr.h"
#include "abi/read_format.h"
#include "base/error.h"
#include "capture/perf_event.h"

namespace perfkit::capture {

// One event's count at a read.
struct SelfCount {
  std::string name;
  std::uint64_t raw = 0;      // as counted
  std::uint64_t enabled = 0;  // ns the group was enabled
  std::uint64_t running = 0;  // ns it was on a counter
  std::uint64_t scaled = 0;   // raw * enabled / running when multiplexed
  abi::ScaleState state = abi::ScaleState::kExact;
  bool via_rdpmc = false;  // read from the user page with rdpmc
};

// The fields of the mapped perf_event_mmap_page a read uses.
struct UserPage {
  std::uint32_t lock = 0;
  std::uint32_t index = 0;
  std::int64_t offset = 0;
  std::uint64_t time_enabled = 0, time_running = 0;
  bool cap_user_rdpmc = false, cap_user_time = false;
  std::uint16_t pmc_width = 0, time_shift = 0;
  std::uint32_t time_mult = 0;
  std::uint64_t time_offset = 0;
};

// Where a user-page read gets the hardware values (tests pass fakes).
struct CounterSources {
  std::function<std::uint64_t(std::uint32_t)> rdpmc;  // counter index - 1
  std::function<std::uint64_t()> rdtsc;
};

struct UserPageReading {
  bool usable = false;  // cap_user_rdpmc and a counter index: `count` is valid
  std::uint64_t count = 0, enabled = 0, running = 0;
};

// The manual's seqlock loop over a mapped page: retries while `lock`
// changes, adds the sign-extended pmc_width-bit counter to `offset`, and
// extends enabled/running by the time since the last update (cap_user_time).
// `load` returns the page's fields as they are now.
UserPageReading read_user_page(const std::function<UserPage()>& load, const CounterSources& hw);

struct SelfMonitorOptions {
  bool exclude_kernel = false;  // count user space only (needed under perf_event_paranoid 2)
  bool use_rdpmc = true;        // false: always read(2)
};

class SelfMonitor {
 public:
  SelfMonitor() = default;
  SelfMonitor(SelfMonitor&&) noexcept;
  SelfMonitor& operator=(SelfMonitor&&) noexcept;
  ~SelfMonitor();

  // Parses `events` with the event-spec parser and opens them as one group
  // on the calling thread, disabled. Errors: a syntax error, an event the
  // machine does not have, permission (explained with perf_event_paranoid).
  static Expected<SelfMonitor> open(std::string_view events, SelfMonitorOptions opts = {});
  // The same from ready attrs (their type and config are used as given).
  static Expected<SelfMonitor> open(std::vector<abi::EventAttr> attrs,
                                    std::vector<std::string> names, SelfMonitorOptions opts = {});

  std::size_t size() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }

  // The group ioctls (PERF_IOC_FLAG_GROUP on the leader).
  Status enable() const;
  Status disable() const;
  Status reset() const;
  // prctl(PR_TASK_PERF_EVENTS_ENABLE / _DISABLE): every group of this process.
  static Status enable_all();
  static Status disable_all();

  // The counts now (the group may be running). Errors: read(2) failed.
  Expected<std::vector<SelfCount>> read() const;

 private:
  std::vector<EventFd> fds_;
  std::vector<std::string> names_;
  std::vector<void*> pages_;  // one mapped metadata page per event (nullptr if not mapped)
  std::size_t page_size_ = 0;
  SelfMonitorOptions opts_;
};

}  // namespace perfkit::capture
