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
};

// Parses kallsyms text. Lines that do not parse are skipped.
KallsymsInfo parse_kallsyms(std::string_view text);

// Reads and parses a kallsyms file. Errors: cannot read it, or it has no
// symbol with a non-zero address (kptr_restrict hides them).
Expected<KallsymsInfo> load_kallsyms(const std::string& path);

// One line of /proc/modules: name, load address and size.
struct KernelModule {
  std::string name;
  std::uint64_t start = 0, size = 0;
};
// Parses /proc/modules text.
std::vector<KernelModule> parse_modules(std::string_view text);

}  // namespace perfkit::symbol
