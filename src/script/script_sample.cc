// ScriptPrinter: one sample as perf script prints it (perf 6.1's
// process_event and sample__fprintf_sym).
#include <algorithm>
#include <fstream>

#include "abi/perf_event.h"
#include "abi/registers.h"
#include "dump/session_dump.h"
#include "script/script_printer.h"

namespace perfkit::script {

using namespace perfkit::abi;
using F = ScriptField;

namespace {

// PERF_TYPE_SOFTWARE page faults: their ADDR is a data address to resolve.
bool addr_correlates_sym(const EventAttr& a) {
  return a.type == 1 && (a.config == 2 || a.config == 5 || a.config == 6);
}

// "{:{width}x}" without fmt's format-string parsing: callchain addresses
// and symbol offsets are the most printed fields of all.
void append_hex(fmt::memory_buffer& b, std::uint64_t v, int width) {
  char tmp[32];
  char* end = tmp + sizeof tmp;
  char* p = end;
  do {
    *--p = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  while (end - p < width) *--p = ' ';
  b.append(p, end);
}

// "{:W}" (align '>'), "{:<W}" ('<') or "{:0W}" ('0') of a decimal integer.
void append_dec(fmt::memory_buffer& b, std::int64_t v, int width, char align) {
  char tmp[48];
  char* end = tmp + 24;
  char* p = end;
  std::uint64_t u = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u);
  if (align == '0')
    while (end - p < width - (v < 0)) *--p = '0';
  if (v < 0) *--p = '-';
  if (align == '>')
    while (end - p < width) *--p = ' ';
  if (align == '<')
    while (end - p < width) *end++ = ' ';
  b.append(p, end);
}

void append_udec(fmt::memory_buffer& b, std::uint64_t v, int width) {
  char tmp[32];
  char* end = tmp + sizeof tmp;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (end - p < width) *--p = ' ';
  b.append(p, end);
}

// printf's "%*s": padded to `width` bytes (not code points, as fmt would).
void append_right(fmt::memory_buffer& b, std::string_view s, std::size_t width) {
  for (std::size_t i = s.size(); i < width; ++i) b.push_back(' ');
  b.append(s);
}

bool kernel_space(const machine::Dso* d) {
  return d && (d->kind == machine::DsoKind::kKernel || d->kind == machine::DsoKind::kModule ||
               d->kind == machine::DsoKind::kKsym);
}

// perf's unit_number__scnprintf as get_page_size_name uses it.
void page_size(fmt::memory_buffer& b, std::uint64_t n) {
  if (!n) {
    fmt::format_to(fmt::appender(b), " N/A");
    return;
  }
  static constexpr char kUnits[] = "BKMG";
  int i = 0;
  while (n / 1024 > 1 && i < 3) {
    n /= 1024;
    ++i;
  }
  fmt::format_to(fmt::appender(b), " {}{}", n, kUnits[i]);
}

std::string_view branch_type(std::uint64_t flags) {
  static constexpr std::string_view kNames[] = {
      "N/A",    "COND",      "UNCOND",   "IND",  "CALL", "IND_CALL", "RET",   "SYSCALL",
      "SYSRET", "COND_CALL", "COND_RET", "ERET", "IRQ",  "SERROR",   "NO_TX", ""};
  static constexpr std::string_view kNew[] = {"FAULT_ALGN", "FAULT_DATA", "FAULT_INST", "ARCH_1",
                                              "ARCH_2",     "ARCH_3",     "ARCH_4",     "ARCH_5"};
  unsigned type = (flags >> 20) & 0xf, new_type = (flags >> 26) & 0xf;
  if (type == 0) return "";
  if (type == 15) return new_type < std::size(kNew) ? kNew[new_type] : "";
  return kNames[type];
}

}  // namespace

std::string_view ScriptPrinter::symbol_name(const machine::Location& loc) const {
  return session_.machine().symbol_name(loc);
}

int ScriptPrinter::name_width() {
  if (name_width_) return name_width_;
  names_.clear();
  const auto& events = session_.reader().events();
  for (std::size_t i = 0; i < events.size(); ++i) {
    names_.push_back(session_.event_name(i));
    // A tracepoint the header does not name takes "sys:name" from its format.
    if (events[i].attr.type == 2 && tracepoints_ &&
        (events[i].name.empty() || events[i].name == "unknown tracepoint")) {
      std::string tp = tracepoints_->event_name(events[i].attr.config);
      if (!tp.empty()) names_.back() = tp;
    }
    name_width_ = std::max<int>(name_width_, static_cast<int>(names_.back().size()));
  }
  return name_width_;
}

void ScriptPrinter::print_time(std::uint64_t t) {
  if (opts_.reltime) {
    if (!initial_time_) initial_time_ = t;
    t -= initial_time_;
  } else if (opts_.deltatime) {
    std::uint64_t now = t;
    t = previous_time_ ? t - previous_time_ : 0;
    previous_time_ = now;
  }
  const std::uint64_t secs = t / 1000000000ULL, nsecs = t % 1000000000ULL;
  auto out = fmt::appender(b_);
  if (opts_.ns) {
    fmt::format_to(out, "{:5}.{:09}: ", secs, nsecs);
  } else {
    // "{}.{:06}: " right-aligned in 12 columns before the colon.
    char tmp[48];
    char* end = tmp + 40;
    char* p = end;
    *p = ':';
    p[1] = ' ';
    std::uint64_t us = nsecs / 1000;
    for (int i = 0; i < 6; ++i, us /= 10) *--p = static_cast<char>('0' + us % 10);
    *--p = '.';
    std::uint64_t sec = secs;
    do {
      *--p = static_cast<char>('0' + sec % 10);
      sec /= 10;
    } while (sec);
    while (end - p < 12) *--p = ' ';
    b_.append(p, end + 2);
  }
}

// perf_sample__fprintf_start.
void ScriptPrinter::print_start(const OutputConfig& o, const StartFields& f) {
  auto out = fmt::appender(b_);
  if (o.has(F::kComm)) {
    std::string_view comm = f.comm ? std::string_view(*f.comm) : std::string_view(":-1");
    if (opts_.latency)
      append_right(b_, comm.substr(0, 8), 8);
    else if (f.callchain_layout)
      b_.append(comm);
    else
      append_right(b_, comm, 16);
    b_.push_back(' ');
  }
  if (o.has(F::kPid) && o.has(F::kTid)) {
    append_dec(b_, f.pid, 5, '>');
    b_.push_back('/');
    append_dec(b_, f.tid, 5, '<');
    b_.push_back(' ');
  } else if (o.has(F::kPid) || o.has(F::kTid)) {
    append_dec(b_, o.has(F::kPid) ? f.pid : f.tid, 5, '>');
    b_.push_back(' ');
  }
  if (o.has(F::kCpu)) {
    const std::int32_t cpu = static_cast<std::int32_t>(f.cpu);
    if (opts_.latency) {
      append_dec(b_, cpu, 3, '>');
      b_.push_back(' ');
    } else {
      b_.push_back('[');
      append_dec(b_, cpu, 3, '0');
      b_.append(std::string_view("] "));
    }
  }
  if (o.has(F::kMisc)) {
    std::string m;
    auto has = [&](unsigned v) { return (f.misc & v) == v; };
    if (has(kMiscKernel)) m += 'K';
    if (has(kMiscUser)) m += 'U';
    if (has(kMiscHypervisor)) m += 'H';
    if (has(kMiscGuestKernel)) m += 'G';
    if (has(kMiscGuestUser)) m += 'g';
    switch (f.record_type) {
      case kRecordMmap:
      case kRecordMmap2:
        if (has(kMiscMmapData)) m += 'M';
        break;
      case kRecordComm:
        if (has(kMiscCommExec)) m += 'E';
        break;
      case kRecordSwitch:
      case kRecordSwitchCpuWide:
        if (has(kMiscSwitchOut)) {
          m += 'S';
          if (f.misc & kMiscSwitchOutPreempt) m += 'p';
        }
        break;
      default:
        break;
    }
    fmt::format_to(out, "{}{:>{}}", m, " ", std::max<int>(6 - static_cast<int>(m.size()), 1));
  }
  if (o.has(F::kTime)) print_time(f.time);
}

machine::Location ScriptPrinter::resolve_fb(machine::Thread& t, std::uint8_t cpumode,
                                            std::uint64_t addr, machine::Machine* m) {
  if (!m) m = &session_.machine();
  machine::Location loc = m->resolve(t, cpumode, addr);
  if (loc.map) return loc;
  std::uint8_t mode = addr >= kernel_start_ ? kMiscKernel : kMiscUser;
  if (mode == cpumode) return loc;
  return m->resolve(t, mode, addr);
}

void ScriptPrinter::print_dso_name(const machine::Dso* d) {
  if (!d) {
    b_.append(std::string_view("[unknown]"));
    return;
  }
  // perf names a module "[name]" unless the recording's build-id table
  // registered it first, in kernel mode, under its path.
  const std::string& n = d->kind == machine::DsoKind::kModule && !opts_.show_kernel_path &&
                                 !kernel_build_ids_.count(d->long_name)
                             ? d->short_name
                             : d->long_name;
  b_.append(n);
}

// __symbol__fprintf_symname_offs.
void ScriptPrinter::print_symoff(const machine::Location& loc, std::string_view name,
                                 bool with_offset) {
  if (loc.symbol < 0) {
    b_.append(std::string_view("[unknown]"));
    return;
  }
  b_.append(name);
  if (!with_offset) return;
  const auto& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
  std::uint64_t off = loc.addr < sym.end ? loc.addr - sym.start
                                         : loc.addr - (loc.map ? loc.map->start : 0) - sym.start;
  b_.append(std::string_view("+0x"));
  append_hex(b_, off, 0);
}

std::shared_ptr<symbol::SourceLines> ScriptPrinter::source_lines() {
  if (!lines_)
    lines_ = std::make_shared<symbol::SourceLines>(
        session_.symbolizer(), symbol::SourceLineOptions{opts_.full_source_path});
  return lines_;
}

symbol::SourceLines::Dso* ScriptPrinter::lines_of(const machine::Dso* d) {
  source_lines();
  if (d->index >= lines_by_dso_.size()) lines_by_dso_.resize(d->index + 1, nullptr);
  auto*& h = lines_by_dso_[d->index];
  if (!h) h = lines_->dso(d->long_name, d->short_name, d->build_id);
  return h;
}

// map__fprintf_srcline: nothing without a map, nothing for "??:0".
void ScriptPrinter::print_srcline(const machine::Location& loc, std::string_view prefix) {
  if (!loc.map || !loc.dso) return;
  symbol::SourceLines::Dso* d = lines_of(loc.dso);
  std::string_view line = lines_->srcline(d, loc.addr);
  if (line.starts_with("??:0")) return;
  b_.append(prefix);
  b_.append(line);
}

// sample__fprintf_sym without a callchain.
void ScriptPrinter::print_location(const OutputConfig& o, std::uint64_t ip,
                                   const machine::Location& loc) {
  if (defer(o, ip, loc, false)) return;
  if (o.has(F::kIp)) append_hex(b_, ip, 16);
  if (o.has(F::kSym)) {
    b_.push_back(' ');
    print_symoff(loc, loc.symbol >= 0 ? symbol_name(loc) : std::string_view(), o.has(F::kSymoff));
  }
  if (o.has(F::kDso)) {
    b_.append(std::string_view(" ("));
    print_dso_name(loc.map ? loc.dso : nullptr);
    b_.push_back(')');
  }
  if (o.has(F::kSrcline)) print_srcline(loc, "\n  ");
}

// A kernel location whose symbols are still loading: its text is left out
// of the buffer for resolve_pending() to put in.
bool ScriptPrinter::defer(const OutputConfig& o, std::uint64_t ip, const machine::Location& loc,
                          bool frame) {
  if (loc.symbol != machine::kSymbolPending) return false;
  pending_.push_back(Pending{held_.size(), b_.size(), ip, o, frame});
  return true;
}

// The buffer goes out unless it waits for kernel symbols that are still
// loading; then, full, it is put aside. Once they are in, the waiting
// frames are filled in.
void ScriptPrinter::maybe_flush() {
  if (!pending_.empty()) {
    // Held output stays bounded: past kMaxHeld, wait for the symbols.
    constexpr std::size_t kMaxHeld = 64;  // full buffers
    if (held_.size() < kMaxHeld && session_.machine().kernel_symbols_pending()) {
      if (out_.full()) {
        const std::size_t size = b_.size();
        held_.push_back(std::move(b_));
        b_.clear();
        b_.reserve(size);
      }
      return;
    }
    resolve_pending();
  }
  out_.maybe_flush();
}

void ScriptPrinter::resolve_pending() {
  if (pending_.empty()) return;
  held_.push_back(std::move(b_));
  b_.clear();
  std::vector<Buf> held;
  std::vector<Pending> pending;
  held.swap(held_);
  pending.swap(pending_);
  machine::Machine& m = session_.machine();
  machine::Thread& idle = m.findnew_thread(0, 0);
  std::size_t next = 0;
  for (std::size_t c = 0; c < held.size(); ++c) {
    const Buf& text = held[c];
    std::size_t from = 0;
    for (; next < pending.size() && pending[next].chunk == c; ++next) {
      const Pending& p = pending[next];
      b_.append(text.data() + from, text.data() + p.offset);
      from = p.offset;
      session::Frame f;
      f.ip = p.ip;
      f.loc = m.resolve(idle, kMiscKernel, p.ip);
      // The sample found the kernel's map or none: a map of another DSO
      // there now (a BPF program's, say) came after it.
      if (f.loc.dso && f.loc.dso->kind != machine::DsoKind::kKernel) {
        f.loc = machine::Location{};
        f.loc.addr = p.ip;
        f.loc.level = machine::kLevelKernel;
        f.loc.kernel_maps = true;
      }
      if (!p.frame)
        print_location(p.o, p.ip, f.loc);
      else if (!append_cached_frame(p.o, f))
        print_frame(p.o, f);
    }
    b_.append(text.data() + from, text.data() + text.size());
    out_.maybe_flush();
  }
}

// sample__fprintf_callchain: one line per frame.
void ScriptPrinter::print_callchain(const OutputConfig& o, const session::ResolvedSample& s) {
  for (const session::Frame& f : s.callchain) {
    if (!append_cached_frame(o, f)) print_frame(o, f);
    if (opts_.stop_bt.empty()) continue;
    // --stop-bt: perf's bt_stop_list, checked after the frame's line
    const std::string_view name = f.inlined ? std::string_view(f.inlined) : symbol_name(f.loc);
    if (!name.empty() &&
        std::find(opts_.stop_bt.begin(), opts_.stop_bt.end(), name) != opts_.stop_bt.end())
      break;
  }
}

// A callchain's lines, kept whole for the samples that resolved alike
// (the session's resolution ids): a copy is cheaper than a line a frame.
void ScriptPrinter::print_recorded_callchain(const OutputConfig& o,
                                             const session::ResolvedSample& s) {
  const std::uint32_t id = s.resolution;
  if (id == session::kNoResolution || !opts_.stop_bt.empty()) return print_callchain(o, s);
  if (s.resolution_epoch != chain_epoch_) {
    chain_epoch_ = s.resolution_epoch;
    chain_of_resolution_.clear();
    chain_lines_.clear();
    chain_text_.clear();
  }
  if (id < chain_of_resolution_.size() && chain_of_resolution_[id] != kNoChain) {
    const ChainLines& c = chain_lines_[chain_of_resolution_[id]];
    if (c.config == &o) {
      b_.append(chain_text_.data() + c.text_begin, chain_text_.data() + c.text_begin + c.text_size);
      return;
    }
  }
  const std::size_t start = b_.size();
  bool cached = true;
  for (const session::Frame& f : s.callchain)
    if (!append_cached_frame(o, f)) {
      print_frame(o, f);
      cached = false;
    }
  // Frames formatted afresh (inlined, source lines) are not kept.
  if (!cached || (id < chain_of_resolution_.size() && chain_of_resolution_[id] != kNoChain)) return;
  constexpr std::size_t kMaxText = std::size_t{64} << 20;  // then start over
  if (chain_text_.size() > kMaxText) {
    chain_of_resolution_.clear();
    chain_lines_.clear();
    chain_text_.clear();
  }
  if (id >= chain_of_resolution_.size()) chain_of_resolution_.resize(id + 1, kNoChain);
  chain_of_resolution_[id] = static_cast<std::uint32_t>(chain_lines_.size());
  chain_lines_.push_back({&o, static_cast<std::uint32_t>(chain_text_.size()),
                          static_cast<std::uint32_t>(b_.size() - start)});
  chain_text_.append(b_.data() + start, b_.size() - start);
}

std::size_t ScriptPrinter::FrameKeyHash::operator()(const FrameKey& k) const {
  std::uint64_t h = reinterpret_cast<std::uintptr_t>(k.dso) * 0x9e3779b97f4a7c15ULL;
  h ^= (k.addr + (h << 6) + (h >> 2)) * 0xff51afd7ed558ccdULL;
  h ^= (k.shown ^ static_cast<std::uint64_t>(k.symbol) ^ k.fields) * 0xc4ceb9fe1a85ec53ULL;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

// Appends f's line from the cache, formatting and keeping it on a miss.
// False for the frames print_frame must format every time: inlined ones,
// source lines, and symbols with perf's map-relative offset quirk.
bool ScriptPrinter::append_cached_frame(const OutputConfig& o, const session::Frame& f) {
  const machine::Location& loc = f.loc;
  const bool mapped = loc.map != nullptr;
  if (loc.symbol == machine::kSymbolPending) return false;
  if (f.inlined || o.has(F::kSrcline) || (!mapped && loc.symbol >= 0)) return false;
  if (loc.symbol >= 0 && loc.addr >= loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol)).end)
    return false;
  constexpr FieldMask kShown =
      field_bit(F::kIp) | field_bit(F::kSym) | field_bit(F::kSymoff) | field_bit(F::kDso);
  FrameKey k;
  k.dso = mapped ? loc.dso : nullptr;
  k.addr = loc.addr;
  k.shown = mapped && !kernel_space(loc.dso) ? loc.addr : f.ip;
  k.symbol = loc.symbol;
  k.fields = o.fields & kShown;
  std::uint32_t v = frame_lines_.find(k);
  if (v != FlatMap<FrameKey, FrameKeyHash>::kNone) {
    const auto [off, size] = frame_spans_[v];
    b_.append(frame_text_.data() + off, frame_text_.data() + off + size);
    return true;
  }
  const std::size_t start = b_.size();
  print_frame(o, f);
  constexpr std::size_t kMaxText = std::size_t{64} << 20;  // then start over
  if (frame_text_.size() + (b_.size() - start) > kMaxText) {
    frame_lines_.clear();
    frame_spans_.clear();
    frame_text_.clear();
  }
  frame_lines_.insert(k, static_cast<std::uint32_t>(frame_spans_.size()));
  frame_spans_.emplace_back(static_cast<std::uint32_t>(frame_text_.size()),
                            static_cast<std::uint32_t>(b_.size() - start));
  frame_text_.append(b_.data() + start, b_.size() - start);
  return true;
}

