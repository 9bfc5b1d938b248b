#include "record/sample.h"

#include <bit>
#include <cstring>

// (inlined: the digest of a short chain is a few dozen instructions)
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace perfkit::record {

using namespace perfkit::abi;

std::uint32_t ReadValues::entry_size() const {
  std::uint32_t n = 8;
  if (read_format & kFormatId) n += 8;
  if (read_format & kFormatLost) n += 8;
  return n;
}

ReadValues::Value ReadValues::at(std::uint64_t i) const {
  Value v;
  if (read_format & kFormatGroup) {
    const std::uint8_t* p = values + i * entry_size();
    v.value = load<std::uint64_t>(p, swap);
    p += 8;
    if (read_format & kFormatId) {
      v.id = load<std::uint64_t>(p, swap);
      p += 8;
    }
    if (read_format & kFormatLost) v.lost = load<std::uint64_t>(p, swap);
    return v;
  }
  // Without GROUP: value [enabled] [running] [id] [lost]; `values` is the value.
  const std::uint8_t* p = values;
  v.value = load<std::uint64_t>(p, swap);
  p += 8;
  if (read_format & kFormatTotalTimeEnabled) p += 8;
  if (read_format & kFormatTotalTimeRunning) p += 8;
  if (read_format & kFormatId) {
    v.id = load<std::uint64_t>(p, swap);
    p += 8;
  }
  if (read_format & kFormatLost) v.lost = load<std::uint64_t>(p, swap);
  return v;
}

bool decode_read_values(const std::uint8_t* p, const std::uint8_t* end, std::uint64_t rf, bool swap,
                        ReadValues& out, const std::uint8_t** next) {
  out.read_format = rf;
  out.swap = swap;
  auto avail = [&](std::uint64_t n) { return static_cast<std::uint64_t>(end - p) >= n; };
  if (rf & kFormatGroup) {
    if (!avail(8)) return false;
    const std::uint64_t nr = load<std::uint64_t>(p, swap);
    p += 8;
    if (rf & kFormatTotalTimeEnabled) {
      if (!avail(8)) return false;
      out.time_enabled = load<std::uint64_t>(p, swap);
      p += 8;
    }
    if (rf & kFormatTotalTimeRunning) {
      if (!avail(8)) return false;
      out.time_running = load<std::uint64_t>(p, swap);
      p += 8;
    }
    std::uint64_t es = out.entry_size();
    if (nr > static_cast<std::uint64_t>(end - p) / es) return false;
    out.nr = nr;
    out.values = p;
    *next = p + nr * es;
    return true;
  }
  std::uint64_t n = 8;
  for (std::uint64_t bit :
       {kFormatTotalTimeEnabled, kFormatTotalTimeRunning, kFormatId, kFormatLost})
    if (rf & bit) n += 8;
  if (!avail(n)) return false;
  out.nr = 1;
  out.values = p;
  const std::uint8_t* q = p + 8;
  if (rf & kFormatTotalTimeEnabled) {
    out.time_enabled = load<std::uint64_t>(q, swap);
    q += 8;
  }
  if (rf & kFormatTotalTimeRunning) out.time_running = load<std::uint64_t>(q, swap);
  *next = p + n;
  return true;
}

namespace {

Error truncated(const RecordView& r, const char* field) {
  return make_error("offset {:#x}: SAMPLE record of {} bytes is too short for its {} field",
                    r.offset, r.size, field);
}

}  // namespace

template <bool Swap>
Status decode_sample_as(const RecordView& r, const RecordLayout& layout, Sample& s) {
  const std::uint8_t* p = r.bytes.data() + kHeaderSize;
  const std::uint8_t* end = r.bytes.data() + r.bytes.size();
  const std::uint64_t st = layout.sample_type;
  s.sample_type = st;
  auto u64 = [&](std::uint64_t& out) {
    if (end - p < 8) return false;
    out = load<std::uint64_t, Swap>(p);
    p += 8;
    return true;
  };
  auto u32pair = [&](std::uint32_t& a, std::uint32_t& b) {
    if (end - p < 8) return false;
    a = load<std::uint32_t, Swap>(p);
    b = load<std::uint32_t, Swap>(p + 4);
    p += 8;
    return true;
  };
  auto regs = [&](Regs& out, std::uint64_t mask, std::uint32_t count) {
    if (!u64(out.abi)) return false;
    out.mask = mask;
    if (out.abi == kRegsAbiNone) return true;
    if (static_cast<std::uint64_t>(end - p) / 8 < count) return false;
    out.values = U64Array(p, count, Swap);
    p += 8ULL * count;
    return true;
  };

  if (layout.sample_head_size != 0 &&
      static_cast<std::uint64_t>(end - p) >= layout.sample_head_size) {
    // The record holds every fixed-size leading field: each is read in its
    // place, without a check of its own (most samples have only these and
    // a call chain). (Through a copy of p: p's address is taken below, so
    // p itself lives in memory.)
    const std::uint8_t* q = p;
    auto take = [&q](std::uint64_t& out) {
      out = load<std::uint64_t, Swap>(q);
      q += 8;
    };
    auto take_pair = [&q](std::uint32_t& a, std::uint32_t& b) {
      a = load<std::uint32_t, Swap>(q);
      b = load<std::uint32_t, Swap>(q + 4);
      q += 8;
    };
    if (st & kSampleIdentifier) take(s.identifier);
    if (st & kSampleIp) take(s.ip);
    if (st & kSampleTid) take_pair(s.pid, s.tid);
    if (st & kSampleTime) take(s.time);
    if (st & kSampleAddr) take(s.addr);
    if (st & kSampleId) take(s.id);
    if (st & kSampleStreamId) take(s.stream_id);
    if (st & kSampleCpu) take_pair(s.cpu, s.cpu_reserved);
    if (st & kSamplePeriod) take(s.period);
    p = q;
  } else {
    if ((st & kSampleIdentifier) && !u64(s.identifier)) return truncated(r, "IDENTIFIER");
    if ((st & kSampleIp) && !u64(s.ip)) return truncated(r, "IP");
    if ((st & kSampleTid) && !u32pair(s.pid, s.tid)) return truncated(r, "TID");
    if ((st & kSampleTime) && !u64(s.time)) return truncated(r, "TIME");
    if ((st & kSampleAddr) && !u64(s.addr)) return truncated(r, "ADDR");
    if ((st & kSampleId) && !u64(s.id)) return truncated(r, "ID");
    if ((st & kSampleStreamId) && !u64(s.stream_id)) return truncated(r, "STREAM_ID");
    if ((st & kSampleCpu) && !u32pair(s.cpu, s.cpu_reserved)) return truncated(r, "CPU");
    if ((st & kSamplePeriod) && !u64(s.period)) return truncated(r, "PERIOD");
  }
  if (st & kSampleRead) {
    if (!decode_read_values(p, end, layout.read_format, Swap, s.read, &p))
      return truncated(r, "READ");
  }
  if (st & kSampleCallchain) {
    std::uint64_t nr;
    if (!u64(nr) || nr > static_cast<std::uint64_t>(end - p) / 8) return truncated(r, "CALLCHAIN");
    s.callchain = U64Array(p, nr, Swap);
    p += 8 * nr;
  }
  // (the fields after the call chain: one test for a sample that has none)
  constexpr std::uint64_t kTail =
      kSampleRaw | kSampleBranchStack | kSampleRegsUser | kSampleStackUser | kSampleWeightType |
      kSampleDataSrc | kSampleTransaction | kSampleRegsIntr | kSamplePhysAddr | kSampleCgroup |
      kSampleDataPageSize | kSampleCodePageSize | kSampleAux;
  if (!(st & kTail)) return ok();
  if (st & kSampleRaw) {
    if (end - p < 4) return truncated(r, "RAW");
    std::uint32_t size = load<std::uint32_t, Swap>(p);
    p += 4;
    if (size > static_cast<std::uint64_t>(end - p)) return truncated(r, "RAW");
    // The kernel pads the data so that size + 4 is a multiple of 8 and counts
    // the padding in size; like perf, the next field starts right after it.
    s.raw = Bytes(p, size);
    p += size;
  }
  if (st & kSampleBranchStack) {
    BranchStack& b = s.branch_stack;
    if (!u64(b.nr)) return truncated(r, "BRANCH_STACK");
    if (layout.branch_hw_index) {
      b.has_hw_idx = true;
      if (!u64(b.hw_idx)) return truncated(r, "BRANCH_STACK");
    }
    if (b.nr > static_cast<std::uint64_t>(end - p) / 24) return truncated(r, "BRANCH_STACK");
    b.entries = p;
    b.swap = Swap;
    p += 24 * b.nr;
  }
  if ((st & kSampleRegsUser) && !regs(s.user_regs, layout.regs_user_mask, layout.regs_user_count))
    return truncated(r, "REGS_USER");
  if (st & kSampleStackUser) {
    std::uint64_t size;
    if (!u64(size) || size > static_cast<std::uint64_t>(end - p)) return truncated(r, "STACK_USER");
    s.user_stack = Bytes(p, size);
    p += size;
    if (size != 0 && !u64(s.user_stack_dyn_size)) return truncated(r, "STACK_USER");
    if (s.user_stack_dyn_size > size) s.user_stack_dyn_size = size;
  }
  if ((st & kSampleWeightType) && !u64(s.weight)) return truncated(r, "WEIGHT");
  if ((st & kSampleDataSrc) && !u64(s.data_src)) return truncated(r, "DATA_SRC");
  if ((st & kSampleTransaction) && !u64(s.transaction)) return truncated(r, "TRANSACTION");
  if ((st & kSampleRegsIntr) && !regs(s.intr_regs, layout.regs_intr_mask, layout.regs_intr_count))
    return truncated(r, "REGS_INTR");
  if ((st & kSamplePhysAddr) && !u64(s.phys_addr)) return truncated(r, "PHYS_ADDR");
  if ((st & kSampleCgroup) && !u64(s.cgroup)) return truncated(r, "CGROUP");
  if ((st & kSampleDataPageSize) && !u64(s.data_page_size)) return truncated(r, "DATA_PAGE_SIZE");
  if ((st & kSampleCodePageSize) && !u64(s.code_page_size)) return truncated(r, "CODE_PAGE_SIZE");
  if (st & kSampleAux) {
    std::uint64_t size;
    if (!u64(size) || size > static_cast<std::uint64_t>(end - p)) return truncated(r, "AUX");
    s.aux = Bytes(p, size);
    p += size;
  }
  return ok();
}

template Status decode_sample_as<false>(const RecordView&, const RecordLayout&, Sample&);
template Status decode_sample_as<true>(const RecordView&, const RecordLayout&, Sample&);

Status decode_sample(const RecordView& r, const RecordLayout& layout, Sample& out) {
  return r.swap ? decode_sample_as<true>(r, layout, out) : decode_sample_as<false>(r, layout, out);
}

SampleId decode_sample_id(const RecordView& r, const RecordLayout& layout) {
  SampleId id;
  if (!layout.sample_id_all || r.bytes.size() < kHeaderSize + layout.trailer_size) return id;
  const std::uint64_t st = layout.sample_type;
  id.sample_type = st & (kSampleTid | kSampleTime | kSampleId | kSampleStreamId | kSampleCpu |
                         kSampleIdentifier);
  id.present = true;
  const std::uint8_t* p = r.bytes.data() + r.bytes.size() - layout.trailer_size;
  const bool sw = r.swap;
  if (st & kSampleTid) {
    id.pid = load<std::uint32_t>(p, sw);
    id.tid = load<std::uint32_t>(p + 4, sw);
    p += 8;
  }
  if (st & kSampleTime) {
    id.time = load<std::uint64_t>(p, sw);
    p += 8;
  }
  if (st & kSampleId) {
    id.id = load<std::uint64_t>(p, sw);
    p += 8;
  }
  if (st & kSampleStreamId) {
    id.stream_id = load<std::uint64_t>(p, sw);
    p += 8;
  }
  if (st & kSampleCpu) {
    id.cpu = load<std::uint32_t>(p, sw);
    p += 8;
  }
  if (st & kSampleIdentifier) id.identifier = load<std::uint64_t>(p, sw);
  return id;
}

ChainDigest callchain_digest(Bytes words) {
  const XXH128_hash_t h = XXH3_128bits(words.data(), words.size());
  ChainDigest d{h.low64, h.high64};
  if (!d.made()) d.lo = 1;
  return d;
}

}  // namespace perfkit::record
