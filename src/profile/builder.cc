#include "profile/builder.h"

#include <cmath>
#include <map>
#include <memory>
#include <span>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "abi/perf_event.h"
#include "abi/registers.h"
#include "machine/machine.h"
#include "perfdata/features.h"
#include "profile/line_worker.h"
#include "record/records.h"
#include "record/sample.h"
#include "session/raw_key.h"
#include "session/unwind_callchain.h"

namespace perfkit::profile {

namespace {

LibKind lib_kind(machine::DsoKind k) {
  switch (k) {
    case machine::DsoKind::kUser:
      return LibKind::kUser;
    case machine::DsoKind::kKernel:
      return LibKind::kKernel;
    case machine::DsoKind::kModule:
      return LibKind::kModule;
    case machine::DsoKind::kVdso:
      return LibKind::kVdso;
    default:
      return LibKind::kOther;
  }
}

// Context switches and comm changes by thread: (pid << 32 | tid).
using MarkerMap = std::map<std::uint64_t, std::vector<Marker>>;

// Gives the threads of `p` that have samples their markers.
void attach_markers(Profile& p, MarkerMap& markers) {
  for (auto& [key, list] : markers) {
    const Index t = p.find_thread(static_cast<std::int32_t>(key >> 32),
                                  static_cast<std::int32_t>(key & 0xFFFFFFFF));
    if (t != kNone) p.threads[t].markers = std::move(list);
  }
}

// The answers of a LineWorker into the frames asked for (kNone: a frame
// made before its location was met); "file:line" texts without a line
// ("??:0", "lib.so[1a2b]") give none.
void set_frame_lines(Profile& p, const std::vector<std::string>& texts,
                     const std::vector<Index>& frames) {
  for (std::size_t k = 0; k < texts.size() && k < frames.size(); ++k) {
    std::string_view text = texts[k];
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) continue;
    std::uint32_t line = 0;
    bool digits = true;
    for (char c : text.substr(colon + 1)) {
      digits = digits && c >= '0' && c <= '9';
      line = line * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (!digits || line == 0 || text.starts_with("??") || frames[k] == kNone) continue;
    Frame& f = p.frames[frames[k]];
    f.file = p.strings.intern(text.substr(0, colon));
    f.line = line;
  }
}

// How a builder asks for source lines: of its LineWorker (one session);
// the same, noting each location's key (the first run of several); noting
// the asks only, made in order once the runs are merged (the later runs).
enum class LineMode : std::uint8_t { kLive, kLiveKeys, kRecord };

// A source line a later run asks for, kept until the runs are merged.
struct LineAsk {
  std::string key;  // the location by value: DSO, build-id, address, inlined name, symbol
  Index frame = kNone;
  const machine::Dso* dso = nullptr;
  std::uint64_t addr = 0;
  bool known = false;  // `text` is the answer (an inlined frame's line)
  std::string text;
};

class Builder : public session::SampleVisitor {
 public:
  Builder(session::Session& session, const ProfileOptions& opts)
      : session_(session), opts_(opts), filter_(opts.filter) {}

  Status prepare() {
    PK_TRY(filter_.prepare(session_.reader()));
    filtering_ = filter_.any();
    may_hold_ = !filter_.by_location() && !unwinds_user_stacks();
    return ok();
  }

  bool defers_kernel_symbols() const override { return may_hold_; }

  Status on_sample(const session::ResolvedSample& s) override {
    if (skips(s)) return ok();
    if (must_hold(&s)) {
      hold(s);
      return ok();
    }
    const bool chains = event(s.event).callchains;
    comm_id(s.comm);  // interned before the frames, as always
    const Index stack = chains ? chain_stack(s.callchain) : leaf_stack(s.sample->ip, s.loc);
    if (memo_) memo_->insert(stack + 1);  // kNone + 1 == 0
    add(row_of(s), stack);
    return ok();
  }

