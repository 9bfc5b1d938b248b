// Session: a recording read the way perf report reads it. It owns the
// Reader, the Machine (threads, maps, DSOs) and the Symbolizer; it applies
// side-band records in perf's delivery order (record_stream.h) and hands
// each sample, already resolved, to a SampleVisitor:
//
//   reader --ordered--> side-band records --> Machine
//                   \--> SAMPLE --decode--> thread, location, callchain
//                                            \--> SampleVisitor::on_sample
//
// report, script and the exporters are visitors; they never see raw bytes.
// A callchain is resolved into Frames: context markers (PERF_CONTEXT_KERNEL,
// _USER, ...) switch the cpumode of the frames after them, as perf does.
// Source lines and inlined frames are a later addition: Frame has room for
// them (`srcline`), filled by a resolver the DWARF module will provide.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "machine/machine.h"
#include "perfdata/reader.h"
#include "record/sample.h"
#include "symbol/symbolizer.h"

namespace perfkit::session {

struct Frame {
  std::uint64_t ip = 0;
  machine::Location loc;
  const char* srcline = nullptr;  // filled by a source-line resolver when there is one
  // A frame of a function inlined at `ip` (DWARF inline info, added by the
  // user-stack unwinder as perf does): its name; loc.symbol is the function
  // it was inlined into. nullptr for an ordinary frame.
  const char* inlined = nullptr;
};

struct ResolvedSample {
  std::size_t event = 0;  // index into reader().events()
  const record::Sample* sample = nullptr;
  std::uint8_t cpumode = 0;
  machine::Machine* machine = nullptr;  // the host's, or a guest's (GuestOptions)
  machine::Thread* thread = nullptr;
  const std::string* comm = nullptr;  // the thread's command when the sample was taken
  machine::Location loc;              // where the sample ip landed
  // The callchain after context markers are consumed, in the order asked for
  // (callee first by default), at most max_stack entries. Valid during the call.
  std::span<const Frame> callchain;
  // The frames of `callchain` the user-stack unwinder added, [begin, end):
  // after the recorded chain, or before it in caller order.
  std::size_t unwound_begin = 0, unwound_end = 0;
  // With SessionOptions::reuse_resolutions: an id shared by the samples
  // that resolved alike (the same loc and callchain) while
  // resolution_epoch stays; kNoResolution for a sample resolved alone.
  std::uint32_t resolution = UINT32_MAX;
  std::uint64_t resolution_epoch = 0;
};

inline constexpr std::uint32_t kNoResolution = UINT32_MAX;

// A sample before its addresses are resolved (SampleVisitor::take_raw).
struct RawSample {
  std::size_t event = 0;  // index into reader().events()
  const record::Sample* sample = nullptr;
  std::uint8_t cpumode = 0;
  machine::Thread* thread = nullptr;
  // record::callchain_digest of its chain when already made.
  record::ChainDigest chain_digest;
};

class SampleVisitor {
 public:
  virtual ~SampleVisitor() = default;
  virtual Status on_sample(const ResolvedSample& s) = 0;
  // Offered each sample before it is resolved: true when the visitor has
  // taken it as it is (a repeat it counts with one it has seen), and then
  // on_sample is not called for it.
  virtual bool take_raw(const RawSample&) { return false; }
  // Every record that is not a sample, in delivery order, before and after
  // the machine applies it (perf script prints EXIT before, the rest after).
  virtual Status before_record(const perfdata::ReadRecord&) { return ok(); }
  virtual Status after_record(const perfdata::ReadRecord&) { return ok(); }
  // True for a visitor that takes kernel locations with symbol
  // machine::kSymbolPending while the kernel's symbols load on another
  // thread, and resolves them itself later (the script printer does).
  virtual bool defers_kernel_symbols() const { return false; }
  // Every record, samples included, in delivery order, before the session
  // handles it (perf report -D prints each as it comes).
  virtual Status on_delivery(const perfdata::ReadRecord&) { return ok(); }
};

// Unwinds the user stack copy of a sample (REGS_USER + STACK_USER, perf
// record --call-graph dwarf) into frames, as perf's DWARF post-unwinder
// does. Implemented over the dwarf module (analysis/unwind_callchain.h).
class UserStackUnwinder {
 public:
  virtual ~UserStackUnwinder() = default;
  // Appends at most `max_stack` user frames of `s` (callee first, or caller
  // first when `caller_order`), resolved in `t`, with inlined frames.
  virtual void unwind(machine::Machine& m, machine::Thread& t, const record::Sample& s,
                      bool caller_order, int max_stack, std::vector<Frame>& out) = 0;
};

// perf script's guest options. Any of them turns perf's guest machines on
// (perf_guest): samples and side-band records of cpumode GUEST_KERNEL or
// GUEST_USER then go to a guest's machine instead of being dropped.
struct GuestOptions {
  std::string kallsyms;  // --guestkallsyms: the default guest's kernel symbols
  std::string vmlinux;   // --guestvmlinux: the same from its vmlinux
  std::string modules;   // --guestmodules (perf script reads no module maps from it)
  std::string mount;     // --guestmount: DIR/PID is the root of the guest PID
  bool code = false;     // --guest-code: guest code is in its hypervisor process
  bool enabled() const {
    return code || !kallsyms.empty() || !vmlinux.empty() || !modules.empty() || !mount.empty();
  }
};

struct SessionOptions {
  symbol::SymbolizerOptions symbols;
  GuestOptions guest;
  bool resolve_callchains = true;
  bool caller_order = false;  // callchain frames root first
  int max_stack = 127;
  // Samples are counted, not decoded: no thread is made for them (report
  // --tasks, whose table is what the side-band records make).
  bool skip_samples = false;
  // MMAP and MMAP2 records are not applied (report --tasks without --mmaps:
  // perf's table then holds no thread that only a map names).
  bool skip_maps = false;
  // Deliver records in file order rather than perf's time order.
  bool unordered = false;
  // Start reading the recorded kernel's symbols on a thread of their own as
  // the file opens (for sessions that resolve addresses; one that resolves
  // none would wait for the thread at its end).
  bool prefetch_kernel = true;
  // Read and order the file's records on a thread of its own while the
  // visitor takes them (perfdata::RecordStreamOptions::read_ahead): for
  // visitors that leave the reader as it is. The records, their order and
  // so the output are the same either way.
  bool read_ahead = false;
  // Samples that repeat one another (the same thread, maps, ip and raw
  // chain) are resolved once (ResolvedSample::resolution names them); for
  // visitors that take every sample resolved. Unwound user stacks, LBR
  // call stacks and guests' samples are resolved each time.
  bool reuse_resolutions = false;
  // Unwinds user stacks of samples that carry them; nullptr: none.
  std::shared_ptr<UserStackUnwinder> unwinder;
  // Called for problems that do not stop reading.
  std::function<void(const std::string&)> warn;
  // Called with (bytes done, bytes total) now and then, for a progress bar.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  // For "-": the stream's first bytes, already read (see ReaderOptions).
  std::vector<std::uint8_t> stream_prefix;
  // The file mapped once for sessions side by side (ReaderOptions::shared).
  std::shared_ptr<SharedMapping> shared_mapping;
  unsigned shared_slot = 0;
};

struct SessionStats {
  std::uint64_t total_lost_samples = 0;  // LOST_SAMPLES records
  std::uint64_t total_lost = 0;          // LOST records
  std::vector<std::uint64_t> nr_events;  // records per type (perf --stats)
  std::uint64_t nr_unknown_id = 0;
  // Samples of a guest whose machine could not be made (perf's
  // nr_unprocessable_samples: a --guestmount without the guest's directory).
  std::uint64_t nr_unprocessable_samples = 0;
};

// Records made while the recording is read, merged into it by time: Intel
// PT's synthesized samples, decoded as far as each record's time (perf's
// intel_pt_process_queues), without a file in between.
class RecordSource {
 public:
  // Takes one record: its bytes (valid during the call) and its event.
  using Deliver = std::function<Status(Bytes record, int event)>;
  virtual ~RecordSource() = default;
  // Delivers, in order, the records older than `time`: a recorded record's
  // time (perfdata::kNoTimestamp for one without, which delivers nothing).
  virtual Status deliver_before(std::uint64_t time, const Deliver& deliver) = 0;
  // After the last recorded record: delivers the records left, and the
  // source's own outcome (its errors).
  virtual Status finish(const Deliver& deliver) = 0;
};

class RepeatResolutions;

class Session {
 public:
  ~Session();
  // Opens `path` ("-" for stdin). Errors: the reader's (naming the file).
  static Expected<std::unique_ptr<Session>> open(const std::string& path, SessionOptions opts);

