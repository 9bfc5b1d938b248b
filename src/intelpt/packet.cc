#include "intelpt/packet.h"

#include <cstring>

namespace perfkit::intelpt {

namespace {

// Little-endian load of n (<= 8) bytes; the caller has checked the range.
std::uint64_t load_le(const std::uint8_t* p, unsigned n) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

// A packet of fixed `size` whose payload is `n` bytes at `at`.
int fixed(const std::uint8_t* p, std::size_t len, Packet& out, PacketType t, unsigned size,
          unsigned at = 0, unsigned n = 0) {
  if (len < size) return kNeedMoreBytes;
  out.type = t;
  out.size = static_cast<std::uint8_t>(size);
  if (n) out.payload = load_le(p + at, n);
  return static_cast<int>(size);
}

int short_tnt(std::uint8_t byte, Packet& out) {
  // The highest set bit is the stop bit; the bits below it down to bit 1
  // are the branches, oldest first.
  unsigned count = 6;
  unsigned b = byte;
  while (count && !(b & 0x80)) {
    b <<= 1;
    --count;
  }
  out.type = PacketType::kTnt;
  out.size = 1;
  out.count = static_cast<std::uint8_t>(count);
  out.payload = static_cast<std::uint64_t>(b) << 57;  // drops the stop bit
  return 1;
}

int long_tnt(const std::uint8_t* p, std::size_t len, Packet& out) {
  if (len < 8) return kNeedMoreBytes;
  std::uint64_t v = load_le(p, 8);
  unsigned count = 47;
  while (count && !(v >> 63)) {
    v <<= 1;
    --count;
  }
  out.type = PacketType::kTnt;
  out.size = 8;
  out.count = static_cast<std::uint8_t>(count);
  out.payload = v << 1;
  return 8;
}

int cyc(const std::uint8_t* p, std::size_t len, Packet& out) {
  std::uint64_t value = p[0] >> 3;
  bool more = p[0] & 4;
  unsigned size = 1;
  unsigned shift = 5;
  while (more) {
    if (size >= 10) return kBadPacket;
    if (len <= size) return kNeedMoreBytes;
    std::uint8_t b = p[size++];
    value |= static_cast<std::uint64_t>(b >> 1) << shift;
    shift += 7;
    more = b & 1;
  }
  out.type = PacketType::kCyc;
  out.size = static_cast<std::uint8_t>(size);
  out.payload = value;
  return static_cast<int>(size);
}

int ip_packet(PacketType t, const std::uint8_t* p, std::size_t len, Packet& out) {
  unsigned code = p[0] >> 5;
  int n = ip_payload_size(code);
  if (n < 0) return kBadPacket;
  if (len < static_cast<std::size_t>(n) + 1) return kNeedMoreBytes;
  out.type = t;
  out.count = static_cast<std::uint8_t>(code);
  out.payload = load_le(p + 1, static_cast<unsigned>(n));
  out.size = static_cast<std::uint8_t>(n + 1);
  return n + 1;
}

int mode(const std::uint8_t* p, std::size_t len, Packet& out) {
  if (len < 2) return kNeedMoreBytes;
  std::uint8_t b = p[1];
  switch (b >> 5) {
    case 0: {
      static constexpr std::uint8_t kBits[4] = {16, 64, 32, 0};
      if (!kBits[b & 3]) return kBadPacket;
      out.type = PacketType::kModeExec;
      out.payload = kBits[b & 3];
      out.aux = b;
      break;
    }
    case 1:
      if ((b & 3) == 3) return kBadPacket;
      out.type = PacketType::kModeTsx;
      out.payload = b & 3;
      break;
    default:
      return kBadPacket;
  }
  out.size = 2;
  return 2;
}

int psb(const std::uint8_t* p, std::size_t len, Packet& out) {
  if (len < kPsbSize) return kNeedMoreBytes;
  for (unsigned i = 2; i < kPsbSize; i += 2)
    if (p[i] != 0x02 || p[i + 1] != 0x82) return kBadPacket;
  out.type = PacketType::kPsb;
  out.size = kPsbSize;
  return kPsbSize;
}

int ptwrite(const std::uint8_t* p, std::size_t len, Packet& out) {
  unsigned code = (p[1] >> 5) & 3;
  if (code > 1) return kBadPacket;
  unsigned n = code ? 8 : 4;
  if (len < n + 2) return kNeedMoreBytes;
  out.type = PacketType::kPtwrite;
  out.count = static_cast<std::uint8_t>(n);
  out.ip = p[1] & 0x80;
  out.payload = load_le(p + 2, n);
  out.size = static_cast<std::uint8_t>(n + 2);
  return static_cast<int>(n + 2);
}

// Packets that start with 0x02.
int extended(const std::uint8_t* p, std::size_t len, Packet& out) {
  if (len < 2) return kNeedMoreBytes;
  std::uint8_t op = p[1];
  if ((op & 0x1f) == 0x12) return ptwrite(p, len, out);
  switch (op) {
    case 0xa3:
      return long_tnt(p, len, out);
    case 0x43:
      if (len < 8) return kNeedMoreBytes;
      out.ip = p[2] & 1;
      return fixed(p, len, out, PacketType::kPip, 8, 2, 6);
    case 0x83:
      return fixed(p, len, out, PacketType::kTraceStop, 2);
    case 0x03:
      return fixed(p, len, out, PacketType::kCbr, 4, 2, 2);
    case 0xc8:
      return fixed(p, len, out, PacketType::kVmcs, 7, 2, 5);
    case 0xf3:
      return fixed(p, len, out, PacketType::kOvf, 2);
    case 0x82:
      return psb(p, len, out);
    case 0x23:
      return fixed(p, len, out, PacketType::kPsbEnd, 2);
    case 0x73:
      if (len < 7) return kNeedMoreBytes;
      out.aux = static_cast<std::uint16_t>(p[5] | ((p[6] & 1) << 8));
      return fixed(p, len, out, PacketType::kTma, 7, 2, 2);
    case 0xc3:
      if (len < 3) return kNeedMoreBytes;
      if (p[2] != 0x88) return kBadPacket;
      return fixed(p, len, out, PacketType::kMnt, 11, 3, 8);
    case 0x62:
      return fixed(p, len, out, PacketType::kExstop, 2);
    case 0xe2:
      out.ip = true;
      return fixed(p, len, out, PacketType::kExstop, 2);
    case 0xc2:
      return fixed(p, len, out, PacketType::kMwait, 10, 2, 8);
    case 0x22:
      return fixed(p, len, out, PacketType::kPwre, 4, 2, 2);
    case 0xa2:
      return fixed(p, len, out, PacketType::kPwrx, 7, 2, 5);
    case 0x63:
      if (len < 3) return kNeedMoreBytes;
      out.ip = p[2] >> 7;  // SZ: 4-byte items
      out.aux = p[2] & 0x1f;
      return fixed(p, len, out, PacketType::kBbp, 3);
    case 0x33:
      return fixed(p, len, out, PacketType::kBep, 2);
    case 0xb3:
      out.ip = true;
      return fixed(p, len, out, PacketType::kBep, 2);
    case 0x13:
      if (len < 4) return kNeedMoreBytes;
      out.ip = p[2] & 0x80;
      out.aux = p[2] & 0x1f;
      return fixed(p, len, out, PacketType::kCfe, 4, 3, 1);
    case 0x53:
      if (len < 11) return kNeedMoreBytes;
      out.aux = p[2] & 0x3f;
      return fixed(p, len, out, PacketType::kEvd, 11, 3, 8);
    default:
      return kBadPacket;
  }
}

}  // namespace

std::string_view packet_name(PacketType t) {
  static constexpr std::string_view kNames[] = {
      "Bad Packet!", "PAD",       "TNT", "TIP.PGD", "TIP.PGE", "TSC",     "TMA",    "MODE.Exec",
      "MODE.TSX",    "MTC",       "TIP", "FUP",     "CYC",     "VMCS",    "PSB",    "PSBEND",
      "CBR",         "TraceSTOP", "PIP", "OVF",     "MNT",     "PTWRITE", "EXSTOP", "MWAIT",
      "PWRE",        "PWRX",      "BBP", "BIP",     "BEP",     "CFE",     "EVD"};
  auto i = static_cast<std::size_t>(t);
  return i < std::size(kNames) ? kNames[i] : "?";
}

int decode_packet(const std::uint8_t* p, std::size_t len, PacketContext ctx, Packet& out) {
  out = Packet{};
  if (len == 0) return kNeedMoreBytes;
  std::uint8_t b = p[0];
  if (ctx != PacketContext::kNone && (b & 7) == 4) {
    unsigned n = ctx == PacketContext::kBlock4 ? 4 : 8;
    if (len < n + 1) return kNeedMoreBytes;
    out.type = PacketType::kBip;
    out.aux = b >> 3;
    out.payload = load_le(p + 1, n);
    out.size = static_cast<std::uint8_t>(n + 1);
    return static_cast<int>(n + 1);
  }
  if (!(b & 1)) {
    if (b == 0) {
      out.type = PacketType::kPad;
      out.size = 1;
      return 1;
    }
    if (b == 2) return extended(p, len, out);
    return short_tnt(b, out);
  }
  if (b & 2) return cyc(p, len, out);
  switch (b & 0x1f) {
    case 0x0d:
      return ip_packet(PacketType::kTip, p, len, out);
    case 0x11:
      return ip_packet(PacketType::kTipPge, p, len, out);
    case 0x01:
      return ip_packet(PacketType::kTipPgd, p, len, out);
    case 0x1d:
      return ip_packet(PacketType::kFup, p, len, out);
    case 0x19:
      switch (b) {
        case 0x99:
          return mode(p, len, out);
        case 0x19:
          return fixed(p, len, out, PacketType::kTsc, 8, 1, 7);
        case 0x59:
          return fixed(p, len, out, PacketType::kMtc, 2, 1, 1);
        default:
          return kBadPacket;
      }
    default:
      return kBadPacket;
  }
}

PacketContext next_context(const Packet& pkt, PacketContext ctx) {
  switch (pkt.type) {
    case PacketType::kBbp:
      return pkt.ip ? PacketContext::kBlock4 : PacketContext::kBlock8;
    // Packets that may sit inside a block without ending it.
    case PacketType::kBad:
    case PacketType::kPad:
    case PacketType::kTsc:
    case PacketType::kTma:
    case PacketType::kMtc:
    case PacketType::kFup:
    case PacketType::kCyc:
    case PacketType::kCbr:
    case PacketType::kMnt:
    case PacketType::kExstop:
    case PacketType::kPwre:
    case PacketType::kPwrx:
    case PacketType::kBip:
      return ctx;
    default:
      return PacketContext::kNone;
  }
}

Expected<Packet> read_packet(Bytes data, std::size_t offset, PacketContext ctx,
                             std::uint64_t base) {
  if (offset >= data.size())
    return make_error("offset {:#x}: no packet: the trace ends at {:#x}", base + offset,
                      base + data.size());
  Packet pkt;
  int r = decode_packet(data.data() + offset, data.size() - offset, ctx, pkt);
  if (r > 0) return pkt;
  std::size_t left = data.size() - offset;
  if (r == kNeedMoreBytes) {
    // Name the packet the opcode starts, when the opcode itself is known.
    return make_error("offset {:#x}: truncated packet: only {} byte{} left (first byte {:#04x})",
                      base + offset, left, left == 1 ? "" : "s", data[offset]);
  }
  if (left >= 2)
    return make_error("offset {:#x}: bad packet (bytes {:02x} {:02x})", base + offset, data[offset],
                      data[offset + 1]);
  return make_error("offset {:#x}: bad packet (byte {:02x})", base + offset, data[offset]);
}

bool is_psb_at(Bytes data, std::size_t offset) {
  if (offset > data.size() || data.size() - offset < kPsbSize) return false;
  for (std::size_t i = 0; i < kPsbSize; i += 2)
    if (data[offset + i] != 0x02 || data[offset + i + 1] != 0x82) return false;
  return true;
}

std::optional<std::size_t> sync_forward(Bytes data, std::size_t from) {
  static constexpr std::uint8_t kPattern[kPsbSize] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
                                                      2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};
  if (from >= data.size()) return std::nullopt;
  const void* hit = memmem(data.data() + from, data.size() - from, kPattern, kPsbSize);
  if (!hit) return std::nullopt;
  std::size_t at = static_cast<const std::uint8_t*>(hit) - data.data();
  // A run of more than eight 02 82 pairs: the PSB is the last 16 bytes of it,
  // so that the next packet starts right after the run.
  while (at + kPsbSize + 1 < data.size() && data[at + kPsbSize] == 0x02 &&
         data[at + kPsbSize + 1] == 0x82)
    at += 2;
  return at;
}

std::optional<std::size_t> sync_backward(Bytes data, std::size_t before) {
  if (before > data.size()) before = data.size();
  std::size_t i = before;
  while (i > 0) {
    --i;
    if (data[i] == 0x02 && is_psb_at(data, i)) {
      // Prefer the end of a longer run (see sync_forward).
      std::size_t at = i;
      while (at + kPsbSize + 1 < data.size() && data[at + kPsbSize] == 0x02 &&
             data[at + kPsbSize + 1] == 0x82)
        at += 2;
      if (at < before) return at;
    }
  }
  return std::nullopt;
}

}  // namespace perfkit::intelpt
