#include "profile/profile.h"

#include <algorithm>

namespace perfkit::profile {

namespace {

std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) { return (std::uint64_t{a} << 32) | b; }

}  // namespace

StringTable::StringTable() { intern(""); }

StringTable& StringTable::operator=(const StringTable& o) {
  if (this == &o) return *this;
  strings_.clear();
  index_.clear();
  for (const std::string& s : o.strings_) {
    strings_.push_back(s);
    index_.emplace(strings_.back(), static_cast<Index>(strings_.size() - 1));
  }
  return *this;
}

Index StringTable::intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  strings_.emplace_back(s);
  const auto id = static_cast<Index>(strings_.size() - 1);
  index_.emplace(strings_.back(), id);
  return id;
}

// The id of `key` in `index`, or the next id of `rows` (which the caller
// then adds) when it is new.
template <class Map, class Key, class Rows>
std::pair<Index, bool> find_or_add(Map& index, const Key& key, const Rows& rows) {
  Index i = index.find(key);
  if (i != kNone) return {i, false};
  i = static_cast<Index>(rows.size());
  index.insert(key, i);
  return {i, true};
}

Index Profile::lib(const Lib& l) {
  auto [i, fresh] = find_or_add(lib_index_, pair_key(l.name, l.build_id), libs);
  if (fresh) libs.push_back(l);
  return i;
}

Index Profile::func(const Func& f) {
  auto [i, fresh] = find_or_add(func_index_, pair_key(f.name, f.lib), funcs);
  if (fresh) funcs.push_back(f);
  return i;
}

Index Profile::frame(const Frame& f) {
  auto [i, fresh] =
      find_or_add(frame_index_, FrameKey{f.func, f.address, f.inlined, f.kernel}, frames);
  if (fresh) frames.push_back(f);
  return i;
}

Index Profile::stack(Index frame, Index prefix) {
  auto [i, fresh] = find_or_add(stack_index_, pair_key(frame, prefix), stacks);
  if (fresh) stacks.push_back({frame, prefix});
  return i;
}

Index Profile::thread(std::int32_t pid, std::int32_t tid) {
  auto [i, fresh] = find_or_add(
      thread_index_, pair_key(static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid)),
      threads);
  if (fresh) {
    Thread t;
    t.pid = pid;
    t.tid = tid;
    threads.push_back(std::move(t));
  }
  return i;
}

Index Profile::find_thread(std::int32_t pid, std::int32_t tid) const {
  return thread_index_.find(
      pair_key(static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid)));
}

void Profile::frames_of(Index stack, std::vector<Index>& out) const {
  out.clear();
  for (Index s = stack; s != kNone; s = stacks[s].prefix) out.push_back(stacks[s].frame);
  std::reverse(out.begin(), out.end());
}

namespace {

// `from`'s ids as `into`'s, table by table, filled in order.
struct Remap {
  std::vector<Index> strings, libs, funcs, frames, stacks;
  Index str(Index i) const { return strings[i]; }
};

void remap_tables(Profile& into, const Profile& from, Remap& m) {
  m.strings.resize(from.strings.size());
  for (Index i = 0; i < from.strings.size(); ++i)
    m.strings[i] = into.strings.intern(from.strings.at(i));
  for (const Lib& l : from.libs)
    m.libs.push_back(into.lib({m.str(l.name), m.str(l.short_name), m.str(l.build_id), l.kind}));
  for (const Func& f : from.funcs)
    m.funcs.push_back(into.func({m.str(f.name), f.lib == kNone ? kNone : m.libs[f.lib]}));
  for (const Frame& f : from.frames)
    m.frames.push_back(
        into.frame({m.funcs[f.func], f.address, f.inlined, f.kernel, m.str(f.file), f.line}));
  // A stack's prefix always comes before it (it was interned first).
  for (const Stack& s : from.stacks)
    m.stacks.push_back(
        into.stack(m.frames[s.frame], s.prefix == kNone ? kNone : m.stacks[s.prefix]));
}

}  // namespace

Status merge(Profile& into, const Profile& from, std::vector<Index>* frames) {
  Remap m;
  remap_tables(into, from, m);
  if (frames) *frames = m.frames;
  // (A later chunk may have met samples of events the earlier ones had not.)
  for (std::size_t e = into.events.size(); e < from.events.size(); ++e) {
    const Event& ev = from.events[e];
    into.events.push_back({m.str(ev.name), ev.type, ev.callchains});
  }
  for (std::size_t e = 0; e < from.events.size(); ++e) {
    into.events[e].samples += from.events[e].samples;
    into.events[e].period += from.events[e].period;
  }
  std::vector<Index> threads;
  threads.reserve(from.threads.size());
  for (const Thread& t : from.threads) {
    threads.push_back(into.thread(t.pid, t.tid));
    Thread& to = into.threads[threads.back()];
    to.name = m.str(t.name);
    to.time.insert(to.time.end(), t.time.begin(), t.time.end());
    for (Index s : t.stack) to.stack.push_back(s == kNone ? kNone : m.stacks[s]);
    to.event.insert(to.event.end(), t.event.begin(), t.event.end());
    to.weight.insert(to.weight.end(), t.weight.begin(), t.weight.end());
    to.cpu.insert(to.cpu.end(), t.cpu.begin(), t.cpu.end());
    for (Index c : t.comm) to.comm.push_back(m.str(c));
    for (Marker mk : t.markers) {
      mk.text = m.str(mk.text);
      to.markers.push_back(mk);
    }
  }
  for (Index t : from.order) into.order.push_back(threads[t]);
  Summary& s = into.summary;
  const Summary& f = from.summary;
  if (s.hostname.empty() && s.cmdline.empty()) {
    const std::uint64_t samples = s.samples, lost = s.lost_samples, lost_events = s.lost_events;
    const std::uint64_t first = s.first_time, last = s.last_time;
    s = f;
    s.samples = samples, s.lost_samples = lost, s.lost_events = lost_events;
    s.first_time = first, s.last_time = last;
  }
  if (f.samples) {
    s.first_time = s.samples ? std::min(s.first_time, f.first_time) : f.first_time;
    s.last_time = std::max(s.last_time, f.last_time);
  }
  s.samples += f.samples;
  s.lost_samples += f.lost_samples;
  s.lost_events += f.lost_events;
  return ok();
}

}  // namespace perfkit::profile
