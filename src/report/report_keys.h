// The less common sort keys of perfkit report (time, socket, parent,
// srcline, srcfile, symoff): their per-entry values, computed as perf 6.1
// computes them and interned as ExtKeys, so that an entry's key stays one
// cache line (EntryKey::ext) and the default keys pay nothing for them.
//
//   time     the sample time in --time-quantum bins (perf's hist_time)
//   socket   the sample CPU's socket from HEADER_CPU_TOPOLOGY, -1 unknown
//   parent   the first callchain symbol matching the parent regex, in the
//            callchain order of the report (callee first; caller first
//            with children); nullptr prints "[other]"
//   srcline  perf's map__srcline: "file.c:12" from the DWARF line table,
//            else "sym+OFF" (decimal, ip - sym start), "dso[ADDR]" without
//            a symbol, "??:0" without a map
//   srcfile  the file part of a found srcline, else ""
//   trace    a tracepoint sample's payload as perf's get_trace_output
//            formats it (tep_print_event's INFO); nullptr for other events
//
// Source lines are resolved once per DSO and address (symbol::SourceLines);
// perf's give-up rule (123 failed lookups in a DSO before any success turn
// its source lines off) is kept per lookup perf makes: one per sample entry,
// two per callchain entry (its duplicate check and its insertion).
#pragma once

#include <regex.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/flat_map.h"
#include "report/report.h"
#include "report/report_impl.h"
#include "session/session.h"
#include "session/tracepoint.h"
#include "symbol/source_lines.h"

namespace perfkit::report {

// perf's transaction column: the PERF_TXN_* flags' names ("EL TX SYNC "
// ...), "NEITHER " when neither sync nor async, ":abort code".
std::string transaction_text(std::uint64_t t);
// perf's hist_entry__transaction_len: the column's width with a flag set.
std::size_t transaction_text_len();

// The socket of each cpu, by cpu (perf's env->cpu[].socket_id); empty when
// the recording has no CPU_TOPOLOGY ids.
std::vector<std::int32_t> cpu_sockets(perfdata::Reader& reader);

class ExtKeys {
 public:
  ExtKeys() = default;
  ~ExtKeys();
  ExtKeys(const ExtKeys&) = delete;
  ExtKeys& operator=(const ExtKeys&) = delete;

  // Prepares what the sort keys of `o` need from `session`. `lines` is the
  // source-line resolver to use (shared with the unwinder). Errors: a
  // parent regex that does not compile.
  Status setup(session::Session& session, const ReportOptions& o,
               std::shared_ptr<symbol::SourceLines> lines);
  bool active() const { return active_; }
  bool needs_callchain() const { return parent_; }
  bool needs_source_lines() const { return srcline_ || srcfile_; }

  // The values shared by every entry of sample `s`: time bin, socket, parent.
  void begin_sample(const session::ResolvedSample& s);
  // Branch-stack mode: the branch the next entries are of.
  void set_branch(std::uint32_t key) { sample_.branch = key; }
  // Memory mode: the memory description of the current sample.
  void set_mem(std::uint32_t key) { sample_.mem = key; }
  // Whether the current sample's chain has a parent (the "parent" key).
  bool has_parent() const { return sample_.parent != nullptr; }
  // The interned ExtKey of an entry of the current sample at `loc`
  // (`inlined`: an inline frame's function name), resolving its source line
  // `lookups` times as perf does. `srcline`: the frame's own source line
  // (a DWARF-unwound frame's, from its inline records), used as it is.
  std::uint32_t key(const machine::Location& loc, const char* inlined, int lookups,
                    const char* srcline = nullptr);
  const ExtKey& at(std::uint32_t id) const { return keys_[id]; }
  // The id here of a key another report made (perfkit diff prints the other
  // files' entries through the baseline's report); its names stay theirs.
  std::uint32_t adopt(const ExtKey& k) { return intern(k); }
  // perf's cgroup column: the path CGROUP records gave `id`, "unknown"
  // where none did.
  std::string_view cgroup_name(std::uint64_t id) const;
  // Whether the last key()'s srcline came from the DWARF line table (or
  // the frame's own records): perf's callchain frames carry such a line.
  bool last_found() const { return last_found_; }
  // --branch-history: the name of a call-graph frame at `loc` as perf's
  // callchain_list__sym_name gives it with address keys: "name srcline"
  // (perf's callchain_srcline: the line found, else "+OFF" into the
  // symbol), resolved once per DSO and address; empty without a symbol.
  // An inlined function's frame (`inlined`: its name, `srcline`: its line
  // when known) reads "name srcline (inlined)".
  // srcline_from, srcline_to: perf's map__srcline of a branch end at `loc`
  // (one lookup), "??:0" without a map.
  const std::string* branch_srcline(const machine::Location& loc) {
    return source(loc, nullptr, 1, false);
  }
  std::string_view history_name(const machine::Location& loc, const char* inlined = nullptr,
                                const char* srcline = nullptr);
  // The source line of that frame (perf's callchain_srcline, which its
  // children entries take as theirs); nullptr without a map.
  const std::string* history_srcline(const machine::Location& loc);
  // -g srcline: perf's callchain_srcline without addresses, the frame's
  // source line where it is known, else nullptr (the same look-up).
  const std::string* chain_line(const machine::Location& loc);
  // --total-cycles: perf's text for the block [start, end] (offsets into
  // the symbol at `loc`, which starts at `sym_start`): "[a.c:3 -> a.c:5]"
  // from map__srcline's lines (or "sym+OFF"), "[    off ->     off]" where
  // either line is unknown.
  std::string block_range(const machine::Location& loc, std::uint64_t sym_start,
                          std::uint64_t start, std::uint64_t end);
  // The key perf's duplicate check of a callchain entry compares: its
  // template leaves time, socket, transaction, code page size, cgroup and
  // cgroup namespace at 0.
  std::uint32_t dedup_key(std::uint32_t id);
  bool dedup_differs() const { return time_ || socket_ || txn_ || page_ || cgroup_ || cgroup_id_; }

