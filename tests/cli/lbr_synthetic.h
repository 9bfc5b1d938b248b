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
// and user space, as perf kvm record writes them; no guest maps.
std::string write_guest_recording(const std::string& path, const std::string& binary);

// A few hundred samples over cpuloop's spin, hot, warm, cool and run loops,
// with the branches cpuloop's code has at the ELF addresses `nm` gives
// (found in `binary`); empty when they cannot be found.
std::vector<LbrSample> cpuloop_lbr_samples(const std::string& binary);

}  // namespace perfkit::test
