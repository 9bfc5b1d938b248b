#include "export/firefox.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "export/json.h"
#include "export/speedscope.h"

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

constexpr int kCategoryUser = 1, kCategoryKernel = 2;

// Appends ",\"name\":[v0,v1,...]" with `each(i)` writing value i.
template <class Each>
void column(fmt::memory_buffer& b, std::string_view name, std::size_t n, Each&& each) {
  fmt::format_to(std::back_inserter(b), ",\"{}\":[", name);
  for (std::size_t i = 0; i < n; ++i) {
    if (i) b.push_back(',');
    each(i);
  }
  b.push_back(']');
}

void number(fmt::memory_buffer& b, double v) { fmt::format_to(std::back_inserter(b), "{}", v); }
void integer(fmt::memory_buffer& b, std::int64_t v) {
  fmt::format_to(std::back_inserter(b), "{}", v);
}
void index_or_null(fmt::memory_buffer& b, Index v) {
  if (v == kNone)
    b.append(std::string_view("null"));
  else
    integer(b, v);
}

// The strings the profile lacks, after the profile's own (whose ids stay).
class ExtraStrings {
 public:
  explicit ExtraStrings(const profile::StringTable& base) : base_(base) {}
  Index id(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, static_cast<Index>(base_.size() + order_.size()));
    if (fresh) order_.push_back(s);
    return it->second;
  }
  void write(fmt::memory_buffer& b) const {
    b.append(std::string_view("\"shared\":{\"stringArray\":["));
    for (Index i = 0; i < base_.size(); ++i) {
      if (i) b.push_back(',');
      json_string(b, base_.at(i));
    }
    for (const auto& s : order_) {
      b.push_back(',');
      json_string(b, s);
    }
    b.append(std::string_view("]}"));
  }

 private:
  const profile::StringTable& base_;
  std::map<std::string, Index> ids_;
  std::vector<std::string> order_;
};

// One thread's tables: its frames, functions, stacks and resources, each
// numbered in order of first use (a stack's prefix before it).
struct ThreadTables {
  std::vector<Index> funcs, frames, stacks, resources;  // local -> global (resource: lib)
  std::vector<int> inline_depth;                        // per local frame
  std::vector<Index> stack_frame, stack_prefix;         // per local stack (local ids)
  std::map<Index, Index> func_ids, resource_ids;
  std::map<std::pair<Index, int>, Index> frame_ids;
  std::map<std::pair<Index, Index>, Index> stack_ids;  // (local prefix, local frame)
  std::vector<Index> local_stack;                      // global stack -> local, memo
};

class FirefoxWriter {
 public:
  FirefoxWriter(const profile::Profile& p, const FirefoxOptions& o, FdWriter& out)
      : p_(p), o_(o), out_(out), b_(out.buffer()), strings_(p.strings) {
    base_ = p.summary.first_time;
    clock_ = clock_event(p.strings.at(p.events[o.event].name));
    used_libs_.assign(p.libs.size(), kNone);
  }

  Status write() {
    order_threads();
    // The libs and strings the threads use go before them in the file: a
    // pass over the sampled stacks finds the libs, the marker names are
    // known; then the threads stream out one after the other.
    find_used_libs();
    for (const char* name : kMarkerNames) strings_.id(name);
    strings_.id(std::string(kMarkerNames[0]) + kPreempted);
    b_.push_back('{');
    meta();
    libs();
    b_.push_back(',');
    strings_.write(b_);
    b_.append(std::string_view(",\"threads\":["));
    for (std::size_t k = 0; k < order_.size(); ++k) {
      if (k) b_.push_back(',');
      thread(p_.threads[order_[k]], b_);
      out_.maybe_flush();
    }
    b_.append(std::string_view("],\"pages\":[],\"profilerOverhead\":[],\"counters\":[]}\n"));
    return out_.flush();
  }

  static constexpr const char* kMarkerNames[] = {"switch out", "switch in", "comm", "exec"};
  static constexpr const char* kPreempted = " (preempted)";

