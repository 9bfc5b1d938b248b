// libFuzzer target for the Intel PT packet layer: decoding, the perf-style
// dump, PSB synchronization and the encoder round trip must never read out of
// bounds, crash or loop, whatever the bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "intelpt/packet.h"
#include "intelpt/packet_dump.h"
#include "intelpt/packet_encoder.h"

using namespace perfkit;
using namespace perfkit::intelpt;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The suite runs a bounded number of inputs: keep each one cheap.
  if (size > 8192) size = 8192;
  Bytes bytes(data, size);
  fmt::memory_buffer out;
  dump_packets(bytes.first(size < 1024 ? size : 1024), out);
  // Walk the packets the way the decoder does; re-encode each one and check
  // that it decodes to the same packet.
  PacketContext ctx = PacketContext::kNone;
  std::size_t pos = 0;
  while (pos < size) {
    Packet p;
    int r = decode_packet(data + pos, size - pos, ctx, p);
    if (r <= 0) {
      auto next = sync_forward(bytes, pos + 1);
      if (!next) break;
      pos = *next;
      ctx = PacketContext::kNone;
      continue;
    }
    if (static_cast<std::size_t>(r) > size - pos) std::abort();
    std::vector<std::uint8_t> again;
    PacketEncoder enc(again);
    enc.packet(p);
    Packet q;
    if (decode_packet(again.data(), again.size(), ctx, q) != static_cast<int>(again.size()) ||
        q.type != p.type || q.payload != p.payload || q.count != p.count || q.aux != p.aux)
      std::abort();
    ctx = next_context(p, ctx);
    pos += static_cast<std::size_t>(r);
  }
  if (size) (void)sync_backward(bytes, size);
  return 0;
}
