#include "abi/registers.h"

#include <array>

namespace perfkit::abi {

namespace {

constexpr std::array<std::string_view, 24> kX86Regs = {
    "AX", "BX", "CX", "DX", "SI", "DI", "BP",  "SP",  "IP",  "FLAGS", "CS",  "SS",
    "DS", "ES", "FS", "GS", "R8", "R9", "R10", "R11", "R12", "R13",   "R14", "R15"};
constexpr std::array<std::string_view, 16> kXmmRegs = {
    "XMM0", "XMM1", "XMM2",  "XMM3",  "XMM4",  "XMM5",  "XMM6",  "XMM7",
    "XMM8", "XMM9", "XMM10", "XMM11", "XMM12", "XMM13", "XMM14", "XMM15"};
constexpr std::array<std::string_view, 16> kArmRegs = {"r0", "r1", "r2", "r3", "r4",  "r5",
                                                       "r6", "r7", "r8", "r9", "r10", "fp",
                                                       "ip", "sp", "lr", "pc"};
constexpr std::array<std::string_view, 33> kArm64Regs = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10",
    "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",
    "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "lr",  "sp",  "pc"};
constexpr std::array<std::string_view, 32> kRiscvRegs = {
    "pc", "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "s0", "s1", "a0",
    "a1", "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5",
    "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};

}  // namespace

std::string normalize_arch(std::string_view m) {
  if (m == "x86_64" || m == "i386" || m == "i486" || m == "i586" || m == "i686") return "x86";
  if (m == "aarch64" || m == "arm64") return "arm64";
  if (m.starts_with("arm")) return "arm";
  if (m.starts_with("sparc")) return "sparc";
  if (m.starts_with("s390")) return "s390";
  if (m.starts_with("parisc")) return "parisc";
  if (m.starts_with("powerpc") || m.starts_with("ppc")) return "powerpc";
  if (m.starts_with("mips")) return "mips";
  if (m.starts_with("sh")) return "sh";
  if (m.starts_with("loongarch")) return "loongarch";
  if (m.starts_with("riscv")) return "riscv";
  return std::string(m);
}

std::string_view register_name(std::string_view arch, unsigned reg) {
  std::string_view name;
  if (arch == "x86") {
    if (reg < kX86Regs.size())
      name = kX86Regs[reg];
    else if (reg >= 32 && reg < 64)  // each XMM register takes two ids
      name = kXmmRegs[(reg - 32) / 2];
  } else if (arch == "arm") {
    if (reg < kArmRegs.size()) name = kArmRegs[reg];
  } else if (arch == "arm64") {
    if (reg < kArm64Regs.size())
      name = kArm64Regs[reg];
    else if (reg == 46)
      name = "vg";
  } else if (arch == "riscv") {
    if (reg < kRiscvRegs.size()) name = kRiscvRegs[reg];
  }
  return name.empty() ? std::string_view("unknown") : name;
}

}  // namespace perfkit::abi