  // A sample that repeats one resolved before (raw_key.h) takes its stack.
  bool take_raw(const session::RawSample& r) override {
    if (!memo_decided_) decide_memo();
    if (!memo_) return false;
    const std::uint64_t generation = session_.machine().generation();
    // Keys of another generation can no longer match; keep memory bounded.
    if (generation != memo_generation_ || memo_->bytes() > kMemoBytes) {
      memo_->clear();
      memo_generation_ = generation;
    }
    const std::uint32_t found = memo_->find(r, generation);
    if (found == session::RawKeyTable::kNone) return false;
    if (filtering_) {
      session::ResolvedSample s;
      s.event = r.event;
      s.sample = r.sample;
      s.cpumode = r.cpumode;
      s.thread = r.thread;
      s.comm = r.thread->comm;
      if (skips(s)) return true;
    }
    const Row row = row_of(r.event, *r.sample, *r.thread, r.thread->comm);
    if (must_hold(nullptr)) {
      Held h;
      h.kind = Held::kStack;
      h.row = row;
      h.stack = found - 1;
      held_.push_back(h);
    } else {
      add(row, found - 1);
    }
    return true;
  }

  // Context switches and comm changes, kept for the threads that have
  // samples in the end (attached by take()).
  Status after_record(const perfdata::ReadRecord& rec) override {
    const record::RecordView& r = rec.view;
    if (r.type != abi::kRecordSwitch && r.type != abi::kRecordSwitchCpuWide &&
        r.type != abi::kRecordComm)
      return ok();
    const auto& events = session_.reader().events();
    const int idx = events.attr_index(r);
    record::SampleId sid;
    if (idx >= 0) sid = record::decode_sample_id(r, events[static_cast<std::size_t>(idx)].layout);
    const std::uint64_t st = sid.present ? sid.sample_type : 0;
    Marker m;
    m.time = (st & abi::kSampleTime) ? sid.time : 0;
    if (m.time && filter_.skip_time(m.time)) return ok();
    std::uint32_t pid = sid.pid, tid = sid.tid;
    const bool held = must_hold(nullptr);
    if (r.type == abi::kRecordComm) {
      auto c = record::parse_comm(r);
      if (!c) return ok();
      pid = c->pid, tid = c->tid;
      m.kind = (r.misc & abi::kMiscCommExec) ? MarkerKind::kExec : MarkerKind::kComm;
      // A held marker's text is interned when it is replayed, in order.
      if (held) held_texts_.emplace_back(c->comm);
      m.text = held ? static_cast<Index>(held_texts_.size() - 1) : p_.strings.intern(c->comm);
    } else {
      if (!(st & abi::kSampleTid)) return ok();
      m.kind = (r.misc & abi::kMiscSwitchOut) ? MarkerKind::kSwitchOut : MarkerKind::kSwitchIn;
      m.preempt = (r.misc & abi::kMiscSwitchOutPreempt) != 0;
    }
    const std::uint64_t key = (std::uint64_t{pid} << 32) | tid;
    if (held) {
      Held h;
      h.kind = Held::kMarker;
      h.marker = m;
      h.marker_key = key;
      held_.push_back(h);
    } else {
      markers_[key].push_back(m);
    }
    return ok();
  }

  Profile take() {
    replay_held();
    set_lines();
    Profile p = take_chunk();
    attach_markers(p, markers_);
    return p;
  }
  // The profile of a run, without its markers (markers() keeps them, by
  // thread) nor its source lines (asked in order after the merge).
  Profile take_chunk() {
    replay_held();
    summarize();
    return std::move(p_);
  }
  MarkerMap& markers() { return markers_; }
  void set_line_mode(LineMode m) { line_mode_ = m; }
  std::vector<LineAsk>& asks() { return asks_; }
  // The first run's LineWorker (none before its first ask) and the frame
  // of each line it was asked.
  std::unique_ptr<LineWorker>& line_worker() { return lines_; }
  std::vector<Index>& line_frames() { return line_frames_; }
  session::Session& session() { return session_; }

