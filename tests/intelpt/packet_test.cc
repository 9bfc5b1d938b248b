// The packet layer: every packet type round trips through the encoder and
// the decoder, every truncation is reported as such, bad opcodes are bad,
// PSB synchronization, and the packet dump matches perf's -D dump of the
// corpus recording line for line.
#include "intelpt/packet.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "abi/perf_event.h"
#include "intelpt/packet_dump.h"
#include "intelpt/packet_encoder.h"
#include "perfdata/reader.h"
#include "support/test_support.h"

namespace perfkit::intelpt {
namespace {

using Buf = std::vector<std::uint8_t>;

Packet decode_one(const Buf& b, PacketContext ctx = PacketContext::kNone) {
  Packet p;
  int r = decode_packet(b.data(), b.size(), ctx, p);
  EXPECT_EQ(r, static_cast<int>(b.size())) << "packet size";
  return p;
}

std::string describe(const Packet& p) {
  fmt::memory_buffer b;
  describe_packet(p, b);
  return fmt::to_string(b);
}

struct Case {
  std::string name;
  Buf bytes;
  std::string text;  // perf's description
  PacketContext ctx = PacketContext::kNone;
};

std::vector<Case> every_packet() {
  std::vector<Case> cases;
  auto add = [&](std::string name, auto&& write, std::string text,
                 PacketContext ctx = PacketContext::kNone) {
    Buf b;
    PacketEncoder e(b);
    write(e);
    cases.push_back({std::move(name), std::move(b), std::move(text), ctx});
  };
  add(
      "pad", [](auto& e) { e.pad(); }, "PAD");
  add(
      "tnt1", [](auto& e) { e.tnt(1ULL << 63, 1); }, "TNT T (1)");
  add(
      "tnt6", [](auto& e) { e.tnt(0xb4ULL << 56, 6); }, "TNT TNTTNT (6)");
  add(
      "tnt0", [](auto& e) { e.tnt(0, 6); }, "TNT NNNNNN (6)");
  add(
      "tnt47", [](auto& e) { e.tnt(~0ULL, 47); },
      "TNT TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT (47)");
  add(
      "tnt7", [](auto& e) { e.tnt(0x5ULL << 60, 7); }, "TNT NTNTNNN (7)");
  add(
      "tip16", [](auto& e) { e.ip_packet_raw(PacketType::kTip, 1, 0x1234); }, "TIP 0x1234");
  add(
      "tip32", [](auto& e) { e.ip_packet_raw(PacketType::kTip, 2, 0x12345678); }, "TIP 0x12345678");
  add(
      "pge48s", [](auto& e) { e.ip_packet_raw(PacketType::kTipPge, 3, 0xffffb960d302); },
      "TIP.PGE 0xffffb960d302");
  add(
      "pgd48", [](auto& e) { e.ip_packet_raw(PacketType::kTipPgd, 4, 0x7fff12345678); },
      "TIP.PGD 0x7fff12345678");
  add(
      "fup64", [](auto& e) { e.ip_packet_raw(PacketType::kFup, 6, 0xffffffff81000000); },
      "FUP 0xffffffff81000000");
  add(
      "pgdnoip", [](auto& e) { e.ip_packet_no_ip(PacketType::kTipPgd); }, "TIP.PGD no ip");
  add(
      "tsc", [](auto& e) { e.tsc(0xbc4cd2cfe8); }, "TSC 0xbc4cd2cfe8");
  add(
      "tma", [](auto& e) { e.tma(0xb23c, 0x130); }, "TMA CTC 0xb23c FC 0x130");
  add(
      "mtc", [](auto& e) { e.mtc(0x48); }, "MTC 0x48");
  add(
      "cyc1", [](auto& e) { e.cyc(0x1f); }, "CYC 0x1f");
  add(
      "cyc2", [](auto& e) { e.cyc(0x20); }, "CYC 0x20");
  add(
      "cycbig", [](auto& e) { e.cyc(0x123456789abcULL); }, "CYC 0x123456789abc");
  add(
      "exec64", [](auto& e) { e.mode_exec(64); }, "MODE.Exec IF:0 64");
  add(
      "exec32if", [](auto& e) { e.mode_exec(32, true); }, "MODE.Exec IF:1 32");
  add(
      "exec16", [](auto& e) { e.mode_exec(16); }, "MODE.Exec IF:0 16");
  add(
      "tsx", [](auto& e) { e.mode_tsx(true, false); }, "MODE.TSX TXAbort:0 InTX:1");
  add(
      "tsxabort", [](auto& e) { e.mode_tsx(false, true); }, "MODE.TSX TXAbort:1 InTX:0");
  add(
      "pip", [](auto& e) { e.pip(0x3fd434000, false); }, "PIP 0x1fea1a00 (NR=0)");
  add(
      "pipnr", [](auto& e) { e.pip(0x1000, true); }, "PIP 0x80 (NR=1)");
  add(
      "vmcs", [](auto& e) { e.vmcs(0x12345); }, "VMCS 0x12345");
  add(
      "cbr", [](auto& e) { e.cbr(0x1d); }, "CBR 0x1d");
  add(
      "tracestop", [](auto& e) { e.trace_stop(); }, "TraceSTOP");
  add(
      "ovf", [](auto& e) { e.ovf(); }, "OVF");
  add(
      "psb", [](auto& e) { e.psb(); }, "PSB");
  add(
      "psbend", [](auto& e) { e.psbend(); }, "PSBEND");
  add(
      "mnt", [](auto& e) { e.mnt(0xdeadbeefcafe); }, "MNT 0xdeadbeefcafe");
  add(
      "ptw4", [](auto& e) { e.ptwrite(0x12345678, 4, false); }, "PTWRITE 0x12345678 IP:0");
  add(
      "ptw8", [](auto& e) { e.ptwrite(0x1122334455667788, 8, true); },
      "PTWRITE 0x1122334455667788 IP:1");
  add(
      "exstop", [](auto& e) { e.exstop(false); }, "EXSTOP IP:0");
  add(
      "exstopip", [](auto& e) { e.exstop(true); }, "EXSTOP IP:1");
  add(
      "mwait", [](auto& e) { e.mwait(0x60, 1); }, "MWAIT 0x100000060 Hints 0x60 Extensions 0x1");
  add(
      "pwre", [](auto& e) { e.pwre(true, 2, 1); }, "PWRE 0x2180 HW:1 CState:2 Sub-CState:1");
  add(
      "pwrx", [](auto& e) { e.pwrx(2, 3, 4); },
      "PWRX 0x423 Last CState:2 Deepest CState:3 Wake Reason 0x4");
  add(
      "bbp4", [](auto& e) { e.bbp(true, 0x12); }, "BBP SZ 4-byte Type 0x12");
  add(
      "bbp8", [](auto& e) { e.bbp(false, 1); }, "BBP SZ 8-byte Type 0x1");
  add(
      "bip4", [](auto& e) { e.bip(3, 0xabcd, 4); }, "BIP ID 0x03 Value 0xabcd",
      PacketContext::kBlock4);
  add(
      "bip8", [](auto& e) { e.bip(0x1f, 0x1122334455667788, 8); },
      "BIP ID 0x1f Value 0x1122334455667788", PacketContext::kBlock8);
  add(
      "bep", [](auto& e) { e.bep(false); }, "BEP IP:0");
  add(
      "bepip", [](auto& e) { e.bep(true); }, "BEP IP:1");
  add(
      "cfe", [](auto& e) { e.cfe(1, 3, true); }, "CFE IP:1 Type 0x01 Vector 0x3");
  add(
      "cfenoip", [](auto& e) { e.cfe(0x1f, 0, false); }, "CFE IP:0 Type 0x1f Vector 0x0");
  add(
      "evd", [](auto& e) { e.evd(0x9, 0x7060504030201); }, "EVD Type 0x09 Payload 0x7060504030201");
  return cases;
}

TEST(PacketTest, EveryPacketDecodesAndDescribesLikePerf) {
  for (const auto& c : every_packet()) {
    SCOPED_TRACE(c.name);
    Packet p = decode_one(c.bytes, c.ctx);
    EXPECT_EQ(p.size, c.bytes.size());
    EXPECT_EQ(describe(p), c.text);
  }
}

TEST(PacketTest, EveryPacketRoundTripsThroughTheEncoder) {
  for (const auto& c : every_packet()) {
    SCOPED_TRACE(c.name);
    Packet p = decode_one(c.bytes, c.ctx);
    Buf again;
    PacketEncoder e(again);
    e.packet(p);
    EXPECT_EQ(again, c.bytes);
  }
}

TEST(PacketTest, EveryTruncationNeedsMoreBytes) {
  for (const auto& c : every_packet()) {
    SCOPED_TRACE(c.name);
    for (std::size_t n = 0; n < c.bytes.size(); ++n) {
      // A cut-down heap copy so that ASan catches any read past the end.
      std::vector<std::uint8_t> cut(c.bytes.begin(), c.bytes.begin() + n);
      Packet p;
      int r = decode_packet(cut.data(), cut.size(), c.ctx, p);
      // A cut PSB can still look like a short packet? No: 02 82 needs 16.
      EXPECT_EQ(r, kNeedMoreBytes) << "prefix of " << n << " bytes";
    }
  }
}

TEST(PacketTest, BadOpcodesAreBadPackets) {
  const Buf bad[] = {
      {0x02, 0x99},                                // unknown extended opcode
      {0xb9, 0},                                   // 0x19 family, not TSC/MTC/MODE
      {0x99, 0x03},                                // MODE.Exec with both CS.L and CS.D
      {0x99, 0x23},                                // MODE.TSX with both bits
      {0x99, 0x40},                                // unknown MODE leaf
      {0xad, 1, 2, 3, 4, 5, 6},                    // TIP with IPBytes 5
      {0xfd, 1, 2, 3, 4, 5, 6, 7, 8},              // FUP with IPBytes 7
      {0x02, 0xc3, 0x77, 0, 0, 0, 0, 0, 0, 0, 0},  // 3-byte opcode that is not MNT
      {0x02, 0x52, 0, 0, 0, 0, 0, 0, 0, 0},        // PTWRITE with payload size code 2
      {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
       0x83},                                                              // not quite a PSB
      {0x07, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03},  // CYC of 11 bytes
  };
  for (const auto& b : bad) {
    Packet p;
    EXPECT_EQ(decode_packet(b.data(), b.size(), PacketContext::kNone, p), kBadPacket)
        << fmt::format("{:02x}", fmt::join(b, " "));
  }
}

TEST(PacketTest, ReadPacketErrorsNameTheOffset) {
  Buf b = {0x00, 0x02, 0x99, 0x4d, 0x12};
  auto bad = read_packet(b, 1, PacketContext::kNone, 0x1000);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "offset 0x1001: bad packet (bytes 02 99)");
  auto cut = read_packet(b, 3, PacketContext::kNone, 0x1000);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().message(),
            "offset 0x1003: truncated packet: only 2 bytes left (first byte 0x4d)");
  auto end = read_packet(b, 5, PacketContext::kNone);
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().message(), "offset 0x5: no packet: the trace ends at 0x5");
}

