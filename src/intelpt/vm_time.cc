#include "intelpt/vm_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace perfkit::intelpt {

namespace {

constexpr std::uint64_t kSevenBytes = 0xffffffffffffffULL;
constexpr unsigned kOnceUnknownVmcs = 1, kOnceOutOfRange = 2;
constexpr unsigned kPebsBasicBlock = 4;  // BBP type of a PEBS basic info block
constexpr unsigned kPebsTscItem = 2;     // its TSC item (BIP id)

const char* skip_spaces(const char* p) {
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  return p;
}

// printf's "%#" PRIx64, as perf prints: 0 without the prefix.
std::string alt_hex(std::uint64_t v) { return v ? fmt::format("{:#x}", v) : std::string("0"); }

}  // namespace

Expected<VmcsTable> VmcsTable::parse(std::string_view args, int* err_no) {
  VmcsTable t;
  const std::string text(args);  // strtoull needs the terminator
  const char* p = text.c_str();
  auto fail = [&](int e) -> Expected<VmcsTable> {
    if (err_no) *err_no = e;
    return make_error("Failed to parse VM Time Correlation options");
  };
  // A number where strtoull finds one; errno's value on failure.
  auto number = [&p](std::uint64_t& v) -> int {
    char* end = nullptr;
    errno = 0;
    v = std::strtoull(p, &end, 0);
    const int e = errno;
    p = end;
    return e;
  };
  for (;;) {
    p = skip_spaces(p);
    if (!*p) return t;
    const char* start = p;
    std::uint64_t offset = 0;
    if (const int e = number(offset)) return fail(e);
    p = skip_spaces(p);
    if (*p != ':') {
      if (p == start) return fail(EINVAL);  // no number: perf 6.1 never gets past it
      t.default_offset_ = offset;
      continue;
    }
    for (;;) {
      ++p;  // the ':' or ','
      std::uint64_t vmcs = 0;
      if (const int e = number(vmcs)) return fail(e);
      if (!vmcs) return fail(EINVAL);
      t.insert(vmcs, offset);
      p = skip_spaces(p);
      if (*p != ',') break;
    }
  }
}

VmcsInfo* VmcsTable::insert(std::uint64_t vmcs, std::uint64_t tsc_offset) {
  auto [it, fresh] = infos_.try_emplace(vmcs);
  if (fresh) {
    it->second.vmcs = vmcs;
    it->second.tsc_offset = tsc_offset;
    it->second.reliable = tsc_offset != 0;
  }
  return &it->second;
}

VmcsInfo* VmcsTable::findnew(std::uint64_t vmcs) {
  if (!vmcs && !default_offset_) return nullptr;
  return insert(vmcs, default_offset_);
}

struct VmTimeCorrelator::PsbInfo {
  Packet pip, vmcs, tma;
  bool tsc = false, have_pip = false, have_vmcs = false, have_tma = false, psbend = false;
  std::uint64_t ctc_delta = 0, last_ctc = 0;
};

VmTimeCorrelator::VmTimeCorrelator(std::span<const VmTimeBuffer> buffers,
                                   const VmTimeParams& params, VmcsTable& vmcs, VmTimeSink& sink)
    : buffers_(buffers), params_(params), vmcs_table_(vmcs), sink_(sink), timer_(params.timer) {}

bool VmTimeCorrelator::load_buffer(std::size_t index) {
  while (index < buffers_.size() && buffers_[index].data.empty()) ++index;
  if (index >= buffers_.size()) return false;
  buf_ = index;
  data_ = buffers_[index].data.data();
  len_ = buffers_[index].data.size();
  pos_ = step_ = 0;
  buf_timestamp_ = buffers_[index].reference;
  timer_.set_buffer_timestamp(buf_timestamp_);
  return true;
}

bool VmTimeCorrelator::sync() {
  if (!load_buffer(0)) return false;
  timer_.reposition(buf_timestamp_);
  same_buf_ = false;
  for (;;) {
    if (auto at = sync_forward(Bytes(data_, len_), 0)) {
      pos_ = *at;
      break;
    }
    if (!load_buffer(buf_ + 1)) return false;
  }
  const int r = decode_packet(data_ + pos_, len_ - pos_, ctx_, pkt_);
  step_ = static_cast<std::size_t>(r);
  ctx_ = next_context(pkt_, ctx_);
  pge_ = false;
  in_psb_ = true;
  timer_.start();
  return true;
}

void VmTimeCorrelator::run() {
  // Each round is one of perf's decode calls: it ends at a bad packet (and
  // the next goes on a byte further) or at the end of the data.
  for (;;) {
    PsbInfo data;
    if (in_psb_) on_psb(data);
    while (next_packet()) on_packet(data);
    if (!bad_) return;
  }
}