 private:
  // The libs of the frames of the event's samples, numbered in order of
  // first use (each stack node looked at once).
  void find_used_libs() {
    std::vector<bool> seen(p_.stacks.size(), false);
    for (Index ti : order_) {
      const profile::Thread& t = p_.threads[ti];
      for (std::size_t i = 0; i < t.size(); ++i) {
        if (t.event[i] != o_.event) continue;
        for (Index s = t.stack[i]; s != kNone && !seen[s]; s = p_.stacks[s].prefix) {
          seen[s] = true;
          const Index lib = p_.funcs[p_.frames[p_.stacks[s].frame].func].lib;
          if (lib != kNone) used_lib(lib);
        }
      }
    }
  }

  // Threads of the event, by process (pid), the main thread first, then by tid.
  void order_threads() {
    for (Index i = 0; i < p_.threads.size(); ++i) {
      const auto& ev = p_.threads[i].event;
      if (std::find(ev.begin(), ev.end(), o_.event) != ev.end()) order_.push_back(i);
    }
    std::sort(order_.begin(), order_.end(), [&](Index a, Index b) {
      const profile::Thread &x = p_.threads[a], &y = p_.threads[b];
      if (x.pid != y.pid) return x.pid < y.pid;
      if ((x.tid == x.pid) != (y.tid == y.pid)) return x.tid == x.pid;
      return x.tid < y.tid;
    });
  }
  double ms(std::uint64_t t) const { return t > base_ ? double(t - base_) / 1e6 : 0.0; }

  void meta() {
    b_.append(std::string_view(
        "\"meta\":{\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":["
        "\"Other\"]},{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
        "{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]}],"
        "\"debug\":false,\"extensions\":{\"length\":0,\"baseURL\":[],\"id\":[],\"name\":[]},"
        "\"interval\":"));
    number(b_, interval_ms());
    b_.append(
        std::string_view(",\"preprocessedProfileVersion\":57,\"processType\":0,\"product\":"));
    json_string(b_, o_.product);
    if (!p_.summary.os_release.empty()) {
      b_.append(std::string_view(",\"oscpu\":"));
      json_string(b_, "Linux " + p_.summary.os_release);
    }
    b_.append(std::string_view(
        ",\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"\\u00b5s\"},"
        "\"startTime\":"));
    number(b_, o_.start_time_ms);
    b_.append(std::string_view(
        ",\"symbolicated\":true,\"pausedRanges\":[],\"version\":24,\"usesOnlyOneStackType\":true,"
        "\"sourceCodeIsNotOnSearchfox\":true,\"markerSchema\":[{\"name\":\"Comm\",\"display\":["
        "\"marker-chart\",\"marker-table\"],\"chartLabel\":\"{marker.data.comm}\",\"tableLabel\":"
        "\"{marker.name} {marker.data.comm}\",\"description\":\"The thread's command changed "
        "(comm or exec)\",\"fields\":[{\"key\":\"comm\",\"label\":\"Command\",\"format\":"
        "\"unique-string\"}]},{\"name\":\"ContextSwitch\",\"display\":[\"marker-chart\","
        "\"marker-table\"],\"tableLabel\":\"{marker.name}\",\"description\":\"A context switch "
        "(perf record --switch-events)\",\"fields\":[]}]}"));
  }
  // The sampling interval: a clock event's period, else the median gap.
  double interval_ms() const {
    std::vector<std::uint64_t> gaps;
    for (const profile::Thread& t : p_.threads) {
      std::uint64_t prev = 0;
      for (std::size_t i = 0; i < t.size(); ++i) {
        if (t.event[i] != o_.event) continue;
        if (clock_ && t.weight[i]) return double(t.weight[i]) / 1e6;
        if (prev && t.time[i] > prev) gaps.push_back(t.time[i] - prev);
        prev = t.time[i];
      }
    }
    if (gaps.empty()) return 1.0;
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                     gaps.end());
    return double(gaps[gaps.size() / 2]) / 1e6;
  }

