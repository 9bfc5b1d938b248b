// perf script's view of an Intel PT trace (script_itrace.h): the attrs perf
// synthesizes for --itrace, and each synthesized sample printed through
// ScriptPrinter's field printers as perf 6.1's process_event does.
#include "script/script_itrace.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "abi/event_names.h"
#include "abi/perf_event.h"
#include "intelpt/config.h"
#include "itrace/itrace.h"
#include "itrace/synth_events.h"
#include "itrace/synth_record.h"
#include "perfdata/record_stream.h"
#include "record/records.h"
#include "script/script_itrace_impl.h"
#include "script/script_printer.h"
#include "session/code_reader.h"
#include "session/cpu_filter.h"

namespace perfkit::script {

using namespace perfkit::abi;
using F = ScriptField;
using intelpt::SampleKind;

namespace {

// C's "%#x": no prefix for zero.
std::string c_hex(std::uint64_t v) { return v ? fmt::format("{:#x}", v) : std::string("0"); }

// The recording's records as perf script delivers them, with the
// synthesized samples before each record that carry an earlier time (perf
// decodes its queues up to each event's timestamp before it handles the
// event), so the machine is as it was at each sample's time. The decode
// starts at the AUXTRACE_INFO record, as perf's does: a stream's attrs are
// known by then.
class Interleave : public session::SampleVisitor {
 public:
  using Start = std::function<Expected<std::unique_ptr<itrace::ItraceStream>>(bool& timeless)>;
  Interleave(ScriptPrinter& printer, ItraceScript& script, const intelpt::PtConfig& cfg,
             const perfdata::EventSet& events, Start start)
      : printer_(printer),
        cfg_(cfg),
        events_(events),
        start_(std::move(start)),
        visit_([&script](const itrace::ItraceSample& s) { return script.on_sample(s); }) {}
  Status on_sample(const session::ResolvedSample& s) override {
    if (s.sample->sample_type & kSampleTime) PK_TRY(drain(s.sample->time));
    return printer_.on_sample(s);
  }
  Status before_record(const perfdata::ReadRecord& rec) override {
    if (rec.view.type == kRecordAuxtraceInfo && !stream_) {
      PK_ASSIGN(stream_, start_(timeless_));
    }
    PK_TRY(drain(perfdata::record_timestamp(events_, rec.view)));
    return printer_.before_record(rec);
  }
  Status after_record(const perfdata::ReadRecord& rec) override {
    return printer_.after_record(rec);
  }
  bool defers_kernel_symbols() const override { return printer_.defers_kernel_symbols(); }
  // The samples left, and the decode's outcome.
  Status finish() {
    if (!stream_) return make_error("no Intel PT AUXTRACE_INFO record to decode with");
    PK_TRY(stream_->visit_before(~0ULL, visit_));
    PK_ASSIGN(auto stats, stream_->finish());
    (void)stats;
    return ok();
  }

 private:
  Status drain(std::uint64_t time) {
    // perf decodes up to events with a timestamp; a timeless decode waits
    // for the end.
    if (!stream_ || timeless_ || !time || time == perfdata::kNoTimestamp) return ok();
    return stream_->visit_before(cfg_.perf_time_to_tsc(time), visit_);
  }

