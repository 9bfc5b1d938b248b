#include "script/script.h"

#include <algorithm>

#include "abi/perf_event.h"
#include "abi/registers.h"
#include "dump/dump_records.h"
#include "dump/itrace_dump.h"
#include "dump/session_dump.h"
#include "perfdata/features.h"
#include "script/script_printer.h"
#include "session/code_reader.h"
#include "session/cpu_filter.h"
#include "session/unwind_callchain.h"

namespace perfkit::script {

using namespace perfkit::abi;

namespace {

session::SampleFilterOptions filter_options(const ScriptOptions& o) {
  session::SampleFilterOptions f;
  f.comms = o.comms;
  f.dsos = o.dsos;
  f.symbols = o.symbols;
  f.addr_range = o.addr_range;
  f.pids = o.pids;
  f.tids = o.tids;
  f.cpus = o.cpus;
  f.have_cpus = o.have_cpus;
  f.time = o.time;
  f.reltime = o.reltime;
  return f;
}

}  // namespace

ScriptPrinter::ScriptPrinter(session::Session& session, ScriptOptions opts, FdWriter& out)
    : session_(session),
      opts_(std::move(opts)),
      real_out_(out),
      out_(opts_.per_event_dump ? held_out_ : out),
      b_(out_.buffer()),
      filter_(filter_options(opts_)) {}

ScriptPrinter::~ScriptPrinter() = default;

Status ScriptPrinter::prepare() {
  perfdata::Reader& reader = session_.reader();
  traits_.pipe = reader.is_pipe();
  traits_.has_stat = reader.feature(kFeatStat).has_value();
  traits_.has_auxtrace = reader.feature(kFeatAuxtrace).has_value();
  traits_.has_clock = reader.feature(kFeatClockData).has_value();
  for (const auto& e : reader.events().events()) traits_.branch_types |= e.attr.branch_sample_type;
  perfdata::Features feats;
  for (std::uint32_t id : {kFeatArch, kFeatBuildId}) {
    if (auto blob = reader.feature(id))
      (void)perfdata::parse_feature(id, blob->data, reader.swapped(), blob->offset, feats);
  }
  arch_ = abi::normalize_arch(feats.arch.value_or(""));
  if (feats.build_id) {
    for (const auto& e : feats.build_id->entries) {
      const unsigned mode = e.misc & kMiscCpumodeMask;
      if (mode == kMiscKernel || mode == kMiscGuestKernel) kernel_build_ids_.insert(e.filename);
    }
  }
  kernel_start_ = 0xffff800000000000ULL;

  if (opts_.have_cpus)
    PK_TRY(
        session::check_cpu_filter(reader, *std::max_element(opts_.cpus.begin(), opts_.cpus.end())));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < reader.events().size(); ++i) names.push_back(session_.event_name(i));
  use_callchain_ = !opts_.hide_callchain;
  PK_TRY(opts_.fields.check(reader.events(), names, traits_, use_callchain_));

  PK_TRY(filter_.prepare(reader));
  PK_TRY(evswitch_.setup(opts_.evswitch, session_));

  make_tracepoint_formatter();
  defer_kernel_ = kernel_frames_can_wait();
  if (opts_.dump_raw) {
    dump::RecordPrinterOptions ro;
    ro.script_tool = true;
    ro.unordered = opts_.dump_unsorted;
    ro.auxtrace_dump = dump::intel_pt_auxtrace_dumper();
    dump_ = std::make_unique<dump::RecordPrinter>(reader, ro);
    defer_kernel_ = false;  // each sample's lines follow its dump at once
  }
  if (!opts_.stop_bt.empty()) defer_kernel_ = false;  // the names decide where chains end
  if (opts_.per_event_dump) defer_kernel_ = false;    // each sample's lines move at once
  if (opts_.show_text_poke) defer_kernel_ = false;    // a poke names its kernel symbol
  if (!opts_.dlfilter.empty()) {
    defer_kernel_ = false;  // the filter resolves what it is given
    PK_ASSIGN(dlfilter_, DlFilter::load(opts_.dlfilter, opts_.dlargs, *this));
  }
  return ok();
}

