#include "perfdata/file_header.h"

#include "base/cursor.h"

namespace perfkit::perfdata {

std::vector<std::uint32_t> FileHeader::feature_ids() const {
  std::vector<std::uint32_t> ids;
  for (std::uint32_t i = 0; i < abi::kFeatBits; ++i)
    if (features.test(i)) ids.push_back(i);
  return ids;
}

namespace {

struct Magic {
  int version;
  bool swap;
};

Expected<Magic> detect_magic(Bytes b) {
  std::uint64_t m = load<std::uint64_t>(b.data(), false);
  if (m == kMagic2) return Magic{1, false};
  if (m == byteswap(kMagic2)) return Magic{1, true};
  if (m == kMagic1) {
    // The old magic is a string: its byte order comes from a plausible size.
    std::uint64_t sz = load<std::uint64_t>(b.data() + 8, false);
    return Magic{0, sz > 0xffff && byteswap(sz) <= 0xffff};
  }
  return make_error("offset 0: not a perf.data file (bad magic {:#018x})", m);
}

FileSection section(Cursor& c) {
  FileSection s;
  s.offset = c.u64();
  s.size = c.u64();
  return s;
}

// The feature bitmap is 4 u64 words; a 32-bit big-endian writer stored it
// as u32 words, which shows as HOSTNAME missing after a u64 swap.
std::bitset<abi::kFeatBits> read_feature_bits(Bytes b, bool swap) {
  std::bitset<abi::kFeatBits> bits;
  for (int w = 0; w < 4; ++w) {
    std::uint64_t v = load<std::uint64_t>(b.data() + 8 * w, swap);
    for (int i = 0; i < 64; ++i)
      if (v & (1ULL << i)) bits.set(64 * w + i);
  }
  if (swap && !bits.test(abi::kFeatHostname)) {
    std::bitset<abi::kFeatBits> alt;
    for (int w = 0; w < 8; ++w) {
      std::uint32_t v = load<std::uint32_t>(b.data() + 4 * w, true);
      for (int i = 0; i < 32; ++i)
        if (v & (1u << i)) alt.set(32 * w + i);
    }
    if (alt.test(abi::kFeatHostname)) return alt;
  }
  return bits;
}

}  // namespace

bool is_pipe_header(Bytes b) {
  if (b.size() < kPipeHeaderSize) return false;
  std::uint64_t sz = load<std::uint64_t>(b.data() + 8, false);
  return sz == kPipeHeaderSize || byteswap(sz) == kPipeHeaderSize;
}

Expected<FileHeader> parse_file_header(Bytes b) {
  if (b.size() < kPipeHeaderSize)
    return make_error("offset 0: file of {} bytes is too short for a perf.data header", b.size());
  PK_ASSIGN(Magic magic, detect_magic(b));
  FileHeader h;
  h.version = magic.version;
  h.swap = magic.swap;
  Cursor c(b, h.swap);
  c.skip(8);
  h.size = c.u64();
  if (h.size == kPipeHeaderSize) {
    h.pipe = true;
    return h;
  }
  if (b.size() < kFileHeaderSize)
    return make_error("offset 0: file of {} bytes is too short for a perf.data header of {} bytes",
                      b.size(), kFileHeaderSize);
  // Very old perf wrote a header without the feature bitmap (72 bytes).
  constexpr std::uint64_t kNoFeaturesSize = 72;
  if (h.size != kFileHeaderSize && h.size != kNoFeaturesSize)
    return make_error("offset 0x8: header size {} is neither {} (file) nor {} (pipe)", h.size,
                      kFileHeaderSize, kPipeHeaderSize);
  h.attr_size = c.u64();
  h.attrs = section(c);
  h.data = section(c);
  h.event_types = section(c);
  if (h.size == kFileHeaderSize) h.features = read_feature_bits(b.subspan(72, 32), h.swap);
  if (h.attr_size < abi::kAttrSizeVer0 + kFileSectionSize || h.attr_size > (1u << 16))
    return make_error("offset 0x10: attr_size {} makes no sense (expected {} to {})", h.attr_size,
                      abi::kAttrSizeVer0 + kFileSectionSize, 1u << 16);
  return h;
}

std::vector<std::uint8_t> encode_file_header(const FileHeader& h) {
  std::vector<std::uint8_t> out;
  out.reserve(kFileHeaderSize);
  append<std::uint64_t>(out, kMagic2, h.swap);
  append<std::uint64_t>(out, kFileHeaderSize, h.swap);
  append<std::uint64_t>(out, h.attr_size, h.swap);
  for (const FileSection* s : {&h.attrs, &h.data, &h.event_types}) {
    append<std::uint64_t>(out, s->offset, h.swap);
    append<std::uint64_t>(out, s->size, h.swap);
  }
  for (int w = 0; w < 4; ++w) {
    std::uint64_t v = 0;
    for (int i = 0; i < 64; ++i)
      if (h.features.test(64 * w + i)) v |= 1ULL << i;
    append<std::uint64_t>(out, v, h.swap);
  }
  return out;
}

std::vector<std::uint8_t> encode_pipe_header(bool swap) {
  std::vector<std::uint8_t> out;
  append<std::uint64_t>(out, kMagic2, swap);
  append<std::uint64_t>(out, kPipeHeaderSize, swap);
  return out;
}

}  // namespace perfkit::perfdata
