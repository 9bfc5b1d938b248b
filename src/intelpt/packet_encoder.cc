#include "intelpt/packet_encoder.h"

namespace perfkit::intelpt {

namespace {

std::uint8_t ip_opcode(PacketType type) {
  switch (type) {
    case PacketType::kTip:
      return 0x0d;
    case PacketType::kTipPge:
      return 0x11;
    case PacketType::kTipPgd:
      return 0x01;
    default:
      return 0x1d;  // FUP
  }
}

}  // namespace

void PacketEncoder::psb() {
  for (int i = 0; i < 8; ++i) bytes2(0x82);
  last_ip_.reset();
}

void PacketEncoder::tnt(std::uint64_t bits, unsigned count) {
  if (count == 0) return;
  if (count <= 6) {
    // Stop bit above the branches; branches from bit count down to bit 1.
    unsigned b = 1u << (count + 1);
    b |= static_cast<unsigned>(bits >> (64 - count)) << 1;
    out_.push_back(static_cast<std::uint8_t>(b));
    return;
  }
  if (count > 47) count = 47;
  std::uint64_t payload = (1ULL << count) | (bits >> (64 - count));
  bytes2(0xa3);
  le(payload, 6);
}

void PacketEncoder::ip_packet_raw(PacketType type, unsigned code, std::uint64_t payload) {
  out_.push_back(static_cast<std::uint8_t>(ip_opcode(type) | (code << 5)));
  int n = ip_payload_size(code);
  if (n > 0) le(payload, static_cast<unsigned>(n));
}

void PacketEncoder::ip_packet(PacketType type, std::uint64_t ip) {
  std::uint64_t payload = 0;
  unsigned code = last_ip_.compress(ip, payload);
  ip_packet_raw(type, code, payload);
}

void PacketEncoder::ip_packet_no_ip(PacketType type) { ip_packet_raw(type, 0, 0); }

void PacketEncoder::tsc(std::uint64_t tsc) {
  out_.push_back(0x19);
  le(tsc, 7);
}

void PacketEncoder::tma(std::uint16_t ctc, std::uint16_t fc) {
  bytes2(0x73);
  le(ctc, 2);
  out_.push_back(0);
  out_.push_back(static_cast<std::uint8_t>(fc & 0xff));
  out_.push_back(static_cast<std::uint8_t>((fc >> 8) & 1));
}

void PacketEncoder::cyc(std::uint64_t cycles) {
  // 5 bits in the first byte, then 7 bits per byte; bit 2 of the first byte
  // and bit 0 of the others say that another byte follows.
  std::uint8_t first = static_cast<std::uint8_t>(0x03 | ((cycles & 0x1f) << 3));
  cycles >>= 5;
  if (!cycles) {
    out_.push_back(first);
    return;
  }
  out_.push_back(first | 4);
  while (cycles) {
    std::uint8_t b = static_cast<std::uint8_t>((cycles & 0x7f) << 1);
    cycles >>= 7;
    if (cycles) b |= 1;
    out_.push_back(b);
  }
}

void PacketEncoder::cbr(std::uint8_t ratio) {
  bytes2(0x03);
  out_.push_back(ratio);
  out_.push_back(0);
}

void PacketEncoder::mode_exec(unsigned bits, bool interrupt_flag) {
  std::uint8_t b = bits == 64 ? 1 : bits == 32 ? 2 : 0;
  if (interrupt_flag) b |= 4;
  out_.push_back(0x99);
  out_.push_back(b);
}

void PacketEncoder::mode_tsx(bool in_tx, bool abort) {
  out_.push_back(0x99);
  out_.push_back(static_cast<std::uint8_t>(0x20 | (abort ? 2 : 0) | (in_tx ? 1 : 0)));
}

void PacketEncoder::pip(std::uint64_t cr3, bool non_root) {
  bytes2(0x43);
  std::uint64_t payload = ((cr3 >> 5) << 1) | (non_root ? 1 : 0);
  le(payload, 6);
}

void PacketEncoder::vmcs(std::uint64_t pointer) {
  bytes2(0xc8);
  le(pointer, 5);
}

void PacketEncoder::mnt(std::uint64_t payload) {
  bytes2(0xc3);
  out_.push_back(0x88);
  le(payload, 8);
}

void PacketEncoder::ptwrite(std::uint64_t payload, unsigned size, bool ip) {
  std::uint8_t op = 0x12 | (size == 8 ? 0x20 : 0) | (ip ? 0x80 : 0);
  bytes2(op);
  le(payload, size == 8 ? 8 : 4);
}

void PacketEncoder::mwait(std::uint8_t hints, std::uint8_t extensions) {
  bytes2(0xc2);
  le(hints | (static_cast<std::uint64_t>(extensions & 3) << 32), 8);
}

void PacketEncoder::pwre(bool hw, unsigned cstate, unsigned sub_cstate) {
  bytes2(0x22);
  out_.push_back(hw ? 0x80 : 0);
  out_.push_back(static_cast<std::uint8_t>(((cstate & 0xf) << 4) | (sub_cstate & 0xf)));
}

void PacketEncoder::pwrx(unsigned last_cstate, unsigned deepest_cstate, unsigned wake_reason) {
  bytes2(0xa2);
  out_.push_back(static_cast<std::uint8_t>(((last_cstate & 0xf) << 4) | (deepest_cstate & 0xf)));
  out_.push_back(static_cast<std::uint8_t>(wake_reason & 0xf));
  le(0, 3);
}

void PacketEncoder::bbp(bool four_byte_items, unsigned type) {
  bytes2(0x63);
  out_.push_back(static_cast<std::uint8_t>((four_byte_items ? 0x80 : 0) | (type & 0x1f)));
}

void PacketEncoder::bip(unsigned id, std::uint64_t value, unsigned size) {
  out_.push_back(static_cast<std::uint8_t>(((id & 0x1f) << 3) | 4));
  le(value, size == 4 ? 4 : 8);
}

void PacketEncoder::cfe(unsigned type, std::uint8_t vector, bool ip) {
  bytes2(0x13);
  out_.push_back(static_cast<std::uint8_t>((ip ? 0x80 : 0) | (type & 0x1f)));
  out_.push_back(vector);
}

void PacketEncoder::evd(unsigned type, std::uint64_t payload) {
  bytes2(0x53);
  out_.push_back(static_cast<std::uint8_t>(type & 0x3f));
  le(payload, 8);
}

void PacketEncoder::packet(const Packet& pkt) {
  const std::uint64_t v = pkt.payload;
  switch (pkt.type) {
    case PacketType::kBad:
      break;
    case PacketType::kPad:
      pad();
      break;
    case PacketType::kTnt:
      if (pkt.count <= 6 && pkt.size != 8) {
        tnt(v, pkt.count);
      } else {
        bytes2(0xa3);
        le((1ULL << pkt.count) | (pkt.count ? v >> (64 - pkt.count) : 0), 6);
      }
      break;
    case PacketType::kTipPgd:
    case PacketType::kTipPge:
    case PacketType::kTip:
    case PacketType::kFup:
      ip_packet_raw(pkt.type, pkt.count, v);
      break;
    case PacketType::kTsc:
      tsc(v);
      break;
    case PacketType::kTma:
      tma(static_cast<std::uint16_t>(v), pkt.aux);
      break;
    case PacketType::kModeExec:
      out_.push_back(0x99);
      out_.push_back(static_cast<std::uint8_t>(pkt.aux));
      break;
    case PacketType::kModeTsx:
      mode_tsx(v & 1, v & 2);
      break;
    case PacketType::kMtc:
      mtc(static_cast<std::uint8_t>(v));
      break;
    case PacketType::kCyc:
      cyc(v);
      break;
    case PacketType::kVmcs:
      vmcs(v);
      break;
    case PacketType::kPsb:
      psb();
      break;
    case PacketType::kPsbEnd:
      psbend();
      break;
    case PacketType::kCbr:
      bytes2(0x03);
      le(v, 2);
      break;
    case PacketType::kTraceStop:
      trace_stop();
      break;
    case PacketType::kPip:
      bytes2(0x43);
      le(v, 6);
      break;
    case PacketType::kOvf:
      ovf();
      break;
    case PacketType::kMnt:
      mnt(v);
      break;
    case PacketType::kPtwrite:
      ptwrite(v, pkt.count, pkt.ip);
      break;
    case PacketType::kExstop:
      exstop(pkt.ip);
      break;
    case PacketType::kMwait:
      bytes2(0xc2);
      le(v, 8);
      break;
    case PacketType::kPwre:
      bytes2(0x22);
      le(v, 2);
      break;
    case PacketType::kPwrx:
      bytes2(0xa2);
      le(v, 5);
      break;
    case PacketType::kBbp:
      bbp(pkt.ip, pkt.aux);
      break;
    case PacketType::kBip:
      bip(pkt.aux, v, pkt.size == 5 ? 4 : 8);
      break;
    case PacketType::kBep:
      bep(pkt.ip);
      break;
    case PacketType::kCfe:
      cfe(pkt.aux, static_cast<std::uint8_t>(v), pkt.ip);
      break;
    case PacketType::kEvd:
      evd(pkt.aux, v);
      break;
  }
}

}  // namespace perfkit::intelpt
