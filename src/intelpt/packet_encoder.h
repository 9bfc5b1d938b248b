// PacketEncoder: writes Intel PT packets, byte-exact to the SDM formats
// that decode_packet() reads. Used by the trace generator (pt-synth) and by
// the tests, which build traces packet by packet.
#pragma once

#include <cstdint>
#include <vector>

#include "intelpt/last_ip.h"
#include "intelpt/packet.h"

namespace perfkit::intelpt {

class PacketEncoder {
 public:
  explicit PacketEncoder(std::vector<std::uint8_t>& out) : out_(out) {}

  // Writes `pkt` as decode_packet() would have read it (round trips). For IP
  // packets the payload is the stored bytes for IPBytes `count`.
  void packet(const Packet& pkt);

  void pad(unsigned n = 1) { out_.insert(out_.end(), n, 0); }
  // PSB also resets the last IP, as it does in hardware.
  void psb();
  void psbend() { bytes2(0x23); }
  void ovf() { bytes2(0xf3); }
  void trace_stop() { bytes2(0x83); }
  // `count` branches (1..47), the first in bit 63 of `bits`; one or six
  // bits fit a short TNT (up to 6), more a long TNT.
  void tnt(std::uint64_t bits, unsigned count);
  // An IP packet of `type` (TIP, TIP.PGE, TIP.PGD, FUP) with `ip`, compressed
  // against the last IP.
  void ip_packet(PacketType type, std::uint64_t ip);
  // An IP packet with the IP suppressed (IPBytes 0).
  void ip_packet_no_ip(PacketType type);
  // An IP packet with an explicit IPBytes code and stored payload.
  void ip_packet_raw(PacketType type, unsigned code, std::uint64_t payload);
  void tsc(std::uint64_t tsc);
  void mtc(std::uint8_t ctc) { out_.push_back(0x59), out_.push_back(ctc); }
  void tma(std::uint16_t ctc, std::uint16_t fc);
  void cyc(std::uint64_t cycles);
  void cbr(std::uint8_t ratio);
  // bits: 16, 32 or 64.
  void mode_exec(unsigned bits, bool interrupt_flag = false);
  void mode_tsx(bool in_tx, bool abort);
  void pip(std::uint64_t cr3, bool non_root = false);
  void vmcs(std::uint64_t pointer);
  void mnt(std::uint64_t payload);
  // size: 4 or 8 bytes; ip: a FUP with the IP of the PTWRITE follows.
  void ptwrite(std::uint64_t payload, unsigned size, bool ip);
  void exstop(bool ip) { bytes2(ip ? 0xe2 : 0x62); }
  void mwait(std::uint8_t hints, std::uint8_t extensions);
  void pwre(bool hw, unsigned cstate, unsigned sub_cstate);
  void pwrx(unsigned last_cstate, unsigned deepest_cstate, unsigned wake_reason);
  void bbp(bool four_byte_items, unsigned type);
  void bip(unsigned id, std::uint64_t value, unsigned size);
  void bep(bool ip) { bytes2(ip ? 0xb3 : 0x33); }
  void cfe(unsigned type, std::uint8_t vector, bool ip);
  void evd(unsigned type, std::uint64_t payload);

  LastIp& last_ip() { return last_ip_; }
  std::size_t size() const { return out_.size(); }

 private:
  void bytes2(std::uint8_t op) {
    out_.push_back(0x02);
    out_.push_back(op);
  }
  void le(std::uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }

  std::vector<std::uint8_t>& out_;
  LastIp last_ip_;
};

}  // namespace perfkit::intelpt
