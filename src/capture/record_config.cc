#include "capture/record_config.h"

#include "abi/event_names.h"
#include "abi/perf_event.h"

namespace perfkit::capture {

using namespace perfkit::abi;

namespace {

struct Rates {
  std::uint64_t freq = 0;
  std::uint64_t interval = 0;
};

// perf's record_opts__config_freq.
Expected<Rates> configure_rates(const RecordOptions& o, const RecordLimits& lim,
                                RecordConfig& out) {
  const bool user_freq = o.user_freq.has_value() || o.freq_max;
  if (o.user_period && user_freq)
    return make_error("cannot set frequency and period at the same time");
  Rates r;
  r.freq = o.default_freq;
  if (o.user_period) r.interval = *o.user_period;
  if (o.freq_max) {
    if (lim.max_sample_rate) {
      r.freq = lim.max_sample_rate;
      out.infos.push_back(
          fmt::format("info: Using a maximum frequency rate of {} Hz", lim.max_sample_rate));
    }
  } else if (o.user_freq) {
    r.freq = *o.user_freq;
  }
  if (r.interval) {
    r.freq = 0;
  } else if (r.freq == 0) {
    return make_error("frequency and count are zero, aborting");
  }
  const std::uint64_t max = lim.max_sample_rate;
  if (!max) return r;
  if (user_freq && max < r.freq) {
    if (o.strict_freq)
      return make_error(
          "error: Maximum frequency rate ({} Hz) exceeded.\n"
          "       Please use -F freq option with a lower value or consider\n"
          "       tweaking /proc/sys/kernel/perf_event_max_sample_rate.",
          max);
    out.warnings.push_back(fmt::format(
        "warning: Maximum frequency rate ({} Hz) exceeded, throttling from {} Hz to {} Hz.\n"
        "         The limit can be raised via /proc/sys/kernel/perf_event_max_sample_rate.\n"
        "         The kernel will lower it when perf's interrupts take too long.\n"
        "         Use --strict-freq to disable this throttling, refusing to record.",
        max, r.freq, max));
    r.freq = max;
  }
  if (max < r.freq) {
    out.warnings.push_back(
        fmt::format("Lowering default frequency rate from {} to {}.\n"
                    "Please consider tweaking /proc/sys/kernel/perf_event_max_sample_rate.",
                    r.freq, max));
    r.freq = max;
  }
  return r;
}

void set_bit(EventAttr& a, std::uint64_t bit) { a.sample_type |= bit; }
void clear_bit(EventAttr& a, std::uint64_t bit) { a.sample_type &= ~bit; }

bool is_dummy(const EventAttr& a) { return a.type == kTypeSoftware && a.config == 9; }

// perf's evsel__config_callchain.
void config_callchain(RecordEvent& e, const RecordOptions& o, const CallGraphOptions& cg,
                      RecordConfig& out) {
  EventAttr& a = e.attr;
  set_bit(a, kSampleCallchain);
  a.sample_max_stack = cg.max_stack;
  if (o.kernel_callchains) a.set(kAttrExcludeCallchainUser);
  if (o.user_callchains) a.set(kAttrExcludeCallchainKernel);
  if (cg.mode == CallGraphMode::kLbr) {
    if (o.branch_stack) {
      out.warnings.push_back(
          "Cannot use LBR callstack with branch stack. Falling back to framepointers.");
    } else if (a.has(kAttrExcludeUser)) {
      out.warnings.push_back(
          "LBR callstack option is only available to get user callchain information. Falling "
          "back to framepointers.");
    } else {
      a.branch_sample_type =
          kBranchUser | kBranchCallStack | kBranchNoCycles | kBranchNoFlags | kBranchHwIndex;
      set_bit(a, kSampleBranchStack);
    }
  }
  if (cg.mode == CallGraphMode::kDwarf) {
    set_bit(a, kSampleRegsUser);
    set_bit(a, kSampleStackUser);
    // With --user-regs perf only adds what unwinding cannot do without (IP,
    // SP); otherwise it samples every general register.
    if (o.user_regs) {
      a.sample_regs_user |= (1ULL << 7) | (1ULL << 8);
      out.warnings.push_back(
          "WARNING: The use of --call-graph=dwarf may require all the user registers, specifying "
          "a subset with --user-regs may render DWARF unwinding unreliable, so the minimal "
          "registers set (IP, SP) is explicitly forced.");
    } else {
      a.sample_regs_user |= 0xff0fffULL;
    }
    a.sample_stack_user = cg.dump_size;
    a.set(kAttrExcludeCallchainUser);
  }
}

// perf's evsel__apply_config_terms.
void apply_terms(RecordEvent& e, const ConfigTerms& t, const RecordOptions& o, RecordConfig& out) {
  EventAttr& a = e.attr;
  if (t.period && *t.period) {
    a.sample_period = *t.period;
    a.set(kAttrFreq, false);
    clear_bit(a, kSamplePeriod);
  }
  if (t.freq && *t.freq) {
    a.sample_period = *t.freq;
    a.set(kAttrFreq);
    set_bit(a, kSamplePeriod);
  }
  if (t.time) *t.time ? set_bit(a, kSampleTime) : clear_bit(a, kSampleTime);
  if (t.branch_type) {
    if (*t.branch_type != "no") {
      set_bit(a, kSampleBranchStack);
      if (auto m = parse_branch_filter(*t.branch_type)) a.branch_sample_type = *m;
    } else {
      clear_bit(a, kSampleBranchStack);
    }
  }
  if (t.max_events) e.max_events = t.max_events;
  if (t.inherit) a.set(kAttrInherit, *t.inherit);
  if (t.overwrite) a.set(kAttrWriteBackward, *t.overwrite);
  if (t.aux_output) a.set(kAttrAuxOutput, *t.aux_output);

  // A per-event call graph replaces the global one.
  if (!t.call_graph && !(t.stack_size && *t.stack_size) && !(t.max_stack && *t.max_stack)) return;
  CallGraphOptions cg;
  cg.mode = CallGraphMode::kFp;
  bool enabled = true;
  std::string mode = t.call_graph.value_or("fp");
  if (t.max_stack) cg.max_stack = static_cast<std::uint16_t>(*t.max_stack);
  if (mode == "no") {
    enabled = false;
  } else if (auto parsed = parse_call_graph(mode)) {
    cg.mode = parsed->mode;
    cg.dump_size = parsed->dump_size;
  } else {
    out.warnings.push_back(fmt::format(
        "per-event callgraph setting for {} failed. Apply callgraph global setting for it",
        e.name));
    return;
  }
  if (t.stack_size && *t.stack_size)
    cg.dump_size = static_cast<std::uint32_t>(align_up(*t.stack_size, 8));
  if (o.call_graph.mode != CallGraphMode::kNone) {
    // perf's evsel__reset_callgraph.
    clear_bit(a, kSampleCallchain);
    if (o.call_graph.mode == CallGraphMode::kLbr) {
      clear_bit(a, kSampleBranchStack);
      a.branch_sample_type &=
          ~(kBranchUser | kBranchCallStack | kBranchNoCycles | kBranchNoFlags | kBranchHwIndex);
    }
    if (o.call_graph.mode == CallGraphMode::kDwarf) {
      clear_bit(a, kSampleRegsUser);
      clear_bit(a, kSampleStackUser);
    }
    a.set(kAttrExcludeCallchainUser, false);
    a.set(kAttrExcludeCallchainKernel, false);
  }
  if (!enabled) return;
  if (cg.mode == CallGraphMode::kDwarf) {
    set_bit(a, kSampleAddr);
    set_bit(a, kSampleDataSrc);
    a.set(kAttrMmapData, e.tracking);
  }
  config_callchain(e, o, cg, out);
}

}  // namespace

void set_sample_ids(std::vector<RecordEvent>& events, bool force_identifier) {
  bool identifier = force_identifier;
  for (const auto& e : events)
    if (e.attr.sample_type != events.front().attr.sample_type) identifier = true;
  for (auto& e : events) {
    if (identifier) {
      clear_bit(e.attr, kSampleId);
      set_bit(e.attr, kSampleIdentifier);
    } else {
      set_bit(e.attr, kSampleId);
    }
    e.attr.read_format |= kFormatId;
  }
}

namespace {

RecordEvent from_spec(const EventSpec& s) {
  RecordEvent e;
  e.attr = s.attr;
  e.name = s.name;
  e.leader = s.leader;
  e.group = s.group;
  e.precise_max = s.precise_max;
  e.sample_read = s.sample_read;
  e.pmu = s.pmu;
  e.tracepoint = s.tracepoint;
  e.filter = s.filter;
  e.cgroup = s.cgroup;
  e.unit = s.unit;
  e.scale = s.scale;
  // perf counts the clocks in msec (evsel__new_idx), which its EVENT_UPDATE
  // records carry.
  if (s.attr.type == kTypeSoftware && s.attr.config <= 1) {
    e.unit = "msec";
    e.scale = 1e-6;
  }
  return e;
}

// perf's evsel__new_cycles: the default event, precise_max, and
// exclude_guest as event_attr_init sets it, but on AMD CPUs
// (arch_evsel__fixup_new_cycles: precise cycles are IBS there, which cannot
// leave guests out).
RecordEvent default_cycles(bool amd) {
  RecordEvent e;
  e.attr.type = kTypeHardware;
  e.attr.config = 0;
  e.attr.size = kAttrSizeVer7;
  e.attr.set(kAttrExcludeGuest, !amd);
  e.name = "cycles";
  e.precise_max = true;
  return e;
}

// perf's evlist__dummy_event: period 1 so it never runs a timer.
RecordEvent tracking_dummy(std::size_t index) {
  RecordEvent e;
  e.attr.type = kTypeSoftware;
  e.attr.config = 9;
  e.attr.size = kAttrSizeVer7;
  e.attr.sample_period = 1;
  e.name = default_event_name(e.attr);
  e.default_name = true;
  e.leader = index;
  return e;
}

// evsel__config's first part: ids, inheritance, the read format with a
// group's reads, and the sampling rate.
void config_rate(RecordEvent& e, std::size_t group_size, const Rates& rates, const RecordOptions& o,
                 bool no_inherit) {
  EventAttr& a = e.attr;
  a.set(kAttrSampleIdAll);
  a.set(kAttrInherit, !no_inherit);
  a.read_format = kFormatLost;
  set_bit(a, kSampleIp);
  set_bit(a, kSampleTid);
  if (e.sample_read) {
    set_bit(a, kSampleRead);
    set_bit(a, kSampleId);
    a.read_format |= kFormatId;
    if (group_size > 1) {
      a.read_format |= kFormatGroup;
      a.set(kAttrInherit, false);
    }
  }
  const bool user_rate = o.user_freq || o.freq_max || o.user_period;
  if (a.sample_period == 0 || user_rate) {
    if (rates.freq) {
      a.set(kAttrFreq);
      a.sample_period = rates.freq;
    } else {
      a.sample_period = rates.interval;
    }
  }
  if (a.freq()) set_bit(a, kSamplePeriod);
  if (o.no_samples) a.sample_period = 0;
  if (o.inherit_stat) {
    a.read_format |= kFormatTotalTimeEnabled | kFormatTotalTimeRunning | kFormatId;
    a.set(kAttrInheritStat);
  }
}

// What each sample carries, as the options ask: addresses, call chains,
// registers, cpu and time, raw data, branch stacks, weights.
void config_sample_type(RecordEvent& e, const RecordOptions& o, bool no_inherit,
                        RecordConfig& out) {
  EventAttr& a = e.attr;
  const Target& t = o.target;
  const bool per_cpu = !(t.per_thread && !t.has_cpu());
  if (o.sample_address) {
    set_bit(a, kSampleAddr);
    a.set(kAttrMmapData, e.tracking);
  }
  if (o.call_graph.mode != CallGraphMode::kNone) config_callchain(e, o, o.call_graph, out);
  if (o.intr_regs && !is_dummy(a)) {
    a.sample_regs_intr = o.intr_regs;
    set_bit(a, kSampleRegsIntr);
  }
  if (o.user_regs && !is_dummy(a)) {
    a.sample_regs_user |= o.user_regs;
    set_bit(a, kSampleRegsUser);
  }
  if (t.has_cpu() || o.sample_cpu) set_bit(a, kSampleCpu);
  if (o.sample_time && (!no_inherit || t.has_cpu() || per_cpu || o.sample_time_set))
    set_bit(a, kSampleTime);
  if (o.raw_samples) {
    set_bit(a, kSampleTime);
    set_bit(a, kSampleRaw);
    set_bit(a, kSampleCpu);
  }
  if (o.sample_address) set_bit(a, kSampleDataSrc);
  if (o.phys_data) set_bit(a, kSamplePhysAddr);
  if (o.no_buffering) {
    a.set(kAttrWatermark, false);
    a.wakeup_events = 1;
  }
  if (o.overwrite) a.set(kAttrWriteBackward, true);  // --overwrite: a flight recorder
  if (o.branch_stack) {
    set_bit(a, kSampleBranchStack);
    a.branch_sample_type = o.branch_stack;
  }
  if (o.sample_weight) set_bit(a, kSampleWeightStruct);  // x86's arch_evsel__set_sample_weight
}

// The side-band the tracking event asks for (task, mmap, comm, ...).
void config_tracking(EventAttr& a, const RecordOptions& o, bool track) {
  a.set(kAttrTask, track);
  a.set(kAttrMmap, track);
  a.set(kAttrMmap2, track);
  a.set(kAttrComm, track);
  a.set(kAttrCommExec, track);  // evlist__config: the tracking event flags exec COMMs
  a.set(kAttrBuildId, track && o.buildid_mmap);
  a.set(kAttrKsymbol, track);
  a.set(kAttrBpfEvent, track && !o.no_bpf_event);
  if (o.namespaces) a.set(kAttrNamespaces, track);
  if (o.all_cgroups) {
    a.set(kAttrCgroup, track);
    set_bit(a, kSampleCgroup);
  }
  if (o.data_page_size) set_bit(a, kSampleDataPageSize);
  if (o.code_page_size) set_bit(a, kSampleCodePageSize);
  if (o.switch_events) a.set(kAttrContextSwitch, track);
  if (o.running_time) a.read_format |= kFormatTotalTimeEnabled | kFormatTotalTimeRunning;
}

// When the event counts: disabled until enabled (on exec for a workload),
// the clock, precision and the privilege levels.
void config_enabling(RecordEvent& e, const RecordOptions& o, bool is_leader) {
  EventAttr& a = e.attr;
  if (is_leader) a.set(kAttrDisabled);
  if (o.target.none() && is_leader && !o.initial_delay_ms) a.set(kAttrEnableOnExec);
  if (e.immediate) {
    a.set(kAttrDisabled, false);
    a.set(kAttrEnableOnExec, false);
  }
  if (o.clockid) {
    a.set(kAttrUseClockid);
    a.clockid = *o.clockid;
  }
  if (e.precise_max) a.set_precise_ip(3);
  if (o.all_user) {
    a.set(kAttrExcludeKernel);
    a.set(kAttrExcludeUser, false);
  }
  if (o.all_kernel) {
    a.set(kAttrExcludeKernel, false);
    a.set(kAttrExcludeUser);
  }
}

// perf's evsel__config for one event.
void config_event(RecordEvent& e, const ConfigTerms& terms, std::size_t group_size,
                  const Rates& rates, const RecordOptions& o, RecordConfig& out) {
  const Target& t = o.target;
  const bool per_thread = t.per_thread && !t.has_cpu();
  const bool no_inherit = o.no_inherit || per_thread || !t.tids.empty();
  const bool is_leader = e.leader == static_cast<std::size_t>(&e - out.events.data());
  config_rate(e, group_size, rates, o, no_inherit);
  config_sample_type(e, o, no_inherit, out);
  config_tracking(e.attr, o, e.tracking);
  config_enabling(e, o, is_leader);
  // perf gives every event a unit ("" at least), and a unit asks for ids.
  e.attr.read_format |= kFormatId;
  apply_terms(e, terms, o, out);
  if (o.period_set) set_bit(e.attr, kSamplePeriod);
  if (is_dummy(e.attr)) clear_bit(e.attr, kSampleBranchStack);
}

// perf's evsel__config_leader_sampling: members of a :S group do not sample.
void config_leader_sampling(std::vector<RecordEvent>& events, const EventList& specs) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    RecordEvent& e = events[i];
    const RecordEvent& leader = events[e.leader];
    if (!leader.sample_read || e.leader == i) continue;
    const ConfigTerms* terms = i < specs.size() ? &specs.events[i].terms : nullptr;
    if (!terms || !terms->sets_sampling()) {
      e.attr.set(kAttrFreq, false);
      e.attr.sample_period = 0;
    }
    if (!terms || !terms->overwrite) e.attr.set(kAttrWriteBackward, false);
    e.attr.sample_type = leader.attr.sample_type;
  }
}

}  // namespace

