// Machine -> Process -> Thread: the state perf report rebuilds from the
// side-band records, applied in time order (perf's delivery order), so a
// sample resolves against the maps that existed when it was taken.
//
//   COMM (COMM_EXEC), FORK, EXIT       threads, their commands, process maps
//   MMAP, MMAP2                        user maps (anon, [heap], [stack],
//                                      [vdso], JIT regions -> /tmp/perf-PID.map)
//                                      and kernel maps ([kernel.kallsyms], modules)
//   KSYMBOL                            BPF programs and other kernel text
//   NAMESPACES, BPF_EVENT, TEXT_POKE   accepted; nothing perf report shows depends on them
//
// DSOs are registered once by name (long name), carry the build-id of the
// recording's HEADER_BUILD_ID table (or of an MMAP2 with a build-id), and
// load their symbols lazily through the Symbolizer the first time an
// address inside them is resolved.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "elf/build_id.h"
#include "record/records.h"
#include "symbol/symbolizer.h"

namespace perfkit::machine {

enum class DsoKind : std::uint8_t {
  kUser,    // an ELF file
  kKernel,  // [kernel.kallsyms]
  kModule,  // a kernel module
  kVdso,    // [vdso], [vsyscall]
  kJitMap,  // /tmp/perf-PID.map
  kNoDso,   // //anon, [heap], [stack], /SYSV...: no symbols
  kKsym,    // KSYMBOL (BPF programs): one symbol spanning the map
};

struct Dso {
  std::uint32_t index = 0;  // registration order (perf's dsos list order)
  std::string long_name;
  std::string short_name;  // what the Shared Object column shows
  DsoKind kind = DsoKind::kUser;
  elf::BuildId build_id;
  bool header_build_id = false;  // from HEADER_BUILD_ID
  bool hit = false;              // a sample ip resolved into it
  bool loaded = false;
  char origin = '!';  // where its symbols came from (symbol::LoadedSymbols::origin)
  const symbol::SymbolTable* symbols = nullptr;  // after load
  std::shared_ptr<const symbol::SymbolTable> owned;
  std::uint64_t kernel_ref_reloc = 0;  // the kernel map's pgoff (_text address)
  std::uint64_t ino = 0;               // the first MMAP2 inode seen for it (perf's dso id)
};

struct Map {
  std::uint64_t start = 0, end = 0, pgoff = 0;
  Dso* dso = nullptr;
  bool identity = false;  // anon and no-dso memory: addresses are not file offsets
  // As recorded (report --mmaps prints them): PROT_* and MAP_* bits (an
  // MMAP record's: PROT_EXEC unless a data map) and the file's inode.
  std::uint32_t prot = 0, flags = 0;
  std::uint64_t ino = 0;
  // The rest of perf's dso id (an MMAP2's device and inode generation; where
  // the record has a build-id, its bytes, as perf reads the union).
  std::uint32_t maj = 0, min = 0;
  std::uint64_t ino_generation = 0;
  std::uint64_t map_ip(std::uint64_t ip) const { return identity ? ip : ip - start + pgoff; }
  std::uint64_t unmap_ip(std::uint64_t rip) const { return identity ? rip : rip + start - pgoff; }
};

// A map as its MMAP record made it, when the machine keeps its maps'
// history (Machine::keep_history).
struct MapEvent {
  Map map;
  std::uint64_t time = 0;             // the record's perf time (0: none)
  const std::string* name = nullptr;  // the file name recorded (interned)
};

// Maps sorted by start; a new map cuts what it overlaps, as perf's
// maps__fixup_overlappings does.
class MapSet {
 public:
  void insert(const Map& m);
  const Map* find(std::uint64_t addr) const;
  const std::vector<Map>& maps() const { return maps_; }
  std::vector<Map>& mutable_maps() { return maps_; }
  // The time-versioned view: every map an MMAP made in this address space,
  // in the order applied, with its time (a process forked from another
  // starts with its parent's). What covered an address at time T is the
  // last of them that covers it and is not later than T: a trace decoded
  // after the fact (Intel PT) sees the code of its own moment.
  const std::vector<MapEvent>& history() const { return history_; }
  void remember(const MapEvent& e) { history_.push_back(e); }