  void libs() {
    b_.append(std::string_view(",\"libs\":["));
    for (std::size_t k = 0; k < lib_order_.size(); ++k) {
      const profile::Lib& l = p_.libs[lib_order_[k]];
      if (k) b_.push_back(',');
      const std::string_view id = p_.strings.at(l.build_id);
      b_.append(std::string_view("{\"name\":"));
      json_string(b_, p_.strings.at(l.short_name));
      b_.append(std::string_view(",\"path\":"));
      json_string(b_, p_.strings.at(l.name));
      b_.append(std::string_view(",\"debugName\":"));
      json_string(b_, p_.strings.at(l.short_name));
      b_.append(std::string_view(",\"debugPath\":"));
      json_string(b_, p_.strings.at(l.name));
      b_.append(std::string_view(",\"breakpadId\":"));
      json_string(b_, breakpad_id(id));
      b_.append(std::string_view(",\"codeId\":"));
      if (id.empty())
        b_.append(std::string_view("null"));
      else
        json_string(b_, id);
      b_.append(std::string_view(",\"arch\":"));
      if (p_.summary.arch.empty())
        b_.append(std::string_view("null"));
      else
        json_string(b_, p_.summary.arch);
      b_.push_back('}');
    }
    b_.push_back(']');
  }
  Index used_lib(Index lib) {
    if (used_libs_[lib] == kNone) {
      used_libs_[lib] = static_cast<Index>(lib_order_.size());
      lib_order_.push_back(lib);
    }
    return used_libs_[lib];
  }

  // The local stack of global `stack` in `t`, made with its prefixes.
  Index local_stack(ThreadTables& t, Index stack) {
    if (stack == kNone) return kNone;
    if (t.local_stack.size() < p_.stacks.size()) t.local_stack.resize(p_.stacks.size(), kNone);
    if (t.local_stack[stack] != kNone) return t.local_stack[stack];
    const profile::Stack& s = p_.stacks[stack];
    const Index prefix = local_stack(t, s.prefix);
    // An inlined frame sits one deeper than the frame before it.
    int depth = 0;
    if (p_.frames[s.frame].inlined && prefix != kNone)
      depth = t.inline_depth[t.stack_frame[prefix]] + 1;
    const Index frame = local_frame(t, s.frame, depth);
    auto [it, fresh] = t.stack_ids.try_emplace({prefix, frame}, Index(t.stack_frame.size()));
    if (fresh) {
      t.stack_frame.push_back(frame);
      t.stack_prefix.push_back(prefix);
    }
    return t.local_stack[stack] = it->second;
  }
  Index local_frame(ThreadTables& t, Index frame, int depth) {
    auto [it, fresh] = t.frame_ids.try_emplace({frame, depth}, Index(t.frames.size()));
    if (fresh) {
      t.frames.push_back(frame);
      t.inline_depth.push_back(depth);
      const Index func = p_.frames[frame].func;
      if (t.func_ids.try_emplace(func, Index(t.funcs.size())).second) {
        t.funcs.push_back(func);
        const Index lib = p_.funcs[func].lib;
        if (lib != kNone && t.resource_ids.try_emplace(lib, Index(t.resources.size())).second)
          t.resources.push_back(lib);
      }
    }
    return it->second;
  }

  void thread(const profile::Thread& th, fmt::memory_buffer& b);
  void frame_table(const ThreadTables& t, fmt::memory_buffer& b);
  void func_table(const ThreadTables& t, fmt::memory_buffer& b);
  void markers(const profile::Thread& th, fmt::memory_buffer& b);

  const profile::Profile& p_;
  const FirefoxOptions& o_;
  FdWriter& out_;
  fmt::memory_buffer& b_;
  ExtraStrings strings_;
  std::uint64_t base_ = 0;
  bool clock_ = false;
  std::vector<Index> order_, used_libs_, lib_order_;
};