void ScriptPrinter::print_frame(const OutputConfig& o, const session::Frame& f) {
  const machine::Location& loc = f.loc;
  if (defer(o, f.ip, loc, true)) return;
  const bool mapped = loc.map != nullptr;
  if (o.has(F::kIp)) {
    std::uint64_t shown = mapped && !kernel_space(loc.dso) ? loc.addr : f.ip;
    b_.push_back('\t');
    append_hex(b_, shown, 16);
  }
  if (o.has(F::kSym)) {
    b_.push_back(' ');
    std::string_view name = f.inlined         ? std::string_view(f.inlined)
                            : loc.symbol >= 0 ? symbol_name(loc)
                                              : std::string_view();
    print_symoff(loc, name, o.has(F::kSymoff));
  }
  if (o.has(F::kDso) && !f.inlined) {
    b_.append(std::string_view(" ("));
    print_dso_name(mapped ? loc.dso : nullptr);
    b_.push_back(')');
  }
  if (o.has(F::kSrcline)) {
    if (f.srcline) {
      b_.append(std::string_view("\n  "));
      b_.append(std::string_view(f.srcline));
    } else {
      print_srcline(loc, "\n  ");
    }
  }
  if (f.inlined) b_.append(std::string_view(" (inlined)"));
  b_.push_back('\n');
}

