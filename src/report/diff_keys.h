// perfkit diff's sort keys (report_diff.cc): what pairs an entry with the
// other files' (by value: files come from different sessions), the collapse
// order perf diff inserts entries in, and the keys' text. Internal to report/.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/report_impl.h"

namespace perfkit::report::diff_keys {

template <class... A>
void appendf(std::string& s, const char* fmt, A... a) {
  char buf[128];
  int n = std::snprintf(buf, sizeof buf, fmt, a...);
  if (n > 0) s.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

inline int cmp3(auto a, auto b) { return a < b ? -1 : (a > b ? 1 : 0); }

// What a value sort key compares: its number, then a second one (cgroup_id's
// inode; whether symbol_size and dso_size know a symbol, a map); nullopt
// for the keys that are no value keys.
using KeyValue = std::pair<std::uint64_t, std::uint64_t>;
std::optional<KeyValue> ext_values(SortKey k, const ExtKey& x);
// Where a text sort key's interned name is (srcline, srcfile, parent,
// trace), or nullptr for the others.
const std::string* const* ext_name(SortKey k, const ExtKey& x);
// The --sort name of a value key (time, weight, ...).
const char* value_key_name(SortKey k);
// What identifies an entry across files by `keys`.
std::string match_key(const std::vector<SortKey>& keys, const Entry& e, const ExtKey& x);
// perf diff's collapse order by `keys`.
int collapse_cmp(const std::vector<SortKey>& keys, const Entry& a, const ExtKey& xa, const Entry& b,
                 const ExtKey& xb);

}  // namespace perfkit::report::diff_keys