 private:
  // The event of the sample, added (with its name and whether its samples
  // carry call chains) the first time one of it comes.
  const Event& event(std::size_t i) {
    const auto& events = session_.reader().events();
    while (p_.events.size() <= i) {
      const std::size_t k = p_.events.size();
      Event e;
      e.name = p_.strings.intern(session_.event_name(k));
      if (k < events.size()) e.type = events[k].attr.type;
      e.callchains = opts_.callchains && k < events.size() &&
                     (events[k].attr.sample_type & abi::kSampleCallchain);
      p_.events.push_back(e);
    }
    return p_.events[i];
  }
  // perf script's filters (filter_): by time, cpu, thread and location.
  bool skips(const session::ResolvedSample& s) const {
    if (!filtering_) return false;
    const record::Sample& smp = *s.sample;
    const std::uint64_t st = smp.sample_type;
    return filter_.skip_time((st & abi::kSampleTime) ? smp.time : 0) ||
           filter_.skip_cpu((st & abi::kSampleCpu) ? smp.cpu : ~0u) ||
           filter_.skip(s, session_.machine());
  }
  // What a kept sample adds to its thread's columns.
  struct Row {
    std::size_t event = 0;
    std::uint64_t time = 0;  // 0: none
    std::int32_t cpu = -1;   // -1: none
    std::uint64_t period = 0;
    std::int32_t pid = -1, tid = -1;
    const std::string* comm = nullptr;
  };
  static Row row_of(const session::ResolvedSample& s) {
    return row_of(s.event, *s.sample, *s.thread, s.comm);
  }
  static Row row_of(std::size_t event, const record::Sample& smp, const machine::Thread& thread,
                    const std::string* comm) {
    const std::uint64_t st = smp.sample_type;
    Row r;
    r.event = event;
    r.time = (st & abi::kSampleTime) ? smp.time : 0;
    r.cpu = (st & abi::kSampleCpu) ? static_cast<std::int32_t>(smp.cpu) : -1;
    r.period = smp.period;
    // The sample's own pid/tid, as perf's scripts are given them: an
    // exiting task's samples (tid -1) keep the pid each was taken in.
    const bool own = st & abi::kSampleTid;
    r.pid = own ? static_cast<std::int32_t>(smp.pid) : thread.pid;
    r.tid = own ? static_cast<std::int32_t>(smp.tid) : thread.tid;
    r.comm = comm;
    return r;
  }
  // Appends a kept sample of `stack` to its thread's columns.
  void add(const Row& r, Index stack) {
    event(r.event);
    if (last_index_ == kNone || r.pid != last_pid_ || r.tid != last_tid_) {
      last_pid_ = r.pid, last_tid_ = r.tid;
      last_index_ = p_.thread(r.pid, r.tid);
    }
    Thread& t = p_.threads[last_index_];
    p_.order.push_back(last_index_);
    const Index comm = comm_id(r.comm);
    t.name = comm;
    t.time.push_back(r.time);
    t.stack.push_back(stack);
    t.event.push_back(static_cast<std::uint16_t>(r.event));
    t.weight.push_back(r.period);
    t.cpu.push_back(r.cpu);
    t.comm.push_back(comm);
    Event& e = p_.events[r.event];
    e.samples += 1;
    e.period += r.period;
    Summary& sum = p_.summary;
    if (r.time) {
      sum.first_time = sum.first_time ? std::min(sum.first_time, r.time) : r.time;
      sum.last_time = std::max(sum.last_time, r.time);
    }
    sum.samples += 1;
  }
  // Repeats are taken raw unless what resolution gives is more than the raw
  // sample tells: DSO and symbol filters, unwound user stacks, LBR call stacks.
  void decide_memo() {
    memo_decided_ = true;
    if (!opts_.reuse_repeats || filter_.by_location() || unwinds_user_stacks()) return;
    for (const auto& d : session_.reader().events().events())
      if (d.attr.branch_sample_type & abi::kBranchCallStack) return;
    memo_ = std::make_unique<session::RawKeyTable>(session::RawKeyOptions{false, opts_.callchains});
  }
  bool unwinds_user_stacks() const {
    constexpr std::uint64_t kUserStack = abi::kSampleRegsUser | abi::kSampleStackUser;
    for (const auto& d : session_.reader().events().events())
      if ((d.attr.sample_type & kUserStack) == kUserStack) return true;
    return false;
  }

