// Encoders: build records byte by byte in either byte order. Used by the
// recorder's synthesized side-band, by inject, and by tests that build whole
// files (quipper-style fluent builders).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "abi/layout.h"
#include "base/bytes.h"
#include "record/sample.h"

namespace perfkit::record {

class RecordBuilder {
 public:
  RecordBuilder(std::uint32_t type, std::uint16_t misc = 0, bool swap = false);
  // Builds into `reuse`'s storage (its bytes are dropped, its capacity kept),
  // which finish() hands back.
  RecordBuilder(std::vector<std::uint8_t> reuse, std::uint32_t type, std::uint16_t misc, bool swap);

  RecordBuilder& u8(std::uint8_t v);
  RecordBuilder& u16(std::uint16_t v);
  RecordBuilder& u32(std::uint32_t v);
  RecordBuilder& u64(std::uint64_t v);
  RecordBuilder& bytes(Bytes b);
  RecordBuilder& zeros(std::size_t n);
  // A NUL-terminated string zero-padded to a multiple of `align` bytes.
  RecordBuilder& string(std::string_view s, std::size_t align = 8);
  // A char field of exactly `n` bytes.
  RecordBuilder& fixed_string(std::string_view s, std::size_t n);
  // The sample_id_all trailer for `layout` (nothing if it has none).
  RecordBuilder& sample_id(const SampleId& id, const abi::RecordLayout& layout);
  RecordBuilder& misc(std::uint16_t m);

  std::size_t size() const { return buf_.size(); }
  bool swapped() const { return swap_; }
  // Sets header.size and returns the record's bytes.
  std::vector<std::uint8_t> finish();
  // Appends the record to `out`.
  void finish_into(std::vector<std::uint8_t>& out);

 private:
  std::vector<std::uint8_t> buf_;
  bool swap_;
};

// Encodes a SAMPLE for `layout` from the fields of `s` (those selected by the
// layout's sample_type). Variable parts are copied from s's views.
std::vector<std::uint8_t> encode_sample(const Sample& s, const abi::RecordLayout& layout,
                                        std::uint16_t misc, bool swap);
// The same into `out` (replacing what it held; its storage is reused).
void encode_sample_into(const Sample& s, const abi::RecordLayout& layout, std::uint16_t misc,
                        bool swap, std::vector<std::uint8_t>& out);

}  // namespace perfkit::record
