// perf inject --jit: JIT runtimes (Java agents, Node --perf-prof, .NET,
// LuaJIT ...) write jit-PID.dump files in perf's jitdump format and map them
// executable, so that the recording names them. For each such map of its
// own process, every function the dump loads becomes an ELF image
// (DIR/jitted-PID-INDEX.so beside the dump, elf/jit_elf.h) and an MMAP2
// record of it at the run-time address, time and thread of the load (a code
// move maps the same image at the new address); these records take the
// dump's map record's place, all at once, as perf writes them. After that,
// the process's anonymous maps (//anon, [anon:, /memfd:) are left out, as
// the images cover its JIT code. The dump's DEBUG_INFO lines go into the next
// loaded image's DWARF; UNWINDING_INFO is read over (no .eh_frame is made).
//
// The dump's times must be the recording's: CLOCK_MONOTONIC for every event
// (perf record -k mono), or TSC values (the dump's arch-timestamp flag)
// converted by the recording's TIME_CONV.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "elf/build_id.h"
#include "perfdata/reader.h"

namespace perfkit::inject {

class JitInjector {
 public:
  explicit JitInjector(const perfdata::Reader& in) : in_(in) {}

  enum class Action { kWrite, kDrop, kReplace };
  // What becomes of an MMAP or MMAP2 record: kReplace puts the records to
  // write instead into `out` (in the output's byte order, `swap_out`).
  // Errors: perf's, for a dump whose times are not the recording's; a dump
  // that cannot be read or is not a jitdump; an image that cannot be written.
  Expected<Action> map(const record::RecordView& v, bool swap_out, std::vector<std::uint8_t>& out);
  // A TIME_CONV record of the input: how TSC values become perf times.
  void time_conv(const record::RecordView& v);
  // The images made, by path, with their build-ids, in order.
  const std::vector<std::pair<std::string, elf::BuildId>>& images() const { return images_; }

 private:
  Status inject_dump(const std::string& path, bool swap_out, std::vector<std::uint8_t>& out);
  std::uint64_t perf_time(std::uint64_t stamp) const;

  const perfdata::Reader& in_;
  std::set<std::uint32_t> pids_;  // processes whose dump was injected
  std::vector<std::pair<std::string, elf::BuildId>> images_;
  bool arch_time_ = false;
  std::uint64_t time_shift_ = 0, time_mult_ = 0, time_zero_ = 0;
};

}  // namespace perfkit::inject
