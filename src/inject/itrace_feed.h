// perf report's Intel PT decode (and the exports'): the trace of a session's
// recording decoded while the session reads it, each synthesized sample
// handed to the session's visitor as the SAMPLE record of perf's
// synthesized event (itrace/synth_record.h), in time order with the
// recorded records, as perf decodes its queues up to each event's time.
// Nothing is written to a file.
//
//   Session::run --> each record at time t: ItraceFeed::deliver_before(t)
//                      ItraceStream (samples before t) --> SynthRecords --> session's visitor
//                    --> the record itself
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "base/error.h"
#include "intelpt/config.h"
#include "intelpt/itrace_options.h"
#include "intelpt/synth.h"
#include "session/session.h"

namespace perfkit::itrace {
class ItraceStream;
class LateChains;
class SynthRecords;
}  // namespace perfkit::itrace

namespace perfkit::inject {

struct ItraceFeedOptions {
  intelpt::ItraceOptions itrace;
  unsigned jobs = 0;  // decoder threads (0: one per core)
  // perf's closing "Warning:\nN instruction trace errors". (The session's
  // own progress shows how far the decode is: it follows the records.)
  std::function<void(const std::string&)> warn;
};

class ItraceFeed : public session::RecordSource {
 public:
  // Attaches the decode of the Intel PT trace of `path` (the file `session`
  // reads, read a second time for the trace) to `session`, which owns it:
  // perf's synthesized events join its event set; with add_callchain
  // (itrace G) the recorded events are marked as having call chains and
  // their samples get the thread stacks' (perf's add_callchain);
  // session.run() then delivers the synthesized samples. False, leaving the
  // session as it is, when the recording holds no Intel PT trace (or is a
  // pipe). Errors: the AUXTRACE_INFO's.
  static Expected<bool> attach(session::Session& session, const std::string& path,
                               ItraceFeedOptions opts);
  ~ItraceFeed() override;
  ItraceFeed(const ItraceFeed&) = delete;
  ItraceFeed& operator=(const ItraceFeed&) = delete;

  Status deliver_before(std::uint64_t time, const Deliver& deliver) override;
  Status finish(const Deliver& deliver) override;

 private:
  ItraceFeed(session::Session& session, std::string path, ItraceFeedOptions opts,
             const intelpt::PtConfig& cfg);
  Status start();
  Status deliver_tsc_before(std::uint64_t tsc, const Deliver& deliver);
  std::span<const std::uint64_t> late_chain(const record::Sample& s);

  session::Session& session_;
  const std::string path_;
  const ItraceFeedOptions opts_;
  const intelpt::PtConfig cfg_;
  std::array<int, static_cast<std::size_t>(intelpt::SampleKind::kError) + 1> event_of_{};
  bool timeless_ = false;
  std::unique_ptr<itrace::ItraceStream> stream_;
  std::unique_ptr<itrace::SynthRecords> records_;
  std::unique_ptr<itrace::LateChains> late_;
  Status late_status_;
  std::uint64_t errors_ = 0;
};

}  // namespace perfkit::inject
