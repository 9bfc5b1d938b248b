#include "intelpt/event_decoder.h"

namespace perfkit::intelpt {

namespace {

TimerParams timer_params(const PtConfig& c) {
  TimerParams p;
  p.mtc_period = c.mtc_period();
  p.tsc_ctc_ratio_n = c.tsc_ctc_ratio_n;
  p.tsc_ctc_ratio_d = c.tsc_ctc_ratio_d;
  p.max_non_turbo_ratio = c.max_non_turbo_ratio;
  return p;
}

ExecMode exec_mode_of(const Packet& pkt) {
  return pkt.payload == 64 ? ExecMode::k64 : pkt.payload == 32 ? ExecMode::k32 : ExecMode::k16;
}

}  // namespace

EventDecoder::EventDecoder(Bytes trace, const PtConfig& cfg, std::uint64_t base,
                           std::uint64_t ref_tsc)
    : data_(trace), base_(base), timer_(timer_params(cfg)) {
  if (ref_tsc) timer_.set_reference(ref_tsc);
}

bool EventDecoder::sync_forward() {
  auto at = intelpt::sync_forward(data_, pos_);
  pos_ = at ? *at : data_.size();
  ctx_ = PacketContext::kNone;
  return at.has_value();
}

bool EventDecoder::read(Packet& pkt, Item& error) {
  int r = decode_packet(data_.data() + pos_, data_.size() - pos_, ctx_, pkt);
  if (r > 0) {
    ctx_ = next_context(pkt, ctx_);
    pos_ += static_cast<std::size_t>(r);
    return true;
  }
  error = error_item(base_ + pos_, r == kNeedMoreBytes ? "truncated packet" : "bad packet");
  return false;
}

Item EventDecoder::error_item(std::uint64_t offset, const char* what) {
  Item it = make(ItemType::kError, offset);
  it.error = what;
  // Go on at the next PSB after the bad byte.
  pos_ = std::min(pos_ + 1, data_.size());
  sync_forward();
  timer_.lose_tma();
  last_ip_.reset();
  return it;
}

void EventDecoder::stamp(Item& it) const {
  it.timestamp = timer_.timestamp();
  it.time_updates = timer_.updates();
  it.cycles = timer_.ipc_cycles();
  it.cycle_marks = timer_.cycle_marks();
  it.exact_cycles = timer_.have_cyc();
}

Item EventDecoder::make(ItemType t, std::uint64_t offset) {
  Item it;
  it.type = t;
  it.offset = offset;
  it.mode = mode_;
  stamp(it);
  return it;
}

Item EventDecoder::ip_item(ItemType t, const Packet& pkt, std::uint64_t offset) {
  Item it = make(t, offset);
  std::uint64_t ip = 0;
  if (pkt.count) {
    last_ip_.update(pkt.count, pkt.payload, ip);
    it.has_ip = true;
    it.ip = ip;
    it.count = static_cast<std::uint8_t>(pkt.count);  // the IP's compression
  }
  return it;
}

bool EventDecoder::is_timing(PacketType t) const {
  switch (t) {
    case PacketType::kTsc:
    case PacketType::kTma:
    case PacketType::kMtc:
    case PacketType::kCyc:
    case PacketType::kCbr:
      return true;
    default:
      return false;
  }
}

void EventDecoder::apply_timing(const Packet& pkt, bool after_cyc, bool in_psb) {
  switch (pkt.type) {
    case PacketType::kTsc:
      timer_.tsc(pkt.payload, after_cyc);
      break;
    case PacketType::kTma:
      timer_.tma(static_cast<std::uint32_t>(pkt.payload), pkt.aux, in_psb);
      break;
    case PacketType::kMtc:
      timer_.mtc(static_cast<std::uint32_t>(pkt.payload), after_cyc);
      if (after_cyc && timer_.have_tma()) probe_cyc_rate();
      break;
    case PacketType::kCyc:
      timer_.cyc(pkt.payload);
      break;
    case PacketType::kCbr:
      timer_.cbr(static_cast<unsigned>(pkt.payload & 0xff));
      break;
    default:
      break;
  }
}

void EventDecoder::probe_cyc_rate() {
  // The end of the buffer the MTC (just read, ending at pos_) is in.
  std::size_t end = data_.size();
  for (std::size_t e : buffer_ends_)
    if (e >= pos_) {
      end = e;
      break;
    }
  CycRateProbe probe(timer_);
  PacketContext ctx = ctx_;
  for (std::size_t at = pos_; at < end;) {
    Packet pkt;
    const int r = decode_packet(data_.data() + at, end - at, ctx, pkt);
    if (r <= 0) break;
    at += static_cast<std::size_t>(r);
    ctx = next_context(pkt, ctx);
    if (pkt.type == PacketType::kPad) continue;
    if (!probe.next(pkt)) break;
  }
  probe.apply(timer_);
}

void EventDecoder::bind_fup(Item& it) {
  std::size_t save = pos_;
  PacketContext save_ctx = ctx_;
  while (pos_ < data_.size()) {
    Packet pkt;
    int r = decode_packet(data_.data() + pos_, data_.size() - pos_, ctx_, pkt);
    if (r <= 0) break;
    if (pkt.type == PacketType::kPad) {
      pos_ += static_cast<std::size_t>(r);
      continue;
    }
    if (pkt.type != PacketType::kFup) break;
    pos_ += static_cast<std::size_t>(r);
    ctx_ = next_context(pkt, ctx_);
    if (pkt.count) {
      std::uint64_t ip = 0;
      last_ip_.update(pkt.count, pkt.payload, ip);
      it.has_ip = true;
      it.ip = ip;
      it.mode = mode_;
      it.count = static_cast<std::uint8_t>(pkt.count);
    }
    last_type_ = PacketType::kFup;
    return;
  }
  pos_ = save;
  ctx_ = save_ctx;
}

Item EventDecoder::psb(std::uint64_t offset) {
  // PSB+: status packets up to PSBEND. A FUP in it gives the IP at which
  // tracing is on; without one tracing is off.
  last_ip_.reset();
  Item it = make(ItemType::kPsb, offset);
  while (pos_ < data_.size()) {
    std::size_t at = pos_;
    Packet pkt;
    Item err;
    if (!read(pkt, err)) return err;
    switch (pkt.type) {
      case PacketType::kPsbEnd:
        last_type_ = pkt.type;
        it.mode = mode_;
        stamp(it);
        return it;
      case PacketType::kFup:
        timer_.trace_on(false);  // tracing is on (perf's pge), whether or not the IP is known
        if (pkt.count) {
          std::uint64_t ip = 0;
          last_ip_.update(pkt.count, pkt.payload, ip);
          it.has_ip = true;
          it.ip = ip;
        }
        break;
      case PacketType::kModeExec:
        mode_ = exec_mode_of(pkt);
        break;
      case PacketType::kModeTsx:
        it.aux = static_cast<std::uint16_t>(pkt.payload | 0x100);
        break;
      case PacketType::kPip:
        break;
      case PacketType::kVmcs:
      case PacketType::kPad:
      case PacketType::kMnt:
      case PacketType::kPsb:
        break;
      default:
        if (is_timing(pkt.type)) {
          apply_timing(pkt, last_type_ == PacketType::kCyc, true);
          if (pkt.type == PacketType::kCbr && (pkt.payload & 0xff) != last_cbr_) {
            // A new core:bus ratio: reported after the PSB.
            last_cbr_ = static_cast<unsigned>(pkt.payload & 0xff);
            pending_ = make(ItemType::kCbr, base_ + at);
            pending_.aux = static_cast<std::uint16_t>(last_cbr_);
            pending_.bits = pkt.payload;
            have_pending_ = true;
          }
          break;
        }
        // Not a PSB+ packet: PSB+ ends here; that packet is read next.
        pos_ = at;
        it.mode = mode_;
        stamp(it);
        return it;
    }
    last_type_ = pkt.type;
  }
  it.mode = mode_;
  stamp(it);
  return it;
}

Item EventDecoder::overflow(std::uint64_t offset) {
  // After OVF, the next FUP (timing packets may come first) is where tracing
  // resumes; a TIP.PGE instead means tracing resumed later. The CTC relation
  // of the last TMA holds: perf goes on timing from MTC packets (it drops the
  // relation at a bad packet or a TSC only).
  timer_.overflow();
  Item it = make(ItemType::kOverflow, offset);
  last_ip_.reset();  // nothing before the overflow is a base for IP compression
  while (pos_ < data_.size()) {
    std::size_t at = pos_;
    Packet pkt;
    int r = decode_packet(data_.data() + pos_, data_.size() - pos_, ctx_, pkt);
    if (r <= 0) break;
    if (pkt.type == PacketType::kPad || is_timing(pkt.type) || pkt.type == PacketType::kModeExec ||
        pkt.type == PacketType::kPip) {
      pos_ += static_cast<std::size_t>(r);
      apply_timing(pkt, last_type_ == PacketType::kCyc);
      if (pkt.type == PacketType::kModeExec) mode_ = exec_mode_of(pkt);
      last_type_ = pkt.type;
      continue;
    }
    if (pkt.type == PacketType::kFup && pkt.count) {
      pos_ += static_cast<std::size_t>(r);
      std::uint64_t ip = 0;
      last_ip_.update(pkt.count, pkt.payload, ip);
      it.has_ip = true;
      it.ip = ip;
      last_type_ = pkt.type;
    } else {
      pos_ = at;
    }
    break;
  }
  it.mode = mode_;
  stamp(it);
  return it;
}

Item EventDecoder::event_item(const Packet& pkt, std::uint64_t offset) {
  switch (pkt.type) {
    case PacketType::kPtwrite: {
      Item it = make(ItemType::kPtwrite, offset);
      it.bits = pkt.payload;
      it.aux = pkt.count;
      if (pkt.ip) bind_fup(it);
      return it;
    }
    case PacketType::kExstop: {
      Item it = make(ItemType::kExstop, offset);
      if (pkt.ip) bind_fup(it);
      return it;
    }
    case PacketType::kBep: {
      Item it = make(ItemType::kBlockEnd, offset);
      if (pkt.ip) bind_fup(it);
      return it;
    }
    case PacketType::kCfe: {
      Item it = make(ItemType::kCfe, offset);
      it.aux = pkt.aux;
      it.bits = pkt.payload;
      if (pkt.ip) bind_fup(it);
      return it;
    }
    case PacketType::kEvd: {
      Item it = make(ItemType::kEvd, offset);
      it.aux = pkt.aux;
      it.bits = pkt.payload;
      return it;
    }
    case PacketType::kMwait:
    case PacketType::kPwre:
    case PacketType::kPwrx: {
      Item it = make(pkt.type == PacketType::kMwait  ? ItemType::kMwait
                     : pkt.type == PacketType::kPwre ? ItemType::kPwre
                                                     : ItemType::kPwrx,
                     offset);
      it.bits = pkt.payload;
      return it;
    }
    case PacketType::kPip: {
      Item it = make(ItemType::kPip, offset);
      it.bits = (pkt.payload >> 1) << 5;
      it.aux = pkt.ip;
      return it;
    }
    case PacketType::kVmcs: {
      Item it = make(ItemType::kVmcs, offset);
      it.bits = pkt.payload << 12;
      return it;
    }
    default:
      return make(ItemType::kEnd, offset);  // not an event packet: never asked for
  }
}

Item EventDecoder::next() {
  if (have_pending_) {
    have_pending_ = false;
    return pending_;
  }
  while (pos_ < data_.size()) {
    std::uint64_t offset = base_ + pos_;
    Packet pkt;
    Item err;
    if (!read(pkt, err)) return err;
    PacketType prev = last_type_;
    last_type_ = pkt.type;
    switch (pkt.type) {
      case PacketType::kPad:
      case PacketType::kMnt:
      case PacketType::kPsbEnd:
      case PacketType::kBbp:
      case PacketType::kBip:
        last_type_ = prev;
        continue;
      case PacketType::kTnt: {
        if (!pkt.count) continue;
        Item it = make(ItemType::kTnt, offset);
        it.count = pkt.count;
        it.bits = pkt.payload;
        return it;
      }
      case PacketType::kTip:
        return ip_item(ItemType::kTip, pkt, offset);
      case PacketType::kTipPge:
        timer_.trace_on(true);
        return ip_item(ItemType::kTipPge, pkt, offset);
      case PacketType::kTipPgd:
        timer_.trace_off();
        return ip_item(ItemType::kTipPgd, pkt, offset);
      case PacketType::kFup:
        return ip_item(ItemType::kFup, pkt, offset);
      case PacketType::kModeExec:
        mode_ = exec_mode_of(pkt);
        continue;
      case PacketType::kModeTsx: {
        Item it = make(ItemType::kTsx, offset);
        it.aux = static_cast<std::uint16_t>(pkt.payload);
        bind_fup(it);
        return it;
      }
      case PacketType::kPsb:
        return psb(offset);
      case PacketType::kOvf:
        return overflow(offset);
      case PacketType::kPtwrite:
      case PacketType::kExstop:
      case PacketType::kBep:
      case PacketType::kCfe:
      case PacketType::kEvd:
      case PacketType::kMwait:
      case PacketType::kPwre:
      case PacketType::kPwrx:
      case PacketType::kPip:
      case PacketType::kVmcs:
        return event_item(pkt, offset);
      case PacketType::kTraceStop:
        timer_.trace_off();
        return make(ItemType::kTraceStop, offset);
      case PacketType::kCbr: {
        apply_timing(pkt, false);
        unsigned cbr = static_cast<unsigned>(pkt.payload & 0xff);
        if (cbr == last_cbr_) continue;
        last_cbr_ = cbr;
        Item it = make(ItemType::kCbr, offset);
        it.aux = static_cast<std::uint16_t>(cbr);
        it.bits = pkt.payload;
        return it;
      }
      case PacketType::kTsc:
      case PacketType::kTma:
      case PacketType::kMtc:
      case PacketType::kCyc:
        apply_timing(pkt, prev == PacketType::kCyc);
        continue;
      case PacketType::kBad:
        continue;
    }
  }
  return make(ItemType::kEnd, base_ + pos_);
}

}  // namespace perfkit::intelpt