  ScriptPrinter& printer_;
  const intelpt::PtConfig& cfg_;
  const perfdata::EventSet& events_;
  Start start_;
  std::unique_ptr<itrace::ItraceStream> stream_;
  bool timeless_ = false;
  itrace::ItraceVisitor visit_;
};

}  // namespace

void ItraceScript::add(SampleKind k, EventAttr attr, const std::string& name) {
  auto& events = session_.reader().events();
  events.add(attr, {});
  events[events.size() - 1].name = name;
  event_of_[static_cast<std::size_t>(k)] = static_cast<int>(events.size() - 1);
}

// intel_pt_synth_events: the attrs perf adds, in its order.
void ItraceScript::add_events(const EventAttr& pt, bool per_cpu, bool timeless) {
  for (auto& e : itrace::itrace_synth_events(pt, it_.itrace, per_cpu, timeless))
    add(e.kind, e.attr, e.name);
  const intelpt::ItraceOptions& o = it_.itrace;
  if (o.calls) branch_filter_ |= intelpt::kFlagCall | intelpt::kFlagAsync | intelpt::kFlagTraceEnd;
  if (o.returns) branch_filter_ |= intelpt::kFlagReturn | intelpt::kFlagTraceBegin;
}

Status ItraceScript::prepare(const EventAttr& pt, bool per_cpu, bool timeless) {
  const bool cpus = p_.opts_.have_cpus;
  if (cpus) {
    const auto& list = p_.opts_.cpus;
    PK_TRY(
        session::check_cpu_filter(session_.reader(), *std::max_element(list.begin(), list.end())));
  }
  add_events(pt, per_cpu, timeless);
  p_.opts_.have_cpus = false;
  Status st = p_.prepare();
  p_.opts_.have_cpus = cpus;
  // A stream's attrs (the recorded ones, then the synthesized) are checked
  // one at a time as they come, as perf's process_attr does.
  if (st && p_.traits_.pipe) {
    const auto& events = session_.reader().events();
    perfdata::EventSet so_far;
    for (std::size_t i = 0; i < events.size() && st; ++i) {
      so_far.add(events[i].attr, events[i].ids);
      st = p_.opts_.fields.check_pipe_attr(so_far, i, session_.event_name(i), p_.traits_,
                                           p_.use_callchain_);
    }
  }
  // perf turns call chains on for g, even with -G, and for G (the recorded
  // events then have them).
  if (it_.itrace.callchain || it_.itrace.add_callchain) p_.use_callchain_ = true;
  return st;
}

intelpt::ItraceOptions ItraceScript::decode_options() {
  intelpt::ItraceOptions o = it_.itrace;
  const int bi = event_of_[static_cast<std::size_t>(SampleKind::kBranches)];
  callindent_ = false;
  if (bi >= 0) {
    const auto& attr = session_.reader().events()[static_cast<std::size_t>(bi)].attr;
    if (p_.opts_.fields.of(attr.type).has(F::kCallindent)) {
      callindent_ = true;
      o.branches = true;
    }
  }
  return o;
}

Status ItraceScript::on_sample_general(const itrace::ItraceSample& is) {
  const intelpt::SynthSample& s = *is.sample;
  if (s.kind == SampleKind::kError) {
    ++errors_;
    print_error(is);
    return ok();
  }
  const int ev = event_of_[static_cast<std::size_t>(s.kind)];
  if (ev < 0) return ok();
  std::size_t depth = 0;
  const bool graph = !p_.opts_.graph_functions.empty();
  // perf keeps the thread stack for the call indent and for --graph-function.
  if (s.kind == SampleKind::kBranches && (callindent_ || graph)) {
    // perf's thread stack sees every branch; c and r only choose what prints.
    CallStack& cs = stacks_[is.tid];
    cs.event(s.flags, s.ip, s.addr, s.insn_len);
    depth = cs.e.size() + ((s.flags & intelpt::kFlagReturn) ? 1 : 0);
    if (branch_filter_ && !(branch_filter_ & s.flags)) return ok();
  }
  const auto event = static_cast<std::size_t>(ev);
  if (!graph && fast_line_.armed && print_fast_line(is, event, is.sample->ip)) return ok();
  fast_line_.armed = false;  // what it was armed with changes below
  const auto& attr = session_.reader().events()[static_cast<std::size_t>(ev)].attr;
  const std::uint64_t st = attr.sample_type;
  const std::uint64_t time = (st & kSampleTime) ? s.time : ~0ULL;
  // perf fast-forwards the decoder to the PSB before a time range (the
  // first sample's period and a trace start show it); this decodes all and
  // filters.
  const std::uint64_t period = s.period;
  if (p_.filter_.skip_time(time)) return ok();
  const std::uint32_t cpu = (st & kSampleCpu) ? static_cast<std::uint32_t>(is.cpu) : ~0u;
  if (p_.filter_.skip_cpu(cpu)) return ok();

  machine::Thread& t = thread_of(is.pid, is.tid);
  sample_.ip = s.ip;
  sample_.addr = s.addr;
  sample_.period = period;
  sample_.time = time;
  sample_.cpu = cpu;
  sample_.pid = static_cast<std::uint32_t>(is.pid);
  sample_.tid = static_cast<std::uint32_t>(is.tid);
  sample_.sample_type = st;
  session::ResolvedSample rs;
  rs.event = static_cast<std::size_t>(ev);
  rs.sample = &sample_;
  // perf's cpumode: by the IP, or by the target when there is none.
  rs.cpumode = (s.ip ? s.ip : s.addr) >= kKernelStart ? kMiscKernel : kMiscUser;
  rs.thread = &t;
  rs.comm = t.comm;
  resolve_ip(t, rs.cpumode, s.ip, rs.loc);
  if (p_.filter_.skip(rs, session_.machine())) return ok();
  const OutputConfig& o = p_.opts_.fields.of(attr.type);
  if (!o.fields) return ok();
  if (graph && !graph_shows(is.tid, stack_depth(is.tid), branch_symbol(rs, s))) return ok();

  StartFields f;
  f.pid = is.pid;
  f.tid = is.tid;
  f.cpu = cpu;
  f.time = time;
  f.misc = rs.cpumode;
  f.record_type = kRecordSample;
  f.comm = rs.comm;
  const bool chain = p_.use_callchain_ && (st & kSampleCallchain);
  f.callchain_layout = o.has(F::kIp) && chain;
  print_line_start(o, f, t, period, rs.event);
  auto& b = p_.b_;
  auto out = fmt::appender(b);
  if (p_.opts_.fields.print_flags())
    fmt::format_to(out, "  {:<21} ", intelpt::format_ip_flags(s.flags));
  if (s.kind == SampleKind::kBranches) {
    if (o.has(F::kCallindent)) print_callindent(o, rs, s, depth);
    print_bts(o, rs, s);
  } else {
    print_event_fields(o, rs, s, attr.type, chain);
  }
  b.push_back('\n');
  p_.maybe_flush();
  if (!graph && fast_event(rs.event)) arm_fast_line(is, rs.event);
  return ok();
}

// perf's resolve_branch_sym: the function a call (or a trace beginning)
// enters, the one a return (or a trace end) leaves; "" for other samples
// and addresses in no symbol.
std::string_view ItraceScript::branch_symbol(const session::ResolvedSample& rs,
                                             const intelpt::SynthSample& s) {
  if (s.flags & (intelpt::kFlagCall | intelpt::kFlagTraceBegin)) {
    const std::uint8_t mode = s.addr >= kKernelStart ? kMiscKernel : kMiscUser;
    const machine::Location at = p_.resolve_fb(*rs.thread, mode, s.addr);
    return at.symbol >= 0 ? p_.symbol_name(at) : std::string_view();
  }
  if (s.flags & (intelpt::kFlagReturn | intelpt::kFlagTraceEnd))
    return rs.loc.symbol >= 0 ? p_.symbol_name(rs.loc) : std::string_view();
  return {};
}

// perf's show_event: inside a function of the list, everything deeper
// shows; the first sample back at (or above) its entry depth ends it and
// does not show. Outside, a sample shows when its branch enters (or
// leaves) one of the functions, which starts it.
bool ItraceScript::graph_shows(std::int32_t tid, std::size_t depth, std::string_view name) {
  GraphFilter& g = graph_[tid];
  if (g.on) {
    if (depth > g.entry) return true;
    g.on = false;
    return false;
  }
  if (name.empty()) return false;
  for (const std::string& f : p_.opts_.graph_functions)
    if (f == name) {
      g.on = true;
      g.entry = depth;
      return true;
    }
  return false;
}

void ItraceScript::print_event_fields(const OutputConfig& o, session::ResolvedSample& rs,
                                      const intelpt::SynthSample& s, std::uint32_t attr_type,
                                      bool chain) {
  auto& b = p_.b_;
  if (attr_type == kAttrTypeSynth && o.has(F::kSynth)) print_synth(s);
  if (o.has(F::kAddr)) fmt::format_to(fmt::appender(b), "{:16x}", s.addr);
  if (o.has(F::kIp)) {
    if (chain) {
      b.push_back('\n');
      resolve_chain(s, rs);
      p_.print_callchain(o, rs);
    } else {
      b.push_back(' ');
      p_.print_location(o, s.ip, rs.loc);
      if (fast_event(rs.event)) keep_location_text(o, rs.event);
    }
  }
  sample_.branch_stack = {};
  if (s.branch_nr) {
    const int kind = o.has(F::kBrstack)      ? 0
                     : o.has(F::kBrstacksym) ? 1
                     : o.has(F::kBrstackoff) ? 2
                                             : -1;
    sample_.branch_stack = itrace::itrace_branch_stack(s, branch_bytes_);
    if (kind >= 0) p_.print_brstack(o, rs, kind, true);  // decoding loaded them
  }
  print_insn(o, rs, s);
  if (s.branch_nr && (o.has(F::kBrstackinsn) || o.has(F::kBrstackinsnlen)))
    p_.print_brstackinsn(o, rs);
  print_ipc(o, s);
}

// The synthesized call chain (the sample's IP, then return addresses) as
// frames, at most --max-stack of them.
void ItraceScript::resolve_chain(const intelpt::SynthSample& s, session::ResolvedSample& rs) {
  frames_.clear();
  const std::size_t n =
      std::min<std::size_t>(s.callchain_nr, static_cast<std::size_t>(p_.opts_.max_stack));
  // Events the synthesizer gives no chain still show their IP as one.
  const std::uint64_t* ips = s.callchain_nr ? s.callchain : &s.ip;
  for (std::size_t i = 0; i < std::max<std::size_t>(n, s.callchain_nr ? 0 : 1); ++i) {
    session::Frame f;
    f.ip = ips[i];
    const std::uint8_t mode = f.ip >= kKernelStart ? kMiscKernel : kMiscUser;
    f.loc = session_.machine().resolve(*rs.thread, mode, f.ip);
    frames_.push_back(f);
  }
  rs.callchain = frames_;
}

// perf_sample__fprintf_bts, after the callindent.
void ItraceScript::print_bts(const OutputConfig& o, const session::ResolvedSample& rs,
                             const intelpt::SynthSample& s) {
  auto& b = p_.b_;
  OutputConfig no_srcline = o;
  no_srcline.fields &= ~field_bit(F::kSrcline);
  if (o.has(F::kIp)) {
    b.push_back(' ');
    p_.print_location(no_srcline, s.ip, rs.loc);
  }
  const auto& attr = session_.reader().events()[rs.event].attr;
  if (o.has(F::kAddr) || ((attr.sample_type & kSampleAddr) && !o.user_set)) {
    fmt::format_to(fmt::appender(b), " => {:16x}", s.addr);
    print_addr_sym(o, *rs.thread, s.addr);
  }
  print_ipc(o, s);
  if (o.has(F::kIp) && o.has(F::kSrcline)) p_.print_srcline(rs.loc, "\n  ");
  print_insn(o, rs, s);
}

void ItraceScript::print_addr_sym(const OutputConfig& o, machine::Thread& t, std::uint64_t addr) {
  const std::uint8_t mode = addr >= kKernelStart ? kMiscKernel : kMiscUser;
  machine::Location loc = p_.resolve_fb(t, mode, addr);
  auto& b = p_.b_;
  if (o.has(F::kSym)) {
    b.push_back(' ');
    p_.print_symoff(loc, loc.symbol >= 0 ? p_.symbol_name(loc) : std::string_view(),
                    o.has(F::kSymoff));
  }
  if (o.has(F::kDso)) {
    b.append(std::string_view(" ("));
    p_.print_dso_name(loc.map ? loc.dso : nullptr);
    b.push_back(')');
  }
}

// perf_sample__fprintf_callindent: the called (or returning) function,
// indented by the call depth, in a column that widens in steps of 32.
void ItraceScript::print_callindent(const OutputConfig& o, const session::ResolvedSample& rs,
                                    const intelpt::SynthSample& s, std::size_t depth) {
  using namespace intelpt;
  auto& b = p_.b_;
  std::string_view name;
  std::uint64_t ip = 0;
  machine::Location addr_loc;
  if (s.flags & (kFlagCall | kFlagTraceBegin)) {
    const std::uint8_t mode = s.addr >= kKernelStart ? kMiscKernel : kMiscUser;
    addr_loc = p_.resolve_fb(*rs.thread, mode, s.addr);
    if (addr_loc.symbol >= 0)
      name = p_.symbol_name(addr_loc);
    else
      ip = s.addr;
  } else if (s.flags & (kFlagReturn | kFlagTraceEnd)) {
    if (rs.loc.symbol >= 0)
      name = p_.symbol_name(rs.loc);
    else
      ip = s.ip;
  }
  if (o.has(F::kDso) && !(o.has(F::kIp) || o.has(F::kAddr))) {
    b.push_back('(');
    const std::size_t at = b.size();
    p_.print_dso_name(rs.loc.map ? rs.loc.dso : nullptr);
    // perf's scnprintf_pad into a buffer of dso_pad bytes: at most
    // dso_pad - 1 characters of the name, then spaces up to dso_pad.
    const std::size_t n = b.size() - at;
    if (it_.dso_pad && n > it_.dso_pad - 1) b.resize(at + it_.dso_pad - 1);
    for (std::size_t k = b.size() - at; k < it_.dso_pad; ++k) b.push_back(' ');
    b.append(std::string_view(")\t"));
  }
  int len = 0;
  const int indent = static_cast<int>(depth) * 4;
  if (!name.empty()) {
    fmt::format_to(fmt::appender(b), "{:{}}{}", "", indent, name);
    len = indent + static_cast<int>(name.size());
  } else if (ip) {
    fmt::format_to(fmt::appender(b), "{:{}}{:16x}", "", indent, ip);
    len = indent + std::max(16, static_cast<int>(fmt::formatted_size("{:x}", ip)));
  }
  if (len > spacing_ || (len && len < spacing_ - 52)) spacing_ = (len + 4 + 31) / 32 * 32;
  if (len < spacing_) b.append(std::string(static_cast<std::size_t>(spacing_ - len), ' '));
}

// perf_sample__fprintf_insn: ilen and the instruction's bytes (read from the
// code when the sample carries none, as perf's script_fetch_insn does).
void ItraceScript::print_insn(const OutputConfig& o, const session::ResolvedSample& rs,
                              const intelpt::SynthSample& s) {
  if (!o.has(F::kInsnlen) && !o.has(F::kInsn)) return;
  std::uint8_t code[16] = {};
  unsigned len = s.insn_len;
  bool have = false;
  if (len && s.insn_ip && s.insn_ip != s.ip) {
    machine::Location at;
    resolve_ip(*rs.thread, s.insn_ip >= kKernelStart ? kMiscKernel : kMiscUser, s.insn_ip, at);
    have = read_code(at, code, len);
  } else if (len) {
    have = read_code(rs.loc, code, len);
  }
  if (!len && s.ip) {
    len = code_.fetch_insn(rs.loc, code);
    have = len != 0;
  }
  if (!have) len = s.insn_len;
  auto out = fmt::appender(p_.b_);
  if (o.has(F::kInsnlen)) fmt::format_to(out, " ilen: {}", len);
  if (!o.has(F::kInsn) || !len || !have) return;
  if (it_.disasm) {
    std::string text = insn_.disassemble(Bytes(code, len), s.ip);
    if (!text.empty()) {
      fmt::format_to(out, "\t\t{}", text);
      return;
    }
  }
  p_.b_.append(std::string_view(" insn:"));
  for (unsigned i = 0; i < len; ++i) fmt::format_to(out, " {:02x}", code[i]);
}

void ItraceScript::print_ipc(const OutputConfig& o, const intelpt::SynthSample& s) {
  if (!o.has(F::kIpc) || !s.cyc_cnt || !s.insn_cnt) return;
  const std::uint64_t ipc = s.insn_cnt * 100 / s.cyc_cnt;
  fmt::format_to(fmt::appender(p_.b_), " \t IPC: {}.{:02} ({}/{}) ", ipc / 100, ipc % 100,
                 s.insn_cnt, s.cyc_cnt);
}

// perf_sample__fprintf_synth: the event's payload, padded to 34 columns.
void ItraceScript::print_synth(const intelpt::SynthSample& s) {
  auto& b = p_.b_;
  const std::size_t at = b.size();
  auto out = fmt::appender(b);
  const std::uint64_t p = s.payload;
  switch (s.kind) {
    case SampleKind::kPtwrite: {
      char str[9] = {};
      bool prt = true;
      std::size_t i = 0;
      for (; i < 8; ++i) {
        char c = static_cast<char>((p >> (8 * i)) & 0xff);
        if (!c) break;
        if (!std::isprint(static_cast<unsigned char>(c))) prt = false;
      }
      for (std::size_t j = i; j < 8; ++j)
        if ((p >> (8 * j)) & 0xff) prt = false;
      if (prt) std::memcpy(str, &p, 8);
      fmt::format_to(out, " IP: {} payload: {} {} ", s.aux, c_hex(p), str);
      break;
    }
    case SampleKind::kMwait:
      fmt::format_to(out, " hints: {} extensions: {} ", c_hex(p & 0xff), c_hex((p >> 32) & 3));
      break;
    case SampleKind::kPwre:
      fmt::format_to(out, " hw: {} cstate: {} sub-cstate: {} ", (p >> 7) & 1, (p >> 12) & 0xf,
                     (p >> 8) & 0xf);
      break;
    case SampleKind::kExstop:
      fmt::format_to(out, " IP: {} ", s.aux);
      break;
    case SampleKind::kPwrx:
      fmt::format_to(out, " deepest cstate: {} last cstate: {} wake reason: {} ", p & 0xf,
                     (p >> 4) & 0xf, c_hex((p >> 8) & 0xf));
      break;
    case SampleKind::kCbr:
      fmt::format_to(out, " cbr: {:2} freq: {:4} MHz ({:3}%) ", s.aux, s.cbr_freq_mhz,
                     s.cbr_percent);
      break;
    case SampleKind::kPsb:
      fmt::format_to(out, " psb offs: {}", c_hex(p));
      break;
    default:
      break;
  }
  const std::size_t n = b.size() - at;
  if (n > 0 && n < 34) b.append(std::string(34 - n, ' '));
}

// perf_event__fprintf_auxtrace_error, as perf script prints the errors.
void ItraceScript::print_error(const itrace::ItraceSample& is) {
  const intelpt::SynthSample& s = *is.sample;
  auto out = fmt::appender(p_.b_);
  fmt::format_to(out, " instruction trace error type 1");
  if (s.time)
    fmt::format_to(out, " time {}.{:09}", s.time / 1000000000ULL, s.time % 1000000000ULL);
  else
    fmt::format_to(out, " time 0");
  fmt::format_to(out, " cpu {} pid {} tid {} ip {} code {}: {}\n", is.cpu, is.pid, is.tid,
                 c_hex(s.ip), static_cast<int>(s.error), s.error_msg ? s.error_msg : "");
  p_.maybe_flush();
}

Status run_script_itrace(session::Session& session, ScriptOptions opts,
                         const ScriptItraceOptions& it, const std::string& path, FdWriter& out) {
  if (path == "-")
    return make_error(
        "decoding Intel PT from a pipe is not supported: write the recording to a "
        "file (or use --no-itrace)");
  PK_ASSIGN(const intelpt::PtConfig cfg, itrace::read_pt_config(path));
  // perf's scripting_max_stack grows to the itrace chain size.
  if (it.itrace.callchain || it.itrace.add_callchain)
    opts.max_stack = std::max(opts.max_stack, static_cast<int>(it.itrace.callchain_sz));
  WarnFn warn = opts.warn;
  const int max_stack = opts.max_stack;
  ScriptPrinter printer(session, std::move(opts), out);
  ItraceScript script(printer, session, it);
  itrace::LateChains late;
  auto start = [&](bool& timeless) -> Expected<std::unique_ptr<itrace::ItraceStream>> {
    const auto& events = session.reader().events();
    EventAttr pt = events.empty() ? EventAttr{} : events[0].attr;
    for (const auto& ev : events.events())
      if (ev.attr.type == cfg.pmu_type) {
        pt = ev.attr;
        break;
      }
    // perf decodes without timestamps when the trace has no TSC packets or
    // the event no time.
    timeless = !(pt.config & cfg.tsc_bit) || !(pt.sample_type & kSampleTime);
    PK_TRY(script.prepare(pt, cfg.per_cpu_mmaps, timeless));
    session.set_callchains(printer.use_callchain(), false, max_stack);
    itrace::ItraceDecodeOptions dopts;
    dopts.itrace = script.decode_options();
    dopts.every_branch = script.callindent();
    dopts.insn_runs = true;  // (ItraceScript::on_sample prints them)
    dopts.jobs = it.jobs;
    dopts.warn = warn;
    dopts.progress = it.progress;
    if (dopts.itrace.add_callchain) {
      // perf's add_callchain: the recorded samples without chains get the
      // thread stack's as of their time, from a decode of the stacks alone.
      itrace::ItraceDecodeOptions copts = dopts;
      copts.warn = nullptr;  // the main decode warns
      PK_ASSIGN(late, itrace::LateChains::decode(path, copts));
      session.set_late_chains([&late](const record::Sample& s) { return late.of(s); });
    }
    return itrace::ItraceStream::start(path, std::move(dopts));
  };
  Interleave inter(printer, script, cfg, session.reader().events(), start);
  Status st = session.run(inter);
  if (st) st = inter.finish();
  session.set_late_chains(nullptr);  // `late` goes with this frame
  printer.resolve_pending();
  PK_TRY(std::move(st));
  PK_TRY(printer.finish());
  PK_TRY(out.flush());
  // perf_session__warn_about_errors.
  if (script.errors() && warn)
    warn(fmt::format("Warning:\n{} instruction trace errors", script.errors()));
  return ok();
}

}  // namespace perfkit::script
