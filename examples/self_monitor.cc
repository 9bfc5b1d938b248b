// self_monitor: a program that counts events on itself with perfkit's
// self-monitoring API (capture/self_monitor.h), around a piece of work.
//
//   self_monitor [CALLS [PAGES]]
//
// It opens one group on its own thread: an execute breakpoint on
// work_function (so the count is exactly CALLS), page-faults (at least
// PAGES: the work touches that many fresh pages), task-clock, and
// context-switches; resets and enables the group, does the work, disables
// it, and prints one line per event: "NAME RAW ENABLED RUNNING SCALED".
// With --prctl it switches the group with prctl(PR_TASK_PERF_EVENTS_*)
// instead of the group ioctls.
#include "capture/self_monitor.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

volatile unsigned long g_sink;

__attribute__((noinline)) void work_function(unsigned long i) {
  g_sink = g_sink + i;
  __asm__ volatile("" ::: "memory");
}

void work(unsigned long calls, unsigned long pages) {
  for (unsigned long i = 0; i < calls; ++i) work_function(i);
  std::vector<char> buf(pages * 4096);
  for (unsigned long i = 0; i < pages; ++i) buf[i * 4096] = static_cast<char>(i);
  g_sink = g_sink + static_cast<unsigned char>(buf.empty() ? 0 : buf.back());
}

int fail(const perfkit::Error& e) {
  std::fprintf(stderr, "self_monitor: %s\n", e.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  bool use_prctl = false;
  std::vector<unsigned long> nums;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--prctl") == 0)
      use_prctl = true;
    else
      nums.push_back(std::strtoul(argv[i], nullptr, 0));
  }
  const unsigned long calls = nums.size() > 0 ? nums[0] : 1000;
  const unsigned long pages = nums.size() > 1 ? nums[1] : 256;

  char spec[128];
  std::snprintf(spec, sizeof spec, "{mem:%#" PRIxPTR ":x,page-faults,task-clock,context-switches}",
                reinterpret_cast<std::uintptr_t>(&work_function));
  auto mon = perfkit::capture::SelfMonitor::open(spec);
  if (!mon) return fail(mon.error());
  if (auto s = mon->reset(); !s) return fail(s.error());
  auto on = use_prctl ? perfkit::capture::SelfMonitor::enable_all() : mon->enable();
  if (!on) return fail(on.error());
  work(calls, pages);
  auto off = use_prctl ? perfkit::capture::SelfMonitor::disable_all() : mon->disable();
  if (!off) return fail(off.error());
  auto counts = mon->read();
  if (!counts) return fail(counts.error());
  // The breakpoint's name is its address; print the function's instead.
  for (std::size_t i = 0; i < counts->size(); ++i) {
    const auto& c = (*counts)[i];
    std::printf("%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "%s\n",
                i == 0 ? "work_function" : c.name.c_str(), c.raw, c.enabled, c.running, c.scaled,
                c.via_rdpmc ? " rdpmc" : "");
  }
  return 0;
}
