// ScriptPrinter: the SampleVisitor behind run_script (script.h). Internal to
// the analysis module; the Intel PT pipeline feeds synthesized samples to
// on_sample the same way the Session does.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/flat_map.h"
#include "dump/dump_records.h"
#include "intelpt/insn.h"
#include "script/dlfilter.h"
#include "script/script.h"
#include "session/code_reader.h"
#include "session/sample_filter.h"
#include "session/tracepoint.h"
#include "symbol/source_lines.h"

namespace perfkit::script {

// The fields perf_sample__fprintf_start prints, for samples and side-band records.
struct StartFields {
  std::int32_t pid = -1, tid = -1;
  std::uint32_t cpu = ~0u;
  std::uint64_t time = ~0ULL;
  std::uint16_t misc = 0;
  std::uint32_t record_type = 0;
  const std::string* comm = nullptr;  // nullptr: ":-1"
  bool callchain_layout = false;      // comm unpadded: a callchain follows
};

class ScriptPrinter : public session::SampleVisitor, public DlFilterHost {
 public:
  ScriptPrinter(session::Session& session, ScriptOptions opts, FdWriter& out);
  ~ScriptPrinter() override;

  // Checks the fields against the recording and parses --time; call once
  // before Session::run. Errors: as ScriptFields::check, parse_time_ranges.
  Status prepare();

  Status on_sample(const session::ResolvedSample& s) override;
  Status on_delivery(const perfdata::ReadRecord& rec) override;
  Status before_record(const perfdata::ReadRecord& rec) override;
  Status after_record(const perfdata::ReadRecord& rec) override;

  bool defers_kernel_symbols() const override { return defer_kernel_; }
  // Formats the kernel frames taken while the kernel's symbols loaded (and
  // waits for them); call once after Session::run.
  void resolve_pending();
  // Whether output waits for the kernel's symbols (resolve_pending).
  bool has_pending() const { return !pending_.empty(); }

  // Call once after Session::run: --per-event-dump's files committed and
  // named with their sizes and samples, as perf does; the dlfilter's stop().
  // Errors: a file that could not be written (naming it), the filter's.
  Status finish();

  // DlFilterHost (--dlfilter).
  machine::Machine& machine() override { return session_.machine(); }
  const abi::EventAttr& attr(std::size_t event) const override;
  const std::string& event_name(std::size_t event) override;
  std::size_t read_code(const machine::Location& loc, std::uint8_t* buf, std::size_t n) override;
  unsigned fetch_insn(const machine::Location& loc, std::uint8_t (&code)[16]) override;
  std::pair<std::string, unsigned> srcline(const machine::Location& loc) override;

  bool use_callchain() const { return use_callchain_; }
  // perf's normalized name of the recording's architecture ("" if unknown).
  const std::string& arch() const { return arch_; }
  std::shared_ptr<symbol::SourceLines> source_lines();

 private:
  friend class ItraceScript;  // Intel PT samples (script_itrace.cc)
  // --graph-function for recorded samples: whether this one shows (nullptr:
  // none does, no branch ever entering a function).
  std::function<bool(const session::ResolvedSample&)> graph_shows_;
  using Buf = fmt::memory_buffer;

