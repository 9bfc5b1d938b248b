// record --threads: the data.N files of a perf.data directory, one per ring
// buffer, each the sink its buffer's worker writes to (with -z through a zstd
// stream of its own: perf's reader inflates each file apart).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "capture/compressor.h"
#include "capture/synthesize.h"

namespace perfkit::recorder {

class RingFiles {
 public:
  // Creates DIR/data.0 ... DIR/data.(n-1). `compression_level` 0: none.
  // Errors: a file that cannot be created, zstd's.
  static Expected<std::unique_ptr<RingFiles>> create(const std::string& dir, std::size_t n,
                                                     int compression_level);
  ~RingFiles();

  std::vector<capture::RecordSink*> sinks();
  // Writes what is buffered and closes the files. Errors: the first write's.
  Status finish();
  std::uint64_t bytes_written() const;
  // With -z: bytes given to the compressors, and of the records they made.
  std::uint64_t bytes_in() const;
  std::uint64_t bytes_out() const;

 private:
  class File;
  RingFiles() = default;
  std::vector<std::unique_ptr<File>> files_;
};

}  // namespace perfkit::recorder