  // Reads every record and calls `visitor` for each sample. Errors: reader
  // errors, undecodable samples (with their offset), the visitor's errors.
  Status run(SampleVisitor& visitor);

  perfdata::Reader& reader() { return *reader_; }
  machine::Machine& machine() { return *machine_; }
  // Whether guest samples resolve in guest machines (GuestOptions::enabled).
  bool has_guests() const { return guests_on_; }
  // The guests' machines made so far (build-id entries of theirs, guest
  // records with GuestOptions), by pid.
  std::vector<machine::Machine*> guest_machines() const {
    std::vector<machine::Machine*> out;
    for (const auto& [pid, g] : guests_) out.push_back(g.machine.get());
    return out;
  }
  // The machine a side-band record applies to: the host's, or with guests
  // a guest's for one of a guest cpumode; nullptr where perf has none.
  machine::Machine* machine_of(const record::RecordView& r);
  symbol::Symbolizer& symbolizer() { return *symbolizer_; }
  const SessionStats& stats() const { return stats_; }
  // Callchain shape, settled once the recording is known (before run()).
  void set_callchains(bool resolve, bool caller_order, int max_stack) {
    opts_.resolve_callchains = resolve;
    opts_.caller_order = caller_order;
    opts_.max_stack = max_stack;
  }
  // Delivers records in file order (true) or perf's time order (false) from
  // now on.
  void set_unordered(bool unordered) { opts_.unordered = unordered; }
  // Gives samples recorded without a call chain the one `chain` returns (in
  // PERF_SAMPLE_CALLCHAIN's format), as perf's Intel PT add_callchain does:
  // those of the first `events` events (the recorded ones).
  using LateChainFn = std::function<std::span<const std::uint64_t>(const record::Sample&)>;
  void set_late_chains(LateChainFn chain, std::size_t events = SIZE_MAX) {
    late_chain_ = std::move(chain);
    late_chain_events_ = events;
  }
  // Merges `source`'s records into those run() reads (nullptr: none); the
  // session owns it.
  void set_record_source(std::unique_ptr<RecordSource> source) { source_ = std::move(source); }
  // Unwinds user stacks from now on (perf script and report with dwarf callchains).
  void set_unwinder(std::shared_ptr<UserStackUnwinder> u) { opts_.unwinder = std::move(u); }
  // The event's name: EVENT_DESC / EVENT_UPDATE name, else perf's default.
  std::string event_name(std::size_t event) const;

