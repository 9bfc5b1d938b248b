// SourceLocator: what `addr2line -e FILE -i -f ADDR` (GNU binutils 2.40)
// prints, computed in process. perf 6.1 gets source lines and inlined
// frames from that command; perfkit answers the same from the same data:
//
//   1. ADDR must fall in an allocated section of FILE, else nothing.
//   2. The DWARF (FILE's own, else its separate debug file found by build-id
//      or .gnu_debuglink as binutils looks for them) gives, per compilation
//      unit covering ADDR: the line row (LineTable) and the innermost
//      function (subprogram or inlined subroutine) whose range is the
//      smallest that contains ADDR.
//   3. The first frame is that function's name (its linkage name, or its
//      name for C-like languages; otherwise the ELF symbol at or before ADDR)
//      with the row's file and line. Each inlined subroutine then adds its
//      caller's name with its call file and line, out to the subprogram.
//   4. Without DWARF answers, the ELF function symbol at or before ADDR in
//      its section still names a frame, with no line (and the file of the
//      STT_FILE symbol before it, if any).
//
// Indexes are built once per compilation unit, on first use; lookups are
// binary searches. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace perfkit::dwarf {

struct SourceFrame {
  std::string_view function;  // "" when unknown (addr2line prints "??")
  std::string_view file;      // the source file; may be "" even when known
  bool has_file = false;      // false: unknown (addr2line prints "??")
  unsigned line = 0;          // 0 when unknown (addr2line prints "?")
};

struct LocatorOptions {
  std::string debug_dir = "/usr/lib/debug";  // binutils' DEBUGDIR
  // A compressed .debug_info is inflated only as far as lookups reach,
  // where .debug_aranges says which unit holds an address (dwarf/
  // lazy_units.h); the answers are the same as with it whole.
  bool lazy_debug_info = true;
};

class SourceLocator {
 public:
  ~SourceLocator();
  SourceLocator(const SourceLocator&) = delete;
  SourceLocator& operator=(const SourceLocator&) = delete;

  // Opens the ELF file `path` (and finds its DWARF). Errors: the file cannot
  // be opened or is not ELF. A file without any DWARF still answers (step 4).
  static Expected<std::unique_ptr<SourceLocator>> open(const std::string& path,
                                                       LocatorOptions opts = {});

  // The frames addr2line prints for `addr` (an address of FILE), innermost
  // first; false when it prints "??\n??:0". Strings stay valid while this
  // object lives.
  bool lookup(std::uint64_t addr, std::vector<SourceFrame>& out);

  // Where the DWARF came from ("" when none), for messages and tests.
  const std::string& dwarf_path() const;
  // The ELF type of FILE (ET_EXEC 2, ET_DYN 3, ...) and the sh_addr - sh_offset
  // of its .text, which perf adds to ET_EXEC addresses before asking.
  std::uint16_t elf_type() const;
  std::int64_t text_offset() const;

 private:
  struct Impl;
  explicit SourceLocator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfkit::dwarf