 private:
  struct AddrKey {
    std::uint64_t addr = 0;
    const char* inlined = nullptr;
    std::uint32_t dso = 0;
    bool operator==(const AddrKey&) const = default;
  };
  struct AddrKeyHash {
    std::uint64_t operator()(const AddrKey& k) const {
      return mix64(k.addr ^ (static_cast<std::uint64_t>(k.dso) << 40) ^
                   reinterpret_cast<std::uintptr_t>(k.inlined));
    }
  };
  struct U64Hash {
    std::uint64_t operator()(std::uint64_t k) const { return mix64(k); }
  };
  // What addr2line says about one address of a DSO, and perf's texts for it.
  struct Answer {
    const std::string* found = nullptr;  // "file.c:12"; nullptr: nothing known
    const std::string* file = nullptr;   // srcfile when found
    const std::string* fallback = nullptr;
  };
  // perf's per-DSO addr2line state (a2l_fails, has_srcline).
  struct DsoState {
    int fails = 1;
    bool has_srcline = true;
  };
  const Answer& answer(const machine::Location& loc, const char* inlined);
  // One of perf's get_srcline calls for `a` in `loc`'s DSO (its give-up
  // count); whether the line found is the answer.
  bool lookup(const machine::Location& loc, const Answer& a);
  // The srcfile perf cuts from the line it falls back to, where a's line
  // is not found.
  const std::string* fallback_file(const machine::Location& loc, const Answer& a);
  // The srcline (or srcfile) of an entry at `loc`, counting `lookups`.
  const std::string* source(const machine::Location& loc, const char* inlined, int lookups,
                            bool file);
  const std::string* parent_of(const session::Frame& f);
  const std::string* trace_of(const session::ResolvedSample& s);
  std::uint32_t intern(const ExtKey& k);

  session::Session* session_ = nullptr;
  bool active_ = false, time_ = false, socket_ = false, parent_ = false;
  bool srcline_ = false, srcfile_ = false, symoff_ = false, trace_ = false, branch_ = false;
  bool weight_ = false, mem_ = false;
  // symbol_size, dso_size, addr, code_page_size, transaction, cgroup, cgroup_id
  bool sym_size_ = false, dso_size_ = false, addr_ = false, page_ = false, txn_ = false;
  bool cgroup_ = false, cgroup_id_ = false;
  // The tracing data's formats, made at the first tracepoint sample.
  std::unique_ptr<session::TracepointFormatter> tracepoints_;
  bool tracepoints_tried_ = false;
  bool raw_trace_ = false;  // --raw-trace
  bool last_found_ = false;
  fmt::memory_buffer trace_text_;
  std::uint64_t quantum_ = 0;
  std::vector<std::int32_t> sockets_;  // by cpu
  regex_t regex_{};
  bool regex_ok_ = false;
  FlatMap<std::uint64_t, U64Hash> parent_cache_;  // (dso, symbol) -> 0 or name index + 1
  std::vector<const std::string*> parent_names_;
  FlatMap<std::uint64_t, U64Hash> preset_index_;  // Frame::srcline -> index in presets_
  std::vector<const std::string*> presets_;
  std::shared_ptr<symbol::SourceLines> lines_;
  std::vector<symbol::SourceLines::Dso*> line_dsos_;  // by machine::Dso::index
  std::vector<DsoState> dso_state_;                   // by machine::Dso::index
  FlatMap<AddrKey, AddrKeyHash> answer_index_;
  // By DSO and address: the frame's source line and name.
  FlatMap<AddrKey, AddrKeyHash> history_index_;
  struct History {
    const std::string* line = nullptr;  // the source line, or its fallback
    const std::string* name = nullptr;  // "name line"
    bool found = false;                 // the line is known
  };
  std::vector<History> history_;
  std::uint32_t history_of(const machine::Location& loc);
  // Frames with their own line or an inlined function's: their names.
  struct FrameKey {
    const char* srcline = nullptr;
    const char* inlined = nullptr;
    std::uint64_t addr = 0;  // without a line of its own
    std::uint32_t dso = 0;
    std::int32_t symbol = 0;
    bool operator==(const FrameKey&) const = default;
  };
  struct FrameKeyHash {
    std::uint64_t operator()(const FrameKey& k) const {
      return mix64(
          reinterpret_cast<std::uintptr_t>(k.srcline) ^
          mix64(reinterpret_cast<std::uintptr_t>(k.inlined) ^ k.addr) ^
          (static_cast<std::uint64_t>(k.dso) << 32 | static_cast<std::uint32_t>(k.symbol)));
    }
  };
  FlatMap<FrameKey, FrameKeyHash> frame_index_;
  std::vector<const std::string*> frame_names_;
  std::vector<Answer> answers_;
  const std::string* unknown_ = nullptr;  // "??:0"
  const std::string* empty_ = nullptr;    // ""
  ExtKey sample_;                         // the current sample's shared values
  std::vector<ExtKey> keys_;
  FlatMap<ExtKey, ExtKeyHash> key_index_;
};

}  // namespace perfkit::report