void FirefoxWriter::thread(const profile::Thread& th, fmt::memory_buffer& b) {
  ThreadTables t;
  std::vector<Index> stacks;
  std::vector<std::uint64_t> times, weights;
  for (std::size_t i = 0; i < th.size(); ++i) {
    if (th.event[i] != o_.event) continue;
    stacks.push_back(local_stack(t, th.stack[i]));
    times.push_back(th.time[i]);
    weights.push_back(th.weight[i]);
  }
  b.append(std::string_view("{"));
  frame_table(t, b);
  b.push_back(',');
  func_table(t, b);
  b.push_back(',');
  markers(th, b);
  // The process: its main thread's name, else this thread's.
  Index process_name = th.name;
  for (const profile::Thread& u : p_.threads)
    if (u.pid == th.pid && u.tid == th.pid) process_name = u.name;
  const bool main = th.tid == th.pid;
  b.append(std::string_view(",\"name\":"));
  json_string(b, p_.strings.at(main ? process_name : th.name));
  fmt::format_to(std::back_inserter(b),
                 ",\"isMainThread\":{},\"nativeSymbols\":{{\"length\":0,\"address\":[],"
                 "\"functionSize\":[],\"libIndex\":[],\"name\":[]}},\"pausedRanges\":[],"
                 "\"pid\":\"{}\",\"processName\":",
                 main, th.pid);
  json_string(b, p_.strings.at(process_name));
  const double start = times.empty() ? 0.0 : ms(times.front());
  b.append(std::string_view(",\"processShutdownTime\":null,\"processStartupTime\":"));
  number(b, start);
  b.append(std::string_view(",\"processType\":\"default\",\"registerTime\":"));
  number(b, start);
  b.append(std::string_view(",\"resourceTable\":{"));
  fmt::format_to(std::back_inserter(b), "\"length\":{}", t.resources.size());
  column(b, "lib", t.resources.size(),
         [&](std::size_t i) { integer(b, used_lib(t.resources[i])); });
  column(b, "name", t.resources.size(),
         [&](std::size_t i) { integer(b, p_.libs[t.resources[i]].short_name); });
  column(b, "host", t.resources.size(), [&](std::size_t) { b.append(std::string_view("null")); });
  column(b, "type", t.resources.size(), [&](std::size_t) { b.push_back('1'); });
  fmt::format_to(std::back_inserter(b), "}},\"samples\":{{\"length\":{},\"weightType\":\"{}\"",
                 stacks.size(), clock_ ? "tracing-ms" : "samples");
  column(b, "stack", stacks.size(), [&](std::size_t i) { index_or_null(b, stacks[i]); });
  column(b, "timeDeltas", times.size(), [&](std::size_t i) {
    number(b, i ? (times[i] > times[i - 1] ? double(times[i] - times[i - 1]) / 1e6 : 0.0)
                : ms(times[0]));
  });
  column(b, "weight", weights.size(), [&](std::size_t i) {
    if (clock_)
      number(b, double(weights[i]) / 1e6);
    else
      integer(b, static_cast<std::int64_t>(weights[i]));
  });
  if (clock_)  // the clock events' period is CPU time: the CPU graph's µs
    column(b, "threadCPUDelta", weights.size(),
           [&](std::size_t i) { integer(b, static_cast<std::int64_t>(weights[i] / 1000)); });
  fmt::format_to(std::back_inserter(b), "}},\"stackTable\":{{\"length\":{}", t.stack_frame.size());
  column(b, "prefix", t.stack_prefix.size(),
         [&](std::size_t i) { index_or_null(b, t.stack_prefix[i]); });
  column(b, "frame", t.stack_frame.size(), [&](std::size_t i) { integer(b, t.stack_frame[i]); });
  fmt::format_to(std::back_inserter(b),
                 "}},\"tid\":\"{}\",\"unregisterTime\":null,\"showMarkersInTimeline\":{}}}", th.tid,
                 !th.markers.empty());
}

void FirefoxWriter::frame_table(const ThreadTables& t, fmt::memory_buffer& b) {
  const std::size_t n = t.frames.size();
  fmt::format_to(std::back_inserter(b), "\"frameTable\":{{\"length\":{}", n);
  auto frame = [&](std::size_t i) -> const profile::Frame& { return p_.frames[t.frames[i]]; };
  column(b, "func", n, [&](std::size_t i) { integer(b, t.func_ids.at(frame(i).func)); });
  column(b, "category", n,
         [&](std::size_t i) { integer(b, frame(i).kernel ? kCategoryKernel : kCategoryUser); });
  column(b, "subcategory", n, [&](std::size_t) { b.push_back('0'); });
  column(b, "line", n, [&](std::size_t i) {
    if (frame(i).line)
      integer(b, frame(i).line);
    else
      b.append(std::string_view("null"));
  });
  column(b, "column", n, [&](std::size_t) { b.append(std::string_view("null")); });
  column(b, "address", n, [&](std::size_t i) {
    const bool in_lib = p_.funcs[frame(i).func].lib != kNone;
    integer(b, in_lib ? static_cast<std::int64_t>(frame(i).address) : -1);
  });
  column(b, "nativeSymbol", n, [&](std::size_t) { b.append(std::string_view("null")); });
  column(b, "inlineDepth", n, [&](std::size_t i) { integer(b, t.inline_depth[i]); });
  column(b, "innerWindowID", n, [&](std::size_t) { b.push_back('0'); });
  b.push_back('}');
}

