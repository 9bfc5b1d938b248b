#include "export/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "export/json.h"
#include "export/web/web.h"

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

// The page's data, written as it is made: a JSON object of column arrays
// (one array per field, not one object per row), every string quoted for a
// <script> element, flushed as the buffer fills.
class DataWriter {
 public:
  DataWriter(const profile::Profile& p, const HtmlReportOptions& o, FdWriter& out)
      : p_(p), o_(o), out_(out) {}

  void write() {
    buf_.append(std::string_view("{\"version\":1,\"summary\":"));
    summary();
    key("strings");
    buf_.push_back('[');
    for (Index i = 0; i < p_.strings.size(); ++i) {
      if (i) buf_.push_back(',');
      json_string(buf_, p_.strings.at(i), JsonStyle::kScript);
      flush_if_full();
    }
    buf_.push_back(']');
    events();
    column("libName", p_.libs, [](const profile::Lib& l) { return std::uint64_t{l.name}; });
    column("libShort", p_.libs, [](const profile::Lib& l) { return std::uint64_t{l.short_name}; });
    column("libKind", p_.libs,
           [](const profile::Lib& l) { return static_cast<std::uint64_t>(l.kind); });
    column("funcName", p_.funcs, [](const profile::Func& f) { return std::uint64_t{f.name}; });
    column("funcLib", p_.funcs, [](const profile::Func& f) { return as_signed(f.lib); });
    column("frameFunc", p_.frames, [](const profile::Frame& f) { return std::uint64_t{f.func}; });
    column("frameFile", p_.frames, [](const profile::Frame& f) { return std::uint64_t{f.file}; });
    column("frameLine", p_.frames, [](const profile::Frame& f) { return std::uint64_t{f.line}; });
    column("frameInlined", p_.frames,
           [](const profile::Frame& f) { return std::uint64_t{f.inlined ? 1u : 0u}; });
    unknown_frames();
    column("stackFrame", p_.stacks, [](const profile::Stack& s) { return std::uint64_t{s.frame}; });
    column("stackPrefix", p_.stacks, [](const profile::Stack& s) { return as_signed(s.prefix); });
    key("threads");
    buf_.push_back('[');
    for (std::size_t t = 0; t < p_.threads.size(); ++t) {
      if (t) buf_.push_back(',');
      thread(p_.threads[t]);
    }
    buf_.append(std::string_view("]}"));
    out_.write(std::string_view(buf_.data(), buf_.size()));
    buf_.clear();
  }

 private:
  static std::int64_t as_signed(Index i) { return i == kNone ? -1 : static_cast<std::int64_t>(i); }

  void append_int(std::int64_t v) {
    const fmt::format_int f(v);
    buf_.append(f.data(), f.data() + f.size());
  }
  // One number of a column: a comma before all but the first, its digits
  // written in place (the columns are most of the page: millions of them).
  void list_int(std::size_t i, std::int64_t v) {
    const std::size_t at = buf_.size();
    buf_.try_resize(at + 24);
    char* p = buf_.data() + at;
    if (i) *p++ = ',';
    std::uint64_t u = static_cast<std::uint64_t>(v);
    if (v < 0) {
      *p++ = '-';
      u = 0 - u;
    }
    std::size_t n = 1;
    for (std::uint64_t t = u; t >= 10; t /= 10) ++n;
    char* e = p + n;
    do {
      *--e = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u);
    buf_.try_resize(static_cast<std::size_t>(p + n - buf_.data()));
    flush_if_full();
  }
  void key(std::string_view k) { fmt::format_to(std::back_inserter(buf_), ",\"{}\":", k); }
  void flush_if_full() {
    if (buf_.size() < (1 << 16)) return;
    out_.write(std::string_view(buf_.data(), buf_.size()));
    buf_.clear();
    out_.maybe_flush();
  }
  template <class Rows, class Get>
  void column(std::string_view name, const Rows& rows, Get get) {
    key(name);
    buf_.push_back('[');
    for (std::size_t i = 0; i < rows.size(); ++i) {
      list_int(i, static_cast<std::int64_t>(get(rows[i])));
    }
    buf_.push_back(']');
  }
  // Frames in no symbol, by address, as perf report names them
  // ("0x0000000000163d47": DSO-relative where mapped): the page shows them
  // so rather than as one "[unknown]" per DSO; zero as C's "%#.16llx"
  // prints it, without the prefix. Addresses are strings (a JavaScript
  // number holds 53 bits).
  void unknown_frames() {
    key("unknownFrames");
    buf_.push_back('[');
    const char* sep = "";
    for (std::size_t i = 0; i < p_.frames.size(); ++i) {
      const profile::Frame& f = p_.frames[i];
      if (f.inlined || p_.strings.at(p_.funcs[f.func].name) != "[unknown]") continue;
      if (f.address)
        fmt::format_to(std::back_inserter(buf_), "{}[{},\"{:#018x}\"]", sep, i, f.address);
      else
        fmt::format_to(std::back_inserter(buf_), "{}[{},\"{:016x}\"]", sep, i, 0);
      sep = ",";
      flush_if_full();
    }
    buf_.push_back(']');
  }
  void string_field(std::string_view name, std::string_view value, bool first = false) {
    if (!first) buf_.push_back(',');
    fmt::format_to(std::back_inserter(buf_), "\"{}\":", name);
    json_string(buf_, value, JsonStyle::kScript);
  }

