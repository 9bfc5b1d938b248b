// InsnDecoder: the length and the control-flow class of one x86 instruction,
// from Zydis, and its text. The flow decoder needs only the first: how far to
// step, whether the instruction needs trace (TNT bit, TIP) to know where it
// goes, and the target of direct branches; script's insn fields and --xed the
// length and the text. perfkit's one instruction decoder: nothing else calls
// Zydis.
#pragma once

#include <Zydis/Decoder.h>
#include <Zydis/Formatter.h>

#include <cstdint>
#include <string>

#include "base/bytes.h"

namespace perfkit::intelpt {

// How an instruction changes the flow, as the trace encodes it.
enum class InsnClass : std::uint8_t {
  kOther,         // falls through (includes xbegin/xend, ptwrite, ud2, hlt)
  kCondJump,      // jcc, loop*, jcxz: one TNT bit
  kJump,          // direct near jmp: no trace
  kCall,          // direct near call: no trace, pushes the return address
  kIndirectJump,  // near indirect jmp: TIP
  kIndirectCall,  // near indirect call: TIP, pushes the return address
  kReturn,        // near ret: TNT bit when compressed, else TIP
  kFarCall,       // syscall, sysenter, int n/int3/into, far call, vmcall: TIP or TIP.PGD
  kFarReturn,     // sysret, sysexit, iret, far ret, uiret: TIP or TIP.PGD
  kFarJump,       // far jmp, vmlaunch, vmresume: TIP or TIP.PGD
  kInvalid,       // the bytes are not an instruction (or run out)
};

// The operation, in perf's terms, for the branch flags of synthesized samples.
enum class InsnOp : std::uint8_t {
  kNone,
  kCall,
  kRet,
  kJcc,
  kJmp,
  kLoop,
  kIret,
  kInt,
  kSyscall,
  kSysret,
  kVmentry,
};

struct Insn {
  std::uint8_t length = 0;
  InsnClass cls = InsnClass::kInvalid;
  InsnOp op = InsnOp::kNone;
  bool is_ptwrite = false;
  bool is_tsx = false;            // xbegin, xend, xabort
  std::int64_t displacement = 0;  // direct branches: target = ip + length + displacement

  bool needs_trace() const {
    return cls != InsnClass::kOther && cls != InsnClass::kJump && cls != InsnClass::kCall;
  }
  bool is_branch() const { return cls != InsnClass::kOther && cls != InsnClass::kInvalid; }
};

// Exec mode of the code (MODE.Exec): 16, 32 or 64-bit.
enum class ExecMode : std::uint8_t { k64, k32, k16 };

class InsnDecoder {
 public:
  InsnDecoder();
  // Decodes the instruction at the start of `code` (up to 15 bytes are read,
  // never past code.size()). An undecodable or cut-short instruction gives
  // InsnClass::kInvalid.
  Insn decode(Bytes code, ExecMode mode = ExecMode::k64) const;
  // AT&T-syntax text of the instruction, as perf's `xed -A` prints it
  // ("movl -0x4(%rbp), %eax"), with branch targets resolved against `ip`.
  // Empty if it does not decode.
  std::string disassemble(Bytes code, std::uint64_t ip, ExecMode mode = ExecMode::k64) const;

 private:
  const ZydisDecoder& minimal(ExecMode mode) const;
  ZydisDecoder d64_, d32_, d16_;           // minimal mode: length and branch class
  ZydisDecoder full64_, full32_, full16_;  // with operands, for the text
  ZydisFormatter att_;
};

}  // namespace perfkit::intelpt
