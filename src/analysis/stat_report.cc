#include "analysis/stat_report.h"

#include <algorithm>

#include "abi/perf_event.h"
#include "perfdata/features.h"
#include "record/records.h"

namespace perfkit::analysis {

using namespace perfkit::abi;

namespace {

std::vector<int> parse_cpus(std::string_view text) {
  std::vector<int> out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(at, end - at);
    auto dash = part.find('-');
    int lo = 0, hi = 0;
    auto num = [](std::string_view s) {
      int v = 0;
      for (char c : s)
        if (c >= '0' && c <= '9') v = v * 10 + (c - '0');
      return v;
    };
    lo = num(part.substr(0, dash));
    hi = dash == std::string_view::npos ? lo : num(part.substr(dash + 1));
    for (int c = lo; c <= hi; ++c) out.push_back(c);
    at = end + 1;
  }
  return out;
}

// The file's state as perf stat report builds it.
struct StatFile {
  StatSetup setup;
  AggrMode mode = AggrMode::kGlobal;
  std::uint64_t interval_ms = 0;
  bool scale = true;
  bool have_config = false, have_threads = false, have_cpus = false;
  StatReading reading;
  std::unique_ptr<StatEngine> engine;
  std::unique_ptr<StatPrinter> printer;
};

void apply_topology(const perfdata::Features& f, StatSetup& s) {
  for (int cpu : s.cpus) {
    if (cpu < 0) continue;
    CpuPlace p;
    if (f.cpu_topology && static_cast<std::size_t>(cpu) < f.cpu_topology->cpus.size()) {
      const auto& ids = f.cpu_topology->cpus[static_cast<std::size_t>(cpu)];
      p.socket = ids.socket_id, p.die = ids.die_id, p.core = ids.core_id;
    }
    if (f.numa_topology)
      for (const auto& n : *f.numa_topology) {
        auto cpus = parse_cpus(n.cpus);
        if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end())
          p.node = static_cast<int>(n.node);
      }
    s.topology[cpu] = p;
  }
}

}  // namespace

