// The user-stack unwinder the Session runs for samples with REGS_USER and
// STACK_USER (perf record --call-graph dwarf): perf's DWARF post-unwinding,
// in process over the dwarf module's CFI unwinder. Each unwound address
// becomes a Frame resolved in the thread's maps; with inline_frames, the
// functions inlined at it come first, as perf's append_inlines adds them
// (named from DWARF, "(inlined)" unless the name is the symbol's own).
#pragma once

#include <memory>

#include "session/session.h"
#include "symbol/source_lines.h"
#include "symbol/symbolizer.h"

namespace perfkit::session {

struct UnwindOptions {
  bool inline_frames = true;      // perf's --inline (on by default)
  bool full_source_path = false;  // srclines of inlined frames with their full path
  // Shared with other users of source lines (perf script's srcline field);
  // made here when null.
  std::shared_ptr<symbol::SourceLines> lines;
  // Whether the recording's architecture is one this unwinder (and perf's
  // libunwind build) handles: x86, or not named. Else stacks give no frames.
  bool unwind_arch = true;
};

// An unwinder bound to `symbolizer` (which finds the ELF files of DSOs).
std::shared_ptr<UserStackUnwinder> make_dwarf_unwinder(symbol::Symbolizer& symbolizer,
                                                       UnwindOptions opts);

}  // namespace perfkit::session