 private:
  std::vector<Map> maps_;
  std::vector<MapEvent> history_;
};

struct Thread {
  std::int32_t pid = -1, tid = -1, ppid = -1;
  const std::string* comm = nullptr;  // interned; ":TID" until a COMM
  bool comm_set = false;
  bool exited = false;
  std::shared_ptr<MapSet> maps;  // shared by the threads of a process
  // The cgroup namespace of its latest NAMESPACES record (dev, inode; 0
  // without one): perf's cgroup_id key.
  std::uint64_t cgroup_ns_dev = 0, cgroup_ns_ino = 0;
};

inline constexpr char kLevelKernel = 'k', kLevelUser = '.', kLevelHyper = 'H';
inline constexpr char kLevelGuestKernel = 'g', kLevelGuestUser = 'u';
// Location::symbol of a kernel address resolved while the kernel's symbols
// were still loading (resolve's defer_kernel): resolve it again later.
inline constexpr int kSymbolPending = -2;

// Where an address landed.
struct Location {
  const Map* map = nullptr;  // nullptr: unmapped
  Dso* dso = nullptr;
  int symbol = -1;         // index into dso->symbols, -1 if none
  std::uint64_t addr = 0;  // map-relative (map_ip) when mapped, else the address
  char level = kLevelUser;
  bool kernel_maps = false;  // resolved through the kernel's maps
};

// perf's pid of the host machine; a guest's is its hypervisor process's
// (0: perf's default guest).
inline constexpr std::int32_t kHostMachine = -1;

class Machine {
 public:
  // The host, or with `guest_pid` a guest (perf's machines__findnew): its
  // kernel is "[guest.kernel.kallsyms]" (".PID" appended for a guest other
  // than the default one), its samples of cpumode GUEST_KERNEL and
  // GUEST_USER resolve at levels 'g' and 'u', and it has no kernel map
  // until a kernel MMAP gives one.
  explicit Machine(symbol::Symbolizer& symbolizer, std::int32_t guest_pid = kHostMachine);
  bool is_guest() const { return pid_ != kHostMachine; }
  // Whether `cpumode` resolves in this machine's kernel maps or a thread's
  // (perf's thread__find_map: a guest's modes in a guest only).
  bool kernel_mode(std::uint8_t cpumode) const;
  bool user_mode(std::uint8_t cpumode) const;
  std::int32_t pid() const { return pid_; }
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // The recording's build-id table entry (HEADER_BUILD_ID or a BUILD_ID record).
  void add_build_id(std::string_view filename, const elf::BuildId& id, bool kernel);
  // When the build-id table names the kernel (it had samples), starts
  // loading its symbols in the background.
  void prefetch_kernel_symbols();
  // Applies a side-band record (ignores types it does not track).
  // Errors: a record whose fixed fields run past its end.
  Status apply(const record::RecordView& r) { return apply(r, 0); }
  // The same for a record taken at perf time `time` (0: unknown), the time
  // its maps take in the history.
  Status apply(const record::RecordView& r, std::uint64_t time);
  // From now on every MMAP's map is also kept in its MapSet's history
  // (the kernel's in kernel_maps()'s), for decoders that need the maps of
  // an earlier time. Off by default: report and script need only the
  // current maps.
  void keep_history() { keep_history_ = true; }
  // Each process's maps (pid >= 0), once per address space, the threads
  // that left the table (a reused pid) first.
  std::vector<std::pair<std::int32_t, const MapSet*>> address_spaces() const;

  Thread& findnew_thread(std::int32_t pid, std::int32_t tid) {
    // (inline: every sample asks, most for a thread it asked for lately)
    if (Thread* last = recent_[static_cast<std::uint32_t>(tid) % recent_.size()];
        last && last->tid == tid && (pid == -1 || last->pid == pid))
      return *last;
    return findnew_thread_slow(pid, tid);
  }
  // The thread `tid` in the table; nullptr when there is none.
  Thread* find_thread(std::int32_t tid) {
    auto it = threads_.find(tid);
    return it == threads_.end() ? nullptr : it->second.get();
  }
  // The threads in the table (not those a FORK replaced), by tid.
  std::vector<const Thread*> threads() const;
  // Resolves `addr` seen in `cpumode` in `thread`'s address space; loads the
  // DSO's symbols on first use. Marks the DSO hit when `mark_hit`.
  // With `defer_kernel`, a kernel address does not wait for the kernel's
  // symbols while another thread loads them: it comes back with symbol
  // kSymbolPending (its map and dso as far as known). The caller asks for it
  // where kernel_symbols_pending() was true when the sample began, and
  // then gets pending locations for the whole sample even where the loading
  // ends meanwhile (the load refits the kernel's map: a frame resolved in
  // between would miss what the refit takes in, as init text).
  Location resolve(Thread& thread, std::uint8_t cpumode, std::uint64_t addr,
                   bool defer_kernel = false);
  // Whether the kernel's symbols are loading on another thread (resolving a
  // kernel address now would wait).
  bool kernel_symbols_pending() const {
    return kernel_dso_ && !kernel_dso_->loaded && symbolizer_.kernel_loading();
  }

