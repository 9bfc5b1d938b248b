#include "inject/inject_sched_stat.h"

#include "abi/event_names.h"
#include "abi/perf_event.h"
#include "record/encode.h"
#include "record/sample.h"
#include "session/tracepoint.h"

namespace perfkit::inject {

using namespace perfkit::abi;

SchedStatMerger::SchedStatMerger(const perfdata::Reader& in) : in_(in) {}
SchedStatMerger::~SchedStatMerger() = default;

Expected<std::unique_ptr<SchedStatMerger>> SchedStatMerger::create(const perfdata::Reader& in) {
  std::unique_ptr<SchedStatMerger> m(new SchedStatMerger(in));
  for (const auto& ev : in.events().events()) {
    const std::string name = ev.name.empty() ? default_event_name(ev.attr) : ev.name;
    Role role = Role::kOther;
    if (name == "sched:sched_switch") {
      if (!(ev.attr.sample_type & kSampleTid))
        return make_error(
            "Samples for 'sched:sched_switch' event do not have TID attribute set. Cannot print "
            "'tid' field.");
      role = Role::kSwitch;
    } else if (name == "sched:sched_process_exit") {
      role = Role::kExit;
    } else if (name.starts_with("sched:sched_stat_")) {
      role = Role::kStat;
    }
    m->roles_.push_back(role);
  }
  if (!in.tracing_data().empty()) {
    auto f = session::TracepointFormatter::create(in.tracing_data(), nullptr);
    if (f) m->formats_ = std::move(*f);
  }
  return m;
}

Expected<SchedStatMerger::Action> SchedStatMerger::sample(const record::RecordView& v, int event,
                                                          bool swap_out,
                                                          std::vector<std::uint8_t>& out) {
  if (event < 0 || static_cast<std::size_t>(event) >= roles_.size()) return Action::kWrite;
  const Role role = roles_[static_cast<std::size_t>(event)];
  if (role == Role::kOther) return Action::kWrite;
  const auto& desc = in_.events()[static_cast<std::size_t>(event)];
  record::Sample s;
  PK_TRY(record::decode_sample(v, desc.layout, s));
  switch (role) {
    case Role::kSwitch: {
      Kept& k = by_tid_[s.tid];
      k.bytes.assign(v.bytes.begin(), v.bytes.end());
      k.swap = v.swap;
      return Action::kDrop;
    }
    case Role::kExit:
      by_tid_.erase(s.tid);
      return Action::kDrop;
    default:
      break;
  }
  // A stat sample: the task it is about (its "pid" field) and that task's
  // switch, parsed and written again as the stat's event lays samples out.
  std::uint64_t pid = 0;
  if (!formats_ || !formats_->number_field(desc.attr.config, "pid", s.raw, pid))
    return Action::kDrop;
  auto it = by_tid_.find(static_cast<std::uint32_t>(pid));
  if (it == by_tid_.end()) return Action::kDrop;
  record::RecordView sw = record::view_header(it->second.bytes.data(), it->second.swap);
  sw.bytes = Bytes(it->second.bytes);
  record::Sample merged;
  PK_TRY(record::decode_sample(sw, desc.layout, merged));
  merged.period = s.period;
  merged.time = s.time;
  record::encode_sample_into(merged, desc.layout, sw.misc, swap_out, out);
  return Action::kReplace;
}

}  // namespace perfkit::inject