  // ---- samples (script_sample.cc) ----
  Status print_sample(const session::ResolvedSample& s, std::uint64_t period, bool period_set);
  // print_sample, its lines moved to the event's file under --per-event-dump.
  Status print_one(const session::ResolvedSample& s, std::uint64_t period, bool period_set);
  // --per-event-dump: around a sample's lines (those of the output before
  // them go there; then they go to `event`'s file). Errors: the file's.
  void begin_sample_lines();
  Status end_sample_lines(std::size_t event);
  bool per_event_dump() const { return opts_.per_event_dump.has_value(); }
  void print_start(const OutputConfig& o, const StartFields& f);
  void print_time(std::uint64_t t);
  void print_ip_part(const OutputConfig& o, const session::ResolvedSample& s, bool chain);
  void print_callchain(const OutputConfig& o, const session::ResolvedSample& s);
  void print_frame(const OutputConfig& o, const session::Frame& f);
  bool defer(const OutputConfig& o, std::uint64_t ip, const machine::Location& loc, bool frame);
  void maybe_flush();
  bool kernel_frames_can_wait() const;
  // Appends f's line from the cache (false: print_frame must format it).
  bool append_cached_frame(const OutputConfig& o, const session::Frame& f);
  void print_location(const OutputConfig& o, std::uint64_t ip, const machine::Location& loc);
  void print_symoff(const machine::Location& loc, std::string_view name, bool with_offset);
  void print_dso_name(const machine::Dso* dso);
  void print_srcline(const machine::Location& loc, std::string_view prefix);
  void print_addr(const OutputConfig& o, const session::ResolvedSample& s);
  void print_regs(const record::Regs& regs, std::uint64_t mask);
  void print_data_src(std::uint64_t data_src);  // script_mem.cc
  // brstack (kind 0), brstacksym (1), brstackoff (2). perf shows brstackoff
  // addresses in a DSO whose symbols it loaded (adjust_symbols, true for
  // user space) as they are: `loaded` says the user DSOs all were.
  void print_brstack(const OutputConfig& o, const session::ResolvedSample& s, int kind,
                     bool loaded = false);
  void print_srccode(const machine::Location& loc, machine::Thread* thread);
  void print_insn(const OutputConfig& o, const session::ResolvedSample& s);
  // ---- brstackinsn, brstackinsnlen (script_brstackinsn.cc) ----
  struct BrstackState {
    bool have_sym = false;  // the symbol last shown
    std::uint64_t sym_start = 0, sym_end = 0;
    int total_cycles = 0;
  };
  void print_brstackinsn(const OutputConfig& o, const session::ResolvedSample& s);
  int grab_block(machine::Thread& t, std::uint64_t start, std::uint64_t end,
                 std::vector<std::uint8_t>& buf);
  void brstack_symbol(const OutputConfig& o, machine::Thread& t, std::uint64_t addr,
                      BrstackState& st);
  std::string_view dump_insn(const std::uint8_t* code, int avail, int& len);
  void brstack_line(const OutputConfig& o, std::uint64_t ip, const std::uint8_t* code, int avail,
                    int& len);
  void brstack_jump(const OutputConfig& o, std::uint64_t ip, const record::BranchEntry& e,
                    const std::uint8_t* code, int avail, int insns, BrstackState& st);
  // (in `m`, the sample's machine; the host's when null)
  machine::Location resolve_fb(machine::Thread& t, std::uint8_t cpumode, std::uint64_t addr,
                               machine::Machine* m = nullptr);
  std::string_view symbol_name(const machine::Location& loc) const;
  symbol::SourceLines::Dso* lines_of(const machine::Dso* dso);
  int name_width();

  // ---- side-band records (script_sideband.cc) ----
  bool shows(std::uint32_t type) const;
  void make_tracepoint_formatter();
  Status print_side_band(const perfdata::ReadRecord& rec);
  void print_record_body(const record::RecordView& r);
  // print_record_body's longer cases: false when the record does not parse.
  bool print_mmap2(const record::RecordView& r);
  bool print_namespaces(const record::RecordView& r);
  bool print_switch(const record::RecordView& r);