void ScriptPrinter::print_addr(const OutputConfig& o, const session::ResolvedSample& s) {
  const auto& attr = session_.reader().events()[s.event].attr;
  append_hex(b_, s.sample->addr, 16);
  if (!addr_correlates_sym(attr)) return;
  machine::Location loc = resolve_fb(*s.thread, s.cpumode, s.sample->addr, s.machine);
  // print_location's symbol and DSO columns, without its ip and srcline.
  OutputConfig sym_dso = o;
  sym_dso.fields &= ~(field_bit(F::kIp) | field_bit(F::kSrcline));
  print_location(sym_dso, s.sample->addr, loc);
}

void ScriptPrinter::print_regs(const record::Regs& regs, std::uint64_t mask) {
  if (regs.abi == 0 || regs.values.size() == 0) return;
  auto out = fmt::appender(b_);
  fmt::format_to(out, " ABI:{} ", regs.abi);
  std::size_t i = 0;
  for (unsigned r = 0; r < 64 && i < regs.values.size(); ++r) {
    if (!(mask & (1ULL << r))) continue;
    fmt::format_to(out, "{:>5}:{:#x} ", abi::register_name(arch_, r), regs.values[i++]);
  }
}

void ScriptPrinter::print_brstack(const OutputConfig& o, const session::ResolvedSample& s, int kind,
                                  bool loaded) {
  const record::BranchStack& br = s.sample->branch_stack;
  auto out = fmt::appender(b_);
  for (std::uint64_t i = 0; i < br.nr; ++i) {
    record::BranchEntry e = br.at(i);
    machine::Location lf = resolve_fb(*s.thread, s.cpumode, e.from, s.machine);
    machine::Location lt = resolve_fb(*s.thread, s.cpumode, e.to, s.machine);
    auto side = [&](std::uint64_t addr, const machine::Location& l) {
      if (kind == 1) {
        print_symoff(l, l.symbol >= 0 ? symbol_name(l) : std::string_view(), true);
      } else {
        const bool offset = l.map && !(loaded && addr < (1ULL << 63));
        std::uint64_t shown = kind == 2 && offset ? l.addr : addr;
        fmt::format_to(out, "0x{:x}", shown);
      }
      if (o.has(F::kDso)) {
        b_.push_back('(');
        print_dso_name(l.map ? l.dso : nullptr);
        b_.push_back(')');
      }
    };
    if (kind != 1) b_.push_back(' ');
    side(e.from, lf);
    b_.push_back('/');
    side(e.to, lt);
    const bool mispred = e.flags & 1, predicted = e.flags & 2;
    char m = !(mispred || predicted) ? '-' : predicted ? 'P' : 'M';
    fmt::format_to(out, "/{}/{}/{}/{}/{} ", m, (e.flags & 4) ? 'X' : '-', (e.flags & 8) ? 'A' : '-',
                   (e.flags >> 4) & 0xffff, branch_type(e.flags));
  }
}

