#include "stat/stat.h"

#include <algorithm>
#include <cmath>

namespace perfkit::stat {

using namespace perfkit::abi;

int aggr_mode_to_perf(AggrMode m) {
  // perf's enum aggr_mode: NONE, GLOBAL, SOCKET, DIE, CORE, THREAD, UNSET, NODE.
  switch (m) {
    case AggrMode::kNone:
      return 0;
    case AggrMode::kGlobal:
      return 1;
    case AggrMode::kSocket:
      return 2;
    case AggrMode::kDie:
      return 3;
    case AggrMode::kCore:
      return 4;
    case AggrMode::kThread:
      return 5;
    case AggrMode::kNode:
      return 7;
  }
  return 1;
}

std::optional<AggrMode> aggr_mode_from_perf(std::uint64_t v) {
  switch (v) {
    case 0:
      return AggrMode::kNone;
    case 1:
      return AggrMode::kGlobal;
    case 2:
      return AggrMode::kSocket;
    case 3:
      return AggrMode::kDie;
    case 4:
      return AggrMode::kCore;
    case 5:
      return AggrMode::kThread;
    case 7:
      return AggrMode::kNode;
    default:
      return std::nullopt;
  }
}

void RunningStats::update(std::uint64_t v) {
  const double val = static_cast<double>(v);
  n += 1;
  const double delta = val - mean;
  mean += delta / n;
  m2 += delta * (val - mean);
  if (val > max) max = val;
  if (n == 1 || val < min) min = val;
}

double RunningStats::stddev() const {
  if (n < 2) return 0.0;
  const double variance = m2 / (n - 1);
  return std::sqrt(variance / n);
}

double rel_stddev(double stddev, double avg) { return avg != 0 ? 100.0 * stddev / avg : 0.0; }

int event_context(const EventAttr& a) {
  // perf's CTX_BIT_{KERNEL,USER,HV,HOST,IDLE}.
  int ctx = 0;
  if (a.has(kAttrExcludeKernel)) ctx |= 1 << 0;
  if (a.has(kAttrExcludeUser)) ctx |= 1 << 1;
  if (a.has(kAttrExcludeHv)) ctx |= 1 << 2;
  if (a.has(kAttrExcludeHost)) ctx |= 1 << 3;
  if (a.has(kAttrExcludeIdle)) ctx |= 1 << 4;
  return ctx;
}

bool is_clock_event(const EventAttr& a) {
  return a.type == kTypeSoftware && (a.config == 0 || a.config == 1);
}

namespace {

std::tuple<int, int, int, int, int> sort_key(const AggrSlot& s) {
  return {s.node, s.socket, s.die, s.core, s.cpu};
}

CpuPlace place_of(const StatSetup& setup, int cpu) {
  auto it = setup.topology.find(cpu);
  return it == setup.topology.end() ? CpuPlace{} : it->second;
}

}  // namespace

std::vector<AggrSlot> aggr_slots(const StatSetup& setup, AggrMode mode) {
  const std::size_t nthreads = setup.threads.size();
  std::vector<AggrSlot> out;
  if (mode == AggrMode::kGlobal) {
    AggrSlot s;
    s.nr = static_cast<int>(setup.cpus.size());
    for (std::size_t i = 0; i < setup.cpus.size() * nthreads; ++i) s.slots.push_back(i);
    out.push_back(std::move(s));
    return out;
  }
  if (mode == AggrMode::kThread) {
    for (std::size_t t = 0; t < nthreads; ++t) {
      AggrSlot s;
      s.thread = static_cast<int>(t);
      for (std::size_t c = 0; c < setup.cpus.size(); ++c) s.slots.push_back(c * nthreads + t);
      out.push_back(std::move(s));
    }
    return out;
  }
  for (std::size_t c = 0; c < setup.cpus.size(); ++c) {
    const int cpu = setup.cpus[c];
    const CpuPlace p = place_of(setup, cpu);
    AggrSlot id;
    switch (mode) {
      case AggrMode::kNone:
        id.cpu = cpu;
        id.socket = p.socket, id.die = p.die, id.core = p.core;
        break;
      case AggrMode::kCore:
        id.socket = p.socket, id.die = p.die, id.core = p.core;
        break;
      case AggrMode::kDie:
        id.socket = p.socket, id.die = p.die;
        break;
      case AggrMode::kSocket:
        id.socket = p.socket;
        break;
      case AggrMode::kNode:
        id.node = p.node;
        break;
      default:
        break;
    }
    auto same = [&](const AggrSlot& s) { return sort_key(s) == sort_key(id); };
    auto it = mode == AggrMode::kNone ? out.end() : std::find_if(out.begin(), out.end(), same);
    if (it == out.end()) {
      out.push_back(id);
      it = out.end() - 1;
    }
    it->nr++;
    for (std::size_t t = 0; t < nthreads; ++t) it->slots.push_back(c * nthreads + t);
  }
  if (mode != AggrMode::kNone)
    std::stable_sort(out.begin(), out.end(), [](const AggrSlot& a, const AggrSlot& b) {
      return sort_key(a) < sort_key(b);
    });
  return out;
}

StatEngine::StatEngine(StatSetup setup, AggrMode mode, bool scale)
    : setup_(std::move(setup)), mode_(mode), scale_(scale) {
  slots_ = aggr_slots(setup_, mode_);
  shown_.assign(setup_.events.size(), std::vector<StatValue>(slots_.size()));
  for (auto& per_event : shown_)
    for (auto& v : per_event) v.counted = false;
  res_stats_.resize(setup_.events.size());
}

namespace {

CounterValue delta(const CounterValue& now, const CounterValue* prev) {
  if (!prev) return now;
  CounterValue d = now;
  d.value -= prev->value;
  d.enabled -= prev->enabled;
  d.running -= prev->running;
  return d;
}

bool read_failed(const StatReading& r, std::size_t ev) {
  return std::find(r.ok[ev].begin(), r.ok[ev].end(), false) != r.ok[ev].end();
}

}  // namespace

// perf's process_counter_values / aggr_cb / sort_aggr_thread: the global
// count is summed raw and scaled once; the other modes scale every (cpu,
// thread) value, then sum, and one bad cpu makes the whole id not counted.
StatValue StatEngine::aggregate(std::size_t ev, const AggrSlot& slot, const StatReading& r,
                                const StatReading* prev) const {
  StatValue out;
  const StatEvent& e = setup_.events[ev];
  if (!e.supported || read_failed(r, ev)) {
    out.counted = false;
    return out;
  }
  const auto& vals = r.values[ev];
  const auto* pvals = prev ? &prev->values[ev] : nullptr;
  if (mode_ == AggrMode::kGlobal) {
    CounterValue sum, psum;
    for (std::size_t s : slot.slots) {
      sum.value += vals[s].value, sum.enabled += vals[s].enabled, sum.running += vals[s].running;
      if (pvals) {
        const auto& p = (*pvals)[s];
        psum.value += p.value, psum.enabled += p.enabled, psum.running += p.running;
      }
    }
    CounterValue d = delta(sum, pvals ? &psum : nullptr);
    ScaledCount sc = scale_count(d, scale_);
    out.val = static_cast<double>(sc.value);
    out.ena = d.enabled;
    out.run = d.running;
    out.counted = sc.state != ScaleState::kNotRunning && out.run != 0 && out.ena != 0;
    return out;
  }
  std::uint64_t val = 0;
  bool bad = false;
  for (std::size_t s : slot.slots) {
    CounterValue d = delta(vals[s], pvals ? &(*pvals)[s] : nullptr);
    ScaledCount sc = scale_count(d, scale_);
    if (mode_ != AggrMode::kNone && mode_ != AggrMode::kThread &&
        (d.enabled == 0 || d.running == 0)) {
      bad = true;
      break;
    }
    val += sc.value;
    out.ena += d.enabled;
    out.run += d.running;
  }
  out.val = static_cast<double>(val);
  if (bad) out.ena = out.run = 0;
  out.counted = out.run != 0 && out.ena != 0;
  return out;
}

void StatEngine::update_shadow(std::size_t ev, double count, std::size_t aggr) {
  const EventAttr& a = setup_.events[ev].attr;
  const int ctx = event_context(a);
  // (the figures of each cgroup apart, as perf's saved values)
  const int cg = static_cast<int>(setup_.events[ev].cgroup_id << 8);
  auto put = [&](ShadowKind k, double v, int c) {
    shadow_[{static_cast<int>(k), c + cg, aggr}].update(static_cast<std::uint64_t>(v));
  };
  const double scaled = count * setup_.events[ev].scale;
  if (is_clock_event(a)) {
    put(ShadowKind::kNsecs, count, 0);  // clock time ignores the context
    return;
  }
  auto cache = [&](std::uint64_t id) { return a.type == kTypeHwCache && (a.config & 0xff) == id; };
  if (a.type == kTypeHardware) {
    switch (a.config) {
      case 0:
        return put(ShadowKind::kCycles, scaled, ctx);
      case 7:
        return put(ShadowKind::kStalledFront, scaled, ctx);
      case 8:
        return put(ShadowKind::kStalledBack, scaled, ctx);
      case 4:
        return put(ShadowKind::kBranches, scaled, ctx);
      case 2:
        return put(ShadowKind::kCacheRefs, scaled, ctx);
      default:
        return;
    }
  }
  if (cache(0)) return put(ShadowKind::kL1Dcache, scaled, ctx);
  if (cache(1)) return put(ShadowKind::kL1Icache, scaled, ctx);
  if (cache(2)) return put(ShadowKind::kLlCache, scaled, ctx);
  if (cache(3)) return put(ShadowKind::kDtlbCache, scaled, ctx);
  if (cache(4)) return put(ShadowKind::kItlbCache, scaled, ctx);
}

void StatEngine::process(const StatReading& reading, const StatReading* previous) {
  for (std::size_t ev = 0; ev < setup_.events.size(); ++ev) {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      StatValue v = aggregate(ev, slots_[i], reading, previous);
      shown_[ev][i] = v;
      // perf skips an event it could not read; one that did not run still
      // adds its 0 to the statistics.
      if (!setup_.events[ev].supported || read_failed(reading, ev)) continue;
      // Global: the run statistics behind the noise column.
      if (mode_ == AggrMode::kGlobal) {
        res_stats_[ev][0].update(static_cast<std::uint64_t>(v.val));
        res_stats_[ev][1].update(v.ena);
        res_stats_[ev][2].update(v.run);
      }
      update_shadow(ev, v.val, i);
    }
  }
}

