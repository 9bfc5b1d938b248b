// Internals of perfkit script's Intel PT printing, shared by
// script_itrace.cc (the attrs and the general path) and
// script_itrace_line.cc (the lines kept from the sample before). Not a
// public API.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "intelpt/insn.h"
#include "intelpt/synth.h"
#include "itrace/itrace.h"
#include "script/script_itrace.h"
#include "script/script_printer.h"
#include "session/code_reader.h"

namespace perfkit::script {

using intelpt::SampleKind;

inline constexpr std::size_t kKinds = static_cast<std::size_t>(SampleKind::kError) + 1;
inline constexpr std::uint64_t kKernelStart = 0xffff800000000000ULL;

// perf's thread stack as --call-trace uses it: return addresses pushed by
// calls, popped by returns (to the matching entry) and by trace begins.
struct CallStack {
  struct Entry {
    std::uint64_t ret = 0;
    bool trace_end = false;
  };
  std::vector<Entry> e;
  void pop_to(std::uint64_t ret) {
    for (std::size_t i = e.size(); i-- > 0;)
      if (e[i].ret == ret) {
        e.resize(i);
        return;
      }
  }
  void event(std::uint32_t flags, std::uint64_t from, std::uint64_t to, std::uint8_t len) {
    using namespace intelpt;
    if (flags & kFlagCall) {
      if (!to || from + len == to) return;
      e.push_back({from + len, (flags & kFlagTraceEnd) != 0});
    } else if (flags & kFlagTraceBegin) {
      pop_to(to);
      while (!e.empty() && e.back().trace_end) e.pop_back();
    } else if ((flags & kFlagReturn) && from) {
      pop_to(to);
    }
  }
};

// Text kept to be copied in 32-byte moves: its bytes, then kSlack of zeros
// so that no move reads past them.
class PaddedText {
 public:
  static constexpr std::size_t kSlack = 32;
  void assign(std::string_view s) {
    bytes_.assign(s);
    bytes_.append(kSlack, '\0');
    size_ = s.size();
  }
  std::string_view view() const { return {bytes_.data(), size_}; }
  std::size_t size() const { return size_; }
  // Writes the text at `p`, and up to kSlack - 1 bytes of slack after it.
  char* put(char* p) const {
    for (std::size_t i = 0; i < size_; i += kSlack) std::memcpy(p + i, bytes_.data() + i, kSlack);
    return p + size_;
  }

 private:
  std::string bytes_;
  std::size_t size_ = 0;
};

class ItraceScript {
 public:
  ItraceScript(ScriptPrinter& p, session::Session& s, const ScriptItraceOptions& it)
      : p_(p), session_(s), it_(it), code_(s.symbolizer().options()) {
    event_of_.fill(-1);
    if (!p_.opts_.graph_functions.empty()) {
      p_.graph_shows_ = [this](const session::ResolvedSample& rs) {
        const auto tid = static_cast<std::int32_t>(rs.sample->tid);
        return graph_shows(tid, stack_depth(tid), {});
      };
    }
  }

  // Adds perf's synthesized events and prepares the printer with them;
  // -C is checked against the recorded events only, as perf does (its
  // synthesized events come later). Errors: the printer's.
  Status prepare(const abi::EventAttr& pt, bool per_cpu, bool timeless);
  void add_events(const abi::EventAttr& pt, bool per_cpu, bool timeless);
  // What the decoder must synthesize. With callindent, every branch (the
  // call stack needs them all; callindent() tells): the printer applies
  // c/r itself.
  intelpt::ItraceOptions decode_options();
  bool callindent() const { return callindent_; }
  // A line like the one before is written whole (print_fast_line), ahead
  // of the general path (on_sample_general).
  Status on_sample(const itrace::ItraceSample& s);
  Status print_sample_lines(const itrace::ItraceSample& s);  // on_sample's lines
  Status on_insn_run(const itrace::ItraceSample& run);       // run_n samples
  std::uint64_t errors() const { return errors_; }

 private:
  void add(SampleKind k, abi::EventAttr attr, const std::string& name);
  void print_synth(const intelpt::SynthSample& s);
  void print_error(const itrace::ItraceSample& s);
  void print_bts(const OutputConfig& o, const session::ResolvedSample& rs,
                 const intelpt::SynthSample& s);
  void print_addr_sym(const OutputConfig& o, machine::Thread& t, std::uint64_t addr);
  void print_callindent(const OutputConfig& o, const session::ResolvedSample& rs,
                        const intelpt::SynthSample& s, std::size_t depth);
  void print_insn(const OutputConfig& o, const session::ResolvedSample& rs,
                  const intelpt::SynthSample& s);
  void print_ipc(const OutputConfig& o, const intelpt::SynthSample& s);
  void resolve_chain(const intelpt::SynthSample& s, session::ResolvedSample& rs);
  void print_start(const OutputConfig& o, const StartFields& f, const machine::Thread& t);
  const std::string& event_label(std::size_t event);
  machine::Thread& thread_of(std::int32_t pid, std::int32_t tid);
  // Fills `loc` in place: a returned copy would be read back before its
  // stores land (a store-forwarding stall on every sample).
  void resolve_ip(machine::Thread& t, std::uint8_t cpumode, std::uint64_t ip,
                  machine::Location& loc);
  void print_line_start(const OutputConfig& o, const StartFields& f, const machine::Thread& t,
                        std::uint64_t period, std::size_t event);
  bool fast_event(std::size_t event);
  // (`ip`: the sample's, or, for a run, the instruction's)
  bool print_fast_line(const itrace::ItraceSample& is, std::size_t event, std::uint64_t ip);
  std::uint32_t print_fast_run(std::uint64_t ip, const std::uint8_t* len, std::uint32_t n);
  void restart_fast_line(const intelpt::SynthSample& s, std::size_t event);
  Status on_sample_general(const itrace::ItraceSample& is);
  // perf's show_event (--graph-function) for a sample of thread `tid`
  // whose branch enters `name` ("" for none) at call depth `depth`.
  bool graph_shows(std::int32_t tid, std::size_t depth, std::string_view name);
  std::string_view branch_symbol(const session::ResolvedSample& rs, const intelpt::SynthSample& s);
  std::size_t stack_depth(std::int32_t tid) const {
    auto it = stacks_.find(tid);
    return it == stacks_.end() ? 0 : it->second.e.size();
  }
  // What follows the line start of a sample of any kind but branches: the
  // synth text, addr, ip (or the call chain), branch stack, insn and IPC.
  void print_event_fields(const OutputConfig& o, session::ResolvedSample& rs,
                          const intelpt::SynthSample& s, std::uint32_t attr_type, bool chain);
  void arm_fast_line(const itrace::ItraceSample& is, std::size_t event);
  void keep_location_text(const OutputConfig& o, std::size_t event);
  bool read_code(const machine::Location& loc, std::uint8_t* buf, std::size_t n) {
    return code_.read(loc, buf, n);
  }

