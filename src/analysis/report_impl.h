// Internals of perfkit report shared by its aggregation (report.cc) and its
// printing (report_print.cc). Not a public API.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/flat_map.h"
#include "analysis/report.h"
#include "analysis/report_chain.h"

namespace perfkit::analysis {

// What identifies an entry: the fields of the active sort keys (others 0).
struct EntryKey {
  const std::string* comm = nullptr;
  std::int32_t tid = 0;
  const std::string* dso = nullptr;  // interned short name; nullptr: no map
  bool has_sym = false;
  std::uint64_t sym_start = 0, sym_end = 0;
  std::uint64_t ip = 0;  // when there is no symbol
  std::uint32_t cpu = 0;
  std::uint64_t time = 0;
  const char* inlined = nullptr;  // an inlined function's interned name (DWARF unwinding)
  bool operator==(const EntryKey&) const = default;
};

struct EntryKeyHash {
  std::uint64_t operator()(const EntryKey& k) const {
    std::uint64_t h = mix64(reinterpret_cast<std::uintptr_t>(k.comm) ^
                            static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.tid)) << 32);
    h = mix64(h ^ reinterpret_cast<std::uintptr_t>(k.dso) ^
              (static_cast<std::uint64_t>(k.cpu) << 48));
    h = mix64(h ^ (k.has_sym ? k.sym_start : k.ip));
    if (k.has_sym) h = mix64(h ^ k.sym_end ^ reinterpret_cast<std::uintptr_t>(k.inlined));
    return k.time ? mix64(h ^ k.time) : h;
  }
};

struct Entry {
  EntryKey key;
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
  char level = '.';
  bool filtered = false;
  std::uint64_t period = 0, nr_events = 0;
  std::uint64_t acc_period = 0, acc_nr_events = 0;
  std::uint32_t chain = UINT32_MAX;  // root in the arena
  std::uint32_t max_depth = 0;
  // With --group, the leader's entries carry each member's values (index 0
  // is the leader's own); entries only members had are added with zeros.
  std::vector<std::uint64_t> group_period, group_acc;
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

struct Hists {
  std::deque<Entry> entries;  // stable addresses, no doubling copies
  EntryIndex index;
  std::uint64_t nr_samples = 0, nr_non_filtered_samples = 0;
  std::uint64_t total_period = 0, total_non_filtered_period = 0;
  std::uint64_t callchain_period = 0, callchain_non_filtered_period = 0;
  std::vector<std::uint32_t> sorted;  // output order
  // Event groups: the leader's block shows its members side by side.
  std::vector<std::size_t> members;  // for a leader: itself then its members
  bool group_member = false;         // a non-leader member: no block of its own
  std::string group_name;
};

class Report : public SampleVisitor {
 public:
  explicit Report(const ReportOptions& o) : opts_(o) {}
  Status on_sample(const ResolvedSample& s) override;
  void settle(Session& session);
  void settle_from_events();
  void setup_groups();
  void merge_group(Hists& leader);
  void apply_comm_renames(Hists& h);
  bool settled_ = false;
  bool no_callchains_for_g_ = false;
  void finish();
  void print(Session& session, FdWriter& out);
  void print_elided(FdWriter& out) const;
  bool elided(SortKey k) const;

  ReportOptions opts_;
  bool children_ = false;
  bool use_callchain_ = false;
  bool has_key_[16] = {};
  std::vector<Hists> hists_;
  ChainArena arena_;
  Session* session_ = nullptr;

 private:
  // Adds `period` to the entry of `key`, made from the sample and `loc` when new.
  std::uint32_t add_entry(Hists& h, const EntryKey& key, const ResolvedSample& s,
                          const machine::Location& loc, char level, bool filtered, bool self,
                          std::uint64_t period);
  EntryKey make_key(const ResolvedSample& s, const machine::Location& loc,
                    const char* inlined = nullptr);
  Entry make_entry(const ResolvedSample& s, const machine::Location& loc, char level,
                   const EntryKey& key);
  const std::string* dso_name(const machine::Dso* d);
  bool is_filtered(const ResolvedSample& s, const machine::Location& loc) const;
  std::vector<ChainEntry> path_;
  std::vector<std::uint32_t> seen_;
  std::vector<const std::string*> dso_names_;
};

int compare_output(const Report& r, const Hists& h, const Entry& a, const Entry& b);

}  // namespace perfkit::analysis