void StatEngine::add_run(const StatReading& reading, std::uint64_t wall_ns) {
  // Aggregated modes other than -A and --per-thread recompute their shadow
  // figures from the last run only (perf updates them when printing).
  if (mode_ != AggrMode::kGlobal && mode_ != AggrMode::kNone && mode_ != AggrMode::kThread)
    shadow_.clear();
  process(reading, nullptr);
  walltime_.update(wall_ns);
  run_walltimes_.push_back(wall_ns);
  ++runs_;
}

void StatEngine::add_interval(const StatReading& reading, std::uint64_t interval_ns,
                              bool reset_shadow) {
  if (reset_shadow) shadow_.clear();
  process(reading, previous_ ? &*previous_ : nullptr);
  previous_ = reading;
  walltime_ = RunningStats{};
  walltime_.update(interval_ns);
  runs_ = 1;
}

double StatEngine::noise_stddev(std::size_t ev) const { return res_stats_[ev][0].stddev(); }

double StatEngine::shadow_avg(ShadowKind kind, int ctx, std::size_t aggr,
                              std::size_t cgroup) const {
  if (kind == ShadowKind::kNsecs) ctx = 0;
  ctx += static_cast<int>(cgroup << 8);
  auto it = shadow_.find({static_cast<int>(kind), ctx, aggr});
  return it == shadow_.end() ? 0.0 : it->second.mean;
}

double StatEngine::shadow_n(ShadowKind kind, int ctx, std::size_t aggr, std::size_t cgroup) const {
  if (kind == ShadowKind::kNsecs) ctx = 0;
  ctx += static_cast<int>(cgroup << 8);
  auto it = shadow_.find({static_cast<int>(kind), ctx, aggr});
  return it == shadow_.end() ? 0.0 : it->second.n;
}

}  // namespace perfkit::stat
