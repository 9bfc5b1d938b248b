#include "session/cpu_filter.h"

#include <algorithm>

#include "abi/perf_event.h"
#include "perfdata/features.h"

namespace perfkit::session {

Status check_cpu_filter(const perfdata::Reader& reader, std::int64_t max_cpu) {
  constexpr std::uint32_t kPerfTypeMax = 6;  // PERF_TYPE_MAX
  // A stream's attrs come with its records: none is known yet, as for perf.
  if (!reader.is_pipe()) {
    for (std::uint32_t type = 0; type < kPerfTypeMax; ++type) {
      for (const auto& ev : reader.events().events()) {
        if (ev.attr.type != type) continue;
        if (!(ev.attr.sample_type & abi::kSampleCpu))
          return make_error("File does not contain CPU events. Remove -C option to proceed.");
        break;
      }
    }
  }
  constexpr std::int64_t kMaxNrCpus = 2048;  // perf's MAX_NR_CPUS
  std::int64_t nr = 0;
  if (!reader.is_pipe()) {
    if (auto blob = reader.feature(abi::kFeatNrcpus)) {
      perfdata::Features feats;
      if (perfdata::parse_feature(abi::kFeatNrcpus, blob->data, reader.swapped(), blob->offset,
                                  feats) &&
          feats.nrcpus)
        nr = feats.nrcpus->available;
    }
  }
  nr = std::min(nr, kMaxNrCpus);
  if (max_cpu >= nr)
    return make_error("Requested CPU {} too large. Consider raising MAX_NR_CPUS", max_cpu);
  return ok();
}

}  // namespace perfkit::session
