#include "session/sample_filter.h"

#include <fmt/format.h>

#include "abi/perf_event.h"
#include "perfdata/features.h"

namespace perfkit::session {

SampleFilter::SampleFilter(const SampleFilterOptions& o)
    : time_(o.time),
      reltime_(o.reltime),
      have_cpus_(o.have_cpus),
      comms_(o.comms.begin(), o.comms.end()),
      symbols_(o.symbols.begin(), o.symbols.end()),
      dsos_(o.dsos.begin(), o.dsos.end()),
      pids_(o.pids.begin(), o.pids.end()),
      tids_(o.tids.begin(), o.tids.end()) {
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
  if (!symbols_.empty()) {
    if (s.loc.symbol < 0) return true;
    if (symbols_.count(std::string(m.symbol_name(s.loc)))) return false;
    const auto& sym = s.loc.dso->symbols->at(static_cast<std::size_t>(s.loc.symbol));
    std::uint64_t start = s.loc.map ? s.loc.map->unmap_ip(sym.start) : sym.start;
    return !symbols_.count(fmt::format("{:#x}", start));
  }
  return false;
}

}  // namespace perfkit::session