void ScriptPrinter::print_ip_part(const OutputConfig& o, const session::ResolvedSample& s,
                                  bool chain) {
  b_.push_back(chain ? '\n' : ' ');
  if (chain)
    print_recorded_callchain(o, s);
  else
    print_location(o, s.sample->ip, s.loc);
}

// perf delivers a sample that reads counters (PERF_SAMPLE_READ) once per
// value read, as a sample of the value's event with the counter's increase
// since its previous read as the period; values of unknown ids are dropped.
Status ScriptPrinter::on_sample(const session::ResolvedSample& s) {
  if (dump_) dump::print_sample_resolution(s, out_);  // perf's machine__resolve, under -D
  // perf drops a guest's samples where it has no guest machine (its --guest* options)
  if ((s.cpumode == kMiscGuestKernel || s.cpumode == kMiscGuestUser) &&
      !(s.machine && s.machine->is_guest()))
    return ok();
  if (!opts_.graph_functions.empty() && !(graph_shows_ && graph_shows_(s))) return ok();
  const record::Sample& smp = *s.sample;
  if (!(smp.sample_type & kSampleRead)) return print_one(s, smp.period, false);
  const record::ReadValues& rv = smp.read;
  const std::uint64_t n =
      (rv.read_format & kFormatGroup) ? rv.nr : std::min<std::uint64_t>(rv.nr, 1);
  session::ResolvedSample one = s;
  for (std::uint64_t i = 0; i < n; ++i) {
    record::ReadValues::Value v = rv.at(i);
    int idx = session_.reader().events().index_of_id(v.id);
    if (idx < 0) continue;
    std::uint64_t& last = read_last_[v.id];
    const std::uint64_t period = v.value - last;
    last = v.value;
    one.event = static_cast<std::size_t>(idx);
    PK_TRY(print_one(one, period, true));
  }
  return ok();
}

