// Profile: a recording's samples folded into one interned, columnar model,
// the one every exporter (folded stacks, flame graphs, pprof, the Firefox
// Profiler, speedscope, Chrome traces) and the later views (the HTML report,
// diff) read; none of them walks the file or resolves a symbol again.
//
//   strings   every name once (id 0 is "")
//   libs      the DSOs samples landed in: name, short name, build-id, kind
//   funcs     a function of a lib (or "[unknown]" when no symbol resolved)
//   frames    a function at an address of its lib (inlined frames apart)
//   stacks    a prefix tree of frames, root (outermost caller) first:
//             stack = (frame, prefix), the prefix kNone at a root
//   events    what was sampled: name, whether its samples carry call chains
//   threads   per thread (pid, tid, name) the sample columns: time, stack,
//             event, weight (period), cpu and comm at the sample's time
//
// The model is built per chunk of a recording and chunks are merged in
// order (merge()); ids are given in order of first appearance, so the same
// samples in the same order make the same profile however they are chunked.
// It is shaped after the Firefox Profiler's processed format: interned,
// columnar, cheap to merge and to serialise.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "base/flat_map.h"
#include "profile/column.h"

namespace perfkit::profile {

using Index = std::uint32_t;
inline constexpr Index kNone = UINT32_MAX;

// Every string once; ids are stable, id 0 is "".
class StringTable {
 public:
  StringTable();
  StringTable(const StringTable& o) : StringTable() { *this = o; }
  StringTable& operator=(const StringTable& o);
  Index intern(std::string_view s);
  std::string_view at(Index i) const { return strings_[i]; }
  std::size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // stable addresses for the index's keys
  std::unordered_map<std::string_view, Index> index_;
};

enum class LibKind : std::uint8_t { kUser, kKernel, kModule, kVdso, kOther };

struct Lib {
  Index name = 0;        // the DSO's long name: path, "[kernel.kallsyms]", "[vdso]"
  Index short_name = 0;  // what perf's Shared Object column shows
  Index build_id = 0;    // lowercase hex, "" when unknown
  LibKind kind = LibKind::kUser;
};

struct Func {
  Index name = 0;     // the symbol ("[unknown]" for none)
  Index lib = kNone;  // kNone: an address in no DSO
};

struct Frame {
  Index func = 0;
  std::uint64_t address = 0;  // DSO-relative where mapped, else the address
  bool inlined = false;       // a function inlined at `address`
  bool kernel = false;        // a kernel-mode address
  Index file = 0;             // its source file ("" when unknown)
  std::uint32_t line = 0;     // its source line (0 when unknown)
};

struct Stack {
  Index frame = 0;
  Index prefix = kNone;  // the caller's stack; kNone at a root
};

struct Event {
  Index name = 0;
  std::uint32_t type = 0;   // perf_event_attr.type (hardware, software, tracepoint, ...)
  bool callchains = false;  // its samples carry call chains (else a stack is the leaf alone)
  std::uint64_t samples = 0, period = 0;
};

// What happened to a thread besides samples, from the recording's side-band
// records: context switches (perf record --switch-events) and comm changes.
enum class MarkerKind : std::uint8_t { kSwitchOut, kSwitchIn, kComm, kExec };

struct Marker {
  std::uint64_t time = 0;  // ns; 0 when the record has no sample_id time
  MarkerKind kind = MarkerKind::kSwitchOut;
  bool preempt = false;  // a switch out while runnable (preempted)
  Index text = 0;        // the new comm (kComm, kExec)
};

struct Thread {
  std::int32_t pid = -1, tid = -1;
  Index name = 0;  // its comm at its last sample
  // One entry per sample, in the order samples came (time order for
  // recordings perf orders).
  Column<std::uint64_t> time;  // ns; 0 when the event has no TIME
  Column<Index> stack;         // kNone: no frame at all
  Column<std::uint16_t> event;
  Column<std::uint64_t> weight;  // the sample's period
  Column<std::int32_t> cpu;      // -1 when the event has no CPU
  Column<Index> comm;            // the thread's comm when sampled
  std::vector<Marker> markers;   // in recording order
  std::size_t size() const { return time.size(); }
};

// What the recording says of itself, for summaries and exports' metadata.
struct Summary {
  std::string hostname, os_release, perf_version, arch, cpu_desc;
  std::vector<std::string> cmdline;
  std::uint32_t nr_cpus = 0;
  std::uint64_t first_time = 0, last_time = 0;  // of the samples kept, ns
  std::uint64_t samples = 0, lost_samples = 0;
  std::uint64_t lost_events = 0;  // what LOST records count (ring buffer overruns)
};

class Profile {
 public:
  StringTable strings;
  std::vector<Lib> libs;
  std::vector<Func> funcs;
  std::vector<Frame> frames;
  std::vector<Stack> stacks;
  std::vector<Event> events;
  std::vector<Thread> threads;
  // The thread of every sample in the order samples came, across threads
  // (a thread's own samples are in its columns, in this order): what
  // writers that follow the recording's order (perf's flamegraph.py) read.
  Column<Index> order;
  Summary summary;

  // Interning: each returns the id of an equal row, adding it when new.
  Index lib(const Lib& l);
  Index func(const Func& f);
  Index frame(const Frame& f);
  Index stack(Index frame, Index prefix);
  Index thread(std::int32_t pid, std::int32_t tid);
  // The thread's id, or kNone when it has none (nothing added).
  Index find_thread(std::int32_t pid, std::int32_t tid) const;

  // The frames of `stack`, root first.
  void frames_of(Index stack, std::vector<Index>& out) const;
  std::string_view func_name(Index frame) const {
    return strings.at(funcs[frames[frame].func].name);
  }

 private:
  struct KeyHash {
    std::size_t operator()(std::uint64_t k) const { return mix64(k); }
  };
  struct FrameKey {
    Index func = 0;
    std::uint64_t address = 0;
    bool inlined = false, kernel = false;
    bool operator==(const FrameKey&) const = default;
  };
  struct FrameHash {
    std::size_t operator()(const FrameKey& k) const {
      return mix64(k.address ^ (std::uint64_t{k.func} << 40) ^ (k.inlined ? 1ULL << 62 : 0) ^
                   (k.kernel ? 1ULL << 63 : 0));
    }
  };
  // Open-addressing indexes: the builder looks a frame and a stack up for
  // every frame of every sample.
  FlatMap<std::uint64_t, KeyHash> lib_index_, func_index_, stack_index_, thread_index_;
  FlatMap<FrameKey, FrameHash> frame_index_;
};

// Appends `from` to `into`: its strings, libs, functions, frames and stacks
// interned into `into`'s tables, its threads' samples after those `into`
// has, its events' counts added (events are matched by position: chunks of
// one recording share them; those past `into`'s are added). With `frames`,
// what each of `from`'s frames became in `into`.
Status merge(Profile& into, const Profile& from, std::vector<Index>* frames = nullptr);

}  // namespace perfkit::profile
