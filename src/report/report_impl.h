// Internals of perfkit report shared by its aggregation (report.cc) and its
// printing (report_print.cc). Not a public API.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "abi/perf_event.h"
#include "base/flat_map.h"
#include "report/report.h"
#include "report/report_blocks.h"
#include "report/report_branch.h"
#include "report/report_callees.h"
#include "report/report_chain.h"
#include "report/report_history.h"
#include "report/report_mem.h"
#include "report/report_threads.h"
#include "session/tracepoint.h"

namespace perfkit::report {

// What identifies an entry: the fields of the active sort keys (others 0).
// 56 bytes: with the counters after it, one cache line of the entry.
struct EntryKey {
  const std::string* comm = nullptr;
  const std::string* dso = nullptr;  // interned short name; nullptr: no map
  std::uint64_t sym_start = 0;       // the address when there is no symbol
  std::uint64_t sym_end = 0;
  const char* inlined = nullptr;  // an inlined function's interned name (DWARF unwinding)
  std::int32_t tid = 0;
  std::uint32_t cpu = 0;
  bool has_sym = false;
  // The values of the less common keys (time, socket, parent, srcline,
  // srcfile, symoff), interned as one ExtKey; 0: none of them is a key.
  std::uint32_t ext = 0;
  bool operator==(const EntryKey&) const = default;
};
static_assert(sizeof(EntryKey) == 56);

// The values of the less common sort keys of an entry (unset ones left at
// their defaults). Interned per report: EntryKey::ext indexes them.
struct ExtKey {
  const std::string* srcline = nullptr;  // interned text, as perf's map__srcline
  const std::string* srcfile = nullptr;  // interned; "" when unknown
  const std::string* parent = nullptr;   // interned symbol name; nullptr: "[other]"
  const std::string* trace = nullptr;    // interned trace output; nullptr: not a tracepoint
  std::uint64_t time = 0;                // the sample time, in time-quantum bins
  std::uint64_t symoff_ip = 0;           // the entry's ip, for symoff
  std::int32_t socket = -1;
  std::uint32_t branch = UINT32_MAX;  // the branch's BranchTable::key; none outside branch mode
  std::uint32_t mem = UINT32_MAX;     // the sample's MemTable::key; none outside --mem-mode
  std::uint64_t weight = 0;           // the sample's weight (WEIGHT_STRUCT's var1)
  std::uint32_t ins_lat = 0;          // WEIGHT_STRUCT's var2 (perf's ins_lat)
  std::uint64_t addr = 0;             // the entry's ip unmapped (perf's addr key)
  std::uint64_t sym_size = 0, dso_size = 0;  // the symbol's and map's (0: none)
  std::uint64_t code_page_size = 0, transaction = 0;
  std::uint64_t cgroup = 0, cgroup_dev = 0, cgroup_ino = 0;
  bool has_sym = false, has_map = false;  // for sym_size and dso_size
  bool operator==(const ExtKey&) const = default;
};

struct ExtKeyHash {
  std::uint64_t operator()(const ExtKey& k) const {
    std::uint64_t h = mix64(reinterpret_cast<std::uintptr_t>(k.srcline) ^ k.time);
    h = mix64(h ^ reinterpret_cast<std::uintptr_t>(k.srcfile) ^ k.symoff_ip);
    h = mix64(h ^ reinterpret_cast<std::uintptr_t>(k.trace) ^ k.branch);
    h = mix64(h ^ k.weight ^ (static_cast<std::uint64_t>(k.mem) << 32 | k.ins_lat));
    h = mix64(h ^ k.addr ^ (k.sym_size << 20) ^ k.dso_size ^ k.code_page_size ^ k.transaction);
    h = mix64(h ^ k.cgroup ^ (k.cgroup_dev << 40) ^ k.cgroup_ino);
    return mix64(h ^ reinterpret_cast<std::uintptr_t>(k.parent) ^
                 static_cast<std::uint32_t>(k.socket));
  }
};

// One multiply per field and one finalizer (a lookup per chain frame of
// every sample: five finalizers were 6% of a default report).
struct EntryKeyHash {
  static std::uint64_t step(std::uint64_t h, std::uint64_t v) {
    return (std::rotl(h, 29) ^ v) * 0x9e3779b97f4a7c15ULL;
  }
  std::uint64_t operator()(const EntryKey& k) const {
    std::uint64_t h = step(reinterpret_cast<std::uintptr_t>(k.comm),
                           static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.tid)) << 32 |
                               static_cast<std::uint32_t>(k.cpu));
    h = step(h, reinterpret_cast<std::uintptr_t>(k.dso));
    h = step(h, k.sym_start);
    if (k.has_sym) h = step(h, k.sym_end ^ reinterpret_cast<std::uintptr_t>(k.inlined));
    if (k.ext) h = step(h, k.ext);
    return mix64(h);
  }
};

