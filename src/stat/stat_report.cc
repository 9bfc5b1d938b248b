#include "stat/stat_report.h"

#include <algorithm>

#include "abi/perf_event.h"
#include "base/text.h"
#include "perfdata/features.h"
#include "record/records.h"

namespace perfkit::stat {

using namespace perfkit::abi;

namespace {

// A cpu list of the file's topology; what does not parse counts as none.
std::vector<int> parse_cpus(std::string_view text) {
  auto cpus = parse_cpu_list(text);
  return cpus ? std::move(*cpus) : std::vector<int>{};
}

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

// A perf stat record file read as perf stat report reads it: the events and
// maps set up, each STAT kept as a reading, each STAT_ROUND printed.
class StatFile {
 public:
  StatFile(const perfdata::Reader& reader, const perfdata::Features& feats,
           const StatReportOptions& opts, const std::function<void(const std::string&)>& out)
      : reader_(reader), feats_(feats), opts_(opts), out_(out) {
    add_events();
  }

  // Errors: a record that does not parse, or STATs outside the maps.
  Status on_record(const record::RecordView& v) {
    switch (v.type) {
      case kRecordEventUpdate:
        return on_event_update(v);
      case kRecordThreadMap:
        return on_thread_map(v);
      case kRecordCpuMap:
        return on_cpu_map(v);
      case kRecordStatConfig:
        return on_stat_config(v);
      case kRecordStat:
        return on_stat(v);
      case kRecordStatRound:
        return on_stat_round(v);
      default:
        return ok();
    }
  }
  // Whether the file had stat data at all.
  bool any() const { return have_config_ || engine_; }

