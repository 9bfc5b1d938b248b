// The packet dump: the lines `perf report -D` / `perf script -D` print for
// the Intel PT data of an AUXTRACE record, byte for byte:
//
//   . ... Intel Processor Trace data: size 12240 bytes
//   .  00000000:  02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82 PSB
//   .  00000010:  00 00 00                                        PAD
//
// Like perf, the dump decodes bytes without regard to PSB synchronization,
// folds zero bytes that follow a short packet into its line (up to 8 bytes
// in all), and prints one "Bad packet!" line per undecodable byte.
#pragma once

#include <fmt/format.h>

#include "base/bytes.h"
#include "base/output.h"
#include "intelpt/packet.h"

namespace perfkit::intelpt {

// Appends perf's description of `pkt` ("TIP.PGE 0xffffb960d302", "TNT TTN (3)").
void describe_packet(const Packet& pkt, fmt::memory_buffer& out);

// Appends the header line and one line per packet of `data`.
void dump_packets(Bytes data, fmt::memory_buffer& out);

// Appends only the packet lines (no header line).
void dump_packet_lines(Bytes data, fmt::memory_buffer& out);

// Writes the header line and the packet lines to `out`, flushing as it goes
// (a buffer of hundreds of megabytes prints without holding its text).
void dump_packets(Bytes data, FdWriter& out);

}  // namespace perfkit::intelpt
