// perf script: every sample of a recording as one line (or a line and its
// callchain), and optionally the side-band records, in perf 6.1's text.
//
//   Session --resolved samples--> ScriptPrinter --text--> FdWriter (streamed)
//          \--side-band records--/
//
// What is printed per event type comes from ScriptFields (-F). Source lines
// and inlined frames come from symbol::SourceLines (DWARF, in process);
// tracepoint payloads from TracepointFormatter (libtraceevent); user stacks
// of --call-graph dwarf recordings are unwound by analysis/unwind_callchain.
//
// Synthesized samples (Intel PT decoding, itrace) enter the same printer
// through ScriptPrinter::on_sample with a ResolvedSample of their own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/output.h"
#include "script/script_fields.h"
#include "session/event_switch.h"
#include "session/session.h"
#include "session/shards.h"
#include "session/time_filter.h"

namespace perfkit::script {

struct ScriptOptions {
  ScriptFields fields;
  // -D: every record dumped as perf script -D prints it, each sample then
  // followed by its resolution lines and its script output.
  bool dump_raw = false;
  bool dump_unsorted = false;   // --dump-unsorted-raw-trace: -D's dump in file order
  bool hide_callchain = false;  // -G
  // --graph-function: only the samples from one of these functions'
  // entries (a call into it, a trace beginning in it) to their returns, as
  // perf's show_event; recorded samples carry no branch flags and so start
  // none (Intel PT's decode shows them inside one).
  std::vector<std::string> graph_functions;
  session::EventSwitchOptions evswitch;  // --switch-on, --switch-off, --show-on-off-events
  int max_stack = 127;                   // --max-stack
  std::uint64_t max_blocks = 0;          // --max-blocks: of brstackinsn (0: all)
  // --stop-bt: a call chain's lines end after a frame of one of these
  // functions.
  std::vector<std::string> stop_bt;
  bool ns = false;  // --ns: nanosecond times
  bool reltime = false;
  bool deltatime = false;
  bool latency = false;           // -L
  bool inline_frames = true;      // --inline / --no-inline
  bool full_source_path = false;  // --full-source-path
  bool show_kernel_path = false;
  bool show_task = false, show_mmap = false, show_switch = false, show_namespace = false,
       show_cgroup = false, show_lost = false, show_round = false, show_bpf = false,
       show_text_poke = false;
  bool debug_mode = false;  // -d: check sample order instead of printing
  std::string time;         // --time, parsed once the recording is known
  std::vector<std::int32_t> cpus;
  bool have_cpus = false;
  std::vector<std::string> comms;
  std::vector<std::int32_t> pids, tids;
  std::vector<std::string> symbols;  // -S
  std::uint64_t addr_range = 0;      // --addr-range: with -S addresses
  std::vector<std::string> dsos;     // --dsos
  // --per-event-dump: each event's samples go to PREFIX.EVENT.dump (PREFIX
  // the input's path), everything else to the output, as perf writes them.
  std::optional<std::string> per_event_dump;
  // --dlfilter FILE and its --dlarg arguments (script/dlfilter.h).
  std::string dlfilter;
  std::vector<std::string> dlargs;
  WarnFn warn;
};

// Runs perf script over `session`, writing to `out`. Errors: the field checks
// (events lacking a field the user asked for), a bad --time, reader errors,
// write errors.
Status run_script(session::Session& session, ScriptOptions opts, FdWriter& out);

// --jobs: run_script over several sessions of one recording, each printing
// slices of `slice_samples` samples in turn (session/shards.h; a slice of
// DWARF samples ends early, once their stack copies reach `slice_bytes`:
// each costs an unwinding, as much as many other samples), on threads
// of their own; the text is run_script's on the first. Where a printed
// sample depends on earlier ones (--reltime, --deltatime, side-band
// records, -D, PERF_SAMPLE_READ's differences, ...) or the input is a pipe,
// the first session alone runs. Warnings go through `warnings`, one per
// session.
bool can_shard(const ScriptOptions& opts);  // options that may run in shards
Status run_script_shards(std::span<session::Session* const> sessions, ScriptOptions opts,
                         FdWriter& out, session::ShardWarnings& warnings,
                         std::uint64_t slice_samples = 1024,
                         std::uint64_t slice_bytes = std::uint64_t{1} << 20);

}  // namespace perfkit::script
