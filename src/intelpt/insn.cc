#include "intelpt/insn.h"

#include <Zydis/Formatter.h>

namespace perfkit::intelpt {

namespace {

void classify_branch(const ZydisDecodedInstruction& zi, Insn& insn) {
  const bool relative = zi.raw.imm[0].is_relative;
  const bool far = zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
  if (relative) insn.displacement = zi.raw.imm[0].value.s;
  switch (zi.mnemonic) {
    case ZYDIS_MNEMONIC_JMP:
      insn.op = InsnOp::kJmp;
      insn.cls = far ? InsnClass::kFarJump : relative ? InsnClass::kJump : InsnClass::kIndirectJump;
      return;
    case ZYDIS_MNEMONIC_CALL:
      insn.op = InsnOp::kCall;
      insn.cls = far ? InsnClass::kFarCall : relative ? InsnClass::kCall : InsnClass::kIndirectCall;
      return;
    case ZYDIS_MNEMONIC_RET:
      insn.op = InsnOp::kRet;
      insn.cls = far ? InsnClass::kFarReturn : InsnClass::kReturn;
      return;
    case ZYDIS_MNEMONIC_LOOP:
    case ZYDIS_MNEMONIC_LOOPE:
    case ZYDIS_MNEMONIC_LOOPNE:
      insn.op = InsnOp::kLoop;
      insn.cls = InsnClass::kCondJump;
      return;
    case ZYDIS_MNEMONIC_SYSCALL:
    case ZYDIS_MNEMONIC_SYSENTER:
      insn.op = InsnOp::kSyscall;
      insn.cls = InsnClass::kFarCall;
      return;
    case ZYDIS_MNEMONIC_INT:
    case ZYDIS_MNEMONIC_INT1:
    case ZYDIS_MNEMONIC_INT3:
    case ZYDIS_MNEMONIC_INTO:
      insn.op = InsnOp::kInt;
      insn.cls = InsnClass::kFarCall;
      return;
    case ZYDIS_MNEMONIC_VMCALL:
    case ZYDIS_MNEMONIC_VMMCALL:
      insn.op = InsnOp::kNone;
      insn.cls = InsnClass::kFarCall;
      return;
    case ZYDIS_MNEMONIC_SYSRET:
    case ZYDIS_MNEMONIC_SYSEXIT:
      insn.op = InsnOp::kSysret;
      insn.cls = InsnClass::kFarReturn;
      return;
    case ZYDIS_MNEMONIC_IRET:
    case ZYDIS_MNEMONIC_IRETD:
    case ZYDIS_MNEMONIC_IRETQ:
    case ZYDIS_MNEMONIC_UIRET:
      insn.op = InsnOp::kIret;
      insn.cls = InsnClass::kFarReturn;
      return;
    case ZYDIS_MNEMONIC_VMLAUNCH:
    case ZYDIS_MNEMONIC_VMRESUME:
      insn.op = InsnOp::kVmentry;
      insn.cls = InsnClass::kFarJump;
      return;
    default:
      break;
  }
  if (zi.meta.category == ZYDIS_CATEGORY_COND_BR) {
    insn.op = InsnOp::kJcc;
    insn.cls = relative ? InsnClass::kCondJump : InsnClass::kOther;
  }
}

}  // namespace

InsnDecoder::InsnDecoder() {
  ZydisDecoderInit(&d64_, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecoderInit(&d32_, ZYDIS_MACHINE_MODE_LONG_COMPAT_32, ZYDIS_STACK_WIDTH_32);
  ZydisDecoderInit(&d16_, ZYDIS_MACHINE_MODE_LONG_COMPAT_16, ZYDIS_STACK_WIDTH_16);
  for (ZydisDecoder* d : {&d64_, &d32_, &d16_})
    ZydisDecoderEnableMode(d, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
  ZydisDecoderInit(&full64_, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecoderInit(&full32_, ZYDIS_MACHINE_MODE_LONG_COMPAT_32, ZYDIS_STACK_WIDTH_32);
  ZydisDecoderInit(&full16_, ZYDIS_MACHINE_MODE_LONG_COMPAT_16, ZYDIS_STACK_WIDTH_16);
  ZydisFormatterInit(&att_, ZYDIS_FORMATTER_STYLE_ATT);
}

Insn InsnDecoder::decode(Bytes code, ExecMode mode) const {
  const ZydisDecoder* d = mode == ExecMode::k64 ? &d64_ : mode == ExecMode::k32 ? &d32_ : &d16_;
  Insn insn;
  ZydisDecodedInstruction zi;
  std::size_t n =
      code.size() < ZYDIS_MAX_INSTRUCTION_LENGTH ? code.size() : ZYDIS_MAX_INSTRUCTION_LENGTH;
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(d, nullptr, code.data(), n, &zi))) return insn;
  insn.length = zi.length;
  insn.cls = InsnClass::kOther;
  classify_branch(zi, insn);
  insn.is_ptwrite = zi.mnemonic == ZYDIS_MNEMONIC_PTWRITE;
  insn.is_tsx = zi.mnemonic == ZYDIS_MNEMONIC_XBEGIN || zi.mnemonic == ZYDIS_MNEMONIC_XEND ||
                zi.mnemonic == ZYDIS_MNEMONIC_XABORT;
  if (zi.mnemonic == ZYDIS_MNEMONIC_XBEGIN) insn.displacement = 0;
  return insn;
}

std::string InsnDecoder::disassemble(Bytes code, std::uint64_t ip, ExecMode mode) const {
  const ZydisDecoder* d = mode == ExecMode::k64   ? &full64_
                          : mode == ExecMode::k32 ? &full32_
                                                  : &full16_;
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  std::size_t n =
      code.size() < ZYDIS_MAX_INSTRUCTION_LENGTH ? code.size() : ZYDIS_MAX_INSTRUCTION_LENGTH;
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(d, code.data(), n, &zi, ops))) return {};
  char buf[256];
  if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&att_, &zi, ops, zi.operand_count_visible, buf,
                                                    sizeof buf, ip, nullptr)))
    return {};
  return buf;
}

}  // namespace perfkit::intelpt
