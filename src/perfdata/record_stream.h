// Reading a whole recording in perf's processing order: perf's own records
// (type >= 64) as they are read, kernel records time-ordered through
// OrderedStream, flushed at each FINISHED_ROUND and at the end.
#pragma once

#include <cstdint>
#include <functional>

#include "base/error.h"
#include "perfdata/event_set.h"
#include "perfdata/ordered_stream.h"
#include "perfdata/reader.h"

namespace perfkit::perfdata {

inline constexpr std::uint64_t kNoTimestamp = ~0ULL;

// The time a record is ordered by: a SAMPLE's TIME field, another kernel
// record's sample_id_all TIME; kNoTimestamp when it has none or its attr is unknown.
std::uint64_t record_timestamp(const EventSet& events, const record::RecordView& r);
// The same, for a record of event `attr` (EventSet::attr_index, -1: unknown).
// (inline: every record read is ordered by it)
inline std::uint64_t record_timestamp(const EventSet& events, const record::RecordView& r,
                                      int idx) {
  // perf's own records (AUXTRACE, ...) carry no sample id.
  if (idx < 0 || r.type >= abi::kRecordUserTypeStart) return kNoTimestamp;
  const abi::RecordLayout& l = events[static_cast<std::size_t>(idx)].layout;
  const std::uint64_t st = l.sample_type;
  if (!(st & abi::kSampleTime)) return kNoTimestamp;
  const std::uint8_t* body = r.bytes.data() + abi::kHeaderSize;
  const std::uint64_t len = r.bytes.size() - abi::kHeaderSize;
  if (r.type == abi::kRecordSample) {
    const std::uint64_t at = 8 * (std::uint64_t{(st & abi::kSampleIdentifier) != 0} +
                                  std::uint64_t{(st & abi::kSampleIp) != 0} +
                                  std::uint64_t{(st & abi::kSampleTid) != 0});
    if (at + 8 > len) return kNoTimestamp;
    return load<std::uint64_t>(body + at, r.swap);
  }
  if (!l.sample_id_all || l.trailer_size > len) return kNoTimestamp;
  std::uint64_t at = len - l.trailer_size + ((st & abi::kSampleTid) ? 8 : 0);
  return load<std::uint64_t>(body + at, r.swap);
}

struct RecordStreamOptions {
  bool ordered = true;  // false: deliver in file order
  // Reads (and orders) the records on a thread of its own, a few thousand
  // records ahead of the sink, which still gets every record on the
  // caller's thread, in the same order. For a mapped file; a stream is read
  // on the caller's thread. The sink must not change the reader (its
  // events, ...): the reading thread uses it meanwhile. When the reader
  // itself changes them (a user record of the data section), it first waits
  // for the sink to have taken every record delivered before.
  bool read_ahead = false;
  // When set, kept at the reader's position as of the record the sink gets
  // (with read_ahead: as of the batch of records it came in), for progress.
  std::uint64_t* position = nullptr;
  // With read_ahead: the pages of the file this far behind that position
  // leave the resident set (Reader::release), every 1 MiB, released by the
  // reading thread; 0: none are.
  std::uint64_t release_behind = 0;
};

using RecordSink = std::function<Status(const ReadRecord&, std::uint64_t timestamp)>;

// Reads every record of `reader` and hands it to `sink` in delivery order.
// Stops at the first error from the reader or the sink.
Status process_records(Reader& reader, const RecordStreamOptions& opts, const RecordSink& sink);

}  // namespace perfkit::perfdata
