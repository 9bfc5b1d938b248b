#include "capture/counter.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "capture/pmu.h"

namespace perfkit::capture {

using namespace perfkit::abi;

namespace {

bool is_clock(const EventAttr& a) {
  return a.type == kTypeSoftware && (a.config == 0 || a.config == 1);  // cpu-clock, task-clock
}

}  // namespace

ToolEvent tool_event(std::string_view name) {
  if (name == "duration_time") return ToolEvent::kDurationTime;
  if (name == "user_time") return ToolEvent::kUserTime;
  if (name == "system_time") return ToolEvent::kSystemTime;
  return ToolEvent::kNone;
}

CounterEvent tool_counter_event(ToolEvent tool) {
  CounterEvent e;
  e.tool = tool;
  e.name = tool == ToolEvent::kDurationTime ? "duration_time"
           : tool == ToolEvent::kUserTime   ? "user_time"
                                            : "system_time";
  e.unit = "ns";
  e.attr.type = kTypeSoftware;
  e.attr.config = 9;  // PERF_COUNT_SW_DUMMY
  e.attr.size = kAttrSizeVer7;
  e.attr.read_format = kFormatTotalTimeEnabled | kFormatTotalTimeRunning;
  e.attr.set(kAttrDisabled);
  return e;
}

bool is_unsupported_event_error(int err) {
  return err == EINVAL || err == ENOSYS || err == ENOENT || err == EOPNOTSUPP || err == ENXIO;
}

std::vector<CounterEvent> counting_events(const EventList& list, const CountingOptions& opts) {
  std::vector<CounterEvent> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const EventSpec& s = list.events[i];
    CounterEvent e;
    e.attr = s.attr;
    e.name = s.name;
    e.leader = s.leader;
    e.group_size = list.is_leader(i) ? list.group_size(i) : 1;
    e.pmu = s.pmu;
    e.weak_group = s.weak_group;
    e.unit = s.unit;
    e.filter = s.filter;
    if (s.scale) e.scale = *s.scale;
    if (is_clock(e.attr) && e.unit.empty()) {
      e.unit = "msec";
      e.scale = 1e-6;
    }
    EventAttr& a = e.attr;
    if (a.size == 0) a.size = kAttrSizeVer7;
    a.read_format = kFormatTotalTimeEnabled | kFormatTotalTimeRunning;
    if (list.group_size(s.leader) > 1) a.read_format |= kFormatId | kFormatGroup;
    a.set(kAttrInherit, opts.inherit);
    // Tracepoints and breakpoints come with a sample period: counting has none.
    a.sample_period = 0;
    a.set(kAttrFreq, false);
    a.sample_type = opts.identifier ? static_cast<std::uint64_t>(kSampleIdentifier) : 0;
    if (opts.all_user) {
      a.set(kAttrExcludeKernel);
      a.set(kAttrExcludeUser, false);
    }
    if (opts.all_kernel) {
      a.set(kAttrExcludeKernel, false);
      a.set(kAttrExcludeUser);
    }
    const bool leader = s.leader == i;
    a.set(kAttrDisabled, leader);
    a.set(kAttrEnableOnExec, leader && opts.enable_on_exec);
    out.push_back(std::move(e));
  }
  return out;
}

std::string default_stat_events(bool cpu_target, const PmuCatalog& pmus) {
  std::string s = cpu_target ? "cpu-clock" : "task-clock";
  s += ",context-switches,cpu-migrations,page-faults,cycles";
  const Pmu* cpu = pmus.find("cpu");
  if (cpu && cpu->event("stalled-cycles-frontend")) s += ",stalled-cycles-frontend";
  if (cpu && cpu->event("stalled-cycles-backend")) s += ",stalled-cycles-backend";
  s += ",instructions,branches,branch-misses";
  return s;
}

std::string detailed_stat_events(int level) {
  std::string s = "L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses";
  if (level >= 2)
    s += ",L1-icache-loads,L1-icache-load-misses,dTLB-loads,dTLB-load-misses,iTLB-loads,"
         "iTLB-load-misses";
  if (level >= 3) s += ",L1-dcache-prefetches,L1-dcache-prefetch-misses";
  return s;
}

Status CounterSet::open_one(std::size_t ev, const OpenErrorContext& ctx,
                            std::vector<std::string>& notes, bool& skipped) {
  CounterEvent& e = events_[ev];
  const bool leader = e.leader == ev;
  auto& fds = fds_[ev];
  for (std::size_t c = 0; c < target_.cpus.size(); ++c) {
    for (std::size_t t = 0; t < target_.threads.size(); ++t) {
      OpenTarget where;
      where.cpu = target_.cpus[c];
      where.pid = target_.threads[t];
      if (e.cgroup) {  // (system-wide: one thread slot, -1)
        where.pid = e.cgroup->dir.get();
        where.flags |= PERF_FLAG_PID_CGROUP;
      }
      if (!leader) {
        const auto& leader_fds = fds_[e.leader];
        // A member whose leader is not open opens on its own, as perf's does.
        where.group_fd = slot(c, t) < leader_fds.size() ? leader_fds[slot(c, t)].get() : -1;
      }
      for (;;) {
        int fd;
        do {
          fd = sys_perf_event_open(e.attr, where);
        } while (fd == -EINTR);
        if (fd >= 0) {
          fds[slot(c, t)] = EventFd(fd);
          break;
        }
        const int err = -fd;
        if (is_unsupported_event_error(err) && !(leader && e.group_size > 1)) {
          skipped = true;
          return ok();
        }
        std::string note;
        if (fallback_to_user_only(e.attr, e.name, err, ctx.paranoid, note)) {
          notes.push_back(std::move(note));
          continue;
        }
        return explain_open_error(err, e.attr, where, e.name, ctx);
      }
    }
  }
  if (!e.filter.empty())
    for (const auto& fd : fds)
      if (fd.get() >= 0 && ::ioctl(fd.get(), PERF_EVENT_IOC_SET_FILTER, e.filter.c_str()) != 0) {
        const int err = errno;
        return make_error("failed to set filter \"{}\" on event {} with {} ({})", e.filter, e.name,
                          err, std::strerror(err));
      }
  return ok();
}