  // While the kernel's symbols load on another thread, samples are not
  // waited for: they are held, in order, with their kernel locations
  // pending, and replayed into the model once the symbols are in. The
  // profile is then the one the samples make one at a time, whenever the
  // loading ends. Not with DSO or symbol filters (they need the symbols to
  // choose) nor with unwound user stacks (their inlined frames' source
  // lines are the unwinder's, for the sample only).
  bool must_hold(const session::ResolvedSample* s) {
    if (!may_hold_) return false;
    if (!held_.empty() && !session_.machine().kernel_symbols_pending()) replay_held();
    if (!held_.empty() || session_.machine().kernel_symbols_pending()) return true;
    // Resolved while the symbols loaded, met after: it waits for nothing now.
    if (s) {
      if (s->loc.symbol == machine::kSymbolPending) return true;
      for (const session::Frame& f : s->callchain)
        if (f.loc.symbol == machine::kSymbolPending) return true;
    }
    return false;
  }
  void hold(const session::ResolvedSample& s) {
    Held h;
    h.kind = Held::kFrames;
    h.row = row_of(s);
    h.ip = s.sample->ip;
    h.loc = held_location(s.loc);
    h.thread = s.thread;
    h.frames_begin = held_frames_.size();
    h.frames_size = s.callchain.size();
    for (const session::Frame& f : s.callchain) {
      session::Frame& c = held_frames_.emplace_back(f);
      c.loc = held_location(f.loc);
    }
    held_.push_back(h);
    // Memory stays bounded: past this, wait for the symbols.
    if (held_.size() > (1u << 20) || held_frames_.size() > (1u << 23)) replay_held();
  }
  // The builder asks a location only whether it has a map, never what map:
  // a held one may have been replaced since.
  machine::Location held_location(machine::Location loc) const {
    if (loc.map) loc.map = &kHeldMap;
    return loc;
  }
  // The held samples and markers into the model, in order; kernel
  // locations still pending are resolved now (waiting for the symbols).
  void replay_held() {
    machine::Machine& m = session_.machine();
    std::vector<Held> held = std::move(held_);
    held_.clear();
    for (Held& h : held) {
      if (h.kind == Held::kMarker) {
        if (h.marker.kind == MarkerKind::kComm || h.marker.kind == MarkerKind::kExec)
          h.marker.text = p_.strings.intern(held_texts_[h.marker.text]);
        markers_[h.marker_key].push_back(h.marker);
        continue;
      }
      if (h.kind == Held::kStack) {
        add(h.row, h.stack);
        continue;
      }
      std::span<session::Frame> chain(held_frames_.data() + h.frames_begin, h.frames_size);
      for (session::Frame& f : chain)
        if (f.loc.symbol == machine::kSymbolPending)
          f.loc = m.resolve(*h.thread, abi::kMiscKernel, f.ip, false);
      if (h.loc.symbol == machine::kSymbolPending)
        h.loc = m.resolve(*h.thread, abi::kMiscKernel, h.ip, false);
      const bool chains = event(h.row.event).callchains;
      comm_id(h.row.comm);
      add(h.row, chains ? chain_stack(chain) : leaf_stack(h.ip, h.loc));
    }
    held_frames_.clear();
    held_texts_.clear();
  }
  Index comm_id(const std::string* comm) {
    if (comm == last_comm_ && last_comm_id_ != kNone) return last_comm_id_;
    auto [it, fresh] = comms_.try_emplace(comm, 0);
    if (fresh) it->second = p_.strings.intern(comm ? std::string_view(*comm) : "");
    last_comm_ = comm;
    last_comm_id_ = it->second;
    return it->second;
  }
  Index lib_id(const machine::Dso* d) {
    if (!d) return kNone;
    auto [it, fresh] = libs_.try_emplace(d, 0);
    if (fresh)
      it->second = p_.lib({p_.strings.intern(d->long_name), p_.strings.intern(d->short_name),
                           p_.strings.intern(d->build_id.empty() ? "" : d->build_id.hex()),
                           lib_kind(d->kind)});
    return it->second;
  }
  // The function a location resolved to: its symbol in its DSO, else
  // "[unknown]" (perf's name for an address without one).
  Index func_id(const machine::Location& loc, const char* inlined) {
    const machine::Dso* dso = loc.map ? loc.dso : nullptr;
    if (inlined) return p_.func({p_.strings.intern(inlined), lib_id(dso)});
    auto [it, fresh] = funcs_.try_emplace({dso, loc.symbol}, 0);
    if (fresh) {
      std::string_view name =
          loc.symbol >= 0 ? session_.machine().symbol_name(loc) : std::string_view("[unknown]");
      it->second = p_.func({p_.strings.intern(name), lib_id(dso)});
    }
    return it->second;
  }
  // A frame by what the session resolved (DSO, address, inlined name), so
  // that a frame met before costs one probe.
  Index frame_id(std::uint64_t ip, const machine::Location& loc, const char* inlined,
                 const char* srcline = nullptr) {
    const LocKey key = loc_key(ip, loc, inlined);
    Index i = frames_.find(key);
    if (i != kNone) return i;
    Frame f;
    f.func = func_id(loc, inlined);
    f.address = key.address;
    f.inlined = inlined != nullptr;
    f.kernel = key.kernel;
    const std::size_t known = p_.frames.size();
    i = p_.frame(f);
    frames_.insert(key, i);
    // Asked for every new location, as perf does (its give-up rule counts
    // them); the first location of a frame gives its line.
    if (opts_.source_lines && !f.kernel && loc.map && loc.dso)
      ask_line(p_.frames.size() > known ? i : kNone, loc, inlined, inlined ? srcline : nullptr);
    return i;
  }
  // Asks for the frame's source file and line (answered in take()): an
  // inlined frame's own (as the unwinder found it), else the line table's
  // at its address.
  void ask_line(Index frame, const machine::Location& loc, const char* inlined, const char* known) {
    const machine::Dso& d = *loc.dso;
    if (line_mode_ != LineMode::kLive) {
      LineAsk a;
      a.key = fmt::format("{}\n{}\n{:x}\n{}\n{}", d.long_name, d.build_id.hex(), loc.addr,
                          inlined ? inlined : "", loc.symbol);
      if (line_mode_ == LineMode::kRecord) {
        a.frame = frame, a.dso = &d, a.addr = loc.addr;
        a.known = known != nullptr;
        if (known) a.text = known;
      }
      asks_.push_back(std::move(a));
      if (line_mode_ == LineMode::kRecord) return;
    }
    if (!lines_) lines_ = std::make_unique<LineWorker>(session_.symbolizer());
    line_frames_.push_back(frame);
    if (known) return lines_->ask_known(known);
    lines_->dso(d.index, d.long_name, d.short_name, d.build_id);
    lines_->ask(d.index, loc.addr);
  }
  void set_lines() {
    if (!lines_) return;
    set_frame_lines(p_, lines_->finish(), line_frames_);
    lines_.reset();
  }

