// DsoHits: which mapped files got samples, learned while the records stream
// by (so the recording never has to be read back, unlike perf's post-pass).
// It keeps each process's maps from MMAP/MMAP2 (the kernel's and modules'
// apart), follows FORK (a new process shares its parent's maps until it execs)
// and COMM exec (which drops the old image's maps), and resolves every
// SAMPLE's ip in the maps of its pid and cpumode. Samples that cannot be
// resolved yet (their MMAP sits in another cpu's buffer, later in the pass) are
// retried at the end of the pass and once more at the end.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/bytes.h"

namespace perfkit::capture {

struct HitDso {
  std::string filename;  // as in the map record ("[kernel.kallsyms]" for the kernel)
  bool kernel = false;   // the kernel or a module
  bool hit = false;      // a sample's ip fell in it
};

class DsoHits {
 public:
  // `sample_ip_offset`: byte offset of IP in a SAMPLE (8, or 16 after IDENTIFIER).
  explicit DsoHits(std::size_t sample_ip_offset) : ip_offset_(sample_ip_offset) {}

  // Feeds one record (header included).
  void on_record(Bytes rec);
  // Retries the samples not resolved during the pass.
  void end_pass();
  // Every DSO seen, in the order of its first map record (the kernel first
  // when it is mapped first, as perf's synthesis does).
  const std::vector<HitDso>& dsos() const { return dsos_; }
  std::uint64_t unresolved() const { return pending_.size(); }
  // A new output file (--switch-output): no DSO hit yet, the maps kept.
  void clear_hits() {
    for (auto& d : dsos_) d.hit = false;
    pending_.clear();
  }

 private:
  struct Map {
    std::uint64_t end = 0;
    std::uint32_t dso = 0;
  };
  using Maps = std::map<std::uint64_t, Map>;  // by start address
  struct Pending {
    std::int32_t pid;
    bool kernel;
    std::uint64_t ip;
  };

  std::uint32_t dso_index(std::string_view filename, bool kernel);
  void add_map(std::int32_t pid, bool kernel, std::uint64_t start, std::uint64_t len,
               std::string_view filename);
  bool resolve(std::int32_t pid, bool kernel, std::uint64_t ip);
  const Map* find(const Maps& maps, std::uint64_t ip) const;

  std::size_t ip_offset_;
  std::vector<HitDso> dsos_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
  Maps kernel_maps_;
  std::unordered_map<std::int32_t, Maps> user_maps_;
  std::unordered_map<std::int32_t, std::int32_t> parent_;  // new process -> parent, until exec
  std::vector<Pending> pending_;
};

}  // namespace perfkit::capture
