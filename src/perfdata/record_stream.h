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
std::uint64_t record_timestamp(const EventSet& events, const record::RecordView& r, int attr);

struct RecordStreamOptions {
  bool ordered = true;  // false: deliver in file order
};

using RecordSink = std::function<Status(const ReadRecord&, std::uint64_t timestamp)>;

// Reads every record of `reader` and hands it to `sink` in delivery order.
// Stops at the first error from the reader or the sink.
Status process_records(Reader& reader, const RecordStreamOptions& opts, const RecordSink& sink);

}  // namespace perfkit::perfdata
