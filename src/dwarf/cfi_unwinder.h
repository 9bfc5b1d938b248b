// CFI unwinding of an x86-64 user stack copy, as perf's DWARF post-unwinder
// (libunwind) does for `perf record --call-graph dwarf` samples:
//
//   regs (REGS_USER) + stack copy (STACK_USER) --CFI of each module-->
//     ip, ret-1, ret-1, ...            (callers are return address - 1,
//                                       signal frames excepted)
//
// Rules come from .eh_frame (through .eh_frame_hdr) of the mapped ELF file,
// else .debug_frame of its debug file, read with libdw and cached per
// address. Where no rule covers an address it falls back the way libunwind
// does on x86-64: a PLT stub (return address at the stack pointer), or the
// frame-pointer chain when %rbp looks like one. Memory outside the stack
// copy is read from the mapped files. The walk ends at an undefined return
// address, a zero ip, a read that fails, or a frame that does not move.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"

namespace perfkit::dwarf {

// x86-64 registers in DWARF numbering: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi,
// 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return address (rip).
inline constexpr int kRegCount = 17;
inline constexpr int kRegRbp = 6, kRegRsp = 7, kRegRip = 16;

struct UnwindRegs {
  std::uint64_t value[kRegCount] = {};
  std::uint32_t known = 0;  // bit per register that has a value
  bool has(int r) const { return known & (1u << r); }
  void set(int r, std::uint64_t v) {
    value[r] = v;
    known |= 1u << r;
  }
};

// The unwind tables of one ELF file. Open once per file; lookups cached.
class UnwindTables {
 public:
  ~UnwindTables();
  UnwindTables(const UnwindTables&) = delete;
  UnwindTables& operator=(const UnwindTables&) = delete;

  // `runtime` is the mapped file (.eh_frame, segments); `debug` optionally a
  // separate debug file for .debug_frame. Errors: `runtime` cannot be opened.
  static Expected<std::unique_ptr<UnwindTables>> open(const std::string& runtime,
                                                      const std::string& debug = {});

  // The ELF virtual address a file offset maps to (PT_LOAD), false if none.
  bool offset_to_vaddr(std::uint64_t offset, std::uint64_t& vaddr) const;
  // Reads 8 bytes of the file at `offset`. False past the end.
  bool read_file(std::uint64_t offset, std::uint64_t& out) const;
  // The first PT_LOAD's address, page aligned (perf's elf_base_address):
  // what the lowest map of the file stands for in perf's .eh_frame_hdr base.
  std::uint64_t elf_base() const;

  struct Rule;
  struct Frame;
  // The rules at ELF address `vaddr`, or nullptr when no CFI covers it.
  const Frame* frame_at(std::uint64_t vaddr);

 private:
  struct Impl;
  explicit UnwindTables(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What the unwinder needs from the process: which tables cover a pc (and
// the bias from ELF addresses to run-time ones), and memory reads.
class UnwindTarget {
 public:
  virtual ~UnwindTarget() = default;
  // The tables of the file mapped at `pc`, with runtime = vaddr + *bias.
  virtual UnwindTables* tables_at(std::uint64_t pc, std::uint64_t& bias) = 0;
  // Reads 8 bytes at `addr` (stack copy first, then mapped files).
  virtual bool read(std::uint64_t addr, std::uint64_t& out) = 0;
};

// Appends up to `max` addresses: regs' ip, then each caller's return
// address minus one (exact for signal frames), as perf's get_entries does.
void unwind_stack(const UnwindRegs& regs, UnwindTarget& target, int max,
                  std::vector<std::uint64_t>& ips);

}  // namespace perfkit::dwarf