 private:
  Session() = default;
  void read_build_id_table();
  Status apply_build_id_record(const record::RecordView& r);
  Status on_record(const perfdata::ReadRecord& rec, SampleVisitor& v);
  Status on_sample(const perfdata::ReadRecord& rec, SampleVisitor& v);
  void resolve_callchain(const record::Sample& s, machine::Thread& t, bool defer_kernel);
  bool resolve_lbr_callchain(const record::Sample& s, machine::Thread& t, bool defer_kernel);
  bool add_frame(std::uint64_t ip, std::uint8_t& cpumode);
  void resolve_frames(machine::Thread& t, bool defer_kernel);
  void unwind_user_stack(const record::Sample& s, machine::Thread& t);
  // perf's machines__find_for_cpumode: the machine a record or sample of
  // `cpumode` by process `pid` belongs to; nullptr where perf finds none
  // (a --guestmount without the guest's directory).
  machine::Machine* machine_for(std::uint8_t cpumode, std::int32_t pid);
  machine::Machine* findnew_guest(std::int32_t pid);
  // --guest-code: the guest's thread of process `pid`, with the maps of
  // that host process (perf's machine__findnew_guest_code); nullptr
  // without it.
  machine::Thread* guest_code_thread(machine::Machine& guest, std::int32_t pid);

  SessionOptions opts_;
  std::unique_ptr<perfdata::Reader> reader_;
  std::unique_ptr<symbol::Symbolizer> symbolizer_;
  std::unique_ptr<machine::Machine> machine_;
  machine::Machine* cur_ = nullptr;  // the machine of the sample being resolved
  bool guests_on_ = false;           // opts_.guest.enabled()
  struct Guest {
    std::unique_ptr<symbol::Symbolizer> symbolizer;
    std::unique_ptr<machine::Machine> machine;
  };
  std::map<std::int32_t, Guest> guests_;      // by pid (0: perf's default guest)
  std::set<std::string> unreachable_guests_;  // --guestmount directories reported
  SessionStats stats_;
  record::Sample sample_;
  std::vector<Frame> frames_;
  LateChainFn late_chain_;
  std::size_t late_chain_events_ = SIZE_MAX;
  std::unique_ptr<RecordSource> source_;
  std::vector<Frame> unwound_;
  std::unique_ptr<RepeatResolutions> repeats_;  // reuse_resolutions
};

}  // namespace perfkit::session
