// The build-id cache perf keeps (~/.debug or $PERF_BUILDID_DIR): each
// binary copied to DIR/PATH/BUILDID/elf, found by DIR/.build-id/xx/rest, a
// link to that directory. perfkit buildid-cache edits it, perfkit archive
// packs the parts a recording needs (buildid/archive.h), and the Symbolizer
// reads it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "elf/build_id.h"

namespace perfkit::symbol {

class BuildIdCache {
 public:
  explicit BuildIdCache(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }

  // Copies the ELF file `path` into the cache under its build-id (nothing
  // to do when it is there). Errors: unreadable file, no build-id, I/O.
  Status add(const std::string& path);
  // Adds `bytes` as the object `name` (e.g. "[vdso]") with `id`, as file `leaf`.
  Status add_bytes(const std::string& name, const elf::BuildId& id, std::string_view bytes,
                   const std::string& leaf = "elf");
  // Removes the cached copy matching the file's current build-id.
  Status remove(const std::string& path);
  // Removes every cached build-id of `path`.
  Status purge(const std::string& path);
  // (build-id, original name) of every valid entry, sorted by build-id.
  std::vector<std::pair<std::string, std::string>> list() const;
  // Copies kallsyms and modules of the running kernel (from `proc_dir`) to
  // DIR/[kernel.kcore]/ID/TIMESTAMP/, as perf's --kcore does for the text.
  Status add_kcore(const std::string& proc_dir);

 private:
  std::string dir_;
};

}  // namespace perfkit::symbol