Expected<CounterSet> CounterSet::open(std::vector<CounterEvent> events, const CounterTarget& target,
                                      const OpenErrorContext& ctx,
                                      std::vector<std::string>& notes) {
  CounterSet set;
  set.events_ = std::move(events);
  set.target_ = target;
  if (set.target_.cpus.empty()) set.target_.cpus = {-1};
  if (set.target_.threads.empty()) set.target_.threads = {-1};
  const std::size_t n = set.events_.size();
  const std::size_t slots = set.target_.cpus.size() * set.target_.threads.size();
  set.supported_.assign(n, false);
  set.fds_.resize(n);
  set.ids_.assign(n, std::vector<std::uint64_t>(slots, 0));
  for (std::size_t ev = 0; ev < n; ++ev) {
    set.fds_[ev].resize(slots);
    if (set.events_[ev].tool != ToolEvent::kNone) {
      set.fds_[ev].clear();
      set.supported_[ev] = true;
      continue;
    }
    bool skipped = false;
    PK_TRY(set.open_one(ev, ctx, notes, skipped));
    if (skipped) {
      set.fds_[ev].clear();
      continue;
    }
    set.supported_[ev] = true;
    for (std::size_t s = 0; s < slots; ++s) {
      auto id = set.fds_[ev][s].id();
      if (id) set.ids_[ev][s] = *id;
    }
  }
  return set;
}

Status CounterSet::enable() const {
  for (std::size_t ev = 0; ev < events_.size(); ++ev) {
    if (!supported_[ev] || events_[ev].leader != ev) continue;
    for (const auto& fd : fds_[ev]) PK_TRY(fd.enable());
  }
  return ok();
}

Status CounterSet::disable() const {
  for (std::size_t ev = 0; ev < events_.size(); ++ev) {
    if (!supported_[ev] || events_[ev].leader != ev) continue;
    for (const auto& fd : fds_[ev]) PK_TRY(fd.disable());
  }
  return ok();
}

Expected<bool> CounterSet::enable_named(const std::string& name, bool on) const {
  bool found = false;
  for (std::size_t ev = 0; ev < events_.size(); ++ev) {
    if (!supported_[ev] || events_[ev].leader != ev) continue;
    if (!name.empty() && events_[ev].name != name) continue;
    found = true;
    for (const auto& fd : fds_[ev]) PK_TRY(on ? fd.enable() : fd.disable());
  }
  return found;
}

void CounterSet::read_group(std::size_t leader, std::size_t s, CounterReadings& out) const {
  const CounterEvent& e = events_[leader];
  const auto words = read_format_words(e.attr.read_format, e.group_size);
  auto raw = fds_[leader][s].read_values(words);
  if (!raw) return;
  auto vals = parse_read_values(*raw, e.attr.read_format);
  // perf refuses a group read whose count is not the group's size (a member
  // failed to open): the whole group is then not counted.
  if (!vals || vals->size() != e.group_size) return;
  std::size_t pos = 0;
  for (std::size_t ev = leader; ev < events_.size() && pos < vals->size(); ++ev) {
    if (events_[ev].leader != leader) continue;
    // Values come leader first, then members in the order they were opened;
    // the id confirms which is which.
    const auto& v = (*vals)[pos++];
    std::size_t target = ev;
    for (std::size_t m = leader; m < events_.size(); ++m)
      if (events_[m].leader == leader && supported_[m] && ids_[m][s] == v.id && v.id != 0)
        target = m;
    out.values[target][s] = v;
    out.ok[target][s] = true;
  }
}

CounterReadings CounterSet::read() const {
  CounterReadings out;
  out.ncpus = target_.cpus.size();
  out.nthreads = target_.threads.size();
  const std::size_t slots = out.ncpus * out.nthreads;
  out.values.assign(events_.size(), std::vector<CounterValue>(slots));
  out.ok.assign(events_.size(), std::vector<bool>(slots, false));
  for (std::size_t ev = 0; ev < events_.size(); ++ev) {
    if (!supported_[ev] || fds_[ev].empty()) continue;  // tool events included
    const CounterEvent& e = events_[ev];
    const bool group_read = (e.attr.read_format & kFormatGroup) != 0;
    for (std::size_t s = 0; s < slots; ++s) {
      if (group_read) {
        if (e.leader == ev) read_group(ev, s, out);
        continue;  // members are filled by their leader's read
      }
      auto raw = fds_[ev][s].read_values(read_format_words(e.attr.read_format));
      if (!raw) continue;
      auto vals = parse_read_values(*raw, e.attr.read_format);
      if (!vals || vals->empty()) continue;
      out.values[ev][s] = (*vals)[0];
      out.ok[ev][s] = true;
    }
  }
  return out;
}

void CounterSet::close() {
  for (auto& per_event : fds_) per_event.clear();
}

}  // namespace perfkit::capture
