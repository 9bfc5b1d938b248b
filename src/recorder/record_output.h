// Where `perfkit record` writes: the perf.data writer behind the recorder's
// sink (with -z, ring data goes through zstd into COMPRESSED records), the
// --max-size limit, and the salvage of a file whose writing failed (disk full):
// the records that reached the disk whole are kept and the file gets its
// attrs and header, so what was recorded before the failure stays readable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "capture/compressor.h"
#include "capture/synthesize.h"
#include "perfdata/event_set.h"
#include "perfdata/writer.h"

namespace perfkit::recorder {

class RecordOutput : public capture::RecordSink {
 public:
  // `compressor` may be null (no -z); `max_size` 0 means no limit.
  RecordOutput(perfdata::Writer& writer, capture::RecordCompressor* compressor,
               std::uint64_t max_size)
      : writer_(&writer), compressor_(compressor), max_size_(max_size) {}
  // Writes to `writer` from now on (--switch-output's next file).
  void set_writer(perfdata::Writer& writer) { writer_ = &writer; }

  Status write(Bytes records) override;
  Status write_ring(SplitBytes data) override;
  bool full() const override { return max_size_ && writer_->bytes_written() >= max_size_; }

  // The first write error, if any (the writer's sticky error).
  const std::optional<Error>& failure() const { return failure_; }

 private:
  Status check(Status st);

  perfdata::Writer* writer_;
  capture::RecordCompressor* compressor_;
  std::uint64_t max_size_;
  std::vector<std::uint8_t> buffer_;
  std::optional<Error> failure_;
};

// Makes the file-mode recording at `path` readable after a write failure:
// truncates its data at the last whole record, writes the attrs with their
// ids into the room the writer reserved (which ends at `data_offset`), then
// the feature sections if they still fit, then the header. Returns the bytes
// of data kept. Errors: the file cannot be opened or its header written.
Expected<std::uint64_t> salvage_recording(const std::string& path, const perfdata::EventSet& events,
                                          std::uint64_t data_offset,
                                          std::span<const perfdata::FeatureData> features);

}  // namespace perfkit::recorder
