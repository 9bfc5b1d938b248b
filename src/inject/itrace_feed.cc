#include "inject/itrace_feed.h"

#include <fmt/format.h>

#include <algorithm>

#include "abi/perf_event.h"
#include "itrace/itrace.h"
#include "itrace/synth_events.h"
#include "itrace/synth_record.h"
#include "perfdata/record_stream.h"

namespace perfkit::inject {

using namespace perfkit::abi;
using intelpt::SampleKind;

ItraceFeed::ItraceFeed(session::Session& session, std::string path, ItraceFeedOptions opts,
                       const intelpt::PtConfig& cfg)
    : session_(session), path_(std::move(path)), opts_(std::move(opts)), cfg_(cfg) {}

ItraceFeed::~ItraceFeed() = default;

Expected<bool> ItraceFeed::attach(session::Session& session, const std::string& path,
                                  ItraceFeedOptions opts) {
  if (path == "-" || session.reader().is_pipe() || !itrace::has_intel_pt(path)) return false;
  PK_ASSIGN(const intelpt::PtConfig cfg, itrace::read_pt_config(path));
  std::unique_ptr<ItraceFeed> feed(new ItraceFeed(session, path, std::move(opts), cfg));
  PK_TRY(feed->start());
  session.set_record_source(std::move(feed));
  return true;
}

// The events, the call chains of the recorded samples, and the decode.
Status ItraceFeed::start() {
  perfdata::EventSet& events = session_.reader().events();
  const std::size_t recorded = events.size();
  const EventAttr pt = itrace::pt_event_attr(events, cfg_.pmu_type);
  // perf decodes without timestamps when the trace has no TSC packets or
  // the event no time: every sample then comes after the recording.
  timeless_ = !(pt.config & cfg_.tsc_bit) || !(pt.sample_type & kSampleTime);
  const itrace::SynthEventOf of = itrace::add_synth_events(events, cfg_, opts_.itrace);
  std::copy(of.begin(), of.end(), event_of_.begin());
  if (opts_.itrace.add_callchain) {
    // perf gives every recorded event call chains (its synth_sample_type):
    // the attrs say so, the samples keep their layout and get the chain
    // the thread stacks have at their time, decoded when one first needs it.
    for (std::size_t i = 0; i < recorded; ++i) events[i].attr.sample_type |= kSampleCallchain;
    session_.set_late_chains([this](const record::Sample& s) { return late_chain(s); }, recorded);
  }
  records_ = std::make_unique<itrace::SynthRecords>(cfg_.max_non_turbo_ratio);
  itrace::ItraceDecodeOptions dopts;
  dopts.itrace = opts_.itrace;
  dopts.jobs = opts_.jobs;
  stream_ = itrace::ItraceStream::start(path_, std::move(dopts));
  return ok();
}

std::span<const std::uint64_t> ItraceFeed::late_chain(const record::Sample& s) {
  if (!late_ && late_status_) {
    itrace::ItraceDecodeOptions copts;
    copts.itrace = opts_.itrace;
    copts.jobs = opts_.jobs;
    auto late = itrace::LateChains::decode(path_, copts);
    if (late)
      late_ = std::make_unique<itrace::LateChains>(std::move(*late));
    else
      late_status_ = late.error();
  }
  if (late_) return late_->of(s);
  return {};
}

// perf decodes its queues up to each event with a timestamp; a timeless
// decode waits for the end.
Status ItraceFeed::deliver_before(std::uint64_t time, const Deliver& deliver) {
  if (timeless_ || !time || time == perfdata::kNoTimestamp) return late_status_;
  return deliver_tsc_before(cfg_.perf_time_to_tsc(time), deliver);
}

Status ItraceFeed::deliver_tsc_before(std::uint64_t tsc, const Deliver& deliver) {
  PK_TRY(late_status_);
  const auto& events = session_.reader().events();
  return stream_->visit_before(tsc, [&](const itrace::ItraceSample& is) -> Status {
    const intelpt::SynthSample& s = *is.sample;
    if (s.kind == SampleKind::kError) {
      ++errors_;
      return deliver(records_->error(is), -1);
    }
    const int ev = event_of_[static_cast<std::size_t>(s.kind)];
    if (ev < 0) return ok();
    const auto& desc = events[static_cast<std::size_t>(ev)];
    return deliver(records_->sample(is, desc.layout, desc.ids.front()), ev);
  });
}

Status ItraceFeed::finish(const Deliver& deliver) {
  PK_TRY(deliver_tsc_before(~0ULL, deliver));
  PK_TRY(late_status_);
  PK_ASSIGN(auto stats, stream_->finish());
  (void)stats;
  // perf_session__warn_about_errors.
  if (errors_ && opts_.warn)
    opts_.warn(fmt::format("Warning:\n{} instruction trace errors", errors_));
  return ok();
}

}  // namespace perfkit::inject