bool VmTimeCorrelator::next_packet() {
  last_type_ = pkt_.type;
  bad_ = false;
  do {
    pos_ += step_;
    if (pos_ >= len_ && !load_buffer(buf_ + 1)) return false;
    const int r = decode_packet(data_ + pos_, len_ - pos_, ctx_, pkt_);
    if (r <= 0) {
      pkt_ = Packet{};
      step_ = 1;
      bad_ = true;
      return false;
    }
    ctx_ = next_context(pkt_, ctx_);
    step_ = static_cast<std::size_t>(r);
  } while (pkt_.type == PacketType::kPad);
  return true;
}

template <typename Visit>
void VmTimeCorrelator::look_ahead(Visit visit) const {
  std::size_t pos = pos_ + step_;
  PacketContext ctx = ctx_;
  // (perf hands the first packet the type of the one before the current one)
  PacketType before = last_type_;
  for (;;) {
    Packet p;
    do {
      if (pos >= len_) return;
      const int r = decode_packet(data_ + pos, len_ - pos, ctx, p);
      if (r <= 0) return;
      ctx = next_context(p, ctx);
      pos += static_cast<std::size_t>(r);
    } while (p.type == PacketType::kPad);
    if (visit(p, before)) return;
    before = p.type;
  }
}

bool VmTimeCorrelator::in_range(std::uint64_t tsc) const {
  return tsc >= last_reliable_ && tsc < buf_timestamp_;
}

bool VmTimeCorrelator::print_once(unsigned bit) {
  if (printed_ & bit) return false;
  printed_ |= bit;
  return true;
}

void VmTimeCorrelator::on_packet(PsbInfo& data) {
  switch (pkt_.type) {
    case PacketType::kTipPgd:
      pge_ = continuous_ = false;
      break;
    case PacketType::kTnt:
    case PacketType::kTip:
    case PacketType::kTipPge:
      pge_ = true;
      break;
    case PacketType::kOvf:
      in_psb_ = false;
      pge_ = fup_follows();  // tracing goes on after the overflow
      if (!pge_) continuous_ = false;
      break;
    case PacketType::kFup:
      if (in_psb_) pge_ = true;
      break;
    case PacketType::kTraceStop:
      pge_ = continuous_ = false;
      timer_.lose_tma();
      break;
    case PacketType::kPsb:
      on_psb(data);
      break;
    case PacketType::kPip:
      pip_payload_ = pkt_.payload;
      break;
    case PacketType::kMtc:
      on_mtc();
      break;
    case PacketType::kTsc:
      on_tsc_packet(data);
      break;
    case PacketType::kTma:
      timer_.tma(static_cast<std::uint32_t>(pkt_.payload), pkt_.aux, in_psb_);
      break;
    case PacketType::kCyc:
      timer_.cyc(pkt_.payload);
      break;
    case PacketType::kCbr:
      timer_.cbr(static_cast<unsigned>(pkt_.payload & 0xff));
      break;
    case PacketType::kPsbEnd:
      in_psb_ = data.psbend = false;
      break;
    case PacketType::kVmcs:
      if (pkt_.payload != kNoVmcs) vmcs_ = pkt_.payload;
      break;
    case PacketType::kBbp:
      blk_type_ = pkt_.aux;
      break;
    case PacketType::kBip:
      if (blk_type_ == kPebsBasicBlock && pkt_.aux == kPebsTscItem) on_pebs_tsc();
      break;
    case PacketType::kBep:
      blk_type_ = 0;
      break;
    default:
      break;
  }
}

bool VmTimeCorrelator::fup_follows() const {
  int timing = 16;  // timing packets may come first
  bool fup = false;
  look_ahead([&](const Packet& p, PacketType) {
    if (p.type == PacketType::kCyc || p.type == PacketType::kMtc || p.type == PacketType::kTsc)
      return --timing == 0;
    fup = p.type == PacketType::kFup;
    return true;
  });
  return fup;
}

void VmTimeCorrelator::on_tsc_packet(PsbInfo& data) {
  on_tsc(data);  // (may put host time in the packet)
  const Timer::TscResult r = timer_.tsc(pkt_.payload, last_type_ == PacketType::kCyc);
  if ((r == Timer::TscResult::kBad ||
       (r == Timer::TscResult::kSet && !in_range(timer_.timestamp()))) &&
      print_once(kOnceOutOfRange))
    sink_.message("Timestamp out of range");
  same_buf_ = true;
  continuous_ = pge_;
}