  Index leaf_stack(std::uint64_t ip, const machine::Location& loc) {
    return p_.stack(frame_id(ip, loc, nullptr), kNone);
  }
  // The call chain (callee first) as a stack, root first; none when the
  // sample's chain resolved to no frame.
  // The frames the previous chain shares with this one, from the root, keep
  // their stacks: most samples repeat their callers (and often the whole
  // chain), which then cost a comparison per frame instead of two lookups.
  Index chain_stack(std::span<const session::Frame> chain) {
    Index stack = kNone;
    std::size_t depth = 0;
    for (std::size_t i = chain.size(); i-- > 0; ++depth) {
      const session::Frame& f = chain[i];
      const LocKey key = loc_key(f.ip, f.loc, f.inlined);
      const Index prefix = stack;
      if (depth < prev_keys_.size() && prev_keys_[depth] == key && prev_prefix_[depth] == prefix) {
        stack = prev_stacks_[depth];
        continue;
      }
      stack = p_.stack(frame_id(f.ip, f.loc, f.inlined, f.srcline), prefix);
      // What was memoized deeper hangs under another prefix now.
      prev_keys_.resize(depth + 1);
      prev_prefix_.resize(depth + 1);
      prev_stacks_.resize(depth + 1);
      prev_keys_[depth] = key;
      prev_prefix_[depth] = prefix;
      prev_stacks_[depth] = stack;
    }
    return stack;
  }
  // The recording's header, and what the session counted.
  void summarize() {
    perfdata::Reader& r = session_.reader();
    auto feats = perfdata::parse_features(r.features(), r.swapped());
    Summary& s = p_.summary;
    if (feats) {
      s.hostname = feats->hostname.value_or("");
      s.os_release = feats->osrelease.value_or("");
      s.perf_version = feats->version.value_or("");
      s.arch = feats->arch.value_or("");
      s.cpu_desc = feats->cpudesc.value_or("");
      s.cmdline = feats->cmdline.value_or(std::vector<std::string>{});
      s.nr_cpus = feats->nrcpus ? feats->nrcpus->online : 0;
    }
    s.lost_samples = session_.stats().total_lost_samples;
    s.lost_events = session_.stats().total_lost;
  }