  session::Session& session_;
  ScriptOptions opts_;
  // --per-event-dump: the printer writes into held_, whose lines then go to
  // their event's file (samples) or to the output (the rest).
  FdWriter held_out_ = FdWriter::memory();
  FdWriter& real_out_;
  FdWriter& out_;
  Buf& b_;
  struct EventDump {
    std::optional<OutputFile> file;
    std::uint64_t samples = 0;
  };
  std::vector<EventDump> event_dumps_;
  std::unique_ptr<DlFilter> dlfilter_;  // --dlfilter
  std::vector<std::string> names_;
  int name_width_ = 0;
  bool use_callchain_ = true;
  std::uint64_t initial_time_ = 0, previous_time_ = 0;
  std::uint64_t last_timestamp_ = 0, nr_unordered_ = 0;
  session::SampleFilter filter_;   // -C, --time, -c, --pid, --tid, --dsos, -S
  session::EventSwitch evswitch_;  // --switch-on, --switch-off
  std::shared_ptr<symbol::SourceLines> lines_;
  std::vector<symbol::SourceLines::Dso*> lines_by_dso_;
  std::unique_ptr<session::TracepointFormatter> tracepoints_;
  RecordingTraits traits_;
  std::string arch_;
  std::uint64_t kernel_start_ = 0;
  // --srccode: the last line printed per thread (perf's srccode_state).
  struct SrccodeState {
    std::string file;
    unsigned line = 0;
  };
  std::unordered_map<const machine::Thread*, SrccodeState> srccode_;
  // Full-path source lines for --srccode, and the source files it read.
  std::unique_ptr<symbol::SourceLines> srccode_lines_;
  std::unique_ptr<session::CodeReader> code_;  // -F insn, insnlen
  intelpt::InsnDecoder insn_decoder_;          // -F brstackinsn
  std::string insn_text_;
  std::vector<std::uint8_t> brstack_code_;
  std::vector<symbol::SourceLines::Dso*> srccode_dsos_;
  struct SourceFile {
    std::string text;
    std::vector<std::uint32_t> line_starts;  // of the lines that end in '\n'
  };
  std::unordered_map<std::string, std::unique_ptr<SourceFile>> source_files_;
  const SourceFile* source_file(const std::string& path);
  std::unordered_map<std::uint64_t, std::uint64_t> read_last_;  // per sample id
  std::size_t data_src_width_ = 0;
  // Callchain lines as print_frame formatted them, by what they show: most
  // frames of a profile repeat, and a copy is cheaper than formatting.
  struct FrameKey {
    const void* dso = nullptr;
    std::uint64_t addr = 0, shown = 0;
    std::int64_t symbol = -1;
    FieldMask fields = 0;
    bool operator==(const FrameKey&) const = default;
  };
  struct FrameKeyHash {
    std::size_t operator()(const FrameKey& k) const;
  };
  FlatMap<FrameKey, FrameKeyHash> frame_lines_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> frame_spans_;  // offset, size
  std::string frame_text_;
  // Whole callchains' lines by the session's resolution id (in
  // chain_epoch_): a resolved chain repeats in most samples.
  struct ChainLines {
    const void* config = nullptr;  // the OutputConfig they were printed with
    std::uint32_t text_begin = 0, text_size = 0;
  };
  static constexpr std::uint32_t kNoChain = UINT32_MAX;
  std::vector<std::uint32_t> chain_of_resolution_;  // -> chain_lines_
  std::vector<ChainLines> chain_lines_;
  std::string chain_text_;
  std::uint64_t chain_epoch_ = 0;
  void print_recorded_callchain(const OutputConfig& o, const session::ResolvedSample& s);
  // Kernel frames printed while the kernel's symbols were loading: where
  // their text goes in the buffer, which holds its output until then.
  bool defer_kernel_ = false;
  std::unique_ptr<dump::RecordPrinter> dump_;  // -D
  struct Pending {
    std::size_t chunk = 0;  // index into held_, or held_.size(): the buffer
    std::size_t offset = 0;
    std::uint64_t ip = 0;
    OutputConfig o;
    bool frame = false;  // a callchain line, else print_location's text
  };
  std::vector<Pending> pending_;
  std::vector<Buf> held_;  // full buffers of output that waits for them
  // Paths of the kernel-mode entries of the build-id table: perf names
  // those modules by path, the others "[name]".
  std::unordered_set<std::string> kernel_build_ids_;
};

// The session's call chains as `printer` shows them: resolved (unless -G),
// at most `max_stack` frames, user stacks unwound with inlined frames.
void attach_callchains(session::Session& session, ScriptPrinter& printer, int max_stack,
                       bool inline_frames, bool full_source_path);

}  // namespace perfkit::script
