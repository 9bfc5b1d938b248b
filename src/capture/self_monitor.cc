#include "capture/self_monitor.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "capture/event_spec.h"
#include "capture/pmu.h"
#include "capture/tracefs.h"

namespace perfkit::capture {

using namespace perfkit::abi;

namespace {

#if defined(__x86_64__) || defined(__i386__)
std::uint64_t hw_rdpmc(std::uint32_t counter) {
  std::uint32_t lo, hi;
  __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
  return static_cast<std::uint64_t>(hi) << 32 | lo;
}
std::uint64_t hw_rdtsc() {
  std::uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return static_cast<std::uint64_t>(hi) << 32 | lo;
}
constexpr bool kHaveRdpmc = true;
#else
std::uint64_t hw_rdpmc(std::uint32_t) { return 0; }
std::uint64_t hw_rdtsc() { return 0; }
constexpr bool kHaveRdpmc = false;
#endif

// Loads the live page's fields. Volatile reads: the kernel updates the page
// under the seqlock while we read it.
UserPage load_page(const void* p) {
  const volatile perf_event_mmap_page* pc = static_cast<const volatile perf_event_mmap_page*>(p);
  UserPage u;
  u.lock = pc->lock;
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  u.index = pc->index;
  u.offset = pc->offset;
  u.time_enabled = pc->time_enabled;
  u.time_running = pc->time_running;
  const std::uint64_t caps = pc->capabilities;
  // cap_bit0, cap_bit0_is_deprecated, cap_user_rdpmc, cap_user_time, ...
  u.cap_user_rdpmc = (caps >> 2) & 1;
  u.cap_user_time = (caps >> 3) & 1;
  u.pmc_width = pc->pmc_width;
  u.time_shift = pc->time_shift;
  u.time_mult = pc->time_mult;
  u.time_offset = pc->time_offset;
  return u;
}

}  // namespace

UserPageReading read_user_page(const std::function<UserPage()>& load, const CounterSources& hw) {
  UserPageReading r;
  UserPage pg;
  std::uint64_t cyc = 0, count = 0;
  bool have_cyc = false;
  // The seqlock: the kernel bumps `lock` around every update; a read that
  // saw two different values raced with one and starts over.
  for (int tries = 0; tries < 1000; ++tries) {
    pg = load();
    have_cyc = pg.cap_user_time && pg.time_enabled != pg.time_running;
    if (have_cyc && hw.rdtsc) cyc = hw.rdtsc();
    count = static_cast<std::uint64_t>(pg.offset);
    r.usable = pg.cap_user_rdpmc && pg.index != 0 && hw.rdpmc;
    if (r.usable) {
      std::uint64_t pmc = hw.rdpmc(pg.index - 1);
      const unsigned width = pg.pmc_width ? pg.pmc_width : 64;
      if (width < 64) {
        // Sign-extend the counter's width bits.
        const unsigned shift = 64 - width;
        pmc = static_cast<std::uint64_t>(static_cast<std::int64_t>(pmc << shift) >> shift);
      }
      count += pmc;
    }
    if (load().lock == pg.lock) break;
  }
  r.count = count;
  r.enabled = pg.time_enabled;
  r.running = pg.time_running;
  if (have_cyc && pg.time_mult) {
    const std::uint64_t quot = cyc >> pg.time_shift;
    const std::uint64_t rem = cyc & ((std::uint64_t{1} << pg.time_shift) - 1);
    const std::uint64_t delta =
        pg.time_offset + quot * pg.time_mult + ((rem * pg.time_mult) >> pg.time_shift);
    r.enabled += delta;
    if (pg.index) r.running += delta;
  }
  return r;
}

SelfMonitor::SelfMonitor(SelfMonitor&& o) noexcept { *this = std::move(o); }

SelfMonitor& SelfMonitor::operator=(SelfMonitor&& o) noexcept {
  if (this != &o) {
    for (void* p : pages_)
      if (p) ::munmap(p, page_size_);
    fds_ = std::move(o.fds_);
    names_ = std::move(o.names_);
    pages_ = std::move(o.pages_);
    page_size_ = o.page_size_;
    opts_ = o.opts_;
    o.pages_.clear();
  }
  return *this;
}

SelfMonitor::~SelfMonitor() {
  for (void* p : pages_)
    if (p) ::munmap(p, page_size_);
}

Expected<SelfMonitor> SelfMonitor::open(std::string_view events, SelfMonitorOptions opts) {
  SystemPaths paths;
  PmuCatalog pmus = PmuCatalog::load(paths);
  std::optional<Tracefs> tracefs;
  if (auto t = Tracefs::locate(paths)) tracefs = std::move(*t);
  EventList list;
  PK_TRY(parse_events(events, {&pmus, tracefs ? &*tracefs : nullptr}, list));
  std::vector<EventAttr> attrs;
  std::vector<std::string> names;
  for (const auto& e : list.events) {
    attrs.push_back(e.attr);
    names.push_back(e.name);
  }
  return open(std::move(attrs), std::move(names), opts);
}

Expected<SelfMonitor> SelfMonitor::open(std::vector<EventAttr> attrs,
                                        std::vector<std::string> names, SelfMonitorOptions opts) {
  if (attrs.empty()) return make_error("no events to count");
  names.resize(attrs.size());
  SelfMonitor m;
  m.opts_ = opts;
  m.page_size_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const OpenErrorContext ctx = OpenErrorContext::read(SystemPaths{});
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    EventAttr a = attrs[i];
    if (a.size == 0) a.size = kAttrSizeVer7;
    a.read_format = kFormatGroup | kFormatId | kFormatTotalTimeEnabled | kFormatTotalTimeRunning;
    a.sample_period = 0;
    a.sample_type = 0;
    a.set(kAttrFreq, false);
    a.set(kAttrInherit, false);  // group reads need it off
    a.set(kAttrDisabled, i == 0);
    a.set(kAttrEnableOnExec, false);
    if (opts.exclude_kernel) {
      a.set(kAttrExcludeKernel);
      a.set(kAttrExcludeHv);
    }
    OpenTarget where;
    where.pid = 0;
    where.cpu = -1;
    where.group_fd = i == 0 ? -1 : m.fds_[0].get();
    PK_ASSIGN(EventFd fd, open_event(a, where, names[i], ctx));
    m.fds_.push_back(std::move(fd));
    void* page = nullptr;
    if (opts.use_rdpmc) {
      page = ::mmap(nullptr, m.page_size_, PROT_READ, MAP_SHARED, m.fds_.back().get(), 0);
      if (page == MAP_FAILED) page = nullptr;  // read(2) still works
    }
    m.pages_.push_back(page);
  }
  m.names_ = std::move(names);
  return m;
}