  session::Session& session_;
  const ProfileOptions& opts_;
  session::SampleFilter filter_;
  Profile p_;
  std::unordered_map<const std::string*, Index> comms_;
  const std::string* last_comm_ = nullptr;  // comm_id's last answer
  Index last_comm_id_ = kNone;
  std::unordered_map<const machine::Dso*, Index> libs_;
  struct SymbolHash {
    std::size_t operator()(const std::pair<const machine::Dso*, int>& k) const {
      return std::hash<const void*>()(k.first) * 31 + static_cast<std::size_t>(k.second);
    }
  };
  std::unordered_map<std::pair<const machine::Dso*, int>, Index, SymbolHash> funcs_;
  struct LocKey {
    const machine::Dso* dso = nullptr;
    std::uint64_t address = 0;
    const char* inlined = nullptr;
    int symbol = -1;  // a kernel symbol may resolve later at the same address
    bool kernel = false;
    bool operator==(const LocKey&) const = default;
  };
  struct LocHash {
    std::size_t operator()(const LocKey& k) const {
      return mix64(k.address ^ reinterpret_cast<std::uintptr_t>(k.dso) * 31 ^
                   reinterpret_cast<std::uintptr_t>(k.inlined) * 17 ^
                   static_cast<std::uint64_t>(k.symbol) << 48 ^ (k.kernel ? 1 : 0));
    }
  };
  static LocKey loc_key(std::uint64_t ip, const machine::Location& loc, const char* inlined) {
    return {loc.map ? loc.dso : nullptr, loc.map ? loc.addr : ip, inlined, loc.symbol,
            loc.level == machine::kLevelKernel};
  }
  FlatMap<LocKey, LocHash> frames_;
  // The previous chain, root first: each frame's key, the stack it had
  // under, and its stack (chain_stack's memo).
  std::vector<LocKey> prev_keys_;
  std::vector<Index> prev_prefix_, prev_stacks_;
  LineMode line_mode_ = LineMode::kLive;
  std::vector<LineAsk> asks_;          // (not kLive)
  std::unique_ptr<LineWorker> lines_;  // with opts_.source_lines
  std::vector<Index> line_frames_;     // the frame of each line asked, in order
  MarkerMap markers_;
  std::int32_t last_pid_ = 0, last_tid_ = 0;
  // Raw sample -> its stack + 1 (take_raw), within one machine generation.
  static constexpr std::size_t kMemoBytes = 64 << 20;
  std::unique_ptr<session::RawKeyTable> memo_;
  bool memo_decided_ = false;
  std::uint64_t memo_generation_ = 0;
  Index last_index_ = kNone;
  // Samples and markers held while the kernel's symbols load (must_hold).
  struct Held {
    enum Kind : std::uint8_t { kStack, kFrames, kMarker } kind = kStack;
    Row row;
    Index stack = kNone;  // kStack: the stack a repeat takes
    // kFrames: the sample's ip, location and call chain (in held_frames_).
    std::uint64_t ip = 0;
    machine::Location loc;
    machine::Thread* thread = nullptr;
    std::size_t frames_begin = 0, frames_size = 0;
    Marker marker;  // kMarker; a comm's text indexes held_texts_
    std::uint64_t marker_key = 0;
  };
  static constexpr machine::Map kHeldMap{};
  bool may_hold_ = false;
  bool filtering_ = true;  // any of perf script's filters set (prepare())
  std::vector<Held> held_;
  std::vector<session::Frame> held_frames_;
  std::vector<std::string> held_texts_;
};

// Where a recording's samples are split between sessions: the run of
// session k (k > 0) starts at the first sample at or past cuts[k - 1], by
// the sample's time, or by how far the reader has read when it comes (for
// recordings whose header has no sample times: perf record -z).
struct Split {
  bool by_position = false;
  std::vector<std::uint64_t> cuts;
};

// One contiguous run of a recording's samples, for one of several sessions
// side by side: from the first sample at or past `from` (from the start
// when `from` is 0) up to the first at or past `to`, in delivery order,
// with the records in between. Every session is delivered the same order at
// the same reader positions, so runs that end where the next begins share
// the samples out without a gap or an overlap (a sample without a time
// stays in the run it comes in).
class ChunkVisitor : public session::SampleVisitor {
 public:
  // `reader`: split by its position; nullptr: by sample time.
  ChunkVisitor(Builder& b, const perfdata::Reader* reader, std::uint64_t from, std::uint64_t to)
      : b_(b), reader_(reader), from_(from), to_(to), in_(from == 0) {}
  bool take_raw(const session::RawSample& r) override {
    const record::Sample& smp = *r.sample;
    const std::uint64_t at = reader_                                ? reader_->position()
                             : (smp.sample_type & abi::kSampleTime) ? smp.time
                                                                    : 0;
    if (!in_ && !done_ && at >= from_) in_ = true;
    if (in_ && at >= to_) in_ = false, done_ = true;
    // (past the run, on_sample stops the session)
    return in_ ? b_.take_raw(r) : !done_;
  }
  Status on_sample(const session::ResolvedSample& s) override {
    if (done_) return make_error("the run of samples ends here");
    return b_.on_sample(s);
  }
  Status after_record(const perfdata::ReadRecord& r) override {
    return in_ ? b_.after_record(r) : ok();
  }
  bool defers_kernel_symbols() const override { return b_.defers_kernel_symbols(); }
  bool done() const { return done_; }

