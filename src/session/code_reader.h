// CodeReader: the bytes of a sampled program's code, as perf's
// thread__memcpy reads them (dso__data_read_offset): from the DSO's copy in
// the build-id cache, else its file, at the map-relative address; the vdso
// from this process's own (the kernel that ran the program, as the Intel PT
// decoder assumes too). Kernel and anonymous memory cannot be read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/bytes.h"
#include "intelpt/insn.h"
#include "machine/machine.h"
#include "symbol/symbolizer.h"

namespace perfkit::session {

class CodeReader {
 public:
  explicit CodeReader(const symbol::SymbolizerOptions& opts) : opts_(opts) {}
  CodeReader(const CodeReader&) = delete;
  CodeReader& operator=(const CodeReader&) = delete;
  ~CodeReader();

  // Copies `n` bytes at `loc`; false when they cannot all be read.
  bool read(const machine::Location& loc, std::uint8_t* buf, std::size_t n);
  // perf's script_fetch_insn (x86-64): the instruction at `loc` decoded
  // from up to 16 bytes of its code; its length (0: unknown), bytes in `code`.
  unsigned fetch_insn(const machine::Location& loc, std::uint8_t (&code)[16]);

 private:
  int fd_of(const machine::Dso& dso);

  const symbol::SymbolizerOptions& opts_;
  std::unordered_map<const machine::Dso*, int> fds_;
  intelpt::InsnDecoder decoder_;
  Bytes vdso_;
  bool vdso_tried_ = false;
};

}  // namespace perfkit::session
