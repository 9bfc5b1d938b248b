// Where GNU binutils finds the DWARF of an ELF file: in the file itself when
// it has .debug_info, else in a separate debug file named by its build-id
// (DEBUGDIR/.build-id/xx/rest.debug, the build-id must match) or by its
// .gnu_debuglink (next to the file, in .debug/ beside it, or under DEBUGDIR
// plus the file's directory; the CRC must match).
#pragma once

#include <optional>
#include <string>

#include "elf/elf_file.h"

namespace perfkit::dwarf {

// Whether `f` has DWARF debugging information of its own.
bool has_debug_info(const elf::ElfFile& f);

// The separate debug file of `f` with DWARF in it, or nullopt.
std::optional<elf::ElfFile> find_separate_debug_file(const elf::ElfFile& f,
                                                     const std::string& debug_dir);

}  // namespace perfkit::dwarf
