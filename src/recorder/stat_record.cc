#include "recorder/stat_record.h"

#include <filesystem>

#include "abi/perf_event.h"
#include "capture/synthesize.h"
#include "capture/system_info.h"
#include "perfdata/features.h"
#include "record/encode.h"

namespace perfkit::recorder {

using namespace perfkit::abi;

std::vector<std::uint8_t> stat_config_record(stat::AggrMode aggr, std::uint64_t interval_ms,
                                             bool scale) {
  record::RecordBuilder b(kRecordStatConfig, 0);
  b.u64(3);
  b.u64(stat::kStatConfigAggrMode).u64(static_cast<std::uint64_t>(stat::aggr_mode_to_perf(aggr)));
  b.u64(stat::kStatConfigInterval).u64(interval_ms);
  b.u64(stat::kStatConfigScale).u64(scale ? 1 : 0);
  return b.finish();
}

std::vector<std::uint8_t> stat_record(std::uint64_t id, std::int32_t cpu, std::uint32_t thread,
                                      const CounterValue& v) {
  record::RecordBuilder b(kRecordStat, 0);
  b.u64(id).u32(static_cast<std::uint32_t>(cpu)).u32(thread);
  b.u64(v.value).u64(v.enabled).u64(v.running);
  return b.finish();
}

std::vector<std::uint8_t> stat_round_record(std::uint64_t type, std::uint64_t time_ns) {
  record::RecordBuilder b(kRecordStatRound, 0);
  b.u64(type).u64(time_ns);
  return b.finish();
}

Expected<std::unique_ptr<StatRecordWriter>> StatRecordWriter::create(const std::string& path,
                                                                     StatRecordConfig config) {
  perfdata::WriterOptions opts;
  opts.pipe = path == "-";
  PK_ASSIGN(auto w, perfdata::Writer::create(path, opts));
  return std::unique_ptr<StatRecordWriter>(
      new StatRecordWriter(std::move(w), path, std::move(config)));
}

perfdata::EventSet StatRecordWriter::event_set(const capture::CounterSet& set) const {
  perfdata::EventSet es;
  for (std::size_t ev = 0; ev < set.events().size(); ++ev) {
    std::vector<std::uint64_t> ids;
    if (set.supported(ev))
      for (auto id : set.ids(ev))
        if (id) ids.push_back(id);
    es.add(set.events()[ev].attr, std::move(ids));
    es[ev].name = set.events()[ev].name;
  }
  return es;
}

Status StatRecordWriter::begin(const capture::CounterSet& set,
                               const std::vector<std::string>& comms) {
  PK_TRY(writer_->begin(event_set(set)));
  // Unit and scale travel in EVENT_UPDATE records (perf's
  // synthesize_extra_attr), for events perf could open.
  for (std::size_t ev = 0; ev < set.events().size(); ++ev) {
    if (!set.supported(ev) || set.ids(ev).empty()) continue;
    const auto& e = set.events()[ev];
    const std::uint64_t id = set.ids(ev).front();
    if (!e.unit.empty()) PK_TRY(writer_->write(capture::event_update_unit_record(id, e.unit)));
    if (e.scale != 1.0) PK_TRY(writer_->write(capture::event_update_scale_record(id, e.scale)));
  }
  PK_TRY(writer_->write(capture::thread_map_record(set.target().threads, comms)));
  PK_TRY(writer_->write(capture::cpu_map_record(set.target().cpus)));
  PK_TRY(writer_->write(stat_config_record(config_.aggr, config_.interval_ms, config_.scale)));
  return ok();
}

Status StatRecordWriter::write_counts(const capture::CounterSet& set,
                                      const capture::CounterReadings& r) {
  const auto& t = set.target();
  for (std::size_t c = 0; c < t.cpus.size(); ++c) {
    for (std::size_t ev = 0; ev < set.events().size(); ++ev) {
      if (!set.supported(ev)) continue;
      for (std::size_t th = 0; th < t.threads.size(); ++th) {
        const std::size_t s = c * t.threads.size() + th;
        if (!r.ok[ev][s]) continue;
        PK_TRY(writer_->write(stat_record(set.ids(ev)[s], t.cpus[c], static_cast<std::uint32_t>(th),
                                          r.values[ev][s])));
      }
    }
  }
  return ok();
}

Status StatRecordWriter::write_round(std::uint64_t type, std::uint64_t time_ns) {
  return writer_->write(stat_round_record(type, time_ns));
}

Status StatRecordWriter::finish(const capture::CounterSet& set) {
  perfdata::Features f;
  capture::collect_system_info(config_.paths, config_.version, f);
  std::vector<std::string> argv = config_.cmdline;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!argv.empty() && !ec) argv[0] = exe.string();
  f.cmdline = std::move(argv);
  perfdata::EventDescList desc;
  std::vector<perfdata::GroupDesc> groups;
  const perfdata::EventSet es = event_set(set);
  for (std::size_t ev = 0; ev < set.events().size(); ++ev) {
    const auto& e = set.events()[ev];
    desc.events.push_back({e.attr, e.name, es[ev].ids});
    if (e.leader == ev && e.group_size > 1)
      groups.push_back({"{anon_group}", static_cast<std::uint32_t>(ev),
                        static_cast<std::uint32_t>(e.group_size)});
  }
  f.event_desc = std::move(desc);
  if (!groups.empty()) f.group_desc = std::move(groups);
  f.stat = true;
  f.sample_time = perfdata::SampleTime{0, 0};
  if (writer_->pipe()) f.cache.reset();
  PK_ASSIGN(auto sections, perfdata::encode_features(f, writer_->swapped()));
  return writer_->finish(es, sections);
}

}  // namespace perfkit::recorder
