#include "report/diff_keys.h"

#include <cinttypes>

#include "report/diff.h"

namespace perfkit::report {

namespace diff_keys {

// The number a value sort key compares (cgroup_id: its device; then its inode).
std::uint64_t ext_value(SortKey k, const ExtKey& x) {
  switch (k) {
    case SortKey::kTime:
      return x.time;
    case SortKey::kAddr:
      return x.addr;
    case SortKey::kWeight:
    case SortKey::kLocalWeight:
      return x.weight;
    case SortKey::kInsLat:
    case SortKey::kLocalInsLat:
      return x.ins_lat;
    case SortKey::kTransaction:
      return x.transaction;
    case SortKey::kCodePageSize:
      return x.code_page_size;
    case SortKey::kCgroup:
      return x.cgroup;
    case SortKey::kCgroupId:
      return x.cgroup_dev;
    default:
      return 0;
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
      case SortKey::kSrcline:
        add_name(k, x.srcline);
        break;
      case SortKey::kSrcfile:
        add_name(k, x.srcfile);
        break;
      case SortKey::kParent:
        add_name(k, x.parent);
        break;
      case SortKey::kSymSize:
        appendf(k, "%d:%" PRIu64 "|", x.has_sym ? 1 : 0, x.sym_size);
        break;
      case SortKey::kDsoSize:
        appendf(k, "%d:%" PRIu64 "|", x.has_map ? 1 : 0, x.dso_size);
        break;
      case SortKey::kSocket:
        appendf(k, "%d|", x.socket);
        break;
      case SortKey::kTrace:
        add_name(k, x.trace);
        break;
      case SortKey::kTime:
      case SortKey::kAddr:
      case SortKey::kWeight:
      case SortKey::kLocalWeight:
      case SortKey::kInsLat:
      case SortKey::kLocalInsLat:
      case SortKey::kTransaction:
      case SortKey::kCodePageSize:
      case SortKey::kCgroup:
      case SortKey::kCgroupId:
        appendf(k, "%" PRIu64 "|", ext_value(s, x));
        if (s == SortKey::kCgroupId) appendf(k, "%" PRIu64 "|", x.cgroup_ino);
        break;
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
      case SortKey::kSrcline:
        c = cmp_name(xa.srcline, xb.srcline);
        break;
      case SortKey::kSrcfile:
        c = cmp_name(xa.srcfile, xb.srcfile);
        break;
      case SortKey::kParent:
        c = cmp_name(xa.parent, xb.parent);
        break;
      case SortKey::kSymSize:
        c = cmp3(xa.sym_size, xb.sym_size);
        break;
      case SortKey::kDsoSize:
        c = cmp3(xa.dso_size, xb.dso_size);
        break;
      case SortKey::kSocket:
        c = cmp3(xa.socket, xb.socket);
        break;
      case SortKey::kTrace:
        c = cmp_name(xa.trace, xb.trace);
        break;
      case SortKey::kTime:
      case SortKey::kAddr:
      case SortKey::kWeight:
      case SortKey::kLocalWeight:
      case SortKey::kInsLat:
      case SortKey::kLocalInsLat:
      case SortKey::kTransaction:
      case SortKey::kCodePageSize:
      case SortKey::kCgroup:
      case SortKey::kCgroupId:
        c = cmp3(ext_value(s, xa), ext_value(s, xb));
        if (!c && s == SortKey::kCgroupId) c = cmp3(xa.cgroup_ino, xb.cgroup_ino);
        break;
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
    case SortKey::kSrcline:
    case SortKey::kSrcfile:
    case SortKey::kParent:
    case SortKey::kSymSize:
    case SortKey::kDsoSize:
    case SortKey::kSocket:
    case SortKey::kTrace:
    case SortKey::kTime:
    case SortKey::kAddr:
    case SortKey::kWeight:
    case SortKey::kLocalWeight:
    case SortKey::kInsLat:
    case SortKey::kLocalInsLat:
    case SortKey::kTransaction:
    case SortKey::kCodePageSize:
    case SortKey::kCgroup:
    case SortKey::kCgroupId:
      return true;
    default:
      return false;
  }
}

}  // namespace perfkit::report
