// A perf record -b recording made up for a real binary: LBR branch stacks
// with cycles, predictions and branch types, which this machine's PMU-less
// VM cannot record, so that perf itself is the oracle for what reads them
// (report --branch-history's counts and types, --total-cycles' blocks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perfkit::test {

struct LbrBranch {
  std::uint64_t from = 0, to = 0;  // offsets in the binary's text (its ELF addresses)
  std::uint16_t cycles = 0;
  std::uint8_t type = 0;  // PERF_BR_*: 1 COND, 4 CALL, 6 RET...
  bool predicted = false, mispred = false;
  bool in_tx = false, abort = false;  // (TSX transactions)
};

struct LbrSample {
  std::uint64_t ip = 0;             // an ELF address of the binary
  std::vector<LbrBranch> branches;  // newest first
};

// Writes `path`: one process running `binary` (a PIE mapped at
// 0x555555554000), its samples with branch stacks. Returns "" or an error.
std::string write_lbr_recording(const std::string& path, const std::string& binary,
                                const std::vector<LbrSample>& samples);

// Samples of `binary` (a host process) between samples of a guest's kernel
// and user space, as perf kvm record writes them. With `guest_kernel_mmap`
// the default guest's kernel map (perf kvm's "[guest.kernel.kallsyms]_text"
// MMAP at kGuestText) precedes them; without, no guest maps. With
// `in_hypervisor` the guest's samples are the host process's (pid 4242 and
// its thread 4243, its user samples in the binary's text), as perf kvm
// records a VM whose code the hypervisor process maps (--guest-code).
std::string write_guest_recording(const std::string& path, const std::string& binary,
                                  bool guest_kernel_mmap = false, bool in_hypervisor = false);
// The guest kernel's _text, where write_guest_recording's kernel samples
// fall: at +0x10, +0x150, +0x2a0, +0x1000 (past _etext) and in a module at
// kGuestModule + 0x20.
inline constexpr std::uint64_t kGuestText = 0xffffffff81000000ULL;
inline constexpr std::uint64_t kGuestModule = 0xffffffffc0002000ULL;

// A few hundred samples over cpuloop's spin, hot, warm, cool and run loops,
// with the branches cpuloop's code has at the ELF addresses `nm` gives
// (found in `binary`); empty when they cannot be found.
std::vector<LbrSample> cpuloop_lbr_samples(const std::string& binary);

}  // namespace perfkit::test
