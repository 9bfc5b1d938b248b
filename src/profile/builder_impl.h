// Internals of reading a recording into a Profile, shared by one session's
// build (builder.cc) and several sessions' side by side (builder_shards.cc).
// Not a public API.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "abi/perf_event.h"
#include "machine/machine.h"
#include "profile/builder.h"
#include "profile/line_worker.h"
#include "record/records.h"
#include "record/sample.h"
#include "session/raw_key.h"

namespace perfkit::profile::detail {

// Context switches and comm changes by thread: (pid << 32 | tid).
using MarkerMap = std::map<std::uint64_t, std::vector<Marker>>;

// Gives the threads of `p` that have samples their markers.
void attach_markers(Profile& p, MarkerMap& markers);

// The answers of a LineWorker into the frames asked for (kNone: a frame
// made before its location was met); "file:line" texts without a line
// ("??:0", "lib.so[1a2b]") give none.
void set_frame_lines(Profile& p, const std::vector<std::string>& texts,
                     const std::vector<Index>& frames);

// The session's call chains and DWARF unwinder as `opts` asks.
void prepare_session(session::Session& session, const ProfileOptions& opts);

LibKind lib_kind(machine::DsoKind k);

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
    // (what only building needed goes now, on the run's own thread)
    memo_.reset();
    frames_ = {};
    funcs_.clear();
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

}  // namespace perfkit::profile::detail