// Cache-line aligned: a lookup compares the key and bumps the counters in
// the entry's first line.
struct alignas(64) Entry {
  EntryKey key;
  std::uint32_t chain = UINT32_MAX;  // root in the arena
  std::uint32_t max_depth = 0;
  std::uint64_t period = 0, nr_events = 0;
  std::uint64_t acc_period = 0, acc_nr_events = 0;
  const std::string* comm = nullptr;        // for display even when comm is not a key
  const machine::Thread* thread = nullptr;  // its command at the end sizes the column
  std::int32_t tid = 0;
  std::uint32_t cpu = 0;
  const std::string* dso_name = nullptr;
  std::string_view sym_name;
  std::uint8_t sym_type = 0;
  bool inlined = false;  // sym_name is a function inlined there: printed with " (inlined)"
  std::uint64_t sym_start_abs = 0;  // unmapped symbol start (STT_OBJECT offsets)
  std::uint64_t ip = 0;
  // -v: the address perf keeps in the entry (its first sample's, DSO-
  // relative but in the kernel; a call-chain frame's as recorded) and the
  // DSO its symbols' origin is asked of.
  std::uint64_t shown_ip = 0;
  const machine::Dso* dso = nullptr;
  char level = '.';
  bool filtered = false;
  // perf formats a tracepoint entry's trace output when a comparison first
  // reaches the trace key; only then does the entry widen the column.
  bool trace_formatted = false;
  // perf knows the entry's source line before printing it: a callchain
  // frame brought it (the frame's inline records), or a duplicate check
  // compared the entry up to its srcline key. It then sizes the column.
  bool srcline_known = false;
  // Branch-stack mode: the entry's first branch (BranchTable::at).
  std::uint32_t branch = UINT32_MAX;
  // --mem-mode: the entry's first memory description (MemTable::at).
  std::uint32_t mem = UINT32_MAX;
  // With --group, the leader's entries carry each member's values in
  // Hists::group_values (Hists::group_period/group_acc).
  std::uint32_t group_row = UINT32_MAX;
  // The self period by the samples' cpumode: kernel, user, guest kernel,
  // guest user (perf's period_sys, period_us, period_guest_sys/us).
  std::uint64_t mode_period[4] = {};
  void add_mode_period(std::uint8_t cpumode, std::uint64_t period) {
    switch (cpumode) {
      case abi::kMiscKernel:
        mode_period[0] += period;
        break;
      case abi::kMiscUser:
        mode_period[1] += period;
        break;
      case abi::kMiscGuestKernel:
        mode_period[2] += period;
        break;
      case abi::kMiscGuestUser:
        mode_period[3] += period;
        break;
      default:
        break;
    }
  }
  void add_counts(const Entry& o) {
    period += o.period;
    nr_events += o.nr_events;
    acc_period += o.acc_period;
    acc_nr_events += o.acc_nr_events;
    for (int i = 0; i < 4; ++i) mode_period[i] += o.mode_period[i];
  }
};

