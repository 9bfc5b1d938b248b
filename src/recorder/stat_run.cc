#include "recorder/stat_run.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/text.h"
#include "capture/control.h"
#include "capture/counter.h"
#include "capture/perf_event.h"
#include "capture/pmu.h"
#include "capture/synthesize.h"
#include "capture/system_info.h"
#include "capture/tracefs.h"
#include "recorder/stat_record.h"

namespace perfkit::recorder {

namespace {

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string read_comm(const capture::SystemPaths& paths, pid_t tid) {
  std::ifstream in(paths.procfs + "/" + std::to_string(tid) + "/comm");
  std::string s;
  std::getline(in, s);
  return s;
}

Expected<std::vector<pid_t>> parse_id_list(std::string_view text, std::string_view what) {
  PK_ASSIGN(auto ids, parse_int_list(text, IntListRules::pids(what)));
  return std::vector<pid_t>(ids.begin(), ids.end());
}

// Every thread of every process, as perf's --per-thread -a map.
std::vector<pid_t> all_threads(const capture::SystemPaths& paths) {
  std::vector<pid_t> pids, out;
  std::error_code ec;
  for (std::filesystem::directory_iterator d(paths.procfs, ec), end; !ec && d != end;
       d.increment(ec)) {
    std::int64_t v = 0;
    if (parse_i64(d->path().filename().string(), v)) pids.push_back(static_cast<pid_t>(v));
  }
  std::sort(pids.begin(), pids.end());
  for (pid_t p : pids) {
    auto tids = capture::process_threads(paths, p);
    if (tids) out.insert(out.end(), tids->begin(), tids->end());
  }
  return out;
}

bool target_alive(const capture::SystemPaths& paths, const std::vector<pid_t>& threads) {
  struct stat st {};
  for (pid_t t : threads)
    if (t > 0 && ::stat((paths.procfs + "/" + std::to_string(t)).c_str(), &st) == 0) return true;
  return false;
}

struct Target {
  stat::StatTargetDesc desc;
  std::vector<int> cpus = {-1};
  std::vector<pid_t> threads;  // empty with a workload until it is forked
  std::vector<std::string> comms;
  bool has_task = false, has_cpu = false;
};

// perf stat's checks and target__validate, then the cpu and thread maps.
Expected<Target> resolve_target(const StatRunOptions& o) {
  Target t;
  const bool workload = !o.workload.empty();
  bool system_wide = o.system_wide;
  t.has_task = !o.pids.empty() || !o.tids.empty();
  if (!workload && !t.has_task && o.cpu_list.empty()) system_wide = true;
  t.has_cpu = system_wide || !o.cpu_list.empty();
  if (o.aggr == stat::AggrMode::kThread && !t.has_task && (!system_wide || !o.cpu_list.empty()))
    return make_error(
        "The --per-thread option is only available when monitoring via -p -t -a options or only "
        "--per-thread.");
  if (o.aggr != stat::AggrMode::kGlobal && o.aggr != stat::AggrMode::kThread && !t.has_cpu)
    return make_error("both cgroup and no-aggregation modes only available in system-wide mode");
  if (!o.pids.empty()) {
    PK_ASSIGN(auto pids, parse_id_list(o.pids, "pid"));
    for (pid_t p : pids) {
      auto tids = capture::process_threads(o.paths, p);
      if (!tids)
        return make_error("Problems finding threads of monitor: {}", tids.error().message());
      t.threads.insert(t.threads.end(), tids->begin(), tids->end());
    }
    t.desc = {stat::StatTargetDesc::kPid, {}, o.pids};
  } else if (!o.tids.empty()) {
    PK_ASSIGN(t.threads, parse_id_list(o.tids, "tid"));
    for (pid_t tid : t.threads)
      if (!target_alive(o.paths, {tid}))
        return make_error("Problems finding threads of monitor: no thread {}", tid);
    t.desc = {stat::StatTargetDesc::kTid, {}, o.tids};
  } else if (system_wide && o.aggr == stat::AggrMode::kThread) {
    t.threads = all_threads(o.paths);
    t.desc = {stat::StatTargetDesc::kSystemWide, {}, {}};
  } else if (t.has_cpu) {
    t.threads = {-1};
    t.desc = system_wide ? stat::StatTargetDesc{stat::StatTargetDesc::kSystemWide, {}, {}}
                         : stat::StatTargetDesc{stat::StatTargetDesc::kCpus, {}, o.cpu_list};
  } else {
    t.desc = {stat::StatTargetDesc::kWorkload, o.workload, {}};
  }
  // Per-thread maps are opened per thread on any cpu; others on the cpus.
  if (t.has_cpu && !(o.aggr == stat::AggrMode::kThread && system_wide)) {
    if (!o.cpu_list.empty()) {
      PK_ASSIGN(t.cpus, parse_cpu_list(o.cpu_list));
      const auto online = capture::online_cpus(o.paths);
      for (int c : t.cpus)
        if (std::find(online.begin(), online.end(), c) == online.end())
          return make_error("failed to parse CPUs map: cpu {} in '{}' is not online (online: {})",
                            c, o.cpu_list, format_cpu_list(online));
    } else {
      t.cpus = capture::online_cpus(o.paths);
    }
  }
  if (o.aggr == stat::AggrMode::kThread)
    for (pid_t tid : t.threads) t.comms.push_back(read_comm(o.paths, tid));
  return t;
}

// Splits an -e argument at its top-level commas: not inside braces or
// between the slashes of PMU terms ("cpu/event=1,umask=2/").
std::vector<std::string> top_level_events(std::string_view arg) {
  std::vector<std::string> out;
  int depth = 0;
  bool in_terms = false;
  std::string cur;
  for (char c : arg) {
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (c == '/') in_terms = !in_terms;
    if (c == ',' && depth == 0 && !in_terms) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(cur);
  return out;
}

// perf's cgroups of the events: --for-each-cgroup repeats the list for
// each cgroup in turn (evlist__expand_cgroup); -G gives the n-th event the
// n-th cgroup, or every event the one cgroup (parse_cgroups). Errors: more
// cgroups than events.
Expected<std::vector<capture::CounterEvent>> with_cgroups(std::vector<capture::CounterEvent> ev,
                                                          const StatRunOptions& o) {
  if (!o.for_each_cgroup.empty()) {
    std::vector<capture::CounterEvent> out;
    for (const auto& cg : o.for_each_cgroup) {
      const std::size_t base = out.size();  // (this copy's leaders are its own)
      for (const capture::CounterEvent& e : ev) {
        out.push_back(e);
        out.back().leader += base;
        out.back().cgroup = cg;
      }
    }
    return out;
  }
  if (o.cgroups.size() > ev.size())
    return make_error("-G: {} cgroups for {} events", o.cgroups.size(), ev.size());
  for (std::size_t i = 0; i < ev.size() && !o.cgroups.empty(); ++i)
    ev[i].cgroup = o.cgroups.size() == 1  ? o.cgroups[0]
                   : i < o.cgroups.size() ? o.cgroups[i]
                                          : nullptr;
  return ev;
}

// The events to count, in order: parsed ones configured as perf stat does,
// and perf's tool events (duration_time, user_time, system_time).
Expected<std::vector<capture::CounterEvent>> stat_events(const StatRunOptions& o, bool cpu_target,
                                                         const capture::PmuCatalog& pmus,
                                                         const capture::CountingOptions& co) {
  std::optional<capture::Tracefs> tracefs;
  if (auto tf = capture::Tracefs::locate(o.paths)) tracefs = std::move(*tf);
  capture::EventSources sources{&pmus, tracefs ? &*tracefs : nullptr};
  std::vector<capture::CounterEvent> out;
  if (o.null_run) return out;
  auto add_parsed = [&](const std::string& text, const std::string& filter = {}) -> Status {
    capture::EventList list;
    PK_TRY(capture::parse_events(text, sources, list));
    for (auto& e : list.events) e.filter = filter;
    const std::size_t base = out.size();
    for (auto& e : capture::counting_events(list, co)) {
      e.leader += base;
      out.push_back(std::move(e));
    }
    return ok();
  };
  // -g: the parsed events (perf's defaults and -d's too) in one group,
  // the tool events after it.
  std::string grouped;
  std::vector<capture::ToolEvent> tools;
  auto add = [&](const std::string& text, const std::string& filter = {}) -> Status {
    if (!o.group) return add_parsed(text, filter);
    for (char c : text)
      if (c != '{' && c != '}') grouped += c;
    grouped += ',';
    return ok();
  };
  if (o.events.empty()) PK_TRY(add(capture::default_stat_events(cpu_target, pmus)));
  for (std::size_t i = 0; i < o.events.size(); ++i) {
    const std::string& filter = i < o.event_filters.size() ? o.event_filters[i] : std::string();
    for (const auto& tok : top_level_events(o.events[i])) {
      auto tool = capture::tool_event(tok);
      if (tool == capture::ToolEvent::kNone) {
        PK_TRY(add(tok, filter));
      } else if (o.group) {
        tools.push_back(tool);
      } else {
        out.push_back(capture::tool_counter_event(tool));
        out.back().leader = out.size() - 1;
      }
    }
  }
  if (o.detailed > 0) PK_TRY(add(capture::detailed_stat_events(o.detailed)));
  if (!grouped.empty()) {
    grouped.pop_back();
    PK_TRY(add_parsed("{" + grouped + "}"));
  }
  for (capture::ToolEvent tool : tools) {
    out.push_back(capture::tool_counter_event(tool));
    out.back().leader = out.size() - 1;
  }
  return with_cgroups(std::move(out), o);
}

stat::StatSetup make_setup(const capture::CounterSet& set, const Target& t,
                           const capture::SystemPaths& paths, bool cgroups_given) {
  stat::StatSetup s;
  s.cgroups = cgroups_given;
  std::vector<const capture::Cgroup*> cgroups;
  for (std::size_t ev = 0; ev < set.events().size(); ++ev) {
    const auto& e = set.events()[ev];
    s.events.push_back(
        {e.name, e.attr, e.unit, e.scale, set.supported(ev), e.leader, e.group_size});
    if (e.cgroup) {
      s.events.back().cgroup = e.cgroup->name;
      // perf keys the metrics' figures by the cgroup too
      auto it = std::find(cgroups.begin(), cgroups.end(), e.cgroup.get());
      if (it == cgroups.end()) it = cgroups.insert(it, e.cgroup.get());
      s.events.back().cgroup_id = static_cast<std::size_t>(it - cgroups.begin()) + 1;
    }
  }
  s.cpus = set.target().cpus;
  s.threads = set.target().threads;
  s.comms = t.comms;
  const auto online = capture::online_cpus(paths);
  const std::uint32_t nr = online.empty() ? 1 : static_cast<std::uint32_t>(online.back() + 1);
  auto topo = capture::read_cpu_topology(paths, nr);
  auto numa = capture::read_numa_topology(paths);
  for (int cpu : s.cpus) {
    if (cpu < 0) continue;
    stat::CpuPlace p;
    if (topo && static_cast<std::size_t>(cpu) < topo->cpus.size()) {
      p.socket = topo->cpus[static_cast<std::size_t>(cpu)].socket_id;
      p.die = topo->cpus[static_cast<std::size_t>(cpu)].die_id;
      p.core = topo->cpus[static_cast<std::size_t>(cpu)].core_id;
    }
    if (numa)
      for (const auto& n : *numa) {
        auto cpus = parse_cpu_list(n.cpus);
        if (cpus && std::find(cpus->begin(), cpus->end(), cpu) != cpus->end())
          p.node = static_cast<int>(n.node);
      }
    s.topology[cpu] = p;
  }
  return s;
}

stat::StatReading to_reading(const capture::CounterReadings& r) { return {r.values, r.ok}; }

std::uint64_t tv_ns(const timeval& tv) {
  return static_cast<std::uint64_t>(tv.tv_sec) * 1000000000ULL +
         static_cast<std::uint64_t>(tv.tv_usec) * 1000ULL;
}

// perf's tool events: the elapsed time, and the workload's user and system
// time, as counts that ran the whole time (0 reads as not counted).
void fill_tool_events(const capture::CounterSet& set, capture::CounterReadings& r,
                      std::uint64_t elapsed_ns, const rusage* usage) {
  for (std::size_t ev = 0; ev < set.events().size(); ++ev) {
    const auto tool = set.events()[ev].tool;
    if (tool == capture::ToolEvent::kNone) continue;
    std::uint64_t v = elapsed_ns;
    if (tool != capture::ToolEvent::kDurationTime)
      v = !usage ? 0
                 : tv_ns(tool == capture::ToolEvent::kUserTime ? usage->ru_utime : usage->ru_stime);
    std::fill(r.values[ev].begin(), r.values[ev].end(), abi::CounterValue{});
    std::fill(r.ok[ev].begin(), r.ok[ev].end(), true);
    if (!r.values[ev].empty()) r.values[ev][0] = {v, v, v, 0, 0};
  }
}

// The measurement loop of one run.
class Runner {
 public:
  Runner(const StatRunOptions& o, const StatRunHooks& h, Target& t, StatOutcome& out)
      : o_(o), h_(h), t_(t), out_(out) {}

  Status run_once(int run_idx, const std::vector<capture::CounterEvent>& events);
  StatRecordWriter* writer() { return writer_.get(); }
  capture::CounterSet& set() { return set_; }
  bool stop_all() const { return stop_all_; }
  void set_control(capture::ControlChannel* c) { control_ = c; }

 private:
  Status do_interval(std::uint64_t ref);
  Status wait_loop(std::uint64_t ref);
  Status delayed_enable();
  Status handle_control();

  const StatRunOptions& o_;
  const StatRunHooks& h_;
  Target& t_;
  StatOutcome& out_;
  capture::CounterSet set_;
  std::optional<capture::Workload> workload_;
  std::unique_ptr<StatRecordWriter> writer_;
  int intervals_left_ = 0;
  capture::ControlChannel* control_ = nullptr;            // --control (may be closed)
  std::optional<capture::CounterReadings> last_reading_;  // --summary
  bool stop_all_ = false;
};

Status Runner::do_interval(std::uint64_t ref) {
  const std::uint64_t ts = now_ns() - ref;
  auto r = set_.read();
  fill_tool_events(set_, r, ts, nullptr);
  out_.engine->add_interval(to_reading(r), o_.interval_ms * 1000000ULL);
  if (o_.summary) last_reading_ = r;
  if (writer_) {
    PK_TRY(writer_->write_counts(set_, r));
    PK_TRY(writer_->write_round(stat::kStatRoundInterval, ts));
  }
  if (h_.interval) h_.interval(*out_.engine, ts);
  return ok();
}

Status Runner::wait_loop(std::uint64_t ref) {
  const bool interval = o_.interval_ms != 0;
  const std::uint64_t deadline =
      o_.timeout_ms > 0 ? now_ns() + static_cast<std::uint64_t>(o_.timeout_ms) * 1000000ULL : 0;
  intervals_left_ = o_.interval_count;
  std::uint64_t next_tick = now_ns() + o_.interval_ms * 1000000ULL;
  for (;;) {
    if (workload_) {
      auto e = workload_->try_wait();
      if (!e) return e.error();
      if (e->has_value()) return ok();
    } else if (t_.has_task && !target_alive(o_.paths, t_.threads)) {
      return ok();
    }
    int timeout = -1;
    if (interval) {
      const std::uint64_t now = now_ns();
      timeout = next_tick > now ? static_cast<int>((next_tick - now + 999999) / 1000000) : 0;
    } else if (!workload_ || h_.signal_fd < 0) {
      timeout = workload_ ? 50 : 1000;
    }
    if (deadline) {
      // --timeout: the workload is told to end; counting ends with it.
      const std::uint64_t now = now_ns();
      if (now >= deadline) {
        if (workload_) PK_TRY(workload_->signal(SIGTERM));
        return ok();
      }
      const int left = static_cast<int>((deadline - now + 999999) / 1000000);
      timeout = timeout < 0 ? left : std::min(timeout, left);
    }
    pollfd p[2] = {{h_.signal_fd, POLLIN, 0}, {control_ ? control_->fd() : -1, POLLIN, 0}};
    int n = ::poll(p, 2, timeout);
    if (n < 0 && errno != EINTR) return make_error("poll: {}", std::strerror(errno));
    if (n > 0 && (p[1].revents & POLLIN)) {
      PK_TRY(handle_control());
      if (!(p[0].revents & POLLIN)) continue;
    }
    if (n <= 0) {
      if (interval && now_ns() >= next_tick) {
        PK_TRY(do_interval(ref));
        next_tick += o_.interval_ms * 1000000ULL;
        if (o_.interval_count && --intervals_left_ == 0) return ok();
      }
      continue;
    }
    signalfd_siginfo si{};
    if (::read(h_.signal_fd, &si, sizeof si) != static_cast<ssize_t>(sizeof si)) continue;
    const int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD) {
      // perf prints the partial interval when the workload ends.
      if (workload_ && interval) {
        auto e = workload_->try_wait();
        if (e && e->has_value()) return do_interval(ref);
      }
      continue;
    }
    out_.stop_signal = sig;
    stop_all_ = true;  // no further runs of -r
    if (!workload_ || interval) {
      if (interval) PK_TRY(do_interval(ref));
      // The workload got the signal from the terminal too; make sure it ends.
      if (workload_) PK_TRY(workload_->signal(SIGTERM));
      return ok();
    }
    // With a workload perf waits for it: the signal reached it too.
  }
}

Status Runner::run_once(int run_idx, const std::vector<capture::CounterEvent>& events) {
  if (!o_.workload.empty()) {
    capture::WorkloadOptions wo;
    wo.stdout_to_stderr = o_.record_path == "-";
    wo.child_sigmask = h_.child_sigmask;
    PK_ASSIGN(auto w, capture::Workload::prepare(o_.workload, wo));
    workload_ = std::move(w);
    // The workload is the target only without -p/-t/-a/-C; otherwise it
    // just sets how long the target is counted.
    if (!t_.has_task && !t_.has_cpu) t_.threads = {workload_->pid()};
  }
  const bool enable_on_exec =
      !o_.workload.empty() && !t_.has_task && !t_.has_cpu && o_.delay_ms == 0;
  auto ctx = capture::OpenErrorContext::read(o_.paths);
  std::vector<std::string> notes;
  capture::CounterTarget where{t_.cpus, t_.threads};
  auto opened = capture::CounterSet::open(events, where, ctx, notes);
  for (const auto& n : notes)
    if (h_.message) h_.message(n);
  if (!opened) return opened.error();
  set_ = std::move(*opened);
  if (!out_.engine)
    out_.engine = std::make_unique<stat::StatEngine>(
        make_setup(set_, t_, o_.paths, !o_.cgroups.empty() || !o_.for_each_cgroup.empty()), o_.aggr,
        o_.scale);
  if (!o_.record_path.empty() && run_idx == 0) {
    StatRecordConfig rc{o_.aggr, o_.interval_ms, o_.scale, o_.cmdline, o_.version, o_.paths};
    PK_ASSIGN(writer_, StatRecordWriter::create(o_.record_path, rc));
    std::vector<std::string> comms = t_.comms;
    PK_TRY(writer_->begin(set_, comms));
  }
  if (!enable_on_exec && o_.delay_ms == 0) PK_TRY(set_.enable());
  if (o_.sync) ::sync();
  // perf starts the clock when it lets the workload go, before its exec.
  const std::uint64_t t0 = now_ns();
  if (workload_) {
    auto st = workload_->start();
    if (!st) return make_error("Workload failed: {}", st.error().message());
  }
  PK_TRY(delayed_enable());
  PK_TRY(wait_loop(t0));
  if (workload_) {
    PK_ASSIGN(out_.exit, workload_->wait());
  }
  if (t_.has_task || t_.has_cpu) PK_TRY(set_.disable());
  const std::uint64_t t1 = now_ns();
  if (o_.interval_ms == 0) {
    auto r = set_.read();
    fill_tool_events(set_, r, t1 - t0, workload_ ? &out_.exit.usage : nullptr);
    out_.engine->add_run(to_reading(r), t1 - t0);
    if (writer_) PK_TRY(writer_->write_counts(set_, r));
  } else if (o_.summary && last_reading_) {
    // perf's summary: the counts its last interval read, over the whole
    // run's time, without the workload's rusage.
    out_.summary = std::make_unique<stat::StatEngine>(out_.engine->setup(), o_.aggr, o_.scale);
    out_.summary->add_run(to_reading(*last_reading_), t1 - t0);
  }
  if (workload_ && out_.exit.signaled && h_.message)
    h_.message(fmt::format("{}: {}", o_.workload[0], strsignal(out_.exit.signal)));
  return ok();
}

// -D/--delay: perf says the events are disabled, waits, enables them and
// says so (a negative delay leaves them disabled).
// perf stat's --control: "enable"/"disable" (all, or the event named)
// with its messages; ping, snapshot, stop and evlist are acknowledged
// (stat counts on until its workload ends, as perf's does); anything else
// is ignored without an ack.
Status Runner::handle_control() {
  for (const auto& [verb, arg] : control_->read()) {
    if (verb == "enable" || verb == "disable") {
      PK_ASSIGN(bool found, set_.enable_named(arg, verb == "enable"));
      const char* done = verb == "enable" ? "enabled" : "disabled";
      if (found && h_.message)
        h_.message(arg.empty() ? fmt::format("Events {}", done)
                               : fmt::format("Event {} {}", arg, done));
    } else if (verb == "evlist") {
      for (const auto& e : set_.events())
        if (h_.message) h_.message(e.name);
    } else if (verb != "ping" && verb != "snapshot" && verb != "stop") {
      continue;
    }
    control_->ack();
  }
  return ok();
}

Status Runner::delayed_enable() {
  if (o_.delay_ms == 0) return ok();
  if (h_.message) h_.message("Events disabled");
  if (o_.delay_ms < 0) return ok();
  timespec ts{o_.delay_ms / 1000, static_cast<long>(o_.delay_ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
  PK_TRY(set_.enable());
  if (h_.message) h_.message("Events enabled");
  return ok();
}

}  // namespace

Expected<StatOutcome> run_stat(const StatRunOptions& o, const StatRunHooks& hooks) {
  if (!o.record_path.empty() && o.repeat != 1)
    return make_error("Cannot use -r option with perf stat record.");
  if (o.repeat < 0) return make_error("Run count must be a positive number");
  if (o.interval_count && !o.interval_ms)
    return make_error("interval-count option should be used together with interval-print.");
  PK_ASSIGN(Target t, resolve_target(o));
  auto pmus = capture::PmuCatalog::load(o.paths);
  capture::CountingOptions co;
  co.inherit = !o.no_inherit;
  co.identifier = o.record_path != "-";
  co.enable_on_exec = !o.workload.empty() && !t.has_task && !t.has_cpu && o.delay_ms == 0;
  co.all_user = o.all_user;
  co.all_kernel = o.all_kernel;
  PK_ASSIGN(auto events, stat_events(o, t.has_cpu, pmus, co));
  StatOutcome out;
  out.target = t.desc;
  out.has_workload = !o.workload.empty();
  out.skip_zero_threads = o.aggr == stat::AggrMode::kThread && o.system_wide;
  out.ru_display = o.repeat == 1 && !t.has_task && !t.has_cpu;
  Runner runner(o, hooks, t, out);
  PK_ASSIGN(capture::ControlChannel control, capture::ControlChannel::open(o.control));
  if (control.enabled()) runner.set_control(&control);
  const bool forever = o.repeat == 0;
  for (int run = 0; forever || run < o.repeat; ++run) {
    if (hooks.before_run) PK_TRY(hooks.before_run());
    PK_TRY(runner.run_once(run, events));
    if (hooks.after_run) PK_TRY(hooks.after_run());
    if (forever && hooks.forever_run && !o.interval_ms) {
      hooks.forever_run(*out.engine);
      out.engine = std::make_unique<stat::StatEngine>(out.engine->setup(), o.aggr, o.scale);
    }
    if (runner.stop_all()) break;
  }
  if (auto* w = runner.writer()) {
    if (!o.interval_ms)
      PK_TRY(w->write_round(stat::kStatRoundFinal,
                            static_cast<std::uint64_t>(out.engine->walltime().max)));
    PK_TRY(w->finish(runner.set()));
  }
  return out;
}

}  // namespace perfkit::recorder