void VmTimeCorrelator::on_psb(PsbInfo& data) {
  data = PsbInfo{};
  data.ctc_delta = timer_.ctc_delta();
  data.last_ctc = timer_.last_ctc();
  look_ahead([&data](const Packet& p, PacketType) {
    switch (p.type) {
      case PacketType::kPad:
      case PacketType::kMnt:
      case PacketType::kModeExec:
      case PacketType::kModeTsx:
      case PacketType::kMtc:
      case PacketType::kFup:
      case PacketType::kCyc:
      case PacketType::kCbr:
        return false;
      case PacketType::kTsc:
        data.tsc = true;
        return false;
      case PacketType::kTma:
        data.tma = p;
        data.have_tma = true;
        return false;
      case PacketType::kPip:
        data.pip = p;
        data.have_pip = true;
        return false;
      case PacketType::kVmcs:
        data.vmcs = p;
        data.have_vmcs = true;
        return false;
      case PacketType::kPsbEnd:
        data.psbend = true;
        return true;
      default:
        return true;
    }
  });
  if (data.tsc && !data.psbend) sink_.message("ERROR: PSB without PSBEND");
  in_psb_ = data.psbend;
}

void VmTimeCorrelator::on_mtc() {
  const bool after_cyc = last_type_ == PacketType::kCyc;
  timer_.mtc(static_cast<std::uint32_t>(pkt_.payload), after_cyc);
  if (!after_cyc || !timer_.have_tma()) return;
  CycRateProbe probe(timer_);
  look_ahead([&probe](const Packet& p, PacketType) { return !probe.next(p); });
  probe.apply(timer_);
}

std::uint64_t VmTimeCorrelator::expected_tsc(const PsbInfo& data) const {
  const auto ctc = static_cast<std::uint32_t>(data.tma.payload);
  const std::uint32_t fc = data.tma.aux;
  // CTC ticks from the last TMA's tick to the last MTC, then (signed: a TSC
  // can slip past an MTC) on to this TSC's TMA.
  const std::uint64_t last_mtc_ctc = static_cast<std::uint32_t>(data.last_ctc) + data.ctc_delta;
  const auto delta = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int16_t>(
      static_cast<std::uint16_t>(ctc) - static_cast<std::uint16_t>(last_mtc_ctc))));
  return timer_.ctc_timestamp() + timer_.ctc_to_tsc(data.ctc_delta + delta) + fc;
}

void VmTimeCorrelator::translate(std::uint64_t tsc_offset) {
  // VMX added the offset: take it away to get the host's TSC (7 bytes).
  pkt_.payload = (pkt_.payload - tsc_offset) & kSevenBytes;
  if (params_.dry_run) return;
  std::uint8_t bytes[7];
  for (int i = 0; i < 7; ++i) bytes[i] = static_cast<std::uint8_t>(pkt_.payload >> (8 * i));
  sink_.patch(buf_, pos_ + 1, bytes, sizeof bytes);
}

void VmTimeCorrelator::first_tsc(const PsbInfo& data, VmcsInfo* info, std::uint64_t host_tsc) {
  if (!in_psb_) sink_.message("ERROR: First TSC is not in PSB+");
  if (data.have_pip) {
    if (!(data.pip.payload & 1)) {  // the host's
      reliable_ = true;
    } else if (info && info->tsc_offset) {
      translate(info->tsc_offset);
      reliable_ = true;
    } else {
      sink_.message("ERROR: First TSC, unknown TSC Offset");
    }
    return;
  }
  reliable_ = false;
  if (in_range(host_tsc)) return;  // taken for the host's
  if (info && info->tsc_offset)
    translate(info->tsc_offset);
  else
    sink_.message("ERROR: First TSC, no PIP, unknown TSC Offset");
}