// The entries of a histogram by key: an open-addressing set of indexes into
// the entries themselves (keys are not copied). Each 8-byte slot holds the
// high half of the key's hash beside the index, so that a probe reads an
// entry only when its hash matches.
class EntryIndex {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;
  template <class Entries>
  std::uint32_t find(const EntryKey& k, const Entries& entries) const {
    if (slots_.empty()) return kNone;
    std::uint32_t tag = tag_of(k);
    for (std::size_t i = tag & mask_;; i = (i + 1) & mask_) {
      std::uint64_t v = slots_[i];
      auto idx = static_cast<std::uint32_t>(v);
      if (idx == kNone) return kNone;
      if (static_cast<std::uint32_t>(v >> 32) == tag && entries[idx].key == k) return idx;
    }
  }
  // Adds entry `idx`, whose key is `k`.
  void insert(std::uint32_t idx, const EntryKey& k) {
    if ((size_ + 1) * 4 > slots_.size() * 3) {
      std::vector<std::uint64_t> old = std::move(slots_);
      slots_.assign(old.empty() ? 1024 : old.size() * 2, kEmpty);
      mask_ = slots_.size() - 1;
      for (std::uint64_t v : old)
        if (static_cast<std::uint32_t>(v) != kNone) place(v);
    }
    place(static_cast<std::uint64_t>(tag_of(k)) << 32 | idx);
    ++size_;
  }
  void clear() {
    slots_.clear();
    size_ = 0;
    mask_ = 0;
  }

 private:
  static constexpr std::uint64_t kEmpty = kNone;
  // The slot position comes from the tag too, so growing reads no entry.
  static std::uint32_t tag_of(const EntryKey& k) {
    return static_cast<std::uint32_t>(EntryKeyHash{}(k) >> 32);
  }
  void place(std::uint64_t slot) {
    std::size_t i = (slot >> 32) & mask_;
    while (static_cast<std::uint32_t>(slots_[i]) != kNone) i = (i + 1) & mask_;
    slots_[i] = slot;
  }
  std::vector<std::uint64_t> slots_;
  std::size_t size_ = 0, mask_ = 0;
};

