// A fake /sys tree for the capture tests: a hardware cpu PMU with format/
// and events/ (as on an Intel machine), an intel_pt PMU, an uncore PMU with
// scaled events, the software/tracepoint/breakpoint PMUs, and a tracefs with a
// few tracepoints. It lets the tests reach paths this VM cannot (hardware
// events, PT terms) through the same code that reads the real sysfs.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "capture/system_paths.h"
#include "support/test_support.h"

namespace perfkit::capture::fake {

class FakeSystem {
 public:
  FakeSystem() {
    pmu("cpu", 4,
        {{"event", "config:0-7"},
         {"umask", "config:8-15"},
         {"edge", "config:18"},
         {"inv", "config:23"},
         {"cmask", "config:24-31"},
         {"in_tx", "config:32"},
         {"ldlat", "config1:0-15"},
         {"frontend", "config1:0-23"}},
        {{"cpu-cycles", "event=0x3c"},
         {"instructions", "event=0xc0"},
         {"mem-loads", "event=0xcd,umask=0x1,ldlat=3"},
         {"mem-stores", "event=0xd0,umask=0x82"},
         {"needs-param", "event=0x2e,umask=?"}});
    file("bus/event_source/devices/cpu/cpus", "0-1\n");
    pmu("intel_pt", 8,
        {{"pt", "config:0"},
         {"cyc", "config:1"},
         {"mtc", "config:9"},
         {"tsc", "config:10"},
         {"noretcomp", "config:11"},
         {"branch", "config:13"},
         {"mtc_period", "config:14-17"},
         {"cyc_thresh", "config:19-22"},
         {"psb_period", "config:24-27"}},
        {});
    pmu("uncore_imc", 13, {{"event", "config:0-7"}, {"umask", "config:8-15"}},
        {{"data_reads", "event=0x01"}, {"data_writes", "event=0x02"}});
    file("bus/event_source/devices/uncore_imc/events/data_reads.scale", "6.103515625e-5\n");
    file("bus/event_source/devices/uncore_imc/events/data_reads.unit", "MiB\n");
    file("bus/event_source/devices/uncore_imc/cpumask", "0\n");
    pmu("msr", 9, {{"event", "config:0-63"}}, {{"tsc", "event=0x00"}});
    pmu("software", 1, {}, {});
    pmu("tracepoint", 2, {}, {});
    pmu("breakpoint", 5, {}, {});
    tracepoint("sched", "sched_switch", 316);
    tracepoint("sched", "sched_wakeup", 318);
    tracepoint("sched", "sched_stat_runtime", 310);
    tracepoint("irq", "irq_handler_entry", 120);
  }

  SystemPaths paths() const {
    SystemPaths p;
    p.sysfs = dir_.dir();
    p.procfs = "/proc";
    return p;
  }
  std::string root() const { return dir_.dir(); }

  void file(const std::string& rel, const std::string& text) {
    auto p = std::filesystem::path(dir_.dir()) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

  void pmu(const std::string& name, int type,
           std::initializer_list<std::pair<std::string, std::string>> formats,
           std::initializer_list<std::pair<std::string, std::string>> events) {
    const std::string base = "bus/event_source/devices/" + name + "/";
    file(base + "type", std::to_string(type) + "\n");
    for (const auto& [f, spec] : formats) file(base + "format/" + f, spec + "\n");
    for (const auto& [e, terms] : events) file(base + "events/" + e, terms + "\n");
  }

  void tracepoint(const std::string& sys, const std::string& name, int id) {
    const std::string base = "kernel/tracing/events/" + sys + "/" + name + "/";
    file(base + "id", std::to_string(id) + "\n");
    file(base + "format", "name: " + name + "\nID: " + std::to_string(id) + "\n");
  }

 private:
  test::TempDir dir_;
};

}  // namespace perfkit::capture::fake
