// Kernel symbols from a kallsyms file (/proc/kallsyms, a copy in the
// build-id cache, or --kallsyms FILE), kept as perf keeps them: text (T, W)
// and data (D, B) symbols of either case, module symbols ("name [mod]")
// included, ends fixed up with perf's kallsyms rule.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "symbol/symbol_table.h"

namespace perfkit::symbol {

struct KallsymsInfo {
  SymbolTable table;
  // Address of the relocation reference symbol (_text, else _stext), 0 if absent.
  std::uint64_t ref_reloc_addr = 0;
  std::string ref_reloc_name;
  std::string path;  // the file read (load_kallsyms)
};

// Parses kallsyms text. Lines that do not parse are skipped.
KallsymsInfo parse_kallsyms(std::string_view text);

// Reads and parses a kallsyms file. Errors: cannot read it, or it has no
// symbol with a non-zero address (kptr_restrict hides them).
Expected<KallsymsInfo> load_kallsyms(const std::string& path);

// The running kernel's text as a kallsyms file shows it: the addresses of
// the text symbols ('T' or 't') _text, _stext and _etext, each 0 when
// missing (or hidden by kptr_restrict). perf maps the kernel from _text (else
// _stext) to _etext when a recording has no kernel MMAP, and record's kernel
// MMAP says the same.
struct KernelText {
  std::uint64_t text = 0;
  std::uint64_t stext = 0;
  std::uint64_t etext = 0;
};
KernelText kernel_text(std::string_view kallsyms_text);

// One line of /proc/modules: name, load address and size.
struct KernelModule {
  std::string name;
  std::uint64_t start = 0, size = 0;
};
// Parses /proc/modules text.
std::vector<KernelModule> parse_modules(std::string_view text);

// Whether `copy`, a kallsyms file of the running kernel (same build-id) that
// perf record left in the build-id cache, still says what
// PROCFS/kallsyms says, so that it can be read in its place (the kernel
// takes tens of milliseconds to print it). It does when:
//  - their first 4 KiB are the same: the same kernel image at the same
//    place (KASLR), with addresses shown the same way (kptr_restrict);
//  - the modules are the ones PROCFS/modules lists now, each with its
//    symbols inside the module's memory, and none missing.
// Symbols of dynamic code ([bpf], [__builtin__*]) do not count: perf keeps
// no symbol of a module it has no map for. False when anything is unreadable.
bool kallsyms_copy_is_current(const std::string& copy, const std::string& procfs);

// The running kernel's symbols: from `copy` while it is current (as
// kallsyms_copy_is_current says, checked in the same pass that parses it),
// else from PROCFS/kallsyms. KallsymsInfo::path says which.
Expected<KallsymsInfo> load_current_kallsyms(const std::string& copy, const std::string& procfs);

}  // namespace perfkit::symbol
