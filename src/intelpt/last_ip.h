// IP compression of TIP, TIP.PGE, TIP.PGD and FUP packets (Intel SDM, "IP
// compression"): each IP packet carries only the bytes of the IP that
// changed since the last IP sent; the decoder keeps the last IP to rebuild
// the full address. The last IP is reset to zero by PSB.
//
//   IPBytes  payload   rebuilt IP
//   0        none      suppressed (out of context)
//   1        2 bytes   last IP[63:16] : payload[15:0]
//   2        4 bytes   last IP[63:32] : payload[31:0]
//   3        6 bytes   payload[47:0] sign-extended from bit 47
//   4        6 bytes   last IP[63:48] : payload[47:0]
//   6        8 bytes   payload
#pragma once

#include <cstdint>

namespace perfkit::intelpt {

class LastIp {
 public:
  // Rebuilds the IP of a packet with IPBytes `code` and `payload`, updates the
  // last IP and returns true; returns false for a suppressed IP (code 0) or
  // when the packet needs upper bytes that no packet since the reset gave
  // (the last IP is then still updated, with those bytes taken as zero, the
  // way hardware and other decoders treat it).
  bool update(unsigned code, std::uint64_t payload, std::uint64_t& ip) {
    switch (code) {
      case 1:
        ip_ = (ip_ & ~0xffffULL) | (payload & 0xffff);
        break;
      case 2:
        ip_ = (ip_ & ~0xffffffffULL) | (payload & 0xffffffff);
        break;
      case 3:
        ip_ = sign_extend48(payload);
        break;
      case 4:
        ip_ = (ip_ & ~0xffffffffffffULL) | (payload & 0xffffffffffffULL);
        break;
      case 6:
        ip_ = payload;
        break;
      default:
        return false;
    }
    bool complete = code == 3 || code == 6 || have_full_;
    if (code == 3 || code == 6) have_full_ = true;
    ip = ip_;
    return complete;
  }

  // Chooses the shortest IPBytes code for `ip` given the last IP, returns it
  // with the payload to store, and makes `ip` the last IP.
  unsigned compress(std::uint64_t ip, std::uint64_t& payload) {
    unsigned code;
    if (have_full_ && (ip >> 16) == (ip_ >> 16)) {
      code = 1;
      payload = ip & 0xffff;
    } else if (have_full_ && (ip >> 32) == (ip_ >> 32)) {
      code = 2;
      payload = ip & 0xffffffff;
    } else if (sign_extend48(ip) == ip) {
      code = 3;
      payload = ip & 0xffffffffffffULL;
    } else if (have_full_ && (ip >> 48) == (ip_ >> 48)) {
      code = 4;
      payload = ip & 0xffffffffffffULL;
    } else {
      code = 6;
      payload = ip;
    }
    ip_ = ip;
    have_full_ = true;
    return code;
  }

  void reset() {
    ip_ = 0;
    have_full_ = false;
  }
  std::uint64_t ip() const { return ip_; }

  static std::uint64_t sign_extend48(std::uint64_t v) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v << 16) >> 16);
  }

 private:
  std::uint64_t ip_ = 0;
  bool have_full_ = false;
};

}  // namespace perfkit::intelpt