  // Bumped by every change to maps or threads: what was resolved before
  // may resolve otherwise now.
  std::uint64_t generation() const { return generation_; }
  // The absolute addresses [lo, hi) that resolve() answers as it did with
  // `loc` (addr aside) while generation() stays: the span of loc's symbol,
  // cut at the next symbol and at the map's ends. Empty (lo == hi) for a
  // location without map or symbol, or whose symbol overlaps another.
  std::pair<std::uint64_t, std::uint64_t> same_symbol_span(const Location& loc) const;
  // The map `addr` falls in, without loading symbols (nullptr: none).
  const Map* find_map(Thread& thread, std::uint8_t cpumode, std::uint64_t addr);
  Dso& findnew_dso(std::string_view long_name, DsoKind kind);
  const std::deque<Dso>& dsos() const { return dsos_; }
  std::deque<Dso>& dsos() { return dsos_; }
  std::string_view symbol_name(const Location& loc) const;
  const MapSet& kernel_maps() const { return kernel_maps_; }
  const std::string* intern(std::string_view s);
  // perf overrides a thread's initial ":TID" command in place at its first
  // COMM, so what was recorded under ":TID" shows the later name: the name
  // an interned command has become.
  const std::string* canonical_comm(const std::string* c) const {
    auto it = renamed_.find(c);
    return it == renamed_.end() ? c : it->second;
  }
  // The path a CGROUP record gave cgroup `id` (the first one, as perf's
  // env keeps it); nullptr when none did.
  const std::string* cgroup_path(std::uint64_t id) const {
    auto it = cgroups_.find(id);
    return it == cgroups_.end() ? nullptr : it->second;
  }

 private:
  Status apply_mmap(const record::RecordView& r, std::uint64_t start, std::uint64_t len,
                    std::uint64_t pgoff, std::uint32_t pid, std::uint32_t tid,
                    std::string_view filename, std::uint32_t prot, std::uint32_t flags,
                    std::uint64_t ino, const elf::BuildId* bid, const Map* id = nullptr);
  void kernel_mmap(std::uint64_t start, std::uint64_t len, std::uint64_t pgoff,
                   std::string_view filename, const elf::BuildId* bid);
  void load(Dso& dso);
  void fit_kernel_map(const Dso& d, const symbol::SymbolTable& table);
  void add_host_kernel_map();
  void retire_thread(std::int32_t tid);
  Status apply_cgroup_info(const record::RecordView& r);
  void set_comm(Thread& t, std::string_view comm);
  Location resolve_uncached(const MapSet& maps, Location loc, std::uint64_t addr);

  symbol::Symbolizer& symbolizer_;
  std::int32_t pid_ = kHostMachine;
  std::string kernel_name_;  // perf's machine->mmap_name
  std::unordered_map<std::int32_t, std::unique_ptr<Thread>> threads_;
  // The threads last found, by tid (its low bits): samples of the cpus
  // take turns, each mostly of the thread before it on that cpu.
  std::array<Thread*, 8> recent_{};
  Thread& findnew_thread_slow(std::int32_t pid, std::int32_t tid);
  std::vector<std::unique_ptr<Thread>> retired_;
  std::deque<Dso> dsos_;
  std::unordered_map<std::string, Dso*> dso_by_name_;
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, const std::string*> interned_;
  std::unordered_map<const std::string*, const std::string*> renamed_;
  std::unordered_map<std::uint64_t, const std::string*> cgroups_;
  MapSet kernel_maps_;
  Dso* kernel_dso_ = nullptr;
  bool keep_history_ = false;
  std::uint64_t time_ = 0;  // of the record being applied
  // resolve()'s recent answers, direct-mapped by address space and address.
  // Any change to maps or threads starts a new generation, which voids them
  // all: a Location points into its MapSet.
  struct Resolved {
    const MapSet* maps = nullptr;
    std::uint64_t addr = 0;
    std::uint64_t generation = 0;
    Location loc;
  };
  std::vector<Resolved> resolved_;
  std::uint64_t generation_ = 1;
};

}  // namespace perfkit::machine