TEST(PacketTest, BlockContextMakesBipOutOfOtherwiseTntBytes) {
  Buf b = {0x0c, 1, 2, 3, 4};  // low bits 100: BIP in a block, a TNT otherwise
  Packet p;
  EXPECT_EQ(decode_packet(b.data(), b.size(), PacketContext::kBlock4, p), 5);
  EXPECT_EQ(p.type, PacketType::kBip);
  EXPECT_EQ(decode_packet(b.data(), b.size(), PacketContext::kNone, p), 1);
  EXPECT_EQ(p.type, PacketType::kTnt);
  Packet bbp;
  bbp.type = PacketType::kBbp;
  bbp.ip = true;
  EXPECT_EQ(next_context(bbp, PacketContext::kNone), PacketContext::kBlock4);
  p.type = PacketType::kTip;
  EXPECT_EQ(next_context(p, PacketContext::kBlock4), PacketContext::kNone);
  p.type = PacketType::kTsc;
  EXPECT_EQ(next_context(p, PacketContext::kBlock8), PacketContext::kBlock8);
}

TEST(PacketTest, LastIpCompressionRoundTrips) {
  const std::uint64_t ips[] = {
      0x401000,           0x401234, 0x7f0012345678,     0x7f0012340000,     0x7f1112345678,
      0xffffffff81000000, 0x401000, 0xffff800000000000, 0x8000000000000000, 0x123456789abcdef0};
  LastIp enc, dec;
  for (std::uint64_t ip : ips) {
    std::uint64_t payload;
    unsigned code = enc.compress(ip, payload);
    std::uint64_t got = 0;
    EXPECT_TRUE(dec.update(code, payload, got));
    EXPECT_EQ(got, ip) << "code " << code;
  }
  LastIp fresh;
  std::uint64_t ip;
  EXPECT_FALSE(fresh.update(1, 0x1234, ip));  // no upper bytes known yet
  EXPECT_FALSE(fresh.update(0, 0, ip));       // suppressed
}

