#include "export/chrome.h"

#include <algorithm>
#include <vector>

#include "export/json.h"
#include "export/speedscope.h"

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

class TraceWriter {
 public:
  TraceWriter(const profile::Profile& p, std::size_t event, FdWriter& out)
      : p_(p), event_(event), out_(out), buf_(out.buffer()) {
    base_ = p.summary.first_time;
    for (const profile::Thread& t : p.threads)
      for (const profile::Marker& m : t.markers)
        if (m.time && (!base_ || m.time < base_)) base_ = m.time;
  }

  void metadata(const profile::Thread& t, bool process) {
    begin_event();
    buf_.append(
        std::string_view(process ? "\"name\":\"process_name\"" : "\"name\":\"thread_name\""));
    fmt::format_to(std::back_inserter(buf_),
                   ",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":", t.pid, t.tid);
    json_string(buf_, p_.strings.at(t.name));
    buf_.append(std::string_view("}}"));
  }

  // The flame chart of thread t: B/E slices following its stacks.
  void slices(const profile::Thread& t) {
    const std::uint64_t interval = sampling_interval(t);
    std::vector<Index> open, cur;
    std::uint64_t last = 0;
    bool any = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.event[i] != event_) continue;
      const std::uint64_t time = t.time[i] ? t.time[i] : base_ + i * interval;
      if (any && time > last + 2 * interval) close_to(t, open, 0, last + interval);
      p_.frames_of(t.stack[i], cur);
      std::size_t k = 0;
      while (k < open.size() && k < cur.size() && open[k] == cur[k]) ++k;
      close_to(t, open, k, time);
      for (std::size_t j = k; j < cur.size(); ++j) {
        const profile::Func& fn = p_.funcs[p_.frames[cur[j]].func];
        begin_event();
        buf_.append(std::string_view("\"name\":"));
        json_string(buf_, p_.strings.at(fn.name));
        buf_.append(std::string_view(",\"cat\":"));
        json_string(buf_, fn.lib == kNone ? "" : p_.strings.at(p_.libs[fn.lib].short_name));
        stamp(t, "B", time);
        open.push_back(cur[j]);
      }
      last = time, any = true;
      out_.maybe_flush();
    }
    if (any) close_to(t, open, 0, last + interval);
  }

  void markers(const profile::Thread& t) {
    for (const profile::Marker& m : t.markers) {
      if (!m.time) continue;
      begin_event();
      switch (m.kind) {
        case profile::MarkerKind::kSwitchOut:
          buf_.append(std::string_view(m.preempt ? "\"name\":\"switch out (preempted)\""
                                                 : "\"name\":\"switch out\""));
          break;
        case profile::MarkerKind::kSwitchIn:
          buf_.append(std::string_view("\"name\":\"switch in\""));
          break;
        default:
          buf_.append(std::string_view("\"name\":"));
          json_string(buf_, std::string(m.kind == profile::MarkerKind::kExec ? "exec " : "comm ") +
                                std::string(p_.strings.at(m.text)));
          break;
      }
      buf_.append(std::string_view(",\"cat\":\"sched\",\"s\":\"t\""));
      stamp(t, "i", m.time);
    }
  }

  void begin_event() {
    buf_.append(std::string_view(first_ ? "\n{" : ",\n{"));
    first_ = false;
  }

 private:
  void stamp(const profile::Thread& t, const char* ph, std::uint64_t time) {
    const std::uint64_t rel = time > base_ ? time - base_ : 0;
    fmt::format_to(std::back_inserter(buf_),
                   ",\"ph\":\"{}\",\"ts\":{}.{:03},\"pid\":{},\"tid\":{}}}", ph, rel / 1000,
                   rel % 1000, t.pid, t.tid);
  }
  void close_to(const profile::Thread& t, std::vector<Index>& open, std::size_t keep,
                std::uint64_t time) {
    while (open.size() > keep) {
      begin_event();
      buf_.append(std::string_view("\"ph\":\"E\""));
      const std::uint64_t rel = time > base_ ? time - base_ : 0;
      fmt::format_to(std::back_inserter(buf_), ",\"ts\":{}.{:03},\"pid\":{},\"tid\":{}}}",
                     rel / 1000, rel % 1000, t.pid, t.tid);
      open.pop_back();
    }
  }
  // How long one sample stands for: the period of a clock event (ns), else
  // the median gap between the thread's samples.
  std::uint64_t sampling_interval(const profile::Thread& t) const {
    const bool clock = clock_event(p_.strings.at(p_.events[event_].name));
    std::vector<std::uint64_t> gaps;
    std::uint64_t prev = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.event[i] != event_) continue;
      if (clock && t.weight[i]) return t.weight[i];
      if (prev && t.time[i] > prev) gaps.push_back(t.time[i] - prev);
      prev = t.time[i];
    }
    if (gaps.empty()) return 1000000;  // 1 ms
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                     gaps.end());
    return std::max<std::uint64_t>(gaps[gaps.size() / 2], 1);
  }

  const profile::Profile& p_;
  std::size_t event_;
  FdWriter& out_;
  fmt::memory_buffer& buf_;
  std::uint64_t base_ = 0;
  bool first_ = true;
};

}  // namespace

Status write_chrome_trace(const profile::Profile& p, const ChromeOptions& o, FdWriter& out) {
  if (o.event >= p.events.size())
    return make_error("no event {} to trace (the profile has {})", o.event, p.events.size());
  out.write(std::string_view("{\"traceEvents\":["));
  TraceWriter w(p, o.event, out);
  std::vector<std::int32_t> processes;
  for (const profile::Thread& t : p.threads) {
    if (std::find(processes.begin(), processes.end(), t.pid) == processes.end()) {
      processes.push_back(t.pid);
      // The process's name: its main thread's, else this thread's.
      const profile::Thread* main = &t;
      for (const profile::Thread& u : p.threads)
        if (u.pid == t.pid && u.tid == t.pid) main = &u;
      w.metadata(*main, true);
    }
    w.metadata(t, false);
    w.slices(t);
    w.markers(t);
  }
  auto& buf = out.buffer();
  buf.append(std::string_view("\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"event\":"));
  json_string(buf, p.strings.at(p.events[o.event].name));
  std::string cmdline;
  for (const auto& a : p.summary.cmdline) cmdline += (cmdline.empty() ? "" : " ") + a;
  buf.append(std::string_view(",\"command\":"));
  json_string(buf, cmdline);
  buf.append(std::string_view(",\"hostname\":"));
  json_string(buf, p.summary.hostname);
  buf.append(std::string_view(",\"exporter\":\"perfkit\"}}\n"));
  return out.flush();
}

}  // namespace perfkit::exports
