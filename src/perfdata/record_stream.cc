#include "perfdata/record_stream.h"

namespace perfkit::perfdata {

using namespace perfkit::abi;

std::uint64_t record_timestamp(const EventSet& events, const record::RecordView& r) {
  return record_timestamp(events, r, events.attr_index(r));
}

std::uint64_t record_timestamp(const EventSet& events, const record::RecordView& r, int idx) {
  // perf's own records (AUXTRACE, ...) carry no sample id.
  if (idx < 0 || r.type >= kRecordUserTypeStart) return kNoTimestamp;
  const RecordLayout& l = events[static_cast<std::size_t>(idx)].layout;
  const std::uint64_t st = l.sample_type;
  if (!(st & kSampleTime)) return kNoTimestamp;
  const std::uint8_t* body = r.bytes.data() + kHeaderSize;
  const std::uint64_t len = r.bytes.size() - kHeaderSize;
  if (r.type == kRecordSample) {
    std::uint64_t at = 0;
    for (std::uint64_t bit : {kSampleIdentifier, kSampleIp, kSampleTid})
      if (st & bit) at += 8;
    if (at + 8 > len) return kNoTimestamp;
    return load<std::uint64_t>(body + at, r.swap);
  }
  if (!l.sample_id_all || l.trailer_size > len) return kNoTimestamp;
  std::uint64_t at = len - l.trailer_size + ((st & kSampleTid) ? 8 : 0);
  return load<std::uint64_t>(body + at, r.swap);
}

Status process_records(Reader& reader, const RecordStreamOptions& opts, const RecordSink& sink) {
  OrderedStream stream(sink);
  ReadRecord rec;
  for (;;) {
    PK_ASSIGN(bool got, reader.next(rec));
    if (!got) break;
    const auto& v = rec.view;
    if (v.type >= kRecordUserTypeStart || !opts.ordered) {
      PK_TRY(sink(rec, kNoTimestamp));
      if (v.type == kRecordFinishedRound && opts.ordered) PK_TRY(stream.round());
      continue;
    }
    rec.attr = reader.events().attr_index(v);
    PK_TRY(stream.push(rec, record_timestamp(reader.events(), v, rec.attr)));
    rec.attr = ReadRecord::kAttrNotLooked;
  }
  return stream.finish();
}

}  // namespace perfkit::perfdata
