// SourceLines: source lines and inlined frames of addresses in user DSOs as
// perf 6.1 shows them. perf asks `addr2line -e FILE -i -f` (FILE: the DSO's
// symbol source, else its recorded path); this answers the same questions in
// process from the DWARF (dwarf::SourceLocator), with perf's rules on top:
//
//   srcline(dso, addr)   map__srcline: "file.c:12" (basename unless
//                        full_path), "??:0" when addr2line knows the function
//                        but no line, "libfoo.so[1a2b]" when it knows nothing
//                        (kernel and JIT DSOs always), and perf's give-up
//                        rule: 123 failures in a row before any success turn
//                        a DSO's source lines off.
//   inlines(dso, addr)   dso__parse_addr_inlines: the frames addr2line -i
//                        prints, innermost first (function name, srcline).
//
// Addresses are map-relative (perf's al->addr); the objdump address perf
// sends is derived per DSO (ET_EXEC and ET_REL adjust by .text's offset).
// Answers are cached per DSO and address; nothing is computed twice.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "elf/build_id.h"
#include "symbol/symbolizer.h"

namespace perfkit::dwarf {
class SourceLocator;
}

namespace perfkit::symbol {

struct SourceLineOptions {
  bool full_path = false;  // --full-source-path
};

// One frame of an inline chain: the function addr2line names and its srcline.
struct InlineRecord {
  std::string_view function;  // as DWARF names it (mangled for C++), "??" when unknown
  std::string_view srcline;   // "file.c:12" (or full path), "??:0" when unknown
};

class SourceLines {
 public:
  struct Dso;

  SourceLines(Symbolizer& symbolizer, SourceLineOptions opts);
  ~SourceLines();
  SourceLines(const SourceLines&) = delete;
  SourceLines& operator=(const SourceLines&) = delete;

  // The handle of a DSO by its recorded name, short name (for the fallback
  // text) and build-id; created on first use. Never null.
  Dso* dso(std::string_view long_name, std::string_view short_name, const elf::BuildId& id);

  // Finds the file `dso`'s lines come from (asking the symbolizer), so that
  // srcline() and inlines() of that DSO then use no one else: another
  // thread may ask them while this one goes on with the symbolizer.
  void prepare(Dso* dso);

  // perf's map__srcline text for `addr` (map-relative) in `dso`.
  // Valid until this object is destroyed.
  std::string_view srcline(Dso* dso, std::uint64_t addr);
  // The inline chain at `addr`; empty when addr2line knows nothing there.
  std::span<const InlineRecord> inlines(Dso* dso, std::uint64_t addr);

 private:
  struct Answer;
  const Answer& lookup(Dso* d, std::uint64_t addr);
  void open(Dso* d);

  Symbolizer& symbolizer_;
  SourceLineOptions opts_;
  std::unordered_map<std::string, std::unique_ptr<Dso>> dsos_;
};

}  // namespace perfkit::symbol
