#include "itrace/synth_events.h"

#include "abi/event_names.h"
#include "abi/perf_event.h"
#include "itrace/itrace.h"
#include "perfdata/reader.h"
#include "record/records.h"

namespace perfkit::itrace {

using namespace perfkit::abi;
using intelpt::SampleKind;

namespace {

// perf's PERF_SYNTH_INTEL_* configs.
std::uint64_t synth_config(SampleKind k) {
  switch (k) {
    case SampleKind::kPtwrite:
      return 0;
    case SampleKind::kMwait:
      return 1;
    case SampleKind::kPwre:
      return 2;
    case SampleKind::kExstop:
      return 3;
    case SampleKind::kPwrx:
      return 4;
    case SampleKind::kCbr:
      return 5;
    case SampleKind::kPsb:
      return 6;
    default:
      return 0;
  }
}

}  // namespace

// intel_pt_synth_events: the events perf adds, in its order, with its names.
std::vector<ItraceSynthEvent> itrace_synth_events(const EventAttr& pt,
                                                  const intelpt::ItraceOptions& o, bool per_cpu,
                                                  bool timeless) {
  std::vector<ItraceSynthEvent> out;
  auto add = [&](SampleKind k, const EventAttr& attr, const char* name) {
    out.push_back({k, attr, name ? std::string(name) : default_event_name(attr)});
  };
  EventAttr a;
  a.size = pt.size;
  a.flags = pt.flags & (kAttrExcludeUser | kAttrExcludeKernel | kAttrExcludeHv | kAttrExcludeHost |
                        kAttrExcludeGuest | kAttrSampleIdAll);
  a.type = 0;
  a.sample_type = (pt.sample_type & (kSampleMax - 1)) | kSampleIp | kSampleTid | kSamplePeriod;
  if (o.timeless || timeless)
    a.sample_type &= ~kSampleTime;
  else
    a.sample_type |= kSampleTime;
  if (!per_cpu) a.sample_type &= ~kSampleCpu;
  if (o.branches || o.calls || o.returns) {
    EventAttr b = a;
    b.config = 4;  // branch-instructions
    b.sample_period = 1;
    b.sample_type |= kSampleAddr;
    add(SampleKind::kBranches, b, nullptr);
  }
  if (o.callchain) a.sample_type |= kSampleCallchain;
  if (o.last_branch) {
    a.sample_type |= kSampleBranchStack;
    a.branch_sample_type |= kBranchHwIndex;  // as perf: the layout has hw_idx (never used)
  }
  if (o.instructions) {
    EventAttr i = a;
    i.config = 1;
    i.sample_period = o.period ? o.period : 1;
    add(SampleKind::kInstructions, i, nullptr);
  }
  a.sample_type &= ~kSamplePeriod;
  a.sample_period = 1;
  if (o.transactions) {
    a.config = 1;
    add(SampleKind::kTransactions, a, "transactions");
  }
  a.type = kAttrTypeSynth;
  a.sample_type |= kSampleRaw;
  auto synth = [&](SampleKind k, const char* name) {
    a.config = synth_config(k);
    add(k, a, name);
  };
  if (o.ptwrites) synth(SampleKind::kPtwrite, "ptwrite");
  if (o.pwr_events) {
    synth(SampleKind::kCbr, "cbr");
    if (pt.config & 0x10) {  // pwr_evt: power event packets were enabled
      synth(SampleKind::kMwait, "mwait");
      synth(SampleKind::kPwre, "pwre");
      synth(SampleKind::kExstop, "exstop");
      synth(SampleKind::kPwrx, "pwrx");
    }
    synth(SampleKind::kPsb, "psb");
  }
  return out;
}

bool has_intel_pt(const std::string& path) {
  if (path == "-") return false;
  auto in = perfdata::Reader::open(path);
  if (!in) return false;
  perfdata::ReadRecord rec;
  // AUXTRACE_INFO comes with the first records perf writes, before any
  // sample. (A file need not have the AUXTRACE feature, the trace's index:
  // perf decodes one without, as it decodes a pipe.)
  for (int n = 0; n < 100000; ++n) {
    auto got = (*in)->next(rec);
    if (!got || !*got || rec.view.type == kRecordSample) return false;
    if (rec.view.type != kRecordAuxtraceInfo) continue;
    auto info = record::parse_auxtrace_info(rec.view);
    return info && info->type == 1;  // PERF_AUXTRACE_INTEL_PT
  }
  return false;
}

}  // namespace perfkit::itrace
