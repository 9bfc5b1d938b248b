// The ELF image of one JIT-compiled function, as perf inject --jit makes
// for each code load of a jitdump: a shared object whose .text (at file
// offset and address kJitTextOffset) holds the code, with the function in
// .symtab, a GNU build-id note and, when the dump gave line numbers, DWARF
// (.debug_line under a compile unit) for source lines. An injected MMAP2
// maps the code's run-time address to kJitTextOffset in the file, so the
// usual symbol and line lookups find the function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"
#include "elf/build_id.h"

namespace perfkit::elf {

// perf's GEN_ELF_TEXT_OFFSET: past the ELF and program headers.
constexpr std::uint64_t kJitTextOffset = 0x80;

struct JitLine {
  std::uint64_t address = 0;  // run-time address, within the code
  std::uint32_t line = 0;
  std::string file;
};

struct JitImage {
  std::uint64_t load_address = 0;  // where the code ran
  std::string_view symbol;
  Bytes code;
  std::vector<JitLine> lines;  // by address
};

// The build-id the image gets: a digest of its load address, name and code
// (the same function loaded at the same place gets the same id).
BuildId jit_build_id(const JitImage& image);

// Writes the image to `path` (replacing a file there). Errors name the path.
Status write_jit_elf(const std::string& path, const JitImage& image);

}  // namespace perfkit::elf