// perf's per-event dump: a sample's lines go to its event's file, made on
// its first sample (a pipe's events come as it goes); what was printed
// before it (side-band records, -D's dump, trace errors) to the output.
Status ScriptPrinter::print_one(const session::ResolvedSample& s, std::uint64_t period,
                                bool period_set) {
  if (!opts_.per_event_dump) return print_sample(s, period, period_set);
  begin_sample_lines();
  Status st = print_sample(s, period, period_set);
  PK_TRY(end_sample_lines(s.event));
  return st;
}

const abi::EventAttr& ScriptPrinter::attr(std::size_t event) const {
  return session_.reader().events()[event].attr;
}

const std::string& ScriptPrinter::event_name(std::size_t event) {
  name_width();                                               // fills names_
  if (event >= names_.size()) name_width_ = 0, name_width();  // a pipe's later event
  static const std::string kNone;
  return event < names_.size() ? names_[event] : kNone;
}

std::size_t ScriptPrinter::read_code(const machine::Location& loc, std::uint8_t* buf,
                                     std::size_t n) {
  if (!code_) code_ = std::make_unique<session::CodeReader>(session_.symbolizer().options());
  return code_->read(loc, buf, n) ? n : 0;
}

unsigned ScriptPrinter::fetch_insn(const machine::Location& loc, std::uint8_t (&code)[16]) {
  if (!code_) code_ = std::make_unique<session::CodeReader>(session_.symbolizer().options());
  return code_->fetch_insn(loc, code);
}

// The source file and line of `loc`, as script's srcline field shows them.
std::pair<std::string, unsigned> ScriptPrinter::srcline(const machine::Location& loc) {
  if (!loc.map || !loc.dso) return {};
  std::string_view text = source_lines()->srcline(lines_of(loc.dso), loc.addr);
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || text.starts_with("??")) return {};
  unsigned line = 0;
  for (char c : text.substr(colon + 1)) {
    if (c < '0' || c > '9') break;
    line = line * 10 + static_cast<unsigned>(c - '0');
  }
  return {std::string(text.substr(0, colon)), line};
}

void ScriptPrinter::begin_sample_lines() { held_out_.move_to(real_out_); }

Status ScriptPrinter::end_sample_lines(std::size_t event) {
  if (held_out_.offset() == 0) return ok();
  if (event_dumps_.size() <= event) event_dumps_.resize(event + 1);
  EventDump& d = event_dumps_[event];
  if (!d.file) {
    auto f = OutputFile::create(*opts_.per_event_dump + "." + session_.event_name(event) + ".dump");
    if (!f) return f.error();
    d.file.emplace(std::move(*f));
  }
  ++d.samples;
  held_out_.move_to(d.file->writer());
  return ok();
}

Status ScriptPrinter::finish() {
  if (dlfilter_) PK_TRY(dlfilter_->stop());
  if (!opts_.per_event_dump) return ok();
  held_out_.move_to(real_out_);
  const std::size_t n = session_.reader().events().size();
  if (event_dumps_.size() < n) event_dumps_.resize(n);
  for (std::size_t i = 0; i < event_dumps_.size(); ++i) {
    EventDump& d = event_dumps_[i];
    const std::string path = *opts_.per_event_dump + "." + session_.event_name(i) + ".dump";
    if (!d.file) {
      auto f = OutputFile::create(path);
      if (!f) return f.error();
      d.file.emplace(std::move(*f));
    }
    // perf's figure is what its stdio stream had written out before the
    // file is closed: whole 4 KiB buffers, the last one still held.
    const std::uint64_t bytes = d.file->writer().offset();
    const std::uint64_t out = bytes ? (bytes - 1) / 4096 * 4096 : 0;
    PK_TRY(d.file->commit());
    real_out_.print("[ perf script: Wrote {:.3f} MB {} ({} samples) ]\n",
                    static_cast<double>(out) / 1024.0 / 1024.0, path, d.samples);
  }
  return ok();
}

