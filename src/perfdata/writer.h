// Writer: perf.data output in file mode (header, ids, attrs, data, feature
// sections, as perf lays them out) or pipe mode (stream header, HEADER_ATTR
// and HEADER_FEATURE records, then data). Records are written as given; they
// must already be in the output's byte order.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/output.h"
#include "perfdata/event_set.h"
#include "record/record_view.h"

namespace perfkit::perfdata {

struct WriterOptions {
  bool pipe = false;
  bool swap = false;  // write in the other byte order (tests, cross-endian files)
  // perf_event_attr size to store; 0 picks 128 (what perf 6.1 reads) unless an
  // attr needs a larger one (config3 set).
  std::uint32_t attr_size = 0;
};

struct FeatureData {
  std::uint32_t id = 0;
  std::vector<std::uint8_t> bytes;
  bool operator==(const FeatureData&) const = default;
};

class Writer {
 public:
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Creates `path` ("-" writes a pipe-mode stream to stdout). Errors name the path.
  static Expected<std::unique_ptr<Writer>> create(const std::string& path, WriterOptions opts);
  // Writes to `fd` (not owned).
  static Expected<std::unique_ptr<Writer>> create_fd(int fd, std::string name, WriterOptions opts);

  // Starts the output. File mode writes a provisional header and reserves room
  // for the attrs and ids of `events`; pipe mode writes the stream header, one
  // HEADER_ATTR per attr, then `pipe_features` as perf streams them: HEADER_FEATURE
  // records with an end marker, TRACING_DATA as a HEADER_TRACING_DATA record,
  // BUILD_ID as HEADER_BUILD_ID records.
  Status begin(const EventSet& events, std::span<const FeatureData> pipe_features = {});

  // Appends a record, then its trailing payload (AUXTRACE data, tracing data).
  Status write(Bytes record, Bytes trailing = {});
  Status write(const record::RecordView& r) { return write(r.bytes, r.trailing); }

  // Ends the output. File mode writes the attrs with their ids (the final
  // `events`, which may have gained ids), the feature sections and the
  // header; pipe mode only flushes.
  Status finish(const EventSet& events, std::span<const FeatureData> features);

  bool pipe() const { return opts_.pipe; }
  bool swapped() const { return opts_.swap; }
  std::uint64_t data_size() const { return out_.offset() - data_offset_; }
  std::uint64_t bytes_written() const { return out_.offset(); }
  const std::string& name() const { return out_.name(); }

 private:
  Writer(FdWriter out, WriterOptions opts);
  std::uint32_t attr_size_for(const EventSet& events) const;
  std::vector<std::uint8_t> encode_attrs(const EventSet& events, std::uint64_t at,
                                         std::uint64_t* attrs_offset) const;

  FdWriter out_;
  WriterOptions opts_;
  std::uint64_t data_offset_ = 0;
  std::uint64_t reserved_end_ = 0;  // end of the room kept for ids and attrs
};

// Encodes a HEADER_ATTR record for one attr and its ids.
std::vector<std::uint8_t> encode_header_attr(const abi::EventAttr& attr, std::uint32_t attr_size,
                                             std::span<const std::uint64_t> ids, bool swap);
// Encodes a HEADER_FEATURE record.
std::vector<std::uint8_t> encode_header_feature(const FeatureData& f, bool swap);

}  // namespace perfkit::perfdata
