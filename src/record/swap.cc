#include "record/swap.h"

#include <bit>
#include <cstring>

#include "abi/names.h"
#include "abi/perf_event.h"

namespace perfkit::record {

using namespace perfkit::abi;

namespace {

// The record's bytes in, the converted bytes out. Fields are flipped in place
// in `out` (a copy of the input); counts and lengths are read from the input
// in its own byte order. A field that does not fit marks the conversion failed.
class Converter {
 public:
  Converter(const RecordView& r, std::uint8_t* out)
      : in_(r.bytes.data()), out_(out), size_(r.bytes.size()), src_swap_(r.swap) {
    std::memcpy(out_, in_, size_);
  }

  std::size_t size() const { return size_; }
  bool ok() const { return ok_; }
  void fail() { ok_ = false; }
  bool fits(std::size_t off, std::size_t width) const {
    return off <= size_ && width <= size_ - off;
  }

  template <class T>
  T get(std::size_t off) const {
    return fits(off, sizeof(T)) ? load<T>(in_ + off, src_swap_) : T{};
  }

  template <class T>
  void flip(std::size_t off) {
    if (!fits(off, sizeof(T))) return fail();
    store<T>(out_ + off, load<T, false>(in_ + off), true);
  }
  void u16(std::size_t off) { flip<std::uint16_t>(off); }
  void u32(std::size_t off) { flip<std::uint32_t>(off); }
  void u64(std::size_t off) { flip<std::uint64_t>(off); }
  void u32_pair(std::size_t off) {
    u32(off);
    u32(off + 4);
  }
  void u64s(std::size_t off, std::uint64_t count) {
    if (count > (size_ - std::min(off, size_)) / 8) return fail();
    for (std::uint64_t i = 0; i < count; ++i) u64(off + 8 * i);
  }
  // Every whole u64 word in [off, end).
  void u64_words(std::size_t off, std::size_t end) {
    for (; off + 8 <= end; off += 8) u64(off);
  }
  void branch_flags(std::size_t off) {
    if (!fits(off, 8)) return fail();
    // The source's byte order is little-endian when it is the host's and the
    // host is little-endian, or when it is swapped and the host is big-endian.
    const ByteOrder from =
        (kHostOrder == ByteOrder::kLittle) != src_swap_ ? ByteOrder::kLittle : ByteOrder::kBig;
    store<std::uint64_t>(out_ + off,
                         convert_branch_flags(load<std::uint64_t>(in_ + off, src_swap_), from),
                         !src_swap_);
  }
  void attr(std::size_t off, std::size_t n) {
    if (!fits(off, n)) return fail();
    swap_attr(in_ + off, n, out_ + off);
  }