 private:
  // The recorded events, unsupported until a STAT names them (as perf),
  // in their groups.
  void add_events() {
    const auto& es = reader_.events();
    for (std::size_t i = 0; i < es.size(); ++i) {
      StatEvent e;
      e.name = es[i].name;
      e.attr = es[i].attr;
      e.supported = false;
      e.leader = i;
      if (is_clock_event(e.attr)) e.unit = "msec", e.scale = 1e-6;
      setup_.events.push_back(std::move(e));
    }
    if (!feats_.group_desc) return;
    for (const auto& g : *feats_.group_desc)
      for (std::uint32_t m = 0; m < g.nr_members && g.leader_idx + m < setup_.events.size(); ++m) {
        setup_.events[g.leader_idx + m].leader = g.leader_idx;
        if (m == 0) setup_.events[g.leader_idx].group_size = g.nr_members;
      }
  }
  Error where(const record::RecordView& v, const Error& e) const {
    return e.with_context(fmt::format("{} at offset {:#x}", reader_.name(), v.offset));
  }
  Status on_event_update(const record::RecordView& v) {
    auto u = record::parse_event_update(v);
    if (!u) return where(v, u.error());
    int idx = reader_.events().index_of_id(u->id);
    if (idx < 0) return ok();
    auto& e = setup_.events[static_cast<std::size_t>(idx)];
    if (u->type == record::EventUpdateRecord::kUnit) e.unit = std::string(u->text);
    if (u->type == record::EventUpdateRecord::kScale) e.scale = u->scale;
    if (u->type == record::EventUpdateRecord::kName) e.name = std::string(u->text);
    return ok();
  }
  Status on_thread_map(const record::RecordView& v) {
    auto t = record::parse_thread_map(v);
    if (!t) return where(v, t.error());
    if (have_threads_) return ok();  // perf: "Extra thread map event, ignoring."
    setup_.threads.clear();
    setup_.comms.clear();
    for (std::uint64_t i = 0; i < t->nr; ++i) {
      setup_.threads.push_back(static_cast<pid_t>(static_cast<std::int64_t>(t->pid(i))));
      setup_.comms.emplace_back(t->comm(i));
    }
    have_threads_ = true;
    return ok();
  }
  Status on_cpu_map(const record::RecordView& v) {
    auto c = record::parse_cpu_map(v);
    if (!c) return where(v, c.error());
    if (have_cpus_) return ok();
    setup_.cpus.clear();
    c->for_each([&](std::int32_t cpu) { setup_.cpus.push_back(cpu); });
    have_cpus_ = true;
    return ok();
  }
  Status on_stat_config(const record::RecordView& v) {
    auto c = record::parse_stat_config(v);
    if (!c) return where(v, c.error());
    for (std::uint64_t i = 0; i < c->nr; ++i) {
      if (c->tag(i) == kStatConfigAggrMode) {
        if (auto m = aggr_mode_from_perf(c->val(i))) mode_ = *m;
      } else if (c->tag(i) == kStatConfigInterval) {
        interval_ms_ = c->val(i);
      } else if (c->tag(i) == kStatConfigScale) {
        scale_ = c->val(i) != 0;
      }
    }
    have_config_ = true;
    return ok();
  }
  Status on_stat(const record::RecordView& v) {
    auto st = record::parse_stat(v);
    if (!st) return where(v, st.error());
    if (!have_threads_ || !have_cpus_)
      return where(v, make_error("STAT before the THREAD_MAP and CPU_MAP records"));
    if (reading_.values.empty()) start();
    int idx = reader_.events().index_of_id(st->id);
    if (idx < 0) return where(v, make_error("STAT for id {} of no event", st->id));
    const auto& cpus = setup_.cpus;
    auto cit = std::find(cpus.begin(), cpus.end(), static_cast<std::int32_t>(st->cpu));
    if (cit == cpus.end() || st->thread >= setup_.threads.size())
      return where(v, make_error("STAT for cpu {} thread {} outside the maps ({} cpus, {} threads)",
                                 static_cast<std::int32_t>(st->cpu), st->thread, cpus.size(),
                                 setup_.threads.size()));
    const std::size_t slot =
        static_cast<std::size_t>(cit - cpus.begin()) * setup_.threads.size() + st->thread;
    auto ev = static_cast<std::size_t>(idx);
    reading_.values[ev][slot] = {st->val, st->ena, st->run, st->id, 0};
    reading_.ok[ev][slot] = true;
    setup_.events[ev].supported = true;
    return ok();
  }
  Status on_stat_round(const record::RecordView& v) {
    auto r = record::parse_stat_round(v);
    if (!r) return where(v, r.error());
    if (reading_.values.empty()) start();
    if (!engine_) make_engine();
    // Events without counts read as failed reads, so they show not counted.
    for (std::size_t ev = 0; ev < setup_.events.size(); ++ev)
      if (!setup_.events[ev].supported)
        std::fill(reading_.ok[ev].begin(), reading_.ok[ev].end(), false);
    if (r->type == kStatRoundFinal) {
      engine_->add_run(reading_, r->time);
      out_(printer_->final_report());
    } else {
      engine_->add_interval(reading_, 0, /*reset_shadow=*/false);
      out_(printer_->interval(r->time));
    }
    return ok();
  }
  // The first STAT or STAT_ROUND: the maps are known, the reading's slots
  // are made.
  void start() {
    setup_.comms.resize(setup_.threads.size());
    apply_topology(feats_, setup_);
    const std::size_t slots = setup_.cpus.size() * setup_.threads.size();
    reading_.values.assign(setup_.events.size(), std::vector<CounterValue>(slots));
    reading_.ok.assign(setup_.events.size(), std::vector<bool>(slots, false));
  }
  void make_engine() {
    // perf keeps the global mode for task data (no cpus to aggregate).
    AggrMode mode = mode_;
    const bool task_data = setup_.cpus.size() == 1 && setup_.cpus[0] == -1;
    if (opts_.aggr && !task_data) mode = *opts_.aggr;
    engine_ = std::make_unique<StatEngine>(setup_, mode, scale_);
    StatPrintOptions p = opts_.print;
    p.interval_ms = interval_ms_;
    p.target = {StatTargetDesc::kWorkload, feats_.cmdline.value_or(std::vector<std::string>{}), {}};
    p.run_count = 1;
    p.ru_display = false;
    printer_ = std::make_unique<StatPrinter>(*engine_, p);
  }

  const perfdata::Reader& reader_;
  const perfdata::Features& feats_;
  const StatReportOptions& opts_;
  const std::function<void(const std::string&)>& out_;
  StatSetup setup_;
  AggrMode mode_ = AggrMode::kGlobal;
  std::uint64_t interval_ms_ = 0;
  bool scale_ = true;
  bool have_config_ = false, have_threads_ = false, have_cpus_ = false;
  StatReading reading_;
  std::unique_ptr<StatEngine> engine_;
  std::unique_ptr<StatPrinter> printer_;
};

}  // namespace

Status stat_report(perfdata::Reader& reader, const StatReportOptions& opts,
                   const std::function<void(const std::string&)>& out) {
  PK_ASSIGN(perfdata::Features feats,
            perfdata::parse_features(reader.features(), reader.swapped()));
  StatFile file(reader, feats, opts, out);
  perfdata::ReadRecord rec;
  for (;;) {
    PK_ASSIGN(bool more, reader.next(rec));
    if (!more) break;
    PK_TRY(file.on_record(rec.view));
  }
  if (!file.any())
    return make_error("{}: no stat data (not written by 'perf stat record')", reader.name());
  return ok();
}

}  // namespace perfkit::stat