Status ScriptPrinter::on_delivery(const perfdata::ReadRecord& rec) {
  return dump_ ? dump_->deliver(rec, out_) : ok();
}

// Whether kernel frames may be printed after the samples that follow them
// are formatted (the kernel's symbols loading meanwhile): only when nothing
// but their own text needs their symbols, no filter, source line or code.
bool ScriptPrinter::kernel_frames_can_wait() const {
  using F = ScriptField;
  constexpr FieldMask kPlain =
      field_bit(F::kComm) | field_bit(F::kTid) | field_bit(F::kPid) | field_bit(F::kTime) |
      field_bit(F::kCpu) | field_bit(F::kEvent) | field_bit(F::kTrace) | field_bit(F::kIp) |
      field_bit(F::kSym) | field_bit(F::kDso) | field_bit(F::kSymoff) | field_bit(F::kPeriod) |
      field_bit(F::kMisc) | field_bit(F::kAddr) | field_bit(F::kIregs) | field_bit(F::kUregs) |
      field_bit(F::kWeight) | field_bit(F::kDataSrc) | field_bit(F::kPhysAddr) |
      field_bit(F::kDataPageSize) | field_bit(F::kCodePageSize) | field_bit(F::kInsLat) |
      field_bit(F::kBpfOutput) | field_bit(F::kSynth) | field_bit(F::kTod) |
      field_bit(F::kMachinePid) | field_bit(F::kVcpu) | field_bit(F::kBrstack) |
      field_bit(F::kBrstacksym) | field_bit(F::kBrstackoff);
  if (filter_.by_location() || opts_.debug_mode) return false;
  for (const auto& ev : session_.reader().events().events())
    if (opts_.fields.of(ev.attr.type).fields & ~kPlain) return false;
  return true;
}

// The formats of the recording's tracepoints, once its tracing data is
// known (the header in file mode, a HEADER_TRACING_DATA record in a pipe).
void ScriptPrinter::make_tracepoint_formatter() {
  perfdata::Reader& reader = session_.reader();
  bool tracepoints = false;
  for (const auto& ev : reader.events().events()) tracepoints |= ev.attr.type == 2;
  Bytes td = reader.tracing_data();
  if ((!tracepoints && !traits_.pipe) || td.empty()) return;
  tracepoints_ = session::session_tracepoint_formatter(session_, opts_.warn);
}

void attach_callchains(session::Session& session, ScriptPrinter& printer, int max_stack,
                       bool inline_frames, bool full_source_path) {
  session.set_callchains(printer.use_callchain(), false, max_stack);
  if (!printer.use_callchain()) return;
  session::UnwindOptions uo;
  uo.inline_frames = inline_frames;
  uo.full_source_path = full_source_path;
  uo.lines = printer.source_lines();
  uo.unwind_arch = printer.arch().empty() || printer.arch() == "x86";
  session.set_unwinder(session::make_dwarf_unwinder(session.symbolizer(), uo));
}

Status run_script(session::Session& session, ScriptOptions opts, FdWriter& out) {
  const int max_stack = opts.max_stack;
  const bool inline_frames = opts.inline_frames;
  const bool full_path = opts.full_source_path;
  const bool dump = opts.dump_raw;
  const bool unsorted = opts.dump_unsorted;
  ScriptPrinter printer(session, std::move(opts), out);
  PK_TRY(printer.prepare());
  if (dump) {
    out.write(dump::RecordPrinter::ordering_warning(session.reader()));
    session.set_unordered(unsorted || !dump::RecordPrinter::perf_orders(session.reader()));
  }
  attach_callchains(session, printer, max_stack, inline_frames, full_path);
  Status st = session.run(printer);
  printer.resolve_pending();
  PK_TRY(st);
  PK_TRY(printer.finish());
  return out.flush();
}

}  // namespace perfkit::script