void VmTimeCorrelator::on_tsc(PsbInfo& data) {
  if (!in_psb_) {  // (in PSB+, `data` is what the PSB's look ahead found)
    data = PsbInfo{};
    data.ctc_delta = timer_.ctc_delta();
    data.last_ctc = timer_.last_ctc();
    int timing = 16;
    look_ahead([&](const Packet& p, PacketType) {
      if (p.type == PacketType::kCyc || p.type == PacketType::kMtc) return --timing == 0;
      if (p.type == PacketType::kTma) {
        data.tma = p;
        data.have_tma = true;
      }
      return true;
    });
    if (pge_) {
      data.have_pip = true;
      data.pip.payload = pip_payload_;
    }
  }
  if (!data.have_tma) {
    sink_.message("ERROR: TSC without TMA");
    return;
  }
  std::uint64_t vmcs = data.have_vmcs ? data.vmcs.payload : vmcs_;
  if (vmcs == kNoVmcs) vmcs = 0;
  VmcsInfo* info = vmcs_table_.findnew(vmcs);
  const std::uint64_t ref = timer_.timestamp() ? timer_.timestamp() : buf_timestamp_;
  const std::uint64_t host_tsc = extend_tsc(pkt_.payload, ref);
  if (!timer_.ctc_timestamp()) {
    first_tsc(data, info, host_tsc);
    return;
  }
  const std::uint64_t expected = expected_tsc(data);
  const std::uint64_t tsc_offset = host_tsc - expected;
  if (data.have_pip) {
    if (!(data.pip.payload & 1)) {  // the host's
      last_reliable_ = host_tsc;
      reliable_ = true;
      return;
    }
    if (!info) {  // NR=1 without a VMCS: cannot happen
      sink_.message("ERROR: Missing VMCS");
      translate(tsc_offset);
      reliable_ = false;
      return;
    }
    on_tsc_guest(data, info, tsc_offset, true);
    return;
  }
  // No PIP: the host's or a guest's is a guess.
  bool guest = false;
  if (in_psb_) {
    if (!tsc_offset) return;  // taken for the host's
    // (7 bytes: the guest's 8th byte is unknown and does not matter)
    guest = info && (tsc_offset & kSevenBytes) == (info->tsc_offset & kSevenBytes);
  }
  if (!guest && host_tsc >= expected && in_range(host_tsc)) {
    reliable_ = false;  // within the host's range: taken for the host's
    return;
  }
  on_tsc_guest(data, info, tsc_offset, false);
}

void VmTimeCorrelator::on_tsc_guest(PsbInfo& data, VmcsInfo* info, std::uint64_t tsc_offset,
                                    bool reliable) {
  // Learn the VMCS's offset from a TSC in PSB+ (no time lost there),
  // reliably when tracing was continuous.
  bool assign = false, assign_reliable = false;
  if (info && info->vmcs && !(info->tsc_offset && info->reliable) && in_psb_ && data.have_pip &&
      same_buf_) {
    assign = true;
    assign_reliable = reliable_ && continuous_;
  }
  if (assign && (info->tsc_offset != tsc_offset || info->reliable != assign_reliable)) {
    const bool changed = info->tsc_offset != tsc_offset;
    info->tsc_offset = tsc_offset;
    info->reliable = assign_reliable;
    if (changed)
      sink_.message(
          fmt::format("VMCS: {}  TSC Offset {}", alt_hex(info->vmcs), alt_hex(info->tsc_offset)));
  }
  if (info && info->tsc_offset) {
    if (!info->reliable) reliable = false;
    translate(info->tsc_offset);
  } else {
    reliable = false;
    if (info) {
      if (!info->error_printed) {
        sink_.message(fmt::format("ERROR: Unknown TSC Offset for VMCS {}", alt_hex(info->vmcs)));
        info->error_printed = true;
      }
    } else if (print_once(kOnceUnknownVmcs)) {
      sink_.message("ERROR: Unknown VMCS");
    }
    translate(tsc_offset);
  }
  reliable_ = reliable;
}

void VmTimeCorrelator::on_pebs_tsc() {
  const std::uint64_t guest_tsc = pkt_.payload;
  std::uint64_t host_tsc = pkt_.payload;
  VmcsInfo* info = vmcs_table_.findnew(vmcs_ == kNoVmcs ? 0 : vmcs_);
  if (pge_) {
    if (!(pip_payload_ & 1)) return;  // the host's
    if (!info) sink_.message("ERROR: Missing VMCS");
  } else if (in_range(host_tsc)) {
    return;  // taken for the host's
  }
  if (info) {
    host_tsc = ((guest_tsc & kSevenBytes) - info->tsc_offset) & kSevenBytes;
    host_tsc = extend_tsc(host_tsc, timer_.timestamp());
    if (!in_range(host_tsc) && print_once(kOnceOutOfRange)) sink_.message("Timestamp out of range");
  } else {
    if (print_once(kOnceUnknownVmcs)) sink_.message("ERROR: Unknown VMCS");
    host_tsc = timer_.timestamp();
  }
  pkt_.payload = host_tsc;
  if (params_.dry_run) return;
  std::uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(host_tsc >> (8 * i));
  // (perf writes 8 bytes even over a 4-byte item; never past the buffer here)
  const std::size_t n = std::min<std::size_t>(sizeof bytes, len_ - pos_ - 1);
  sink_.patch(buf_, pos_ + 1, bytes, n);
}

}  // namespace perfkit::intelpt
