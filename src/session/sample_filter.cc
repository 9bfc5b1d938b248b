#include "session/sample_filter.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "abi/perf_event.h"
#include "perfdata/features.h"

namespace perfkit::session {

SampleFilter::SampleFilter(const SampleFilterOptions& o)
    : time_(o.time),
      reltime_(o.reltime),
      have_cpus_(o.have_cpus),
      comms_(o.comms.begin(), o.comms.end()),
      dsos_(o.dsos.begin(), o.dsos.end()),
      by_symbol_(!o.symbols.empty()),
      addr_range_(o.addr_range),
      pids_(o.pids.begin(), o.pids.end()),
      tids_(o.tids.begin(), o.tids.end()) {
  // perf's setup_addrlist: an entry that strtoul(, 16) reads whole (bar
  // trailing blanks) is an address, not a name.
  for (const std::string& e : o.symbols) {
    const char* str = e.c_str();
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(str, &end, 16);
    bool number = errno == 0 && end != str;
    for (const char* p = end; number && *p; ++p)
      number = std::isspace(static_cast<unsigned char>(*p));
    if (number)
      addrs_.push_back(v);
    else
      symbols_.insert(e);
  }
  for (auto c : o.cpus)
    if (c >= 0) {
      if (static_cast<std::size_t>(c) >= cpu_set_.size()) cpu_set_.resize(c + 1, false);
      cpu_set_[static_cast<std::size_t>(c)] = true;
    }
}

Status SampleFilter::prepare(const perfdata::Reader& reader) {
  if (time_.empty()) return ok();
  perfdata::Features feats;
  if (auto blob = reader.feature(abi::kFeatSampleTime))
    (void)perfdata::parse_feature(abi::kFeatSampleTime, blob->data, reader.swapped(), blob->offset,
                                  feats);
  const std::uint64_t first = feats.sample_time ? feats.sample_time->first_ns : 0;
  const std::uint64_t last = feats.sample_time ? feats.sample_time->last_ns : 0;
  PK_ASSIGN(ranges_, parse_time_ranges(time_, first, last, reltime_));
  return ok();
}

bool SampleFilter::skip(const ResolvedSample& s, const machine::Machine& m) const {
  const machine::Thread& t = *s.thread;
  if (!comms_.empty() && !(t.comm && comms_.count(*t.comm))) return true;
  if (!pids_.empty() && !pids_.count(t.pid)) return true;
  if (!tids_.empty() && !tids_.count(t.tid)) return true;
  if (!dsos_.empty()) {
    const machine::Dso* d = s.loc.dso;
    if (!d || s.loc.map == nullptr) return true;
    std::string_view shown = d->kind == machine::DsoKind::kModule ? d->short_name : d->long_name;
    if (!dsos_.count(std::string(d->short_name)) && !dsos_.count(std::string(shown)) &&
        !dsos_.count(d->long_name))
      return true;
  }
  if (!by_symbol_) return false;
  if (s.loc.symbol >= 0 && symbols_.count(std::string(m.symbol_name(s.loc)))) return false;
  if (addrs_.empty() || !s.loc.map) return true;
  const std::uint64_t addr = s.loc.map->unmap_ip(s.loc.addr);
  for (std::uint64_t a : addrs_)
    if (addr == a || (addr_range_ && addr >= a && addr < a + addr_range_)) return false;
  return true;
}

}  // namespace perfkit::session
