// Intel PT packets: the bottom layer of the decoder stack (packet -> event ->
// flow). decode_packet() reads exactly one packet from a byte range, checking
// the end of the range before every byte it touches; it never reads past
// `len`. Packet lengths and the meaning of every field follow the Intel SDM
// (Intel Processor Trace chapter) and match what perf's decoder accepts, so
// that the packet dump lines up byte for byte with `perf report -D`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/bytes.h"
#include "base/error.h"

namespace perfkit::intelpt {

enum class PacketType : std::uint8_t {
  kBad,  // not a packet (only used for the dump of undecodable bytes)
  kPad,
  kTnt,  // short (1 byte) and long (8 bytes) TNT
  kTipPgd,
  kTipPge,
  kTsc,
  kTma,
  kModeExec,
  kModeTsx,
  kMtc,
  kTip,
  kFup,
  kCyc,
  kVmcs,
  kPsb,
  kPsbEnd,
  kCbr,
  kTraceStop,
  kPip,
  kOvf,
  kMnt,
  kPtwrite,
  kExstop,
  kMwait,
  kPwre,
  kPwrx,
  kBbp,
  kBip,
  kBep,
  kCfe,
  kEvd,
};

// The name perf prints for a packet type ("TIP.PGE", "MODE.Exec", ...).
std::string_view packet_name(PacketType t);

// One decoded packet. Field use by type:
//   TNT      count = branches (0..47); payload = the bits, first branch in
//            bit 63 (1 = taken)
//   TIP, TIP.PGE, TIP.PGD, FUP
//            count = the IPBytes field (0 = IP suppressed, 1, 2, 3, 4, 6);
//            payload = the compressed IP bytes as stored
//   TSC      payload = 56-bit TSC           MTC   payload = CTC byte
//   TMA      payload = CTC[15:0]; aux = fast counter (9 bits)
//   CYC      payload = cycle count
//   MODE.Exec payload = 16, 32 or 64; aux = the mode byte (bit 2: IF)
//   MODE.TSX payload = bit 0 InTX, bit 1 TXAbort
//   PIP      payload = the 6 payload bytes (bit 0: NR, bits 47:1: CR3[51:5])
//   VMCS     payload = VMCS pointer bits [51:12] as stored (5 bytes)
//   CBR      payload = the 2 bytes after the opcode (core:bus ratio in the low byte)
//   MNT      payload = 8 bytes
//   PTWRITE  payload = 4 or 8 bytes; count = 4 or 8; ip = the IP bit (a FUP follows)
//   EXSTOP   ip = the IP bit            BEP  ip = the IP bit
//   MWAIT    payload = 8 bytes (hints in bits 7:0, extensions in bits 33:32)
//   PWRE     payload = 2 bytes (HW bit 7, resolved thread C-state 15:12, sub 11:8)
//   PWRX     payload = 5 bytes (deepest 3:0, last 7:4, wake reason 11:8)
//   BBP      aux = block item type (bits 4:0); ip = true when items are 4 bytes
//   BIP      aux = item id; payload = 4 or 8 bytes
//   CFE      aux = type (bits 4:0); payload = vector; ip = the IP bit
//   EVD      aux = type (bits 5:0); payload = 8 bytes
struct Packet {
  PacketType type = PacketType::kBad;
  std::uint8_t size = 0;  // bytes of this packet
  std::uint8_t count = 0;
  std::uint16_t aux = 0;
  bool ip = false;
  std::uint64_t payload = 0;
};

// Block context: after a BBP packet, opcodes with low bits 100b are BIP
// packets of 4 or 8 bytes of payload until the block ends (BEP or any
// packet that is not a block item).
enum class PacketContext : std::uint8_t { kNone, kBlock4, kBlock8 };

// Result codes of decode_packet (negative) next to the positive packet size.
inline constexpr int kNeedMoreBytes = -1;  // the packet runs past the end of the data
inline constexpr int kBadPacket = -2;      // an opcode or field value no packet has

// Decodes the packet at p[0..len) in context `ctx`. Returns its size (> 0) and
// fills `out`, or kNeedMoreBytes / kBadPacket. Reads at most `len` bytes.
int decode_packet(const std::uint8_t* p, std::size_t len, PacketContext ctx, Packet& out);

// The context after `pkt` (BBP opens a block, most packets close it).
PacketContext next_context(const Packet& pkt, PacketContext ctx);

// Decodes the packet at `offset` of `data` and describes a failure: "offset
// 0x..: truncated TIP packet: needs 7 bytes, 3 left" or "offset 0x..: bad
// packet (bytes 02 99)". `base` is added to offsets in messages.
Expected<Packet> read_packet(Bytes data, std::size_t offset, PacketContext ctx,
                             std::uint64_t base = 0);

// Number of bytes the full IP of an IP packet occupies for an IPBytes code,
// or -1 for the reserved codes 5 and 7.
constexpr int ip_payload_size(unsigned ip_bytes) {
  constexpr int kSizes[8] = {0, 2, 4, 6, 6, -1, 8, -1};
  return kSizes[ip_bytes & 7];
}

// ---- synchronization ----

inline constexpr std::size_t kPsbSize = 16;

// True if a complete PSB starts at data[offset].
bool is_psb_at(Bytes data, std::size_t offset);
// The offset of the first PSB at or after `from`, if any.
std::optional<std::size_t> sync_forward(Bytes data, std::size_t from);
// The offset of the last PSB that starts before `before`, if any.
std::optional<std::size_t> sync_backward(Bytes data, std::size_t before);

}  // namespace perfkit::intelpt
