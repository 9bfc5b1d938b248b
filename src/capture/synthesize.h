// Side-band for what existed before recording started, synthesized as perf
// does: the kernel's and its modules' maps (MMAP), each target process's COMM,
// FORK and executable MMAP2s from /proc (every process with -a), and perf's
// own records describing the session (THREAD_MAP, CPU_MAP, ID_INDEX,
// TIME_CONV, EVENT_UPDATE, FINISHED_INIT). Every synthesized kernel-type record
// ends in a zeroed sample_id trailer of `id_hdr_size` bytes, as perf's do.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"
#include "capture/ring_buffer.h"
#include "capture/system_paths.h"

namespace perfkit::capture {

// Where the recorder's records go (the session adapts it to the perf.data
// writer, with or without compression). `records` holds whole records.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Synthesized records and FINISHED_ROUND: written as they are.
  virtual Status write(Bytes records) = 0;
  // Data read from a ring buffer in one pass (a wrapped buffer gives two
  // slices; records may straddle them). -z compresses this, not the above.
  virtual Status write_ring(SplitBytes data) {
    PK_TRY(write(data.first));
    return data.second.empty() ? ok() : write(data.second);
  }
  // True once the output reached its size limit (--max-size): the recorder
  // then stops as it does for a signal.
  virtual bool full() const { return false; }
};

struct SynthOptions {
  std::uint32_t id_hdr_size = 0;  // trailer bytes of the first event's layout
  bool mmap_data = false;         // -d: also readable non-exec maps (MISC_MMAP_DATA)
  bool namespaces = false;        // --namespaces: NAMESPACES after each FORK
  bool task_mmaps = true;         // --synth without mmap: threads' COMMs alone
  // --buildid-mmap: MMAP2 records carry the file's build-id instead of
  // dev/inode. Returns the build-id bytes of a file, or nothing.
  std::function<std::optional<std::vector<std::uint8_t>>(const std::string&)> build_id;
  // With build_id set: the running kernel's build-id, so that the kernel map
  // becomes an MMAP2 carrying it (perf --buildid-mmap).
  std::function<std::optional<std::vector<std::uint8_t>>()> kernel_build_id;
};

class Synthesizer {
 public:
  Synthesizer(const SystemPaths& paths, SynthOptions opts, RecordSink& sink)
      : paths_(paths), opts_(std::move(opts)), sink_(sink) {}

  // MMAP "[kernel.kallsyms]_text" from _text (or _stext) to _etext, pid -1.
  // Errors: /proc/kallsyms unreadable or its addresses hidden (kptr_restrict).
  Status kernel_mmap();
  // One MMAP per module of /proc/modules (none on a kernel without modules).
  Status modules();
  // COMM of `pid` (its tgid and name from /proc/PID/status); returns the tgid.
  // Errors: the process is gone.
  Expected<pid_t> comm(pid_t pid);
  // The MMAP2s of a process's executable (and with -d readable) maps.
  Status mmaps(pid_t tgid, pid_t tid);
  // COMM (+ NAMESPACES) and, for a thread-group leader, its MMAP2s: perf's
  // synthesis for a -p/-t thread map (adding the leader when missing).
  Status thread_map_threads(const std::vector<pid_t>& tids);
  // FORK, COMM and MMAP2s of every process and thread in /proc (-a).
  Status all_threads();

  // NAMESPACES of a thread (perf's 7 namespace links).
  Status namespaces(pid_t pid, pid_t tgid);
  // CGROUP for every cgroup of the cgroup2 (or perf_event v1) hierarchy,
  // ids from name_to_handle_at, paths relative to the mount (--all-cgroups).
  Status cgroups();

  std::uint64_t records_written() const { return records_; }

 private:
  Status emit(std::vector<std::uint8_t> rec);
  Status full_thread_group(pid_t pid);

  const SystemPaths& paths_;
  SynthOptions opts_;
  RecordSink& sink_;
  std::uint64_t records_ = 0;
};

// A thread's identity from /proc/PID/task/TID/status.
struct ProcStatus {
  std::string name;  // comm, at most 15 characters
  pid_t tgid = -1;
  pid_t ppid = -1;
  bool kernel_thread = false;  // no VmPeak: no user address space
};
Expected<ProcStatus> read_proc_status(const SystemPaths& paths, pid_t pid, pid_t tid);

// Threads of a process from /proc/PID/task, in directory order. Errors: no
// such process.
Expected<std::vector<pid_t>> process_threads(const SystemPaths& paths, pid_t pid);
// The processes whose /proc/PID belongs to `uid` (perf's --uid target), in
// pid order.
std::vector<pid_t> processes_of_uid(const SystemPaths& paths, uid_t uid);
// perf's --uid USER: a user name, or a uid that names a user. Errors with
// perf's words: "Invalid User: X", "Problems obtaining information for user X".
Expected<uid_t> parse_user(const std::string& user);

// One parsed /proc/PID/maps line.
struct ProcMap {
  std::uint64_t start = 0, end = 0, pgoff = 0, ino = 0;
  std::uint32_t maj = 0, min = 0;
  std::uint32_t prot = 0;   // PROT_READ | PROT_WRITE | PROT_EXEC
  std::uint32_t flags = 0;  // MAP_PRIVATE or MAP_SHARED
  std::string filename;     // as the kernel prints it, "" for anonymous
};
// Parses "00400000-0040c000 r-xp 00000000 fd:01 41038   /bin/cat". False if malformed.
bool parse_proc_map_line(std::string_view line, ProcMap& out);

// perf's user records, built in the host byte order.
std::vector<std::uint8_t> thread_map_record(const std::vector<pid_t>& threads,
                                            const std::vector<std::string>& comms);
// CPU_MAP in perf's smallest encoding (a range, a u16 list, or a 32-bit mask).
// An entry of -1 means "any cpu" (per-thread recording).
std::vector<std::uint8_t> cpu_map_record(const std::vector<int>& cpus);
struct IdIndexEntry {
  std::uint64_t id = 0, idx = 0, cpu = 0, tid = 0;
};
std::vector<std::uint8_t> id_index_record(const std::vector<IdIndexEntry>& entries);
std::vector<std::uint8_t> time_conv_record(const TimeConversion& tc);
std::vector<std::uint8_t> event_update_name_record(std::uint64_t id, std::string_view name);
std::vector<std::uint8_t> event_update_unit_record(std::uint64_t id, std::string_view unit);
std::vector<std::uint8_t> event_update_scale_record(std::uint64_t id, double scale);
std::vector<std::uint8_t> header_only_record(std::uint32_t type);  // FINISHED_ROUND/_INIT

}  // namespace perfkit::capture
