// The symbols of an ELF file as perf's loader keeps them: functions, objects
// and labels of .symtab or .dynsym in allocated sections, with their values
// turned into file offsets through the runtime file's PT_LOAD segments (so
// that `ip - map.start + map.pgoff` finds them), and the PLT stubs of the
// runtime file named after their .rela.plt targets.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "elf/elf_file.h"

namespace perfkit::elf {

struct RawSymbol {
  std::uint64_t start = 0;
  std::uint64_t size = 0;
  std::uint8_t binding = 0;  // STB_*
  std::uint8_t type = 0;     // STT_*
  bool plt = false;          // a PLT stub: the name is its target's, "@plt" goes after
  std::string_view name;     // valid while the ElfFile lives
};

enum class SymbolSource { kSymtab, kDynsym };

// Appends the symbols of `syms`' table `which`. `runtime` is the file that
// is mapped at run time (the same file, or the binary whose separate debug
// file `syms` is); its segments convert addresses to file offsets when
// `adjust` (ET_EXEC, ET_DYN, ET_REL user objects). Returns the number
// appended; a file without that table appends nothing.
std::size_t read_symbols(const ElfFile& syms, const ElfFile& runtime, SymbolSource which,
                         bool adjust, std::vector<RawSymbol>& out);

// Appends one symbol per .rela.plt / .rel.plt entry of `runtime`, at the
// PLT's file offset (after its header entry). Returns the number appended.
std::size_t read_plt_symbols(const ElfFile& runtime, std::vector<RawSymbol>& out);

// The file offset an address maps to through `f`'s PT_LOAD segments, as
// perf adjusts symbols: the segment containing `vaddr`, else the section's
// address-to-offset delta.
std::uint64_t vaddr_to_offset(const ElfFile& f, std::uint64_t vaddr, const Section* section);

}  // namespace perfkit::elf