TEST(PacketTest, SyncFindsPsbForwardAndBackward) {
  Buf b;
  PacketEncoder e(b);
  e.pad(3);
  e.tnt(1ULL << 63, 1);
  std::size_t first = b.size();
  e.psb();
  e.psbend();
  e.tsc(5);
  std::size_t second = b.size();
  e.psb();
  e.pad();
  EXPECT_EQ(sync_forward(b, 0), first);
  EXPECT_EQ(sync_forward(b, first), first);
  EXPECT_EQ(sync_forward(b, first + 1), second);
  EXPECT_EQ(sync_forward(b, second + 1), std::nullopt);
  EXPECT_EQ(sync_backward(b, b.size()), second);
  EXPECT_EQ(sync_backward(b, second), first);
  EXPECT_EQ(sync_backward(b, first), std::nullopt);
  // A longer run of 02 82: the PSB is its last 16 bytes.
  Buf run = {0x02, 0x82};
  run.insert(run.end(), b.begin() + first, b.end());
  EXPECT_EQ(sync_forward(run, 0), 2u + first - first);
}

// ---- the corpus recording against perf's own -D dump ----

std::vector<std::string> reference_packet_lines(const std::string& gz) {
  auto r = test::run("zcat " + test::sh(gz));
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(". ... Intel Processor Trace data") ||
        (line.size() > 12 && line.starts_with(".  ") && line[11] == ':'))
      lines.push_back(line);
  return lines;
}