Status stat_report(perfdata::Reader& reader, const StatReportOptions& opts,
                   const std::function<void(const std::string&)>& out) {
  PK_ASSIGN(perfdata::Features feats,
            perfdata::parse_features(reader.features(), reader.swapped()));
  StatFile file;
  const auto& es = reader.events();
  for (std::size_t i = 0; i < es.size(); ++i) {
    StatEvent e;
    e.name = es[i].name;
    e.attr = es[i].attr;
    e.supported = false;  // until a STAT names it, as perf
    e.leader = i;
    if (is_clock_event(e.attr)) e.unit = "msec", e.scale = 1e-6;
    file.setup.events.push_back(std::move(e));
  }
  if (feats.group_desc)
    for (const auto& g : *feats.group_desc)
      for (std::uint32_t m = 0; m < g.nr_members && g.leader_idx + m < file.setup.events.size();
           ++m) {
        file.setup.events[g.leader_idx + m].leader = g.leader_idx;
        if (m == 0) file.setup.events[g.leader_idx].group_size = g.nr_members;
      }
  auto start = [&]() {
    file.setup.comms.resize(file.setup.threads.size());
    apply_topology(feats, file.setup);
    const std::size_t slots = file.setup.cpus.size() * file.setup.threads.size();
    file.reading.values.assign(file.setup.events.size(), std::vector<CounterValue>(slots));
    file.reading.ok.assign(file.setup.events.size(), std::vector<bool>(slots, false));
  };
  auto make_engine = [&]() {
    // perf keeps the global mode for task data (no cpus to aggregate).
    AggrMode mode = file.mode;
    const bool task_data = file.setup.cpus.size() == 1 && file.setup.cpus[0] == -1;
    if (opts.aggr && !task_data) mode = *opts.aggr;
    file.engine = std::make_unique<StatEngine>(file.setup, mode, file.scale);
    StatPrintOptions p = opts.print;
    p.interval_ms = file.interval_ms;
    p.target = {StatTargetDesc::kWorkload, feats.cmdline.value_or(std::vector<std::string>{}), {}};
    p.run_count = 1;
    p.ru_display = false;
    file.printer = std::make_unique<StatPrinter>(*file.engine, p);
  };
  perfdata::ReadRecord rec;
  for (;;) {
    PK_ASSIGN(bool more, reader.next(rec));
    if (!more) break;
    const auto& v = rec.view;
    auto where = [&](const Error& e) {
      return e.with_context(fmt::format("{} at offset {:#x}", reader.name(), v.offset));
    };
    switch (v.type) {
      case kRecordEventUpdate: {
        auto u = record::parse_event_update(v);
        if (!u) return where(u.error());
        int idx = es.index_of_id(u->id);
        if (idx < 0) break;
        auto& e = file.setup.events[static_cast<std::size_t>(idx)];
        if (u->type == record::EventUpdateRecord::kUnit) e.unit = std::string(u->text);
        if (u->type == record::EventUpdateRecord::kScale) e.scale = u->scale;
        if (u->type == record::EventUpdateRecord::kName) e.name = std::string(u->text);
        break;
      }
      case kRecordThreadMap: {
        auto t = record::parse_thread_map(v);
        if (!t) return where(t.error());
        if (file.have_threads) break;  // perf: "Extra thread map event, ignoring."
        file.setup.threads.clear();
        file.setup.comms.clear();
        for (std::uint64_t i = 0; i < t->nr; ++i) {
          file.setup.threads.push_back(static_cast<pid_t>(static_cast<std::int64_t>(t->pid(i))));
          file.setup.comms.emplace_back(t->comm(i));
        }
        file.have_threads = true;
        break;
      }
      case kRecordCpuMap: {
        auto c = record::parse_cpu_map(v);
        if (!c) return where(c.error());
        if (file.have_cpus) break;
        file.setup.cpus.clear();
        c->for_each([&](std::int32_t cpu) { file.setup.cpus.push_back(cpu); });
        file.have_cpus = true;
        break;
      }
      case kRecordStatConfig: {
        auto c = record::parse_stat_config(v);
        if (!c) return where(c.error());
        for (std::uint64_t i = 0; i < c->nr; ++i) {
          if (c->tag(i) == kStatConfigAggrMode) {
            auto m = aggr_mode_from_perf(c->val(i));
            if (m) file.mode = *m;
          } else if (c->tag(i) == kStatConfigInterval) {
            file.interval_ms = c->val(i);
          } else if (c->tag(i) == kStatConfigScale) {
            file.scale = c->val(i) != 0;
          }
        }
        file.have_config = true;
        break;
      }
      case kRecordStat: {
        auto st = record::parse_stat(v);
        if (!st) return where(st.error());
        if (!file.have_threads || !file.have_cpus)
          return where(make_error("STAT before the THREAD_MAP and CPU_MAP records"));
        if (file.reading.values.empty()) start();
        int idx = es.index_of_id(st->id);
        if (idx < 0) return where(make_error("STAT for id {} of no event", st->id));
        const auto& cpus = file.setup.cpus;
        auto cit = std::find(cpus.begin(), cpus.end(), static_cast<std::int32_t>(st->cpu));
        if (cit == cpus.end() || st->thread >= file.setup.threads.size())
          return where(
              make_error("STAT for cpu {} thread {} outside the maps ({} cpus, {} threads)",
                         static_cast<std::int32_t>(st->cpu), st->thread, cpus.size(),
                         file.setup.threads.size()));
        const std::size_t slot =
            static_cast<std::size_t>(cit - cpus.begin()) * file.setup.threads.size() + st->thread;
        auto ev = static_cast<std::size_t>(idx);
        file.reading.values[ev][slot] = {st->val, st->ena, st->run, st->id, 0};
        file.reading.ok[ev][slot] = true;
        file.setup.events[ev].supported = true;
        break;
      }
      case kRecordStatRound: {
        auto r = record::parse_stat_round(v);
        if (!r) return where(r.error());
        if (file.reading.values.empty()) start();
        if (!file.engine) make_engine();
        // Events without counts read as failed reads, so they show not counted.
        for (std::size_t ev = 0; ev < file.setup.events.size(); ++ev)
          if (!file.setup.events[ev].supported)
            std::fill(file.reading.ok[ev].begin(), file.reading.ok[ev].end(), false);
        if (r->type == kStatRoundFinal) {
          file.engine->add_run(file.reading, r->time);
          out(file.printer->final_report());
        } else {
          file.engine->add_interval(file.reading, 0, /*reset_shadow=*/false);
          out(file.printer->interval(r->time));
        }
        break;
      }
      default:
        break;
    }
  }
  if (!file.have_config && !file.engine)
    return make_error("{}: no stat data (not written by 'perf stat record')", reader.name());
  return ok();
}

}  // namespace perfkit::analysis