  ScriptPrinter& p_;
  session::Session& session_;
  const ScriptItraceOptions& it_;
  std::array<int, kKinds> event_of_{};
  std::uint32_t branch_filter_ = 0;
  bool callindent_ = false;
  int spacing_ = 0;
  std::uint64_t errors_ = 0;
  std::unordered_map<std::int32_t, CallStack> stacks_;
  struct GraphFilter {
    bool on = false;        // inside a --graph-function function
    std::size_t entry = 0;  // the call depth it was entered at
  };
  std::unordered_map<std::int32_t, GraphFilter> graph_;
  session::CodeReader code_;
  record::Sample sample_;
  std::vector<std::uint8_t> branch_bytes_;  // sample_.branch_stack's entries (itrace l)
  std::vector<session::Frame> frames_;
  // The comm/pid/tid columns of a thread (under one comm) and the padded
  // event names: formatted once, as the same few repeat on every line.
  struct Prefix {
    const std::string* comm = nullptr;
    FieldMask fields = 0;
    bool layout = false;
    std::string text;
  };
  std::unordered_map<const machine::Thread*, Prefix> prefixes_;
  std::vector<std::string> labels_;
  intelpt::InsnDecoder insn_;  // --xed's text
  // What the sample before looked up and printed, valid while the machine's
  // generation stays (see thread_of, resolve_ip, print_line_start).
  struct LastThread {
    std::int32_t pid = 0, tid = 0;
    std::uint64_t generation = 0;
    machine::Thread* thread = nullptr;
  } last_thread_;
  struct LastSpan {
    const void* space = nullptr;  // the thread's maps, or the machine for the kernel's
    std::uint64_t generation = 0;
    std::uint64_t lo = 0, hi = 0;  // empty: nothing kept
    std::uint8_t cpumode = 0;
    machine::Location loc;
    std::uint64_t serial = 0;  // which span: LocationText belongs to one
  } last_span_;
  std::uint64_t spans_ = 0;
  // print_location's text for the kept span, less what depends on the ip:
  // the symbol's name up to its offset, and the DSO after it.
  struct LocationText {
    std::uint64_t serial = 0;  // last_span_'s, when it was made
    std::size_t event = 0;
    bool ip = false, offset = false;
    std::uint64_t offset_base = 0;  // the symbol's start as an address
    PaddedText before, after;
  };
  // The location texts of the last few spans, for print_fast_line() to
  // take up again when the flow comes back to one (a loop calling a few
  // functions); text_ is the one kept last.
  struct KeptSpan {
    std::uint64_t lo = 0, hi = 0, generation = ~0ULL;
    const void* space = nullptr;
    std::uint8_t cpumode = 0;
    LocationText text;
  };
  std::array<KeptSpan, 8> kept_{};
  std::size_t kept_next_ = 0;
  KeptSpan* text_ = &kept_[0];
  bool take_kept_span(std::uint64_t ip, std::size_t event);
  std::size_t line_bound(const LocationText& text) const;
  char* put_fast_line(char* p, const LocationText& t, std::uint64_t ip) const;
  // What a sample must share with the one before for print_fast_line():
  // set by arm_fast_line() once the kept thread, span, location text and
  // line start all hold for that sample.
  struct FastLine {
    bool armed = false;
    std::int32_t pid = 0, tid = 0, cpu = 0;
    std::uint64_t time = 0, period = 0;
    std::size_t event = 0;
    std::uint64_t lo = 0, size = 0;  // the symbol span
    std::uint64_t generation = 0;
    std::size_t most = 0;                // bytes a line may take, slack included
    const LocationText* text = nullptr;  // of the span
    // To render a new line start when only the time or period changes.
    const OutputConfig* config = nullptr;
    const machine::Thread* thread = nullptr;
    bool has_time = false;
  } fast_line_;
  intelpt::SynthSample run_sample_;  // on_insn_run's, for the general path
  // Per event: -1 not known yet, 0 the general path, 1 fields that
  // print_fast_line() writes itself.
  std::vector<std::int8_t> fast_;
  struct LastStart {
    bool valid = false;
    const machine::Thread* thread = nullptr;
    const std::string* comm = nullptr;
    std::uint64_t time = 0, period = 0;
    std::size_t event = 0;
    std::uint32_t cpu = 0;
    std::int32_t pid = 0, tid = 0;
    std::uint16_t misc = 0;
    bool layout = false;
    PaddedText text;
  } last_start_;
};

}  // namespace perfkit::script