 private:
  const std::uint8_t* in_;
  std::uint8_t* out_;
  std::size_t size_;
  bool src_swap_;
  bool ok_ = true;
};

Error bad_record(const RecordView& r, std::string_view what) {
  auto name = record_type_name(r.type);
  return make_error("offset {:#x}: cannot convert the byte order of this {} record ({} bytes): {}",
                    r.offset, name.empty() ? fmt::format("type {}", r.type) : std::string(name),
                    r.size, what);
}

// The sample_id_all trailer at the end of a non-SAMPLE kernel record.
void convert_trailer(Converter& c, const RecordLayout* layout) {
  if (!layout || !layout->sample_id_all || layout->trailer_size == 0) return;
  if (c.size() < kHeaderSize + layout->trailer_size) return;
  std::size_t p = c.size() - layout->trailer_size;
  const std::uint64_t st = layout->sample_type;
  if (st & kSampleTid) c.u32_pair(p), p += 8;
  if (st & kSampleTime) c.u64(p), p += 8;
  if (st & kSampleId) c.u64(p), p += 8;
  if (st & kSampleStreamId) c.u64(p), p += 8;
  if (st & kSampleCpu) c.u32_pair(p), p += 8;
  if (st & kSampleIdentifier) c.u64(p);
}

// READ values (a PERF_RECORD_READ body or a sample's READ field) at `p`;
// returns the offset after them.
std::size_t convert_read_values(Converter& c, std::size_t p, std::uint64_t rf) {
  if (rf & kFormatGroup) {
    const std::uint64_t nr = c.get<std::uint64_t>(p);
    c.u64(p);
    p += 8;
    for (std::uint64_t bit : {kFormatTotalTimeEnabled, kFormatTotalTimeRunning})
      if (rf & bit) c.u64(p), p += 8;
    const std::uint64_t per = 1 + ((rf & kFormatId) ? 1 : 0) + ((rf & kFormatLost) ? 1 : 0);
    if (nr > c.size() / 8 / per) {
      c.fail();
      return p;
    }
    c.u64s(p, nr * per);
    return p + nr * per * 8;
  }
  c.u64(p);
  p += 8;
  for (std::uint64_t bit :
       {kFormatTotalTimeEnabled, kFormatTotalTimeRunning, kFormatId, kFormatLost})
    if (rf & bit) c.u64(p), p += 8;
  return p;
}

std::size_t convert_regs(Converter& c, std::size_t p, std::uint32_t count) {
  const std::uint64_t abi = c.get<std::uint64_t>(p);
  c.u64(p);
  p += 8;
  if (abi == kRegsAbiNone) return p;
  c.u64s(p, count);
  return p + 8ULL * count;
}

// A SAMPLE's fields in sample_type order (see sample.cc for their shapes).
void convert_sample(Converter& c, const RecordLayout& l) {
  const std::uint64_t st = l.sample_type;
  std::size_t p = kHeaderSize;
  auto u64_if = [&](std::uint64_t bit) {
    if (st & bit) c.u64(p), p += 8;
  };
  auto pair_if = [&](std::uint64_t bit) {
    if (st & bit) c.u32_pair(p), p += 8;
  };
  u64_if(kSampleIdentifier);
  u64_if(kSampleIp);
  pair_if(kSampleTid);
  u64_if(kSampleTime);
  u64_if(kSampleAddr);
  u64_if(kSampleId);
  u64_if(kSampleStreamId);
  pair_if(kSampleCpu);
  u64_if(kSamplePeriod);
  if (st & kSampleRead) p = convert_read_values(c, p, l.read_format);
  if (st & kSampleCallchain) {
    const std::uint64_t nr = c.get<std::uint64_t>(p);
    c.u64(p);
    c.u64s(p + 8, nr);
    p += 8 + 8 * std::min<std::uint64_t>(nr, c.size());
  }
  if (st & kSampleRaw) {
    const std::uint32_t size = c.get<std::uint32_t>(p);
    c.u32(p);
    p += 4 + static_cast<std::size_t>(size);  // the data is a byte stream
  }
  if (st & kSampleBranchStack) {
    const std::uint64_t nr = c.get<std::uint64_t>(p);
    c.u64(p);
    p += 8;
    if (l.branch_hw_index) c.u64(p), p += 8;
    if (nr > c.size() / 24) return c.fail();
    for (std::uint64_t i = 0; i < nr; ++i, p += 24) {
      c.u64(p);
      c.u64(p + 8);
      c.branch_flags(p + 16);
    }
  }
  if (st & kSampleRegsUser) p = convert_regs(c, p, l.regs_user_count);
  if (st & kSampleStackUser) {
    const std::uint64_t size = c.get<std::uint64_t>(p);
    c.u64(p);
    p += 8;
    if (!c.fits(p, size)) return c.fail();
    c.u64_words(p, p + size);
    p += size;
    if (size != 0) c.u64(p), p += 8;  // dyn_size
  }
  u64_if(kSampleWeight | kSampleWeightStruct);
  u64_if(kSampleDataSrc);
  u64_if(kSampleTransaction);
  if (st & kSampleRegsIntr) p = convert_regs(c, p, l.regs_intr_count);
  u64_if(kSamplePhysAddr);
  u64_if(kSampleCgroup);
  u64_if(kSampleDataPageSize);
  u64_if(kSampleCodePageSize);
  if (st & kSampleAux) {
    const std::uint64_t size = c.get<std::uint64_t>(p);
    c.u64(p);
    if (!c.fits(p + 8, size)) return c.fail();  // AUX data stays a byte stream
  }
}

// cpu_map_data (CPU_MAP, EVENT_UPDATE's CPUS) starting at `p` (its type field).
void convert_cpu_map(Converter& c, std::size_t p) {
  const std::uint16_t type = c.get<std::uint16_t>(p);
  c.u16(p);
  if (type == 0) {  // cpus
    const std::uint16_t nr = c.get<std::uint16_t>(p + 2);
    c.u16(p + 2);
    for (std::uint16_t i = 0; i < nr && c.ok(); ++i) c.u16(p + 4 + 2 * i);
  } else if (type == 1) {  // mask
    const std::uint16_t nr = c.get<std::uint16_t>(p + 2);
    const std::uint16_t long_size = c.get<std::uint16_t>(p + 4);
    c.u16(p + 2);
    c.u16(p + 4);
    for (std::uint16_t i = 0; i < nr && c.ok(); ++i) {
      if (long_size == 4)
        c.u32(p + 6 + 4 * i);
      else if (long_size == 8)
        c.u64(p + 10 + 8 * i);
    }
  } else if (type == 2) {  // range: u8 any_cpu, u8 pad, u16 start, u16 end
    c.u16(p + 4);
    c.u16(p + 6);
  }
}

void convert_kernel_record(Converter& c, const RecordView& r, const RecordLayout* layout) {
  switch (r.type) {
    case kRecordMmap:
      c.u32_pair(8);
      c.u64s(16, 3);
      break;
    case kRecordMmap2:
      c.u32_pair(8);
      c.u64s(16, 3);
      if (!(r.misc & kMiscMmapBuildId)) {
        c.u32_pair(40);  // maj, min
        c.u64s(48, 2);   // ino, ino_generation
      }
      c.u32_pair(64);  // prot, flags
      break;
    case kRecordComm:
    case kRecordItraceStart:
    case kRecordSwitchCpuWide:
      c.u32_pair(8);
      break;
    case kRecordExit:
    case kRecordFork:
      c.u32_pair(8);
      c.u32_pair(16);
      c.u64(24);
      break;
    case kRecordLost:
      c.u64s(8, 2);
      break;
    case kRecordThrottle:
    case kRecordUnthrottle:
    case kRecordAux:
      c.u64s(8, 3);
      break;
    case kRecordRead:
      c.u32_pair(8);
      if (layout) convert_read_values(c, 16, layout->read_format);
      break;
    case kRecordLostSamples:
    case kRecordAuxOutputHwId:
      c.u64(8);
      break;
    case kRecordSwitch:
      break;
    case kRecordNamespaces: {
      c.u32_pair(8);
      const std::uint64_t nr = c.get<std::uint64_t>(16);
      c.u64(16);
      if (nr > c.size() / 16) return c.fail();
      c.u64s(24, 2 * nr);
      break;
    }
    case kRecordKsymbol:
      c.u64(8);
      c.u32(16);
      c.u16(20);
      c.u16(22);
      break;
    case kRecordBpfEvent:
      c.u16(8);
      c.u16(10);
      c.u32(12);
      break;
    case kRecordCgroup:
      c.u64(8);
      break;
    case kRecordTextPoke:
      c.u64(8);
      c.u16(16);
      c.u16(18);
      break;
    default:
      return;  // unknown kernel type: header only
  }
  convert_trailer(c, layout);
}

void convert_user_record(Converter& c, const RecordView& r) {
  switch (r.type) {
    case kRecordHeaderAttr: {
      std::uint32_t attr_size = c.get<std::uint32_t>(12);
      if (attr_size == 0) attr_size = kAttrSizeVer0;
      if (!c.fits(8, attr_size)) return c.fail();
      c.attr(8, attr_size);
      c.u64_words(8 + attr_size, c.size());
      break;
    }
    case kRecordHeaderEventType:
    case kRecordHeaderFeature:
      c.u64(8);
      break;
    case kRecordHeaderTracingData:
      c.u32(8);
      if (c.fits(12, 4)) c.u32(12);
      break;
    case kRecordHeaderBuildId:
      c.u32(8);  // pid; the build-id and the name are bytes
      break;
    case kRecordIdIndex:
    case kRecordStatConfig:
    case kRecordStatRound:
      c.u64_words(8, c.size());
      break;
    case kRecordAuxtraceInfo:
      c.u32_pair(8);
      c.u64_words(16, c.size());
      break;
    case kRecordAuxtrace:
      c.u64s(8, 3);
      c.u32_pair(32);
      c.u32_pair(40);
      break;
    case kRecordAuxtraceError: {
      const std::uint32_t fmt = c.get<std::uint32_t>(28);
      c.u32_pair(8);
      c.u32_pair(16);
      c.u32_pair(24);
      c.u64(32);
      if (fmt >= 1) c.u64(40);
      if (fmt >= 2 && c.fits(112, 8)) c.u32_pair(112);
      break;
    }
    case kRecordThreadMap: {
      const std::uint64_t nr = c.get<std::uint64_t>(8);
      c.u64(8);
      if (nr > c.size() / 24) return c.fail();
      for (std::uint64_t i = 0; i < nr; ++i) c.u64(16 + 24 * i);
      break;
    }
    case kRecordCpuMap:
      convert_cpu_map(c, 8);
      break;
    case kRecordStat:
      c.u64(8);
      c.u32_pair(16);
      c.u64s(24, 3);
      break;
    case kRecordEventUpdate: {
      const std::uint64_t type = c.get<std::uint64_t>(8);
      c.u64s(8, 2);
      if (type == 1)  // scale: a double
        c.u64(24);
      else if (type == 3)  // cpus
        convert_cpu_map(c, 24);
      break;
    }
    case kRecordTimeConv:
      c.u64s(8, 3);
      if (c.fits(32, 16)) c.u64s(32, 2);  // time_cycles, time_mask; then two u8 caps
      break;
    case kRecordCompressed2:
      c.u64(8);
      break;
    default:
      break;  // FINISHED_ROUND, FINISHED_INIT, unknown types: header only
  }
}

}  // namespace

std::uint64_t convert_branch_flags(std::uint64_t v, ByteOrder from) {
  // (position, width) of each field in the little-endian layout; in the
  // big-endian layout a field sits at 64 - position - width.
  static constexpr std::uint8_t kFields[][2] = {{0, 1},  {1, 1},  {2, 1},  {3, 1},  {4, 16},
                                                {20, 4}, {24, 2}, {26, 4}, {30, 3}, {33, 31}};
  std::uint64_t out = 0;
  for (const auto& f : kFields) {
    const unsigned le = f[0], width = f[1], be = 64 - le - width;
    const unsigned src = from == ByteOrder::kLittle ? le : be;
    const unsigned dst = from == ByteOrder::kLittle ? be : le;
    const std::uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
    out |= ((v >> src) & mask) << dst;
  }
  return out;
}

void swap_attr(const std::uint8_t* in, std::size_t size, std::uint8_t* out) {
  std::memmove(out, in, size);
  auto flip = [&](std::size_t off, std::size_t width) {
    if (off + width > size) return;
    std::uint8_t tmp[8];
    for (std::size_t i = 0; i < width; ++i) tmp[i] = in[off + width - 1 - i];
    std::memcpy(out + off, tmp, width);
  };
  static constexpr std::uint8_t kFields[][2] = {
      {0, 4},   {4, 4},   {8, 8},   {16, 8},  {24, 8},  {32, 8},  {48, 4}, {52, 4},
      {56, 8},  {64, 8},  {72, 8},  {80, 8},  {88, 4},  {92, 4},  {96, 8}, {104, 4},
      {108, 2}, {110, 2}, {112, 4}, {116, 4}, {120, 8}, {128, 8},
  };
  for (const auto& f : kFields) flip(f[0], f[1]);
  // The flags bitfield: each byte keeps its place, its bits are reversed.
  if (size >= 48)
    for (std::size_t i = 40; i < 48; ++i) {
      std::uint8_t b = in[i], r = 0;
      for (int k = 0; k < 8; ++k) r = static_cast<std::uint8_t>(r | (((b >> k) & 1) << (7 - k)));
      out[i] = r;
    }
}

Status swap_record(const RecordView& r, const RecordLayout* layout, std::uint8_t* out) {
  if (r.bytes.size() < kHeaderSize) return bad_record(r, "shorter than its header");
  if (r.type == kRecordCompressed || r.type == kRecordCompressed2)
    return bad_record(r, "its records must be decompressed first");
  Converter c(r, out);
  c.u32(0);
  c.u16(4);
  c.u16(6);
  if (r.type == kRecordSample) {
    if (!layout) return bad_record(r, "the sample's attr is unknown");
    convert_sample(c, *layout);
  } else if (r.type < kRecordUserTypeStart) {
    convert_kernel_record(c, r, layout);
  } else {
    convert_user_record(c, r);
  }
  if (!c.ok()) return bad_record(r, "a field runs past the end of the record");
  return ok();
}

}  // namespace perfkit::record
