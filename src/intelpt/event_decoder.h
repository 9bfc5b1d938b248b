// EventDecoder: the middle layer. It reads packets (packet.h) and hands the
// flow decoder one Item at a time: TNT bits, indirect branch targets,
// tracing on/off, asynchronous events bound to an IP by a FUP, PSB+ status,
// overflows, power and ptwrite events, and decode errors. It keeps the last
// IP (IP compression), the exec mode and the clock (timing.h), so every item
// carries a full IP and a timestamp.
//
// Errors are items, not failures: a packet that does not decode gives a
// kError item naming the offset, and the decoder goes on at the next PSB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "intelpt/config.h"
#include "intelpt/insn.h"
#include "intelpt/last_ip.h"
#include "intelpt/packet.h"
#include "intelpt/timing.h"

namespace perfkit::intelpt {

enum class ItemType : std::uint8_t {
  kEnd,        // no more trace
  kError,      // bytes that are not a packet at `offset`; `error` says what
  kTnt,        // `count` branches in `bits` (first in bit 63)
  kTip,        // target of an indirect branch (`ip`, unless suppressed)
  kTipPgd,     // tracing stops at the next branch (to `ip` when given)
  kTipPge,     // tracing starts at `ip`
  kFup,        // an asynchronous event at `ip`; the next item says which
  kPsb,        // end of PSB+: tracing is on at `ip` if has_ip, else off
  kOverflow,   // OVF: trace was lost; resume at `ip` if has_ip, else at the next TIP.PGE
  kTsx,        // MODE.TSX: aux bit 0 InTX, bit 1 TXAbort; at `ip` if has_ip
  kPtwrite,    // `payload`, at `ip` if has_ip (FUP on PTWRITE)
  kExstop,     // execution stopped, at `ip` if has_ip
  kMwait,      // `payload` (hints, extensions)
  kPwre,       // `payload`
  kPwrx,       // `payload`
  kCbr,        // the core:bus ratio changed to `aux`
  kTraceStop,  // TraceStop: tracing stopped by an address filter
  kPip,        // `payload` = CR3, aux = NR bit
  kVmcs,       // `payload`
  kCfe,        // Event Trace CFE: aux type, payload vector, at `ip` if has_ip
  kEvd,        // Event Trace EVD: aux type, payload
  kBlockEnd,   // BEP: end of a PEBS block, at `ip` if has_ip
};

struct Item {
  ItemType type = ItemType::kEnd;
  bool has_ip = false;
  ExecMode mode = ExecMode::k64;  // exec mode at `ip`
  std::uint8_t count = 0;         // kTnt: bits; TIP/FUP items: the IP's compression (IPBytes)
  std::uint16_t aux = 0;
  std::uint64_t bits = 0;  // TNT bits / event payload
  std::uint64_t ip = 0;
  std::uint64_t offset = 0;     // trace offset of the item's first packet
  std::uint64_t timestamp = 0;  // TSC ticks after the item's packets
  // perf's IPC cycle count after the item's packets (Timer::ipc_cycles), the
  // points so far at which perf may sample it (Timer::cycle_marks), and
  // whether it comes from CYC packets.
  std::uint64_t cycles = 0, cycle_marks = 0;
  bool exact_cycles = false;
  std::uint32_t time_updates = 0;  // Timer::updates after the item's packets
  const char* error = nullptr;     // kError: static text
};

class EventDecoder {
 public:
  // `trace` is one buffer (or the concatenation of a queue's buffers);
  // offsets in items are `base` + position. `ref_tsc` completes the first
  // TSC packet (the AUXTRACE record's reference), 0 if unknown.
  EventDecoder(Bytes trace, const PtConfig& cfg, std::uint64_t base = 0, std::uint64_t ref_tsc = 0);

  // Moves to the first PSB at or after the current position; false if there
  // is none (the decoder is then at the end).
  bool sync_forward();
  // The next item. At the end of the trace: kEnd, again and again.
  Item next();

  const Timer& timer() const { return timer_; }
  // Where the trace's buffers end (offsets into it, ascending), when it is
  // several AUXTRACE buffers joined: perf looks ahead within one only.
  void set_buffer_ends(std::vector<std::size_t> ends) { buffer_ends_ = std::move(ends); }
  std::uint64_t position() const { return base_ + pos_; }
  bool at_end() const { return pos_ >= data_.size(); }

 private:
  // Reads the packet at pos_ into pkt_; false (and an error item) when it
  // does not decode.
  bool read(Packet& pkt, Item& error);
  void apply_timing(const Packet& pkt, bool after_cyc, bool in_psb = false);
  // After an MTC that followed a CYC: perf's CYC rate from the packets ahead.
  void probe_cyc_rate();
  // The item's time and cycle count: the timer's now.
  void stamp(Item& it) const;
  bool is_timing(PacketType t) const;
  Item make(ItemType t, std::uint64_t offset);
  Item ip_item(ItemType t, const Packet& pkt, std::uint64_t offset);
  // Consumes a FUP right after the current packet (PAD skipped) into `it`.
  void bind_fup(Item& it);
  Item psb(std::uint64_t offset);
  // The item of an event packet that carries no flow (PTWRITE, EXSTOP, BEP, CFE,
  // EVD, the power packets, PIP, VMCS), bound to its FUP where it has one.
  Item event_item(const Packet& pkt, std::uint64_t offset);
  Item overflow(std::uint64_t offset);
  Item error_item(std::uint64_t offset, const char* what);

  Bytes data_;
  std::uint64_t base_ = 0;
  std::size_t pos_ = 0;
  PacketContext ctx_ = PacketContext::kNone;
  LastIp last_ip_;
  Timer timer_;
  ExecMode mode_ = ExecMode::k64;
  PacketType last_type_ = PacketType::kPad;
  unsigned last_cbr_ = 0;
  // An item to hand out before reading on (a CBR change inside PSB+).
  Item pending_;
  bool have_pending_ = false;
  std::vector<std::size_t> buffer_ends_;
};

}  // namespace perfkit::intelpt