  void summary() {
    const profile::Summary& s = p_.summary;
    std::string cmdline;
    for (const std::string& a : s.cmdline) cmdline += (cmdline.empty() ? "" : " ") + a;
    buf_.push_back('{');
    string_field("title", o_.title, true);
    string_field("cmdline", cmdline);
    string_field("hostname", s.hostname);
    string_field("osRelease", s.os_release);
    string_field("perfVersion", s.perf_version);
    string_field("arch", s.arch);
    string_field("cpuDesc", s.cpu_desc);
    fmt::format_to(std::back_inserter(buf_),
                   ",\"nrCpus\":{},\"firstTime\":{},\"lastTime\":{},\"samples\":{},"
                   "\"lostSamples\":{},\"lostEvents\":{},\"maxStack\":{},\"warnings\":[",
                   s.nr_cpus, s.first_time, s.last_time, s.samples, s.lost_samples, s.lost_events,
                   o_.max_stack);
    for (std::size_t i = 0; i < o_.warnings.size(); ++i) {
      if (i) buf_.push_back(',');
      json_string(buf_, o_.warnings[i], JsonStyle::kScript);
    }
    buf_.append(std::string_view("]}"));
  }

  void events() {
    key("events");
    buf_.push_back('[');
    for (std::size_t i = 0; i < p_.events.size(); ++i) {
      const profile::Event& e = p_.events[i];
      fmt::format_to(std::back_inserter(buf_),
                     "{}{{\"name\":{},\"samples\":{},\"period\":{},\"callchains\":{}}}",
                     i ? "," : "", e.name, e.samples, e.period, e.callchains);
    }
    buf_.push_back(']');
  }

  // A thread's columns: times as deltas from the previous sample (from the
  // first sample of the recording for its first), and the event and weight
  // columns as one number when every sample has the same.
  void thread(const profile::Thread& t) {
    fmt::format_to(std::back_inserter(buf_), "{{\"pid\":{},\"tid\":{},\"name\":{},\"time\":[",
                   t.pid, t.tid, t.name);
    std::uint64_t last = p_.summary.first_time;
    for (std::size_t i = 0; i < t.size(); ++i) {
      // Times out of order (or absent) are written as they are, signed.
      const std::int64_t delta =
          static_cast<std::int64_t>(t.time[i]) - static_cast<std::int64_t>(last);
      list_int(i, t.time[i] ? delta : 0);
      if (t.time[i]) last = t.time[i];
    }
    buf_.append(std::string_view("],\"stack\":["));
    for (std::size_t i = 0; i < t.size(); ++i) {
      list_int(i, as_signed(t.stack[i]));
    }
    buf_.push_back(']');
    same_or_column("event", t.event);
    same_or_column("weight", t.weight);
    same_or_column("comm", t.comm);
    off_cpu(t);
    buf_.push_back('}');
  }
  // When the thread was switched out (perf record --switch-events): pairs
  // of times (from the recording's first sample, clamped to its span), a
  // switch out to the next switch in, the last one open to the end.
  void off_cpu(const profile::Thread& t) {
    const std::uint64_t first = p_.summary.first_time, last = p_.summary.last_time;
    const auto at = [&](std::uint64_t time) {
      return static_cast<std::int64_t>(std::clamp(time, first, std::max(first, last)) - first);
    };
    bool any = false, out = false;
    std::uint64_t since = 0;
    const auto interval = [&](std::uint64_t from, std::uint64_t to) {
      buf_.append(std::string_view(any ? "," : ",\"offCpu\":["));
      any = true;
      append_int(at(from));
      buf_.push_back(',');
      append_int(at(to));
      flush_if_full();
    };
    for (const profile::Marker& m : t.markers) {
      if (!m.time) continue;
      if (m.kind == profile::MarkerKind::kSwitchOut && !out) {
        out = true;
        since = m.time;
      } else if (m.kind == profile::MarkerKind::kSwitchIn && out) {
        out = false;
        if (m.time > since) interval(since, m.time);
      }
    }
    if (out && last > since) interval(since, last);
    if (any) buf_.push_back(']');
  }
  template <class T>
  void same_or_column(std::string_view name, const profile::Column<T>& v) {
    bool same = true;
    for (const T& x : v) same = same && x == v.front();
    if (same && !v.empty()) {
      fmt::format_to(std::back_inserter(buf_), ",\"{}\":{}", name, v.front());
      return;
    }
    key(name);
    buf_.push_back('[');
    for (std::size_t i = 0; i < v.size(); ++i) {
      list_int(i, static_cast<std::int64_t>(v[i]));
    }
    buf_.push_back(']');
  }

  const profile::Profile& p_;
  const HtmlReportOptions& o_;
  FdWriter& out_;
  fmt::memory_buffer buf_;
};

}  // namespace

Status write_html_report(const profile::Profile& p, const HtmlReportOptions& o, FdWriter& out) {
  const std::string_view page = web::kReportHtml;
  std::size_t at = web::emit_until(page, 0, "@TITLE@", out);
  fmt::memory_buffer title;
  xml_text(title, o.title);
  out.write(std::string_view(title.data(), title.size()));
  at = web::emit_until(page, at, "@CSS@", out);
  out.write(web::kReportCss);
  at = web::emit_until(page, at, "@DATA@", out);
  DataWriter(p, o, out).write();
  at = web::emit_until(page, at, "@JS@", out);
  out.write(web::kFixedJs);
  out.write(web::kReportJs);
  out.write(page.substr(at));
  return out.flush();
}

}  // namespace perfkit::exports
