#include "abi/layout.h"

namespace perfkit::abi {

int id_position(std::uint64_t st) {
  if (st & kSampleIdentifier) return 0;
  if (!(st & kSampleId)) return -1;
  int idx = 0;
  for (std::uint64_t bit : {kSampleIp, kSampleTid, kSampleTime, kSampleAddr})
    if (st & bit) ++idx;
  return idx;
}

int id_trailer_position(std::uint64_t st) {
  if (st & kSampleIdentifier) return 1;
  if (!(st & kSampleId)) return -1;
  int idx = 1;
  if (st & kSampleCpu) ++idx;
  if (st & kSampleStreamId) ++idx;
  return idx;
}

std::uint32_t trailer_size(std::uint64_t st) {
  std::uint32_t n = 0;
  for (std::uint64_t bit :
       {kSampleTid, kSampleTime, kSampleId, kSampleStreamId, kSampleCpu, kSampleIdentifier})
    if (st & bit) n += 8;
  return n;
}

RecordLayout make_layout(const EventAttr& attr) {
  RecordLayout l;
  l.sample_type = attr.sample_type;
  l.read_format = attr.read_format;
  l.sample_id_all = attr.sample_id_all();
  l.branch_hw_index = (attr.branch_sample_type & kBranchHwIndex) != 0;
  l.regs_user_mask = attr.sample_regs_user;
  l.regs_intr_mask = attr.sample_regs_intr;
  l.regs_user_count = static_cast<std::uint32_t>(std::popcount(attr.sample_regs_user));
  l.regs_intr_count = static_cast<std::uint32_t>(std::popcount(attr.sample_regs_intr));
  l.id_pos = id_position(attr.sample_type);
  l.is_pos = id_trailer_position(attr.sample_type);
  l.trailer_size = l.sample_id_all ? trailer_size(attr.sample_type) : 0;
  std::uint32_t rs = 8;
  for (std::uint64_t bit :
       {kFormatTotalTimeEnabled, kFormatTotalTimeRunning, kFormatId, kFormatLost})
    if (attr.read_format & bit) rs += 8;
  l.read_single_size = rs;
  for (std::uint64_t bit : {kSampleIdentifier, kSampleIp, kSampleTid, kSampleTime, kSampleAddr,
                            kSampleId, kSampleStreamId, kSampleCpu, kSamplePeriod})
    if (attr.sample_type & bit) l.sample_head_size += 8;
  return l;
}

}  // namespace perfkit::abi
