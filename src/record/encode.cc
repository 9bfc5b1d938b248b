#include "record/encode.h"

#include <limits>

namespace perfkit::record {

using namespace perfkit::abi;

RecordBuilder::RecordBuilder(std::uint32_t type, std::uint16_t misc, bool swap)
    : RecordBuilder({}, type, misc, swap) {}

RecordBuilder::RecordBuilder(std::vector<std::uint8_t> reuse, std::uint32_t type,
                             std::uint16_t misc, bool swap)
    : buf_(std::move(reuse)), swap_(swap) {
  buf_.clear();
  buf_.reserve(64);
  append<std::uint32_t>(buf_, type, swap);
  append<std::uint16_t>(buf_, misc, swap);
  append<std::uint16_t>(buf_, 0, swap);
}

RecordBuilder& RecordBuilder::u8(std::uint8_t v) {
  buf_.push_back(v);
  return *this;
}
RecordBuilder& RecordBuilder::u16(std::uint16_t v) {
  append(buf_, v, swap_);
  return *this;
}
RecordBuilder& RecordBuilder::u32(std::uint32_t v) {
  append(buf_, v, swap_);
  return *this;
}
RecordBuilder& RecordBuilder::u64(std::uint64_t v) {
  append(buf_, v, swap_);
  return *this;
}
RecordBuilder& RecordBuilder::bytes(Bytes b) {
  append_bytes(buf_, b);
  return *this;
}
RecordBuilder& RecordBuilder::zeros(std::size_t n) {
  buf_.insert(buf_.end(), n, 0);
  return *this;
}
RecordBuilder& RecordBuilder::string(std::string_view s, std::size_t align) {
  append_padded_string(buf_, s, align);
  return *this;
}
RecordBuilder& RecordBuilder::fixed_string(std::string_view s, std::size_t n) {
  std::size_t k = std::min(s.size(), n);
  append_bytes(buf_, as_bytes(s.substr(0, k)));
  buf_.insert(buf_.end(), n - k, 0);
  return *this;
}
RecordBuilder& RecordBuilder::misc(std::uint16_t m) {
  store<std::uint16_t>(buf_.data() + 4, m, swap_);
  return *this;
}

RecordBuilder& RecordBuilder::sample_id(const SampleId& id, const RecordLayout& layout) {
  if (!layout.sample_id_all) return *this;
  const std::uint64_t st = layout.sample_type;
  if (st & kSampleTid) u32(id.pid).u32(id.tid);
  if (st & kSampleTime) u64(id.time);
  if (st & kSampleId) u64(id.id);
  if (st & kSampleStreamId) u64(id.stream_id);
  if (st & kSampleCpu) u32(id.cpu).u32(0);
  if (st & kSampleIdentifier) u64(id.identifier);
  return *this;
}

std::vector<std::uint8_t> RecordBuilder::finish() {
  std::size_t n = std::min<std::size_t>(buf_.size(), std::numeric_limits<std::uint16_t>::max());
  store<std::uint16_t>(buf_.data() + 6, static_cast<std::uint16_t>(n), swap_);
  return std::move(buf_);
}

void RecordBuilder::finish_into(std::vector<std::uint8_t>& out) {
  auto b = finish();
  out.insert(out.end(), b.begin(), b.end());
}

namespace {

void put_regs(RecordBuilder& b, const Regs& regs) {
  b.u64(regs.abi);
  if (regs.abi != kRegsAbiNone)
    for (std::uint64_t i = 0; i < regs.values.size(); ++i) b.u64(regs.values[i]);
}

void put_read(RecordBuilder& b, const ReadValues& rv, std::uint64_t rf) {
  if (rf & kFormatGroup) {
    b.u64(rv.nr);
    if (rf & kFormatTotalTimeEnabled) b.u64(rv.time_enabled);
    if (rf & kFormatTotalTimeRunning) b.u64(rv.time_running);
    for (std::uint64_t i = 0; i < rv.nr; ++i) {
      auto v = rv.at(i);
      b.u64(v.value);
      if (rf & kFormatId) b.u64(v.id);
      if (rf & kFormatLost) b.u64(v.lost);
    }
    return;
  }
  auto v = rv.nr ? rv.at(0) : ReadValues::Value{};
  b.u64(v.value);
  if (rf & kFormatTotalTimeEnabled) b.u64(rv.time_enabled);
  if (rf & kFormatTotalTimeRunning) b.u64(rv.time_running);
  if (rf & kFormatId) b.u64(v.id);
  if (rf & kFormatLost) b.u64(v.lost);
}

}  // namespace

std::vector<std::uint8_t> encode_sample(const Sample& s, const RecordLayout& layout,
                                        std::uint16_t misc, bool swap) {
  std::vector<std::uint8_t> out;
  encode_sample_into(s, layout, misc, swap, out);
  return out;
}

void encode_sample_into(const Sample& s, const RecordLayout& layout, std::uint16_t misc, bool swap,
                        std::vector<std::uint8_t>& out) {
  RecordBuilder b(std::move(out), kRecordSample, misc, swap);
  const std::uint64_t st = layout.sample_type;
  if (st & kSampleIdentifier) b.u64(s.identifier);
  if (st & kSampleIp) b.u64(s.ip);
  if (st & kSampleTid) b.u32(s.pid).u32(s.tid);
  if (st & kSampleTime) b.u64(s.time);
  if (st & kSampleAddr) b.u64(s.addr);
  if (st & kSampleId) b.u64(s.id);
  if (st & kSampleStreamId) b.u64(s.stream_id);
  if (st & kSampleCpu) b.u32(s.cpu).u32(s.cpu_reserved);
  if (st & kSamplePeriod) b.u64(s.period);
  if (st & kSampleRead) put_read(b, s.read, layout.read_format);
  if (st & kSampleCallchain) {
    b.u64(s.callchain.size());
    for (std::uint64_t i = 0; i < s.callchain.size(); ++i) b.u64(s.callchain[i]);
  }
  if (st & kSampleRaw) {
    b.u32(static_cast<std::uint32_t>(s.raw.size())).bytes(s.raw);
  }
  if (st & kSampleBranchStack) {
    b.u64(s.branch_stack.nr);
    if (layout.branch_hw_index) b.u64(s.branch_stack.hw_idx);
    for (std::uint64_t i = 0; i < s.branch_stack.nr; ++i) {
      auto e = s.branch_stack.at(i);
      b.u64(e.from).u64(e.to).u64(e.flags);
    }
  }
  if (st & kSampleRegsUser) put_regs(b, s.user_regs);
  if (st & kSampleStackUser) {
    b.u64(s.user_stack.size()).bytes(s.user_stack);
    if (!s.user_stack.empty()) b.u64(s.user_stack_dyn_size);
  }
  if (st & kSampleWeightType) b.u64(s.weight);
  if (st & kSampleDataSrc) b.u64(s.data_src);
  if (st & kSampleTransaction) b.u64(s.transaction);
  if (st & kSampleRegsIntr) put_regs(b, s.intr_regs);
  if (st & kSamplePhysAddr) b.u64(s.phys_addr);
  if (st & kSampleCgroup) b.u64(s.cgroup);
  if (st & kSampleDataPageSize) b.u64(s.data_page_size);
  if (st & kSampleCodePageSize) b.u64(s.code_page_size);
  if (st & kSampleAux) b.u64(s.aux.size()).bytes(s.aux);
  out = b.finish();
}

}  // namespace perfkit::record
