// Symbolizer: finds and loads the symbols of each DSO once, lazily, keyed
// by build-id (or by path when the recording has none), the way perf report
// looks for them:
//   user DSOs: the .gnu_debuglink file, the build-id cache (BUILDID_DIR/
//   .build-id/xx/rest/{elf,debug}), /usr/lib/debug/.build-id/xx/rest.debug,
//   the file itself under --symfs, then debuginfod when DEBUGINFOD_URLS is
//   set. A file whose build-id differs from the recording's is refused.
//   The symbols come from the first candidate with .symtab (else its
//   .gnu_debugdata), adjusted by the first runtime candidate's segments.
//   kernel: --kallsyms FILE, -k vmlinux, /proc/kallsyms when the recording's
//   kernel build-id is the running one's, else BUILDID_DIR/[kernel.kallsyms]/
//   ID/kallsyms.
//   JIT regions: /tmp/perf-PID.map text files.
// Each DSO whose symbols cannot be had is reported once through `warn`:
// "PATH with build id ID not found, continuing without symbols".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/error.h"
#include "elf/build_id.h"
#include "symbol/debuginfod.h"
#include "symbol/kallsyms.h"
#include "symbol/symbol_table.h"

namespace perfkit::symbol {

class KallsymsShare;
class DsoShare;

struct SymbolizerOptions {
  std::string symfs;        // --symfs: prefix for every file looked up
  std::string buildid_dir;  // the build-id cache; empty: none
  std::string vmlinux;      // -k
  std::string kallsyms;     // --kallsyms
  std::string debug_dir = "/usr/lib/debug";
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
  bool demangle = true;
  bool demangle_kernel = false;
  bool debuginfod = false;  // DEBUGINFOD_URLS is set
  // A guest's kernel (perf script --guestkallsyms, --guestvmlinux): read
  // from `kallsyms` or `vmlinux` only, never the running kernel's or the
  // build-id cache's; none, silently, without them.
  bool guest_kernel = false;
  std::function<void(const std::string&)> warn;
  // Kernel symbols read once for several Symbolizers (sessions read side by
  // side, as perfkit diff's); null: each reads its own.
  std::shared_ptr<KallsymsShare> kallsyms_share;
  // The same for user DSOs' symbols, among Symbolizers of equal options.
  std::shared_ptr<DsoShare> dso_share;
};

// kallsyms files read once for every Symbolizer given this object: the
// first to ask for a path reads it (on a thread of its own), the others
// wait for the same result. Thread-safe; the tables are immutable.
class KallsymsShare {
 public:
  using Result = std::shared_ptr<const KallsymsInfo>;  // null: not readable
  // The load of what `key` names, by `read` (on a thread of its own).
  std::shared_future<Result> get(const std::string& key,
                                 std::function<Expected<KallsymsInfo>()> read);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_future<Result>> loads_;
};

// Options from the environment: $PERF_BUILDID_DIR or $HOME/.debug for the
// cache, $DEBUGINFOD_URLS for debuginfod.
SymbolizerOptions symbolizer_options_from_env();

// The build-id cache directory of a user DSO: BUILDID_DIR/PATH/ID.
std::string buildid_cache_dir(const std::string& buildid_dir, std::string_view path,
                              const elf::BuildId& id);
// BUILDID_DIR/.build-id/xx/rest (a link to the directory above).
std::string buildid_link_path(const std::string& buildid_dir, const elf::BuildId& id);
// The DSO's file in the cache, through that link: "vdso" for [vdso],
// "kallsyms" for the kernel, "elf" for everything else (perf's names).
std::string buildid_cache_file(const std::string& buildid_dir, std::string_view path,
                               const elf::BuildId& id);

// Symbols of one DSO plus where they came from.
struct LoadedSymbols {
  std::shared_ptr<const SymbolTable> table;  // never null; empty when not found
  std::string file;                          // the file read, "" when none
  bool found = false;
  // Where the symbols came from, as perf's dso__symtab_origin letters it
  // (report -v): 'k' kallsyms, 'v' vmlinux, 'j' a JIT map, 'l' a
  // .gnu_debuglink file, 'B' the build-id cache's copy, 'D' its debug file,
  // 'f' DEBUGDIR/PATH.debug, 'u' DEBUGDIR/PATH, 'b' DEBUGDIR/.build-id's,
  // 'd' the recorded path itself, '!' none.
  char origin = '!';
  // The recorded path is a file but no ELF object (a data file perf record
  // -d mapped: a locale, a cache): nothing is missing, nothing is warned.
  bool not_object = false;
  // A vmlinux's .text, [text_start, text_end): perf remaps the kernel's
  // map to it when it reads the kernel from a vmlinux (0, 0: no vmlinux).
  std::uint64_t text_start = 0, text_end = 0;
};

// User DSOs' symbols loaded once for several Symbolizers of equal options:
// the first to ask for a DSO loads it (on its own thread), the others wait
// for its result. Thread-safe; the tables are immutable.
class DsoShare {
 public:
  LoadedSymbols get(const std::string& key, const std::function<LoadedSymbols()>& load);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_future<LoadedSymbols>, std::less<>> loads_;
};

class Symbolizer {
 public:
  explicit Symbolizer(SymbolizerOptions opts);
  const SymbolizerOptions& options() const { return opts_; }

  // A user-space ELF DSO recorded as `path` with `id` (may be empty).
  const LoadedSymbols& user_dso(std::string_view path, const elf::BuildId& id);
  // The kernel. `ref_reloc_addr` is where the recording saw _text (the
  // kernel map's pgoff), 0 if unknown; kallsyms symbols move by the
  // difference to the file's _text.
  const LoadedSymbols& kernel(const elf::BuildId& id, std::uint64_t ref_reloc_addr);
  // Starts reading the kernel's kallsyms on another thread (the kernel
  // takes tens of milliseconds to print /proc/kallsyms); kernel() takes the
  // result. For recordings known to have kernel samples.
  void prefetch_kernel(const elf::BuildId& id);
  // Whether a prefetch is still reading: kernel() would wait for it.
  bool kernel_loading() const;
  // Whether prefetch_kernel started (or joined) a load.
  bool kernel_prefetched() const { return !prefetched_.empty() || !shared_.empty(); }
  // A perf-PID.map file of JIT symbols (absolute addresses).
  const LoadedSymbols& jit_map(const std::string& path);

 private:
  LoadedSymbols load_user(std::string_view path, const elf::BuildId& id);
  LoadedSymbols load_kernel(const elf::BuildId& id, std::uint64_t ref_reloc_addr);
  // What a kernel's kallsyms load is known by: --kallsyms, else its build-id
  // (which file to read is decided where it is read).
  std::string kallsyms_key(const elf::BuildId& id) const;
  // The load of `id`'s kallsyms symbols, for a share's thread.
  std::function<Expected<KallsymsInfo>()> kallsyms_loader(const elf::BuildId& id) const;
  void warn_missing(std::string_view path, const elf::BuildId& id);

  SymbolizerOptions opts_;
  bool symfs_given_ = false;  // --symfs was given (even "/", which opts_ then drops)
  std::map<std::string, LoadedSymbols, std::less<>> cache_;
  struct Prefetch {
    std::future<Expected<KallsymsInfo>> result;
    std::shared_ptr<std::atomic<bool>> done;  // set by the loading thread
  };
  std::map<std::string, Prefetch> prefetched_;  // by kallsyms_key()
  // With a KallsymsShare: its loads this Symbolizer started or joined.
  std::map<std::string, std::shared_future<KallsymsShare::Result>> shared_;
  Debuginfod debuginfod_;
};

}  // namespace perfkit::symbol
