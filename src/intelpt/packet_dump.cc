#include "intelpt/packet_dump.h"

#include <iterator>

namespace perfkit::intelpt {

namespace {

void put(fmt::memory_buffer& out, std::string_view s) { out.append(s.data(), s.data() + s.size()); }

void describe_tnt(const Packet& pkt, fmt::memory_buffer& out) {
  put(out, "TNT ");
  std::uint64_t bits = pkt.payload;
  for (unsigned i = 0; i < pkt.count; ++i, bits <<= 1) out.push_back((bits >> 63) ? 'T' : 'N');
  fmt::format_to(std::back_inserter(out), " ({})", pkt.count);
}

}  // namespace

void describe_packet(const Packet& pkt, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  std::string_view name = packet_name(pkt.type);
  std::uint64_t v = pkt.payload;
  switch (pkt.type) {
    case PacketType::kBad:
    case PacketType::kPad:
    case PacketType::kPsb:
    case PacketType::kPsbEnd:
    case PacketType::kTraceStop:
    case PacketType::kOvf:
      put(out, name);
      return;
    case PacketType::kTnt:
      describe_tnt(pkt, out);
      return;
    case PacketType::kTipPgd:
    case PacketType::kTipPge:
    case PacketType::kTip:
    case PacketType::kFup:
      if (!pkt.count) {
        fmt::format_to(it, "{} no ip", name);
        return;
      }
      [[fallthrough]];
    case PacketType::kCyc:
    case PacketType::kVmcs:
    case PacketType::kMtc:
    case PacketType::kMnt:
    case PacketType::kCbr:
    case PacketType::kTsc:
      fmt::format_to(it, "{} {:#x}", name, v);
      return;
    case PacketType::kTma:
      fmt::format_to(it, "{} CTC {:#x} FC {:#x}", name, static_cast<unsigned>(v), pkt.aux);
      return;
    case PacketType::kModeExec:
      fmt::format_to(it, "{} IF:{} {}", name, (pkt.aux >> 2) & 1, v);
      return;
    case PacketType::kModeTsx:
      fmt::format_to(it, "{} TXAbort:{} InTX:{}", name, (v >> 1) & 1, v & 1);
      return;
    case PacketType::kPip:
      fmt::format_to(it, "{} {:#x} (NR={})", name, v >> 1, v & 1);
      return;
    case PacketType::kPtwrite:
      fmt::format_to(it, "{} {:#x} IP:{}", name, v, pkt.ip ? 1 : 0);
      return;
    case PacketType::kBep:
    case PacketType::kExstop:
      fmt::format_to(it, "{} IP:{}", name, pkt.ip ? 1 : 0);
      return;
    case PacketType::kMwait:
      fmt::format_to(it, "{} {:#x} Hints {:#x} Extensions {:#x}", name, v, v & 0xff, (v >> 32) & 3);
      return;
    case PacketType::kPwre:
      fmt::format_to(it, "{} {:#x} HW:{} CState:{} Sub-CState:{}", name, v, (v & 0x80) ? 1 : 0,
                     (v >> 12) & 0xf, (v >> 8) & 0xf);
      return;
    case PacketType::kPwrx:
      fmt::format_to(it, "{} {:#x} Last CState:{} Deepest CState:{} Wake Reason {:#x}", name, v,
                     (v >> 4) & 0xf, v & 0xf, (v >> 8) & 0xf);
      return;
    case PacketType::kBbp:
      fmt::format_to(it, "{} SZ {}-byte Type {:#x}", name, pkt.ip ? "4" : "8", pkt.aux);
      return;
    case PacketType::kBip:
      fmt::format_to(it, "{} ID 0x{:02x} Value {:#x}", name, pkt.aux, v);
      return;
    case PacketType::kCfe:
      fmt::format_to(it, "{} IP:{} Type 0x{:02x} Vector {:#x}", name, pkt.ip ? 1 : 0, pkt.aux, v);
      return;
    case PacketType::kEvd:
      fmt::format_to(it, "{} Type 0x{:02x} Payload {:#x}", name, pkt.aux, v);
      return;
  }
}

namespace {

template <class Flush>
void dump_lines(Bytes data, fmt::memory_buffer& out, Flush&& flush) {
  static constexpr char kHex[] = "0123456789abcdef";
  PacketContext ctx = PacketContext::kNone;
  std::size_t pos = 0;
  while (pos < data.size()) {
    const std::uint8_t* p = data.data() + pos;
    std::size_t left = data.size() - pos;
    Packet pkt;
    int r = decode_packet(p, left, ctx, pkt);
    std::size_t n = 1;
    if (r > 0) {
      n = static_cast<std::size_t>(r);
      // Zero bytes after a short packet print on its line (perf does so).
      while (n < 8 && n < left && p[n] == 0) ++n;
      ctx = next_context(pkt, ctx);
    }
    fmt::format_to(std::back_inserter(out), ".  {:08x}: ", pos);
    for (std::size_t i = 0; i < n; ++i) {
      char b[3] = {' ', kHex[p[i] >> 4], kHex[p[i] & 15]};
      out.append(b, b + 3);
    }
    for (std::size_t i = n; i < 16; ++i) put(out, "   ");
    out.push_back(' ');
    if (r > 0)
      describe_packet(pkt, out);
    else
      put(out, "Bad packet!");
    out.push_back('\n');
    pos += n;
    flush();
  }
}

}  // namespace

void dump_packet_lines(Bytes data, fmt::memory_buffer& out) {
  dump_lines(data, out, [] {});
}

void dump_packets(Bytes data, FdWriter& out) {
  fmt::format_to(std::back_inserter(out.buffer()),
                 ". ... Intel Processor Trace data: size {} bytes\n", data.size());
  dump_lines(data, out.buffer(), [&] { out.maybe_flush(); });
}

void dump_packets(Bytes data, fmt::memory_buffer& out) {
  fmt::format_to(std::back_inserter(out), ". ... Intel Processor Trace data: size {} bytes\n",
                 data.size());
  dump_packet_lines(data, out);
}

}  // namespace perfkit::intelpt
