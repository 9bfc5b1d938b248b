#include "report/diff_keys.h"

#include <cinttypes>
#include <optional>

#include "report/diff.h"

namespace perfkit::report {

namespace diff_keys {

std::optional<KeyValue> ext_values(SortKey k, const ExtKey& x) {
  switch (k) {
    case SortKey::kTime:
      return KeyValue{x.time, 0};
    case SortKey::kAddr:
      return KeyValue{x.addr, 0};
    case SortKey::kWeight:
    case SortKey::kLocalWeight:
      return KeyValue{x.weight, 0};
    case SortKey::kInsLat:
    case SortKey::kLocalInsLat:
      return KeyValue{x.ins_lat, 0};
    case SortKey::kTransaction:
      return KeyValue{x.transaction, 0};
    case SortKey::kCodePageSize:
      return KeyValue{x.code_page_size, 0};
    case SortKey::kCgroup:
      return KeyValue{x.cgroup, 0};
    case SortKey::kCgroupId:
      return KeyValue{x.cgroup_dev, x.cgroup_ino};
    case SortKey::kSymSize:
      return KeyValue{x.sym_size, x.has_sym};
    case SortKey::kDsoSize:
      return KeyValue{x.dso_size, x.has_map};
    case SortKey::kSocket:
      return KeyValue{static_cast<std::uint64_t>(std::int64_t{x.socket} + 1), 0};
    default:
      return std::nullopt;
  }
}

const std::string* const* ext_name(SortKey k, const ExtKey& x) {
  switch (k) {
    case SortKey::kSrcline:
      return &x.srcline;
    case SortKey::kSrcfile:
      return &x.srcfile;
    case SortKey::kParent:
      return &x.parent;
    case SortKey::kTrace:
      return &x.trace;
    default:
      return nullptr;
  }
}

// The --sort name of a value key.
const char* value_key_name(SortKey k) {
  switch (k) {
    case SortKey::kTime:
      return "time";
    case SortKey::kWeight:
      return "weight";
    case SortKey::kLocalWeight:
      return "local_weight";
    case SortKey::kInsLat:
      return "ins_lat";
    case SortKey::kLocalInsLat:
      return "local_ins_lat";
    case SortKey::kTransaction:
      return "transaction";
    case SortKey::kCodePageSize:
      return "code_page_size";
    case SortKey::kCgroup:
      return "cgroup";
    default:
      return "?";
  }
}

// (the text of an interned name, "\x01" for none)
static void add_name(std::string& k, const std::string* s) {
  k += s ? *s : std::string("\x01");
  k.push_back('\0');
}

// What identifies an entry across files, and within a file after perf
// diff's collapse: the sort keys' values by content, symbols by name (perf
// diff compares names, the files may come from different builds; every
// unresolved address of a DSO is one entry).
std::string match_key(const std::vector<SortKey>& keys, const Entry& e, const ExtKey& x) {
  std::string k;
  for (SortKey s : keys) {
    switch (s) {
      case SortKey::kComm:
        if (e.key.comm) k += *e.key.comm;
        k.push_back('\0');
        break;
      case SortKey::kPid:
        appendf(k, "%d|", e.key.tid);
        break;
      case SortKey::kDso:
        k += e.key.dso ? *e.key.dso : std::string("\x01");
        k.push_back('\0');
        break;
      case SortKey::kSym:
        k += e.key.has_sym ? "s" : "-";
        if (e.key.has_sym) k += e.sym_name;
        k.push_back('\0');
        break;
      case SortKey::kCpu:
        appendf(k, "%u|", e.key.cpu);
        break;
      default:
        if (auto v = ext_values(s, x))
          appendf(k, "%" PRIu64 ":%" PRIu64 "|", v->first, v->second);
        else if (const std::string* const* n = ext_name(s, x))
          add_name(k, *n);
        break;
    }
  }
  return k;
}

static int cmp_name(const std::string* a, const std::string* b) {
  if (a == b) return 0;
  if (!a || !b) return !a ? 1 : -1;  // none last
  return cmp3(a->compare(*b), 0);
}

// perf diff's collapse order by the sort keys: names ascending (none
// last), named symbols before unresolved addresses.
int collapse_cmp(const std::vector<SortKey>& keys, const Entry& a, const ExtKey& xa, const Entry& b,
                 const ExtKey& xb) {
  for (SortKey s : keys) {
    int c = 0;
    switch (s) {
      case SortKey::kComm:
        c = cmp_name(a.key.comm, b.key.comm);
        break;
      case SortKey::kPid:
        c = cmp3(a.key.tid, b.key.tid);
        break;
      case SortKey::kDso:
        c = cmp_name(a.key.dso, b.key.dso);
        break;
      case SortKey::kSym:
        if (a.key.has_sym != b.key.has_sym) c = a.key.has_sym ? -1 : 1;
        if (!c && a.key.has_sym) c = cmp3(a.sym_name.compare(b.sym_name), 0);
        break;
      case SortKey::kCpu:
        c = cmp3(a.key.cpu, b.key.cpu);
        break;
      default:
        if (auto va = ext_values(s, xa))
          c = cmp3(*va, *ext_values(s, xb));
        else if (const std::string* const* n = ext_name(s, xa))
          c = cmp_name(*n, *ext_name(s, xb));
        break;
    }
    if (c) return c;
  }
  return 0;
}

}  // namespace diff_keys

bool diff_sorts_by(SortKey k) {
  switch (k) {
    case SortKey::kComm:
    case SortKey::kPid:
    case SortKey::kDso:
    case SortKey::kSym:
    case SortKey::kCpu:
      return true;
    default:
      return diff_keys::ext_values(k, ExtKey{}) || diff_keys::ext_name(k, ExtKey{});
  }
}

}  // namespace perfkit::report