Expected<RecordConfig> configure_record(const EventList& specs, const RecordOptions& opts,
                                        const RecordLimits& limits) {
  RecordConfig out;
  RecordOptions o = opts;
  // perf turns on data addresses for dwarf unwinding when it parses the option.
  if (o.call_graph.mode == CallGraphMode::kDwarf && o.call_graph.dwarf_data_addresses)
    o.sample_address = true;
  PK_ASSIGN(Rates rates, configure_rates(o, limits, out));
  out.freq = rates.freq;
  out.interval = rates.interval;

  if (specs.empty()) {
    out.events.push_back(default_cycles(limits.amd));
  } else {
    for (const auto& s : specs.events) out.events.push_back(from_spec(s));
    out.groups = specs.groups;
  }
  if (o.group && out.events.size() > 1 && out.groups.empty()) {
    out.groups.push_back({"", 0, out.events.size()});
    for (auto& e : out.events) {
      e.leader = 0;
      e.group = 0;
    }
  }
  out.events.front().tracking = true;
  // A dummy carries the side-band when events start late or run system-wide.
  const bool has_cpu = o.target.has_cpu();
  if (o.initial_delay_ms || has_cpu) {
    if (!is_dummy(out.events.front().attr)) {
      for (auto& e : out.events) e.tracking = false;
      out.events.push_back(tracking_dummy(out.events.size()));
      out.events.back().tracking = true;
    }
    RecordEvent& d = out.events.back();
    if (o.initial_delay_ms && !has_cpu)
      d.attr.set(kAttrEnableOnExec);
    else
      d.immediate = true;
  }
  static const ConfigTerms kNoTerms;
  for (std::size_t i = 0; i < out.events.size(); ++i) {
    RecordEvent& e = out.events[i];
    const ConfigTerms& terms = i < specs.events.size() ? specs.events[i].terms : kNoTerms;
    std::size_t group_size = 0;
    for (const auto& m : out.events) group_size += m.leader == e.leader;
    config_event(e, terms, group_size, rates, o, out);
    // The tracking dummy waiting for exec keeps enable_on_exec.
    if (e.immediate == false && e.tracking && is_dummy(e.attr) && o.initial_delay_ms && !has_cpu)
      e.attr.set(kAttrEnableOnExec);
  }
  config_leader_sampling(out.events, specs);
  if (o.sample_identifier || out.events.size() > 1) set_sample_ids(out.events, o.sample_identifier);
  return out;
}

}  // namespace perfkit::capture