Status ScriptPrinter::print_sample(const session::ResolvedSample& s, std::uint64_t period,
                                   bool period_set) {
  const record::Sample& smp = *s.sample;
  const auto& ev = session_.reader().events()[s.event];
  const EventAttr& attr = ev.attr;
  const std::uint64_t st = smp.sample_type;
  const std::uint64_t time = (st & kSampleTime) ? smp.time : ~0ULL;
  if (filter_.skip_time(time)) return ok();
  if (opts_.debug_mode) {
    if (time < last_timestamp_) ++nr_unordered_;
    last_timestamp_ = time;
    return ok();
  }
  const std::uint32_t cpu = (st & kSampleCpu) ? smp.cpu : ~0u;
  if (filter_.skip_cpu(cpu) || filter_.skip(s, s.machine ? *s.machine : session_.machine()))
    return ok();
  if (evswitch_.active() && evswitch_.discard(s.event)) return ok();
  if (dlfilter_) {
    PK_ASSIGN(bool early, dlfilter_->drops(s, true));
    if (early) return ok();
    PK_ASSIGN(bool late, dlfilter_->drops(s, false));
    if (late) return ok();
  }

  const OutputConfig& o = opts_.fields.of(attr.type);
  if (!o.fields) return ok();
  const bool has_chain = (st & kSampleCallchain) != 0;  // itrace G adds chains
  const bool chain = use_callchain_ && (st & kSampleCallchain);

  StartFields f;
  f.pid = (st & kSampleTid) ? static_cast<std::int32_t>(smp.pid) : -1;
  f.tid = (st & kSampleTid) ? static_cast<std::int32_t>(smp.tid) : -1;
  f.cpu = cpu;
  f.time = time;
  f.misc = s.cpumode;
  f.record_type = kRecordSample;
  f.comm = s.comm;
  f.callchain_layout = o.has(F::kIp) && has_chain && use_callchain_;
  print_start(o, f);

  auto out = fmt::appender(b_);
  if (o.has(F::kPeriod)) {
    append_udec(b_, period_set || (st & kSamplePeriod) ? period : attr.sample_period, 10);
    b_.push_back(' ');
  }
  if (o.has(F::kEvent)) {
    int w = name_width();
    append_right(b_, names_[s.event], static_cast<std::size_t>(w));
    b_.append(std::string_view(": "));
  }
  if (opts_.fields.print_flags()) fmt::format_to(out, "  {:<21} ", "");
  if (o.has(F::kTrace) && (st & kSampleRaw) && tracepoints_ && attr.type == 2)
    tracepoints_->format(attr.config, static_cast<std::int32_t>(cpu), smp.raw, b_);
  if (o.has(F::kAddr)) print_addr(o, s);
  if (o.has(F::kDataSrc)) print_data_src(smp.data_src);
  if (o.has(F::kWeight)) {
    std::uint64_t w = (st & kSampleWeightStruct) ? smp.weight_var1() : smp.weight;
    fmt::format_to(out, "{:16}", w);
  }
  if (o.has(F::kInsLat)) fmt::format_to(out, "{:16}", smp.weight_var2());
  if (o.has(F::kIp)) print_ip_part(o, s, chain);
  if (o.has(F::kIregs)) print_regs(smp.intr_regs, attr.sample_regs_intr);
  if (o.has(F::kUregs)) print_regs(smp.user_regs, attr.sample_regs_user);
  if (o.has(F::kBrstack))
    print_brstack(o, s, 0);
  else if (o.has(F::kBrstacksym))
    print_brstack(o, s, 1);
  else if (o.has(F::kBrstackoff))
    print_brstack(o, s, 2);
  if (o.has(F::kInsnlen) || o.has(F::kInsn)) print_insn(o, s);
  if (o.has(F::kBrstackinsn) || o.has(F::kBrstackinsnlen)) print_brstackinsn(o, s);
  if (o.has(F::kPhysAddr)) fmt::format_to(out, "{:16x}", smp.phys_addr);
  if (o.has(F::kDataPageSize)) page_size(b_, smp.data_page_size);
  if (o.has(F::kCodePageSize)) page_size(b_, smp.code_page_size);
  b_.push_back('\n');
  if (o.has(F::kSrccode)) print_srccode(s.loc, s.thread);
  maybe_flush();
  return ok();
}

}  // namespace perfkit::script