// Entries in fixed chunks of 1024: stable addresses and no copies on growth
// like std::deque, without its rounding (which gives a 192-byte entry 256).
class EntryStore {
 public:
  static constexpr std::size_t kChunk = 1024;
  EntryStore() = default;
  EntryStore(EntryStore&&) = default;
  EntryStore& operator=(EntryStore&&) = default;
  EntryStore(const EntryStore& o) { *this = o; }
  EntryStore& operator=(const EntryStore& o) {
    if (this == &o) return *this;
    chunks_.clear();
    size_ = 0;
    for (const Entry& e : o) push_back(e);
    return *this;
  }
  Entry& operator[](std::size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  const Entry& operator[](std::size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Entry& back() { return (*this)[size_ - 1]; }
  void pop_back() {
    if (--size_ % kChunk == 0) chunks_.pop_back();
  }
  void push_back(const Entry& e) {
    if (size_ % kChunk == 0) chunks_.push_back(std::make_unique<Entry[]>(kChunk));
    (*this)[size_++] = e;
  }

  template <class Store, class Ref>
  class Iter {
   public:
    Iter(Store* s, std::size_t i) : s_(s), i_(i) {}
    Ref operator*() const { return (*s_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iter& o) const { return i_ != o.i_; }

   private:
    Store* s_;
    std::size_t i_;
  };
  Iter<EntryStore, Entry&> begin() { return {this, 0}; }
  Iter<EntryStore, Entry&> end() { return {this, size_}; }
  Iter<const EntryStore, const Entry&> begin() const { return {this, 0}; }
  Iter<const EntryStore, const Entry&> end() const { return {this, size_}; }

 private:
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  std::size_t size_ = 0;
};

// An entry as perf's input-tree comparison reads it, with the tree links.
struct LiveRow {
  std::uint32_t left = 0, right = 0, parent = 0;
  const std::string* comm = nullptr;
  const std::string* key_dso = nullptr;
  const std::string* dso_name = nullptr;
  std::uint32_t cpu = 0, idx = 0;
  std::int32_t tid = 0;
  bool has_sym = false, inlined = false, red = false;
  std::uint64_t ip = 0, sym_start = 0, sym_end = 0;
};

struct Hists {
  EntryStore entries;
  EntryIndex index;
  // perf's input tree, kept while entries are added once inline symbols
  // make its comparison inconsistent: an entry's search can then miss an
  // equal entry and add a second one, as perf's does.
  std::vector<LiveRow> live;
  std::uint32_t live_root = UINT32_MAX;
  bool live_on = false;
  // A search's answer stands until a rotation changes the tree's paths:
  // by the first entry of a key (index), what its last search found, and
  // the rotation count then.
  std::vector<std::uint32_t> live_found, live_seen;
  std::uint32_t live_rotations = 0;
  std::uint64_t nr_samples = 0, nr_non_filtered_samples = 0;
  std::uint64_t total_period = 0, total_non_filtered_period = 0;
  std::uint64_t callchain_period = 0, callchain_non_filtered_period = 0;
  std::vector<std::uint32_t> sorted;     // output order
  std::vector<std::uint32_t> collapsed;  // perf's collapse tree order (filtered included)
  // Event groups: the leader's block shows its members side by side.
  std::vector<std::size_t> members;  // for a leader: itself then its members
  // Per grouped entry (Entry::group_row): each member's period, then each
  // member's accumulated period, then each member's sample count, then
  // each member's Entry::mode_period[0..3] (index 0: the leader's own).
  static constexpr std::size_t kGroupSets = 7;
  std::vector<std::uint64_t> group_values;
  std::span<const std::uint64_t> group_period(const Entry& e) const { return group_set(e, 0); }
  std::span<const std::uint64_t> group_acc(const Entry& e) const { return group_set(e, 1); }
  std::span<const std::uint64_t> group_events(const Entry& e) const { return group_set(e, 2); }
  std::span<const std::uint64_t> group_mode(const Entry& e, int mode) const {
    return group_set(e, 3 + static_cast<std::size_t>(mode));
  }
  std::span<const std::uint64_t> group_set(const Entry& e, std::size_t set) const {
    const std::size_t nm = members.size();
    return {group_values.data() + std::size_t{e.group_row} * kGroupSets * nm + set * nm, nm};
  }
  bool group_member = false;  // a non-leader member: no block of its own
  bool group_leader = false;  // the leader of a group of 2 or more in the file
  std::string group_name;
};

// Appends `k` to `v` unless it is there already.
inline void add_once(std::vector<SortKey>& v, SortKey k) {
  for (SortKey o : v)
    if (o == k) return;
  v.push_back(k);
}

class ExtKeys;
class SampleFold;

class Report : public session::SampleVisitor {
 public:
  explicit Report(const ReportOptions& o);
  ~Report() override;
  Status on_sample(const session::ResolvedSample& s) override;
  Status after_record(const perfdata::ReadRecord& rec) override;  // -T's READ records
  bool take_raw(const session::RawSample& r) override;
  bool defers_kernel_symbols() const override { return fold_ != nullptr; }
  // Adds what the folded samples still hold to the histograms.
  // Adds the folded samples; unless `judge` is false, gives folding up
  // where it has not paid.
  Status drain_fold(bool judge = true);
  bool mixes_chain_kinds(const session::ResolvedSample& s);
  void line_frame(const session::Frame& f, ChainEntry& c);
  void settle(session::Session& session);
  void settle_from_events();
  void setup_groups();
  void merge_group(Hists& leader);
  // perf's collapse of entry `merged` into the equal entry `kept`: counts
  // and call graph added; `kept` keeps its callchain depth.
  void collapse_merge(Hists& h, std::uint32_t kept, std::uint32_t merged);
  void apply_comm_renames(Hists& h);
  bool settled_ = false;
  std::uint64_t folded_ = 0;  // samples a fold counted with an earlier one
  // per DSO index: 1 when a chain frame resolved in it, 2 when one did not
  std::vector<std::uint8_t> chain_kinds_;
  // The addresses of unresolved entries, which perf compares by their
  // difference as a signed 64-bit number: an order only while they lie
  // within half of the address circle (garbage frames of a -a -g recording
  // can span it). Past that, entries are found as perf's tree search finds
  // them (Hists::live).
  struct AddressArc {
    bool lo = false, hi = false;  // below or from 2^63
    std::uint64_t lo_min = 0, lo_max = 0, hi_min = 0, hi_max = 0;
    // Adds `ip`; whether the addresses no longer lie within half the circle.
    bool add(std::uint64_t ip);
  };
  AddressArc unresolved_ips_;
  bool ips_wrap_ = false;
  bool note_unresolved(const machine::Location& loc, std::uint64_t ip);
  bool sample_wraps_ips(const session::ResolvedSample& s);
  Status setup_status_ = ok();         // a bad parent regex or --time string
  IgnoreCallees ignore_;               // --ignore-callees
  ThreadCounters thread_counts_;       // -T
  session::EventSwitch evswitch_;      // --switch-on, --switch-off
  bool symbol_filter_ = false;         // --symbol-filter, where perf applies it
  bool socket_filter_ = false;         // --socket-filter, where perf applies it
  std::vector<std::int32_t> sockets_;  // by cpu, for --socket-filter
  bool socket_filtered(const session::ResolvedSample& s) const;
  bool no_callchains_for_g_ = false;
  bool no_callchains_for_parent_ = false;
  void finish();
  // Branch-stack mode (report_branch.h).
  bool branch_mode_ = false;
  BranchTable branches_;
  BranchTypeStat brtype_;  // branch mode's statistics, printed at the end
  // perf's mispredict, in_tx and abort columns: "N"/"Y", "T"/".", "A"/"."
  // of the entry's branch; perf's mispredict keeps (a static) the last
  // value it printed for a branch predicted and mispredicted neither.
  const char* flag_text(SortKey k, std::uint8_t flags) const;
  mutable const char* mispredict_out_ = "N/A";
  // --total-cycles (branch mode only): the blocks' cycles, the stack of
  // the sample at hand, whether the branch stacks are of ANY branch.
  bool total_cycles_ = false, any_branch_ = false;
  CycleBlocks blocks_;
  std::vector<CycleBlocks::Branch> block_stack_;
  void print_blocks(Hists& h, FdWriter& out);
  bool mem_mode_ = false;
  MemTable mems_;
  // --branch-history; with branch stacks in the samples its frames count
  // their branches (perf's show_branchflag_count).
  bool branch_history_ = false, branch_counts_ = false, has_br_ = false;
  // Call-graph frames told apart by address and named with their source
  // lines: -g address, and --branch-history (perf's CCKEY_ADDRESS).
  bool address_keys_ = false;
  // -g srcline: frames told apart by their source lines (perf's
  // CCKEY_SRCLINE), as functions where either has none.
  bool line_keys_ = false;
  BranchHistory history_;
  Status settle_mem_mode();
  Status verbose_refusal() const;
  Status settle_branch_mode(session::Session& session);
  void add_branches(Hists& h, const session::ResolvedSample& s);
  // A symbol key without a DSO key: perf compares resolved and unresolved
  // symbols by DSO name first, unresolved ones among themselves by address,
  // which is not a consistent order.
  // perf's mispredict, in_tx and abort compare 0 or 1: no order, its trees
  // are simulated.
  bool flag_keys() const {
    return has_key_[static_cast<int>(SortKey::kMispredict)] ||
           has_key_[static_cast<int>(SortKey::kInTx)] ||
           has_key_[static_cast<int>(SortKey::kAbort)];
  }
  bool sym_without_dso() const {
    return (has_key_[static_cast<int>(SortKey::kSym)] ||
            has_key_[static_cast<int>(SortKey::kSymoff)] ||
            has_key_[static_cast<int>(SortKey::kIpcLbr)] ||
            has_key_[static_cast<int>(SortKey::kIpcNull)]) &&
           !has_key_[static_cast<int>(SortKey::kDso)];
  }
  void print(session::Session& session, FdWriter& out);
  void print_elided(FdWriter& out) const;
  std::string event_label(session::Session& session, std::size_t i);
  std::unique_ptr<session::TracepointFormatter> tp_names_;
  bool tp_names_tried_ = false;
  bool elided(SortKey k) const;
  bool single_filter(SortKey k) const;
  std::vector<SortKey> output_sort_;  // the sort keys perf's output sort compares

  ReportOptions opts_;
  std::vector<session::TimeRange> time_ranges_;
  // The values of the time, socket, parent, srcline, srcfile and symoff keys.
  std::unique_ptr<ExtKeys> ext_;
  // Whether entry `e` had its source line computed by perf before its
  // column was sized (perf computes it when a comparison reaches it).
  bool srcline_sized(const Hists& h, const Entry& e) const;
  std::uint64_t prefix_signature(const Entry& e) const;
  mutable const Hists* sized_for_ = nullptr;
  mutable std::unordered_map<std::uint64_t, std::uint32_t> prefix_counts_;
  bool children_ = false;
  bool use_callchain_ = false;
  // The sort keys as given (hpp columns included), the columns in order,
  // and perf's output sort list (report.cc: settle_columns).
  std::vector<SortKey> sort_keys_, columns_, sort_list_;
  void settle_columns();
  bool acc_sorted_ = false;   // the output sort compares accumulated periods
  bool need_chains_ = false;  // the session resolves callchains
  bool has_key_[64] = {};
  std::vector<Hists> hists_;
  ChainArena arena_;
  session::Session* session_ = nullptr;

 private:
  // Whether a symbol key is among the sort keys (perf's se_cmp of sym).
  bool sorts_by_symbol() const;
  bool perf_duplicate(Hists& h, const session::ResolvedSample& s, const machine::Location& loc,
                      char level, const EntryKey& key);
  // The entry of `key` as perf's tree search finds it (Hists::live), new
  // ones made from the sample and `loc`.
  std::uint32_t live_entry(Hists& h, const EntryKey& key, const session::ResolvedSample& s,
                           const machine::Location& loc, char level, bool filtered);
  // Adds `period` to the entry of `key`, made from the sample and `loc` when new.
  // `found`: h.index.find(key) when already asked (kNone: no such entry),
  // else kNotLooked.
  static constexpr std::uint32_t kNotLooked = EntryIndex::kNone - 1;
  std::uint32_t add_entry(Hists& h, const EntryKey& key, const session::ResolvedSample& s,
                          const machine::Location& loc, char level, bool filtered, bool self,
                          std::uint64_t period, std::uint32_t count,
                          std::uint32_t found = kNotLooked);
  // Whether entries are found by h.index (not as perf's tree search finds
  // them: live_entry).
  bool indexed(const Hists& h, const EntryKey& key) const {
    return !(h.live_on || key.inlined || sym_without_dso() || ips_wrap_ || flag_keys());
  }
  // Whether the --time and -C filters keep the sample.
  bool accepts(const record::Sample& smp, std::size_t event) {
    // (inline: asked for every sample, and most reports filter none)
    if (time_ranges_.empty() && !evswitch_.active() && !opts_.have_cpus) return true;
    return accepts_filtered(smp, event);
  }
  bool accepts_filtered(const record::Sample& smp, std::size_t event);
  std::uint64_t period_of(std::size_t event, const record::Sample& smp) const;
  // Adds `count` samples like `s` of `period` in all to the histograms.
  Status add_sample(const session::ResolvedSample& s, std::uint64_t period, std::uint32_t count);
  Status add_read_sample(const session::ResolvedSample& s);
  // PERF_SAMPLE_READ: each id's last value (perf's sid->period).
  std::unordered_map<std::uint64_t, std::uint64_t> read_last_;
  // Whether a chain frame's entry of `key` is one the sample made already
  // (seen_), by perf's duplicate check.
  bool duplicate(Hists& h, const session::ResolvedSample& s, const EntryKey& key,
                 const machine::Location& loc, char level);
  // The entries of `chain`'s frames, and with `graph` their call graphs.
  void add_children(Hists& h, const session::ResolvedSample& s,
                    std::span<const session::Frame> chain, std::uint32_t self, bool filtered,
                    std::uint64_t period, std::uint32_t count, bool graph);
  // Events with call chains and events without, with --children: perf's
  // callchain cursor carries a chain over to the samples without
  // (stale_chain_, the last chain resolved), so samples are taken in order.
  bool mixed_chains_ = false;
  std::vector<session::Frame> stale_chain_;
  std::vector<session::Frame> resolved_chain_;  // --hide-unresolved's chain of a sample
  // Samples are folded (report_fold.h) unless keys or unwinding make each
  // one its own; decided at the first sample.
  void decide_fold();
  bool fold_decided_ = false;
  std::unique_ptr<SampleFold> fold_;
  // `lookups`: how many times perf resolves this entry's source line.
  EntryKey make_key(const session::ResolvedSample& s, const machine::Location& loc,
                    const char* inlined = nullptr, int lookups = 1, const char* srcline = nullptr);
  Entry make_entry(const session::ResolvedSample& s, const machine::Location& loc, char level,
                   const EntryKey& key);
  const std::string* dso_name(const machine::Dso* d);
  bool is_filtered(const session::ResolvedSample& s, const machine::Location& loc) const;
  bool excluded_other() const;
  bool symbol_filtered(const EntryKey& key, const machine::Location& loc) const;
  std::vector<std::uint32_t> candidates_;  // perf_duplicate's
  std::vector<FrameId> path_;
  std::vector<std::uint32_t> suffixes_;  // path_'s suffix ids
  std::uint32_t suffix_of(std::size_t i) const {
    return address_keys_ || line_keys_ || i >= suffixes_.size() ? ChainArena::kNoSuffix
                                                                : suffixes_[i];
  }
  std::vector<std::uint32_t> seen_;
  std::vector<const std::string*> dso_names_;
};

int compare_output(const Report& r, const Hists& h, const Entry& a, const Entry& b);
// perf's output order of entries `a` and `b` by sort keys `keys` alone (no
// hpp column): negative when `a` comes first.
int compare_keys(const Report& r, std::span<const SortKey> keys, const Entry& a, const Entry& b);

// Columns printed before the sort keys' (perf diff's): their headers,
// already padded to their widths, and each row's cells (`row`: the
// position in Hists::sorted), each cell padded to its width.
struct LeadColumns {
  // perf's -t/--field-separator: between columns instead of two spaces,
  // no row indent, no dotted line; its character in a key's cell becomes '.'.
  std::string field_sep;
  std::vector<std::string> headers;
  std::vector<std::size_t> widths;
  std::function<void(std::size_t row, std::size_t column, std::string& cell)> cell;
};
// Prints the column headers (unless not `headers`) and the rows of `h.sorted` with the lead
// columns before the sort keys' (sized from those rows).
void print_rows(Report& r, Hists& h, const LeadColumns& lead, FdWriter& out, bool headers = true);
// An entry's value of hpp column `k` (0 for the rest), and the same of
// each member of the group `h` leads.
std::uint64_t hpp_value(const Entry& e, SortKey k);
std::span<const std::uint64_t> hpp_members(const Hists& h, const Entry& e, SortKey k);
// Adds entry `idx` (the last) to perf's input tree of `h`, starting the tree
// from the earlier entries when it is not kept yet. Returns the entry perf's
// search finds equal, or idx when it links the new one.
std::uint32_t live_find_or_link(const Report& r, Hists& h, std::uint32_t idx);
// Whether perf's hist_entry__cmp finds entries `a` and `b` equal (inline
// symbols by name where their ranges overlap, ...), as its duplicate check
// of a sample's call-chain entries does.
bool perf_same_entry(const Report& r, const Hists& h, std::uint32_t a, std::uint32_t b);

}  // namespace perfkit::report
