// Sample: the fields of a PERF_RECORD_SAMPLE decoded by its attr's layout,
// and SampleId: the sample_id_all trailer of every other record. Variable
// parts (callchain, raw data, branch stack, registers, user stack) stay views
// into the record; decoding allocates nothing.
#pragma once

#include <cstdint>

#include "abi/layout.h"
#include "base/error.h"
#include "record/record_view.h"

namespace perfkit::record {

// The values of a READ field (sample READ or a PERF_RECORD_READ body).
struct ReadValues {
  std::uint64_t read_format = 0;
  std::uint64_t time_enabled = 0;
  std::uint64_t time_running = 0;
  std::uint64_t nr = 0;  // number of values (1 without GROUP)
  const std::uint8_t* values = nullptr;
  bool swap = false;

  struct Value {
    std::uint64_t value = 0, id = 0, lost = 0;
  };
  Value at(std::uint64_t i) const;
  // Bytes per value entry: value [id] [lost].
  std::uint32_t entry_size() const;
};

struct BranchEntry {
  std::uint64_t from = 0, to = 0, flags = 0;
};

struct BranchStack {
  std::uint64_t nr = 0;
  std::uint64_t hw_idx = 0;
  bool has_hw_idx = false;
  const std::uint8_t* entries = nullptr;
  bool swap = false;
  BranchEntry at(std::uint64_t i) const {
    const std::uint8_t* p = entries + 24 * i;
    return {load<std::uint64_t>(p, swap), load<std::uint64_t>(p + 8, swap),
            load<std::uint64_t>(p + 16, swap)};
  }
};

struct Regs {
  std::uint64_t abi = 0;
  std::uint64_t mask = 0;
  U64Array values;  // one per set bit of mask, lowest bit first
};

struct Sample {
  std::uint64_t sample_type = 0;
  std::uint64_t identifier = 0;
  std::uint64_t ip = 0;
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t time = 0;
  std::uint64_t addr = 0;
  std::uint64_t id = 0;
  std::uint64_t stream_id = 0;
  std::uint32_t cpu = 0, cpu_reserved = 0;
  std::uint64_t period = 0;
  ReadValues read;
  U64Array callchain;
  Bytes raw;
  BranchStack branch_stack;
  Regs user_regs;
  Bytes user_stack;
  std::uint64_t user_stack_dyn_size = 0;
  std::uint64_t weight = 0;  // WEIGHT, or WEIGHT_STRUCT's raw u64
  std::uint64_t data_src = 0;
  std::uint64_t transaction = 0;
  Regs intr_regs;
  std::uint64_t phys_addr = 0;
  std::uint64_t cgroup = 0;
  std::uint64_t data_page_size = 0;
  std::uint64_t code_page_size = 0;
  Bytes aux;

  // WEIGHT_STRUCT parts: var1_dw (low 32 bits), var2_w, var3_w.
  std::uint32_t weight_var1() const { return static_cast<std::uint32_t>(weight); }
  std::uint16_t weight_var2() const { return static_cast<std::uint16_t>(weight >> 32); }
  std::uint16_t weight_var3() const { return static_cast<std::uint16_t>(weight >> 48); }
  // perf's sample->weight: WEIGHT whole, WEIGHT_STRUCT's var1, else 0; and
  // its ins_lat: WEIGHT_STRUCT's var2, else 0.
  std::uint64_t perf_weight() const {
    if (sample_type & abi::kSampleWeight) return weight;
    return (sample_type & abi::kSampleWeightStruct) ? weight_var1() : 0;
  }
  std::uint32_t perf_ins_lat() const {
    return (sample_type & abi::kSampleWeightStruct) ? weight_var2() : 0;
  }
};

// Decodes a SAMPLE record. Errors name the record's file offset and the field
// that runs past the record's end (or an impossible count).
Status decode_sample(const RecordView& r, const abi::RecordLayout& layout, Sample& out);

template <bool Swap>
Status decode_sample_as(const RecordView& r, const abi::RecordLayout& layout, Sample& out);

// A 128-bit digest of a call chain's words as recorded (XXH3-128, with their
// length): what identifies a chain in raw sample keys (session/raw_key.h),
// which then need neither keep nor compare the words. Made when the record
// is read ahead on another thread, or when its key is first made. Never
// all zeros, which stands for "not made".
struct ChainDigest {
  std::uint64_t lo = 0, hi = 0;
  bool made() const { return (lo | hi) != 0; }
  bool operator==(const ChainDigest&) const = default;
};
ChainDigest callchain_digest(Bytes words);

// The sample_id_all trailer of a non-SAMPLE record.
struct SampleId {
  std::uint64_t sample_type = 0;  // which fields are present
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t time = 0;
  std::uint64_t id = 0;
  std::uint64_t stream_id = 0;
  std::uint32_t cpu = 0;
  std::uint64_t identifier = 0;
  bool present = false;  // the attr has sample_id_all and the record had room
};

// Decodes the trailer of `r` (not a SAMPLE) for an attr with `layout`.
// Returns a SampleId with present=false when the attr has no sample_id_all
// or the record is too short to hold the trailer.
SampleId decode_sample_id(const RecordView& r, const abi::RecordLayout& layout);

// Decodes a READ value block at `c`'s position (PERF_RECORD_READ body or the
// READ field of a sample). Returns false when it runs past `end`.
bool decode_read_values(const std::uint8_t* p, const std::uint8_t* end, std::uint64_t read_format,
                        bool swap, ReadValues& out, const std::uint8_t** next);

}  // namespace perfkit::record
