// Which samples and entries perf report's filters keep: --comm, --pid,
// --tid, --dsos, --symbols, -x, --symbol-filter, --socket-filter, --time,
// the on/off switch and -C.
#include <algorithm>

#include "abi/perf_event.h"
#include "report/report_impl.h"
#include "report/report_keys.h"
#include "session/time_filter.h"

namespace perfkit::report {

using namespace perfkit::abi;

bool Report::is_filtered(const session::ResolvedSample& s, const machine::Location& loc) const {
  const auto& o = opts_;
  // perf's HIST_FILTER__GUEST: a guest's samples count but show nowhere
  // without guest symbols (perf kvm's --guest* options)
  if (s.cpumode == abi::kMiscGuestKernel || s.cpumode == abi::kMiscGuestUser) return true;
  if (!o.comms.empty() && std::find(o.comms.begin(), o.comms.end(), *s.comm) == o.comms.end())
    return true;
  if (!o.pids.empty() && std::find(o.pids.begin(), o.pids.end(), s.thread->pid) == o.pids.end())
    return true;
  if (!o.tids.empty() && std::find(o.tids.begin(), o.tids.end(), s.thread->tid) == o.tids.end())
    return true;
  if (!o.dsos.empty() && loc.dso) {
    bool hit = std::find(o.dsos.begin(), o.dsos.end(), loc.dso->short_name) != o.dsos.end() ||
               std::find(o.dsos.begin(), o.dsos.end(), loc.dso->long_name) != o.dsos.end();
    if (!hit) return true;
  }
  if (!o.symbols.empty()) {
    std::string_view n = session_->machine().symbol_name(loc);
    if (n.empty() || std::find(o.symbols.begin(), o.symbols.end(), n) == o.symbols.end())
      return true;
  }
  return false;
}

// perf's hists__filter_entry_by_symbol: the entry's symbol (an inlined
// function's own name) must contain the --symbol-filter text.
bool Report::symbol_filtered(const EntryKey& key, const machine::Location& loc) const {
  // (the entry's symbol is its first sample's, sym a key or not)
  if (!key.inlined && (loc.symbol < 0 || !loc.dso)) return true;
  std::string_view name = key.inlined ? key.inlined : session_->machine().symbol_name(loc);
  return name.find(opts_.symbol_filter) == std::string_view::npos;
}

// perf's hists__filter_entry_by_socket: the socket of the sample's cpu
// (-1 unknown) must be the --socket-filter one.
bool Report::socket_filtered(const session::ResolvedSample& s) const {
  const record::Sample& smp = *s.sample;
  std::int32_t socket = -1;
  if ((smp.sample_type & kSampleCpu) && smp.cpu < sockets_.size()) socket = sockets_[smp.cpu];
  return socket != opts_.socket_filter;
}

// perf's symbol__parent_filter: with -x an entry without a parent is filtered.
bool Report::excluded_other() const {
  return opts_.exclude_other && !(ext_->active() && ext_->has_parent());
}

// perf report's order: the time ranges, the on/off switch (which sees every
// sample in them), then the CPUs.
bool Report::accepts_filtered(const record::Sample& smp, std::size_t event) {
  if (!time_ranges_.empty() && session::skip_by_time(time_ranges_, smp.time)) return false;
  if (evswitch_.active() && evswitch_.discard(event)) return false;
  return !opts_.have_cpus ||
         std::find(opts_.cpus.begin(), opts_.cpus.end(), smp.cpu) != opts_.cpus.end();
}

}  // namespace perfkit::report