Status SelfMonitor::enable() const {
  if (::ioctl(fds_[0].get(), PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0)
    return make_error("PERF_EVENT_IOC_ENABLE on the group of '{}': {}", names_[0],
                      std::strerror(errno));
  return ok();
}

Status SelfMonitor::disable() const {
  if (::ioctl(fds_[0].get(), PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) != 0)
    return make_error("PERF_EVENT_IOC_DISABLE on the group of '{}': {}", names_[0],
                      std::strerror(errno));
  return ok();
}

Status SelfMonitor::reset() const {
  if (::ioctl(fds_[0].get(), PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) != 0)
    return make_error("PERF_EVENT_IOC_RESET on the group of '{}': {}", names_[0],
                      std::strerror(errno));
  return ok();
}

Status SelfMonitor::enable_all() {
  if (::prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0) != 0)
    return make_error("prctl(PR_TASK_PERF_EVENTS_ENABLE): {}", std::strerror(errno));
  return ok();
}

Status SelfMonitor::disable_all() {
  if (::prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0) != 0)
    return make_error("prctl(PR_TASK_PERF_EVENTS_DISABLE): {}", std::strerror(errno));
  return ok();
}

Expected<std::vector<SelfCount>> SelfMonitor::read() const {
  std::vector<SelfCount> out(names_.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i].name = names_[i];
  // The fast path needs every event on a counter: otherwise one read(2)
  // gets the whole group consistently.
  bool all_fast = kHaveRdpmc && opts_.use_rdpmc;
  std::vector<UserPageReading> fast(names_.size());
  const CounterSources hw{hw_rdpmc, hw_rdtsc};
  for (std::size_t i = 0; all_fast && i < names_.size(); ++i) {
    const void* page = pages_[i];
    if (!page) {
      all_fast = false;
      break;
    }
    fast[i] = read_user_page([page] { return load_page(page); }, hw);
    all_fast = fast[i].usable;
  }
  if (all_fast) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].raw = fast[i].count;
      out[i].enabled = fast[i].enabled;
      out[i].running = fast[i].running;
      out[i].via_rdpmc = true;
    }
  } else {
    const std::uint64_t rf =
        kFormatGroup | kFormatId | kFormatTotalTimeEnabled | kFormatTotalTimeRunning;
    PK_ASSIGN(auto words, fds_[0].read_values(read_format_words(rf, names_.size())));
    PK_ASSIGN(auto vals, parse_read_values(words, rf));
    if (vals.size() != out.size())
      return make_error("group read of '{}' returned {} values for {} events", names_[0],
                        vals.size(), out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].raw = vals[i].value;
      out[i].enabled = vals[i].enabled;
      out[i].running = vals[i].running;
    }
  }
  for (auto& c : out) {
    auto s = scale_count(c.raw, c.enabled, c.running);
    c.scaled = s.value;
    c.state = s.state;
  }
  return out;
}

}  // namespace perfkit::capture