void FirefoxWriter::func_table(const ThreadTables& t, fmt::memory_buffer& b) {
  const std::size_t n = t.funcs.size();
  // A function's source file: the first its frames name.
  std::map<Index, Index> files;
  for (Index f : t.frames)
    if (p_.frames[f].file) files.try_emplace(p_.frames[f].func, p_.frames[f].file);
  fmt::format_to(std::back_inserter(b), "\"funcTable\":{{\"length\":{}", n);
  column(b, "name", n, [&](std::size_t i) { integer(b, p_.funcs[t.funcs[i]].name); });
  column(b, "isJS", n, [&](std::size_t) { b.append(std::string_view("false")); });
  column(b, "relevantForJS", n, [&](std::size_t) { b.append(std::string_view("false")); });
  column(b, "resource", n, [&](std::size_t i) {
    const Index lib = p_.funcs[t.funcs[i]].lib;
    integer(b, lib == kNone ? -1 : static_cast<std::int64_t>(t.resource_ids.at(lib)));
  });
  column(b, "fileName", n, [&](std::size_t i) {
    auto it = files.find(t.funcs[i]);
    index_or_null(b, it == files.end() ? kNone : it->second);
  });
  column(b, "lineNumber", n, [&](std::size_t) { b.append(std::string_view("null")); });
  column(b, "columnNumber", n, [&](std::size_t) { b.append(std::string_view("null")); });
  b.push_back('}');
}

void FirefoxWriter::markers(const profile::Thread& th, fmt::memory_buffer& b) {
  std::vector<const profile::Marker*> kept;
  for (const profile::Marker& m : th.markers)
    if (m.time) kept.push_back(&m);
  const std::size_t n = kept.size();
  fmt::format_to(std::back_inserter(b), "\"markers\":{{\"length\":{}", n);
  column(b, "category", n, [&](std::size_t i) {
    integer(b, kept[i]->kind == profile::MarkerKind::kSwitchIn ||
                       kept[i]->kind == profile::MarkerKind::kSwitchOut
                   ? kCategoryKernel
                   : 0);
  });
  column(b, "data", n, [&](std::size_t i) {
    const profile::Marker& m = *kept[i];
    if (m.kind == profile::MarkerKind::kComm || m.kind == profile::MarkerKind::kExec)
      fmt::format_to(std::back_inserter(b), "{{\"type\":\"Comm\",\"comm\":{}}}", m.text);
    else
      b.append(std::string_view("{\"type\":\"ContextSwitch\"}"));
  });
  column(b, "endTime", n, [&](std::size_t) { b.append(std::string_view("null")); });
  column(b, "name", n, [&](std::size_t i) {
    const profile::Marker& m = *kept[i];
    std::string name = kMarkerNames[static_cast<int>(m.kind)];
    if (m.preempt) name += kPreempted;
    integer(b, strings_.id(name));
  });
  column(b, "phase", n, [&](std::size_t) { b.push_back('0'); });
  column(b, "startTime", n, [&](std::size_t i) { number(b, ms(kept[i]->time)); });
  b.push_back('}');
}

}  // namespace

std::string breakpad_id(std::string_view hex) {
  if (hex.size() < 2) return "";
  std::string id(32, '0');
  for (std::size_t i = 0; i < 32 && i < hex.size(); ++i)
    id[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(hex[i])));
  // Byte order of the GUID's first three fields: bytes 0-3, 4-5, 6-7 reversed.
  auto swap_bytes = [&](std::size_t from, std::size_t n) {
    for (std::size_t k = 0; k < n / 2; ++k)
      for (std::size_t c = 0; c < 2; ++c)
        std::swap(id[2 * (from + k) + c], id[2 * (from + n - 1 - k) + c]);
  };
  swap_bytes(0, 4);
  swap_bytes(4, 2);
  swap_bytes(6, 2);
  return id + "0";
}

Status write_firefox(const profile::Profile& p, const FirefoxOptions& o, FdWriter& out) {
  if (o.event >= p.events.size())
    return make_error("no event {} to export (the profile has {})", o.event, p.events.size());
  return FirefoxWriter(p, o, out).write();
}

}  // namespace perfkit::exports
