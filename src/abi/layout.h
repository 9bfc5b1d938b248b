// RecordLayout: what an attr implies for the records it produces, computed
// once per attr: where the id sits in a SAMPLE and in the sample_id_all
// trailer of other records, the trailer's size, and the shape of READ values.
#pragma once

#include <bit>
#include <cstdint>

#include "abi/attr.h"

namespace perfkit::abi {

struct RecordLayout {
  std::uint64_t sample_type = 0;
  std::uint64_t read_format = 0;
  bool sample_id_all = false;
  bool branch_hw_index = false;  // BRANCH_STACK carries hw_idx before entries
  std::uint64_t regs_user_mask = 0;
  std::uint64_t regs_intr_mask = 0;
  std::uint32_t regs_user_count = 0;
  std::uint32_t regs_intr_count = 0;
  // Index (in u64 words after the header) of the id in a SAMPLE; -1 if none.
  int id_pos = -1;
  // Index counted back from the end (1 = last word) of the id in the
  // sample_id_all trailer of other records; -1 if none.
  int is_pos = -1;
  // Bytes of the sample_id_all trailer on non-SAMPLE records (0 without it).
  std::uint32_t trailer_size = 0;
  // Bytes of one READ value block without GROUP (value + optional fields).
  std::uint32_t read_single_size = 0;
  // Bytes of a SAMPLE's fixed-size leading fields (IDENTIFIER to PERIOD); 0
  // when it has none (or the layout was not made by make_layout).
  std::uint32_t sample_head_size = 0;
};

RecordLayout make_layout(const EventAttr& attr);

// Bytes the sample_id_all trailer takes for `sample_type`.
std::uint32_t trailer_size(std::uint64_t sample_type);
int id_position(std::uint64_t sample_type);
int id_trailer_position(std::uint64_t sample_type);

}  // namespace perfkit::abi
