// perfkit script's Intel PT lines from what the sample before kept: its
// thread, its symbol's span and the text of its line (script_itrace_impl.h).
#include <fmt/format.h>

#include "abi/perf_event.h"
#include "script/script_itrace_impl.h"

namespace perfkit::script {

using namespace perfkit::abi;
using F = ScriptField;

namespace {

// The 16 hex digits of `v`, most significant first, as two words to store
// (little-endian): each nibble spread to a byte, then made ASCII.
inline void hex16(std::uint64_t v, std::uint64_t& first, std::uint64_t& second) {
  auto spread = [](std::uint32_t x) {
    std::uint64_t t = x;
    t = (t | t << 16) & 0x0000FFFF0000FFFFULL;
    t = (t | t << 8) & 0x00FF00FF00FF00FFULL;
    t = (t | t << 4) & 0x0F0F0F0F0F0F0F0FULL;
    // Byte i holds nibble i from the low end; the text wants the high first.
    t = __builtin_bswap64(t);
    const std::uint64_t letters = ((t + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;
    return t + 0x3030303030303030ULL + letters * 39;
  };
  first = spread(static_cast<std::uint32_t>(v >> 32));
  second = spread(static_cast<std::uint32_t>(v));
}

// "{:16x}" into a buffer with room for 16 bytes.
inline char* put_hex16(char* p, std::uint64_t v) {
  std::uint64_t w[2];
  hex16(v, w[0], w[1]);
  // Leading zeros (all but the last digit of 0) print as spaces.
  const unsigned lead = v ? static_cast<unsigned>(__builtin_clzll(v)) / 4 : 15;
  constexpr std::uint64_t kSpaces = 0x2020202020202020ULL;
  if (lead >= 8) {
    const std::uint64_t m = lead == 8 ? 0 : ~0ULL >> (8 * (16 - lead));
    w[1] = (w[1] & ~m) | (kSpaces & m);
    w[0] = kSpaces;
  } else if (lead) {
    const std::uint64_t m = ~0ULL >> (8 * (8 - lead));
    w[0] = (w[0] & ~m) | (kSpaces & m);
  }
  std::memcpy(p, w, 16);
  return p + 16;
}

// "{:x}" into a buffer with room for 16 bytes (it may write all of them).
inline char* put_hex(char* p, std::uint64_t v) {
  if (v < 0x10000) {  // symbol offsets mostly: a digit at a time is cheaper
    const unsigned n = v < 0x10 ? 1 : v < 0x100 ? 2 : v < 0x1000 ? 3 : 4;
    for (unsigned i = n; i-- > 0; v >>= 4) p[i] = "0123456789abcdef"[v & 15];
    return p + n;
  }
  std::uint64_t w[4] = {};
  hex16(v, w[0], w[1]);
  const unsigned n = v ? 16 - static_cast<unsigned>(__builtin_clzll(v)) / 4 : 1;
  std::memcpy(p, reinterpret_cast<const char*>(w) + 16 - n, 16);
  return p + n;
}

}  // namespace

// Whether the lines of `event` can come from print_fast_line(): nothing
// filters samples, and the fields are the thread, time, period, event name
// and the ip's location (the default --itrace=i line, or -F ip).
bool ItraceScript::fast_event(std::size_t event) {
  if (event < fast_.size() && fast_[event] >= 0) return fast_[event] != 0;
  if (event >= fast_.size()) fast_.resize(event + 1, -1);
  const auto& attr = session_.reader().events()[event].attr;
  const OutputConfig& o = p_.opts_.fields.of(attr.type);
  constexpr FieldMask kLine = field_bit(F::kComm) | field_bit(F::kPid) | field_bit(F::kTid) |
                              field_bit(F::kCpu) | field_bit(F::kTime) | field_bit(F::kPeriod) |
                              field_bit(F::kEvent) | field_bit(F::kIp) | field_bit(F::kSym) |
                              field_bit(F::kSymoff) | field_bit(F::kDso);
  const auto& po = p_.opts_;
  const bool plain =
      !callindent_ && !po.fields.print_flags() && !p_.filter_.any() && !po.deltatime && !po.latency;
  const bool chain = p_.use_callchain_ && (attr.sample_type & kSampleCallchain);
  const bool fast =
      plain && !chain && attr.type != kAttrTypeSynth && o.has(F::kIp) && (o.fields & ~kLine) == 0;
  fast_[event] = fast ? 1 : 0;
  return fast;
}

// Keeps the text print_location() just wrote for the kept span, for
// print_fast_line() to repeat.
void ItraceScript::keep_location_text(const OutputConfig& o, std::size_t event) {
  const LastSpan& sp = last_span_;
  if (sp.lo >= sp.hi) {
    text_->text.serial = 0;
    return;
  }
  // The span's text goes to the next slot (the others stay kept).
  text_ = &kept_[kept_next_++ % kept_.size()];
  text_->lo = sp.lo;
  text_->hi = sp.hi;
  text_->generation = sp.generation;
  text_->space = sp.space;
  text_->cpumode = sp.cpumode;
  LocationText& t = text_->text;
  t.serial = 0;
  const machine::Location& loc = sp.loc;
  const symbol::Symbol& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
  t.event = event;
  t.ip = o.has(F::kIp);
  t.offset = o.has(F::kSym) && o.has(F::kSymoff);
  t.offset_base = loc.map->unmap_ip(sym.start);
  // Built in the printer's buffer past its end, then taken back out: no
  // allocation per span.
  auto& b = p_.b_;
  const std::size_t at = b.size();
  if (o.has(F::kSym)) {
    b.push_back(' ');
    const std::string_view name = p_.symbol_name(loc);
    b.append(name.data(), name.data() + name.size());
    if (t.offset) b.append(std::string_view("+0x"));
  }
  t.before.assign({b.data() + at, b.size() - at});
  b.resize(at);
  if (o.has(F::kDso)) {
    b.append(std::string_view(" ("));
    p_.print_dso_name(loc.dso);
    b.push_back(')');
  }
  t.after.assign({b.data() + at, b.size() - at});
  b.resize(at);
  t.serial = sp.serial;
}

// The bytes a fast line with `text` may take, slack included: the start,
// the ip and offset digits, the texts, a space and the newline.
std::size_t ItraceScript::line_bound(const LocationText& text) const {
  return last_start_.text.size() + text.before.size() + text.after.size() + 3 * PaddedText::kSlack +
         2 * 16 + 2;
}

// The flow left the fast line's span: one of the kept spans of the same
// address space, mode and event may hold the ip.
bool ItraceScript::take_kept_span(std::uint64_t ip, std::size_t event) {
  FastLine& f = fast_line_;
  const std::uint8_t cpumode = ip >= kKernelStart ? kMiscKernel : kMiscUser;
  if (cpumode != last_start_.misc) return false;
  const void* space = cpumode == kMiscUser ? static_cast<const void*>(f.thread->maps.get())
                                           : static_cast<const void*>(&session_.machine());
  for (const KeptSpan& k : kept_) {
    if (ip - k.lo >= k.hi - k.lo || k.generation != f.generation || k.space != space ||
        k.cpumode != cpumode || k.text.serial == 0 || k.text.event != event)
      continue;
    f.lo = k.lo;
    f.size = k.hi - k.lo;
    f.text = &k.text;
    f.most = line_bound(k.text);
    return true;
  }
  return false;
}

// Only the time or period changed: the line start is rendered again (as
// the general path would, kept in last_start_) and the rest stays.
void ItraceScript::restart_fast_line(const intelpt::SynthSample& s, std::size_t event) {
  FastLine& f = fast_line_;
  const LastStart& ls = last_start_;
  StartFields sf;
  sf.pid = ls.pid;
  sf.tid = ls.tid;
  sf.cpu = ls.cpu;
  sf.time = f.has_time ? s.time : ~0ULL;
  sf.misc = ls.misc;
  sf.record_type = kRecordSample;
  sf.comm = ls.comm;
  auto& b = p_.b_;
  const std::size_t at = b.size();
  print_line_start(*f.config, sf, *f.thread, s.period, event);
  b.resize(at);  // the start is written from last_start_ with the rest
  f.time = s.time;
  f.period = s.period;
  f.most = line_bound(*f.text);
}

// After a line of the general path: when the kept thread, symbol span,
// location text and line start all hold for this sample, the samples that
// share them with it can take print_fast_line().
void ItraceScript::arm_fast_line(const itrace::ItraceSample& is, std::size_t event) {
  const intelpt::SynthSample& s = *is.sample;
  const machine::Machine& m = session_.machine();
  const std::uint64_t generation = m.generation();
  const LastThread& lt = last_thread_;
  if (!lt.thread || lt.pid != is.pid || lt.tid != is.tid || lt.generation != generation) return;
  const LastSpan& sp = last_span_;
  const std::uint8_t cpumode = s.ip >= kKernelStart ? kMiscKernel : kMiscUser;
  if (s.ip - sp.lo >= sp.hi - sp.lo || sp.generation != generation || sp.cpumode != cpumode ||
      (cpumode == kMiscUser && sp.space != lt.thread->maps.get()))
    return;
  const LocationText& lt_text = text_->text;
  if (lt_text.serial != sp.serial || lt_text.event != event) return;
  const LastStart& ls = last_start_;
  const std::uint64_t st = session_.reader().events()[event].attr.sample_type;
  const std::uint64_t time = (st & kSampleTime) ? s.time : ~0ULL;
  const std::uint32_t cpu = (st & kSampleCpu) ? static_cast<std::uint32_t>(is.cpu) : ~0u;
  if (!ls.valid || ls.time != time || ls.period != s.period || ls.event != event ||
      ls.thread != lt.thread || ls.comm != lt.thread->comm || ls.cpu != cpu || ls.pid != is.pid ||
      ls.tid != is.tid || ls.misc != cpumode || ls.layout)
    return;
  FastLine& f = fast_line_;
  f.armed = true;
  f.pid = is.pid;
  f.tid = is.tid;
  f.cpu = is.cpu;
  f.time = s.time;
  f.period = s.period;
  f.event = event;
  f.lo = sp.lo;
  f.size = sp.hi - sp.lo;
  f.generation = generation;
  f.text = &lt_text;
  f.config = &p_.opts_.fields.of(session_.reader().events()[event].attr.type);
  f.thread = lt.thread;
  f.has_time = (st & kSampleTime) != 0;
  f.most = line_bound(lt_text);
}

Status ItraceScript::on_sample(const itrace::ItraceSample& is) {
  if (is.run_n) [[likely]]
    return on_insn_run(is);
  if (!p_.per_event_dump()) return print_sample_lines(is);
  // Trace errors go to the output, as perf prints them; samples to their
  // event's file.
  p_.begin_sample_lines();
  Status st = print_sample_lines(is);
  const int ev = event_of_[static_cast<std::size_t>(is.sample->kind)];
  if (is.sample->kind != SampleKind::kError && ev >= 0)
    PK_TRY(p_.end_sample_lines(static_cast<std::size_t>(ev)));
  return st;
}

// A fast line at `p` (room for FastLine::most bytes): the kept start, the
// ip, the location's text around the offset.
[[gnu::always_inline]] inline char* ItraceScript::put_fast_line(char* p, const LocationText& t,
                                                                std::uint64_t ip) const {
  p = last_start_.text.put(p);
  *p++ = ' ';
  if (t.ip) p = put_hex16(p, ip);
  p = t.before.put(p);
  if (t.offset) p = put_hex(p, ip - t.offset_base);
  p = t.after.put(p);
  *p++ = '\n';
  return p;
}

// A run of instruction samples: each as a sample of its own, the lines
// like the one before written straight away.
Status ItraceScript::on_insn_run(const itrace::ItraceSample& run) {
  const int ev = event_of_[static_cast<std::size_t>(run.sample->kind)];
  const bool plain = !p_.per_event_dump() && ev >= 0;
  const std::uint8_t* len = run.run_lengths;
  std::uint64_t ip = run.sample->ip;
  intelpt::SynthSample& s = run_sample_;  // the general path's sample, made when needed
  bool have_s = false;
  for (std::uint32_t i = 0; i < run.run_n;) {
    const std::uint64_t at = ip;
    const std::uint8_t n = len[i];
    ip += len[i++];
    if (plain && fast_line_.armed && print_fast_line(run, static_cast<std::size_t>(ev), at)) {
      // The next ones in the same span, in one go.
      const std::uint32_t k = print_fast_run(ip, len + i, run.run_n - i);
      for (std::uint32_t j = 0; j < k; ++j) ip += len[i + j];
      i += k;
      continue;
    }
    if (!have_s) {
      s = *run.sample;
      have_s = true;
    }
    s.ip = at;
    s.insn_len = n;
    const itrace::ItraceSample one{&s, run.pid, run.tid, run.cpu};
    PK_TRY(plain ? on_sample_general(one) : on_sample(one));
  }
  return ok();
}

// After print_fast_line() wrote the line of a run's instruction: the lines
// of the run's next instructions (from `ip`, of lengths len[0..n)) while
// they stay in the fast line's span (the thread, time and period are the
// run's). Returns how many it wrote.
std::uint32_t ItraceScript::print_fast_run(std::uint64_t ip, const std::uint8_t* len,
                                           std::uint32_t n) {
  const FastLine& f = fast_line_;
  const LocationText& t = *f.text;
  auto& b = p_.b_;
  constexpr std::uint32_t kChunk = 256;  // lines between flushes
  std::uint32_t i = 0;
  while (i < n && ip - f.lo < f.size) {
    const std::uint32_t end = std::min(n, i + kChunk);
    const std::size_t at = b.size();
    if (at + (end - i) * f.most > b.capacity()) b.reserve(at + (end - i) * f.most);
    char* p = b.data() + at;
    for (; i < end && ip - f.lo < f.size; ip += len[i++]) p = put_fast_line(p, t, ip);
    b.try_resize(static_cast<std::size_t>(p - b.data()));
    if (!p_.pending_.empty() || p_.out_.full()) p_.maybe_flush();
  }
  return i;
}

Status ItraceScript::print_sample_lines(const itrace::ItraceSample& is) {
  if (fast_line_.armed) {
    const intelpt::SynthSample& s = *is.sample;
    const int ev = event_of_[static_cast<std::size_t>(s.kind)];
    if (s.kind != SampleKind::kError && ev >= 0 &&
        print_fast_line(is, static_cast<std::size_t>(ev), s.ip))
      return ok();
  }
  return on_sample_general(is);
}

// The line of a sample like the one armed with: same thread, cpu, time,
// period and event, and an ip in the same symbol span. Written whole from
// the kept text; false (nothing written) when anything differs.
bool ItraceScript::print_fast_line(const itrace::ItraceSample& is, std::size_t event,
                                   std::uint64_t ip) {
  const intelpt::SynthSample& s = *is.sample;
  FastLine& f = fast_line_;
  if (is.pid != f.pid || is.tid != f.tid || event != f.event || is.cpu != f.cpu ||
      session_.machine().generation() != f.generation)
    return false;
  if (ip - f.lo >= f.size && !take_kept_span(ip, event)) return false;
  auto& b = p_.b_;
  if (s.time != f.time || s.period != f.period) [[unlikely]]
    restart_fast_line(s, event);
  const std::size_t at = b.size();
  if (at + f.most > b.capacity()) [[unlikely]]
    b.reserve(at + f.most);
  char* p = put_fast_line(b.data() + at, *f.text, ip);
  b.try_resize(static_cast<std::size_t>(p - b.data()));
  if (!p_.pending_.empty() || p_.out_.full()) p_.maybe_flush();
  return true;
}

// The same thread as the sample before, unless the machine changed since.
machine::Thread& ItraceScript::thread_of(std::int32_t pid, std::int32_t tid) {
  machine::Machine& m = session_.machine();
  LastThread& c = last_thread_;
  if (c.thread && c.pid == pid && c.tid == tid && c.generation == m.generation()) return *c.thread;
  machine::Thread& t = m.findnew_thread(pid, tid);
  c = LastThread{pid, tid, m.generation(), &t};
  return t;
}

// Machine::resolve, answered without it while `ip` stays in the span of the
// symbol the sample before landed in (consecutive instructions mostly do).
void ItraceScript::resolve_ip(machine::Thread& t, std::uint8_t cpumode, std::uint64_t ip,
                              machine::Location& loc) {
  machine::Machine& m = session_.machine();
  const void* space =
      cpumode == kMiscUser ? static_cast<const void*>(t.maps.get()) : static_cast<void*>(&m);
  LastSpan& c = last_span_;
  if (ip - c.lo < c.hi - c.lo && c.space == space && c.cpumode == cpumode &&
      c.generation == m.generation()) {
    loc = c.loc;
    loc.addr = loc.map->map_ip(ip);
    return;
  }
  const std::uint64_t generation = m.generation();
  loc = m.resolve(t, cpumode, ip);
  if (generation == m.generation()) {
    auto [lo, hi] = m.same_symbol_span(loc);
    c = LastSpan{space, generation, lo, hi, cpumode, loc, ++spans_};
  } else {
    c = LastSpan{};
  }
}

// The line up to the event name: equal for a run of samples of one thread at
// one time (the trace's timestamps move every few hundred instructions), so
// kept from the line before. Not with --deltatime, whose time column depends
// on the sample before.
void ItraceScript::print_line_start(const OutputConfig& o, const StartFields& f,
                                    const machine::Thread& t, std::uint64_t period,
                                    std::size_t event) {
  auto& b = p_.b_;
  LastStart& c = last_start_;
  const bool cacheable = !p_.opts_.deltatime;
  if (cacheable && c.valid && c.thread == &t && c.comm == f.comm && c.time == f.time &&
      c.pid == f.pid && c.tid == f.tid && c.period == period && c.event == event &&
      c.cpu == f.cpu && c.misc == f.misc && c.layout == f.callchain_layout) {
    b.append(c.text.view());
    return;
  }
  const std::size_t at = b.size();
  print_start(o, f, t);
  if (o.has(F::kPeriod)) fmt::format_to(fmt::appender(b), "{:10} ", period);
  if (o.has(F::kEvent)) b.append(event_label(event));
  if (!cacheable) return;
  c.valid = true;
  c.thread = &t;
  c.comm = f.comm;
  c.time = f.time;
  c.period = period;
  c.event = event;
  c.cpu = f.cpu;
  c.misc = f.misc;
  c.pid = f.pid;
  c.tid = f.tid;
  c.layout = f.callchain_layout;
  c.text.assign(std::string_view(b.data() + at, b.size() - at));
}

// ScriptPrinter::print_start, with the comm and pid/tid columns cached per
// thread (padding a string costs fmt a UTF-8 decode per call).
void ItraceScript::print_start(const OutputConfig& o, const StartFields& f,
                               const machine::Thread& t) {
  constexpr FieldMask kCached = field_bit(F::kComm) | field_bit(F::kPid) | field_bit(F::kTid);
  if (p_.opts_.latency || !(o.fields & kCached)) return p_.print_start(o, f);
  Prefix& pre = prefixes_[&t];
  const FieldMask want = o.fields & kCached;
  if (pre.text.empty() || pre.comm != f.comm || pre.fields != want ||
      pre.layout != f.callchain_layout) {
    OutputConfig only = o;
    only.fields = want;
    const std::size_t at = p_.b_.size();
    p_.print_start(only, f);
    pre.text.assign(p_.b_.data() + at, p_.b_.size() - at);
    p_.b_.resize(at);
    pre.comm = f.comm;
    pre.fields = want;
    pre.layout = f.callchain_layout;
  }
  p_.b_.append(pre.text);
  OutputConfig rest = o;
  rest.fields &= ~kCached;
  p_.print_start(rest, f);
}

const std::string& ItraceScript::event_label(std::size_t event) {
  if (event >= labels_.size()) labels_.resize(event + 1);
  std::string& l = labels_[event];
  if (l.empty()) {
    const int width = p_.name_width();  // fills names_
    l = fmt::format("{:>{}}: ", p_.names_[event], width);
  }
  return l;
}

}  // namespace perfkit::script
