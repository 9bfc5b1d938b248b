// The perf.data file header: PERFILE2 (file mode), the old PERFFILE (v1), and
// the 16-byte pipe-mode header. The magic also tells the byte order.
#pragma once

#include <bitset>
#include <cstdint>
#include <vector>

#include "abi/perf_event.h"
#include "base/bytes.h"
#include "base/error.h"

namespace perfkit::perfdata {

inline constexpr std::uint64_t kMagic2 = 0x32454c4946524550ULL;  // "PERFILE2" little-endian
inline constexpr std::uint64_t kMagic1 = 0x454c494646524550ULL;  // "PERFFILE"
inline constexpr std::uint64_t kFileHeaderSize = 104;
inline constexpr std::uint64_t kPipeHeaderSize = 16;
inline constexpr std::uint64_t kFileSectionSize = 16;

struct FileSection {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t end() const { return offset + size; }
};

struct FileHeader {
  bool pipe = false;
  int version = 1;  // 1 for PERFILE2, 0 for the old PERFFILE
  bool swap = false;
  std::uint64_t size = 0;       // header.size
  std::uint64_t attr_size = 0;  // bytes per attrs entry: attr + ids section
  FileSection attrs, data, event_types;
  std::bitset<abi::kFeatBits> features;

  bool has_feature(std::uint32_t f) const { return f < abi::kFeatBits && features.test(f); }
  // Where the feature section table starts (after the data section).
  std::uint64_t feature_offset() const { return data.end(); }
  std::vector<std::uint32_t> feature_ids() const;
};

// Parses the header from the start of a file or stream. `bytes` must hold at
// least 16 bytes for a pipe header and 104 for a file header (or the whole
// file when shorter). Errors: too short, bad magic, impossible sizes.
Expected<FileHeader> parse_file_header(Bytes bytes);

// True if the first 16 bytes are a pipe-mode header (size field 16).
bool is_pipe_header(Bytes first16);

// Encodes a file-mode header in the given byte order.
std::vector<std::uint8_t> encode_file_header(const FileHeader& h);
std::vector<std::uint8_t> encode_pipe_header(bool swap);

}  // namespace perfkit::perfdata