 private:
  Builder& b_;
  const perfdata::Reader* reader_;
  std::uint64_t from_, to_;
  bool in_ = false, done_ = false;
};

// Where `n` sessions split the samples: times between the first and the
// last sample's (HEADER_SAMPLE_TIME), else reader positions between the
// data's start and end; none when neither spans anything. Every session
// reads the records up to the end of its run, so the later runs are made
// shorter: with reading a share `kReadShare` of building, the runs' costs
// (reading to the end of the run, building the run) are equal.
Split split_samples(perfdata::Reader& r, std::size_t n) {
  perfdata::Features feats;
  if (auto blob = r.feature(abi::kFeatSampleTime))
    (void)perfdata::parse_feature(abi::kFeatSampleTime, blob->data, r.swapped(), blob->offset,
                                  feats);
  Split split;
  std::uint64_t first = 0, last = 0;
  if (feats.sample_time && feats.sample_time->last_ns > feats.sample_time->first_ns + n) {
    first = feats.sample_time->first_ns, last = feats.sample_time->last_ns;
  } else if (r.data_end() != UINT64_MAX && r.data_end() > r.position() + n) {
    split.by_position = true;
    first = r.position(), last = r.data_end();
  } else {
    return split;
  }
  constexpr double kReadShare = 0.25;
  // Run k ends at e_k of the span: e_k = S_k / S_n, S_k = q + ... + q^k.
  const double q = 1.0 / (1.0 + kReadShare);
  std::vector<double> sums(n + 1, 0.0);
  for (std::size_t k = 1; k <= n; ++k) sums[k] = sums[k - 1] + std::pow(q, static_cast<double>(k));
  const auto span = static_cast<double>(last - first);
  for (std::size_t k = 1; k < n; ++k)
    split.cuts.push_back(first + 1 + static_cast<std::uint64_t>(span * sums[k] / sums[n]));
  return split;
}

void prepare_session(session::Session& session, const ProfileOptions& opts) {
  session.set_callchains(opts.callchains, false, opts.max_stack);
  if (!opts.callchains) return;
  perfdata::Reader& r = session.reader();
  perfdata::Features arch;
  if (auto blob = r.feature(abi::kFeatArch))
    (void)perfdata::parse_feature(abi::kFeatArch, blob->data, r.swapped(), blob->offset, arch);
  const std::string a = abi::normalize_arch(arch.arch.value_or(""));
  session::UnwindOptions uo;
  uo.inline_frames = opts.inline_frames;
  uo.unwind_arch = a.empty() || a == "x86";
  session.set_unwinder(session::make_dwarf_unwinder(session.symbolizer(), uo));
}

// The source lines of the merged runs: the first run's asks were made as
// it went; each later run's follow, but for the locations an earlier run
// met (one session would not have asked again), its frames as merged (none
// where the frame was made by an earlier run).
class MergedLines {
 public:
  explicit MergedLines(Builder& first) : first_(first) {
    for (LineAsk& a : first.asks()) asked_.insert(std::move(a.key));
  }
  // Run `b`'s asks, after its profile was merged; its frame i became
  // `frames[i]`, and frames below `before` were there already.
  void add(Builder& b, const std::vector<Index>& frames, std::size_t before) {
    for (LineAsk& a : b.asks()) {
      if (!asked_.insert(std::move(a.key)).second) continue;
      Index f = a.frame == kNone ? kNone : frames[a.frame];
      if (f != kNone && f < before) f = kNone;
      std::unique_ptr<LineWorker>& lines = first_.line_worker();
      if (!lines) lines = std::make_unique<LineWorker>(first_.session().symbolizer());
      first_.line_frames().push_back(f);
      if (a.known) {
        lines->ask_known(a.text);
        continue;
      }
      auto [it, fresh] = dsos_.try_emplace(a.dso, kFirstIndex + dsos_.size());
      if (fresh) lines->dso(it->second, a.dso->long_name, a.dso->short_name, a.dso->build_id);
      lines->ask(it->second, a.addr);
    }
  }
  void finish(Profile& p) {
    if (first_.line_worker())
      set_frame_lines(p, first_.line_worker()->finish(), first_.line_frames());
  }