std::vector<std::string> perfkit_packet_lines(const std::string& path, std::size_t max_buffers) {
  std::vector<std::string> lines;
  auto reader = perfdata::Reader::open(path);
  EXPECT_TRUE(reader) << (reader ? "" : reader.error().message());
  if (!reader) return lines;
  perfdata::ReadRecord rec;
  std::size_t buffers = 0;
  while (buffers < max_buffers) {
    auto more = (*reader)->next(rec);
    EXPECT_TRUE(more) << (more ? "" : more.error().message());
    if (!more || !*more) break;
    if (rec.view.type != abi::kRecordAuxtrace) continue;
    ++buffers;
    fmt::memory_buffer out;
    dump_packets(rec.view.trailing, out);
    std::istringstream in(fmt::to_string(out));
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  return lines;
}

void expect_same_lines(const std::vector<std::string>& want, const std::vector<std::string>& got) {
  int shown = 0;
  for (std::size_t i = 0; i < std::max(want.size(), got.size()) && shown < 5; ++i) {
    std::string w = i < want.size() ? want[i] : "<none>";
    std::string g = i < got.size() ? got[i] : "<none>";
    if (w != g) {
      ADD_FAILURE() << "line " << i << "\n  perf:    " << w << "\n  perfkit: " << g;
      ++shown;
    }
  }
  EXPECT_EQ(want.size(), got.size());
}

TEST(PacketDumpTest, MatchesPerfDumpOfCorpusRecording) {
  PK_SKIP_WITHOUT_CORPUS();
  std::string dir = test::corpus_dir();
  auto want = reference_packet_lines(
      dir + "/_reference-perf-6.1/quipper/perf.data.intel_pt-4.14.report-D.txt.gz");
  ASSERT_GT(want.size(), 80000u);
  auto got = perfkit_packet_lines(dir + "/quipper/perf.data.intel_pt-4.14", 100);
  expect_same_lines(want, got);
}

TEST(PacketDumpTest, PipedRecordingDataIsRightWherePerfIsOffBy16) {
  PK_SKIP_WITHOUT_CORPUS();
  std::string dir = test::corpus_dir();
  // perf 6.1 reads the AUX data of a pipe-mode file from the wrong place: its
  // stream offsets leave out the 16-byte pipe header, so it dumps the last 16
  // bytes of the AUXTRACE record itself followed by the data minus its last
  // 16 bytes (and then stops with "bad event header size"). perfkit reads the
  // right bytes: the buffer starts with a PSB and equals the payload cut out
  // by the corpus' independent parser. Rebuilding perf's view from them must
  // give perf's lines exactly.
  auto want = reference_packet_lines(
      dir + "/_reference-perf-6.1/quipper/perf.data.piped.intel_pt-4.14.report-D.txt.gz");
  ASSERT_GT(want.size(), 1000u);
  auto reader = perfdata::Reader::open(dir + "/quipper/perf.data.piped.intel_pt-4.14");
  ASSERT_TRUE(reader);
  perfdata::ReadRecord rec;
  while (true) {
    auto more = (*reader)->next(rec);
    ASSERT_TRUE(more && *more);
    if (rec.view.type == abi::kRecordAuxtrace) break;
  }
  Bytes data = rec.view.trailing;
  EXPECT_TRUE(is_psb_at(data, 0));
  std::string derived =
      test::read_file(dir + "/_derived/quipper-intel_pt-4.14/piped-idx0-cpu0-tid3587-off0.pt.bin");
  EXPECT_EQ(derived, std::string(as_chars(data)));
  Buf perf_view(rec.view.bytes.end() - 16, rec.view.bytes.end());
  perf_view.insert(perf_view.end(), data.begin(), data.end() - 16);
  fmt::memory_buffer out;
  dump_packets(perf_view, out);
  std::vector<std::string> got;
  std::istringstream in(fmt::to_string(out));
  std::string line;
  while (std::getline(in, line)) got.push_back(line);
  expect_same_lines(want, got);
}

TEST(PacketDumpTest, FileRecordingBuffersEqualTheDerivedPayloads) {
  PK_SKIP_WITHOUT_CORPUS();
  std::string dir = test::corpus_dir();
  auto reader = perfdata::Reader::open(dir + "/quipper/perf.data.intel_pt-4.14");
  ASSERT_TRUE(reader);
  perfdata::ReadRecord rec;
  std::vector<std::string> buffers;
  while (true) {
    auto more = (*reader)->next(rec);
    ASSERT_TRUE(more);
    if (!*more) break;
    if (rec.view.type == abi::kRecordAuxtrace) buffers.emplace_back(as_chars(rec.view.trailing));
  }
  ASSERT_EQ(buffers.size(), 2u);
  std::string d = dir + "/_derived/quipper-intel_pt-4.14/";
  EXPECT_EQ(buffers[0], test::read_file(d + "file-idx0-cpu0-tid3174-off0.pt.bin"));
  EXPECT_EQ(buffers[1], test::read_file(d + "file-idx3-cpu3-tid3174-off0.pt.bin"));
}

TEST(PacketDumpTest, FoldsZerosAndReportsBadBytes) {
  Buf b = {0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x99, 0x4d};
  fmt::memory_buffer out;
  dump_packet_lines(b, out);
  EXPECT_EQ(fmt::to_string(out),
            ".  00000000:  06 00 00 00 00 00 00 00                         TNT T (1)\n"
            ".  00000008:  00 00                                           PAD\n"
            ".  0000000a:  02                                              Bad packet!\n"
            ".  0000000b:  99                                              Bad packet!\n"
            ".  0000000c:  4d                                              Bad packet!\n");
}

}  // namespace
}  // namespace perfkit::intelpt