 private:
  // The later runs' DSOs by a LineWorker index of their own, past the first
  // session's (machine::Dso::index).
  static constexpr std::size_t kFirstIndex = 1 << 20;
  Builder& first_;
  std::unordered_set<std::string> asked_;
  std::unordered_map<const machine::Dso*, std::size_t> dsos_;
};

// The runs' profiles merged in order, their markers attached at the end (a
// thread may have markers in one run and samples in another), then their
// source lines; the lost counts are the last session's, which read every
// record.
Expected<Profile> merge_runs(std::vector<Profile>& parts,
                             std::vector<std::unique_ptr<Builder>>& bs) {
  Profile whole = std::move(parts[0]);
  MarkerMap markers = std::move(bs[0]->markers());
  MergedLines lines(*bs[0]);
  std::vector<Index> frames;
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const std::size_t before = whole.frames.size();
    PK_TRY(merge(whole, parts[k], &frames));
    for (auto& [key, list] : bs[k]->markers()) {
      std::vector<Marker>& to = markers[key];
      for (Marker m : list) {
        m.text = whole.strings.intern(parts[k].strings.at(m.text));  // (interned by merge)
        to.push_back(m);
      }
    }
    lines.add(*bs[k], frames, before);
  }
  attach_markers(whole, markers);
  lines.finish(whole);
  whole.summary.lost_samples = parts.back().summary.lost_samples;
  whole.summary.lost_events = parts.back().summary.lost_events;
  return whole;
}

}  // namespace

Expected<Profile> build_profile(session::Session& session, const ProfileOptions& opts) {
  Builder b(session, opts);
  PK_TRY(b.prepare());
  prepare_session(session, opts);
  PK_TRY(session.run(b));
  return b.take();
}

Expected<Profile> build_profile_shards(std::span<session::Session* const> sessions,
                                       const ProfileOptions& opts) {
  const std::size_t n = sessions.size();
  const Split split = n > 1 ? split_samples(sessions[0]->reader(), n) : Split{};
  const std::vector<std::uint64_t>& cuts = split.cuts;
  if (cuts.empty()) {
    for (std::size_t k = 1; k < n; ++k) sessions[k]->reader().leave_shared();
    return build_profile(*sessions[0], opts);
  }
  std::vector<std::unique_ptr<Builder>> bs;
  for (session::Session* s : sessions) {
    bs.push_back(std::make_unique<Builder>(*s, opts));
    bs.back()->set_line_mode(bs.size() == 1 ? LineMode::kLiveKeys : LineMode::kRecord);
    if (Status st = bs.back()->prepare(); !st) {
      for (session::Session* o : sessions) o->reader().leave_shared();
      return st.error();
    }
    prepare_session(*s, opts);
  }
  std::vector<Profile> parts(n);
  std::vector<Status> status(n, ok());

  auto run = [&](std::size_t k) {
    ChunkVisitor v(*bs[k], split.by_position ? &sessions[k]->reader() : nullptr,
                   k ? cuts[k - 1] : 0, k + 1 < n ? cuts[k] : UINT64_MAX);
    Status st = sessions[k]->run(v);
    sessions[k]->reader().leave_shared();
    if (!st && v.done()) st = ok();
    if (st) parts[k] = bs[k]->take_chunk();
    status[k] = std::move(st);
  };
  std::vector<std::thread> threads;
  for (std::size_t k = 1; k < n; ++k) threads.emplace_back(run, k);
  run(0);
  for (std::thread& t : threads) t.join();
  // (the first run's error is the one a single session meets first)
  for (Status& st : status) PK_TRY(std::move(st));
  return merge_runs(parts, bs);
}

}  // namespace perfkit::profile
