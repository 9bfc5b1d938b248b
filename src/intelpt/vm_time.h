// VM time correlation: perf inject --vm-time-correlation's pass over an
// Intel PT trace that ran in and out of VM guests (shared/seeds/perf-intel-pt.txt,
// "Tracing Virtual Machines"). Inside a guest, VMX adds the VMCS's TSC offset
// to the TSC, so TSC packets written there carry guest time; this pass finds
// them and puts host time in their place (the 7 payload bytes), and the TSC
// item of PEBS-via-PT blocks likewise.
//
// Whether a TSC is a guest's: the PIP packet's NR bit (in PSB+, or the last
// one while tracing is on) says so when the trace is "in context"; otherwise
// it is a guess: a TSC outside the host's time range (from the last reliable
// host TSC to the buffer's reference TSC) or below the time the CTC (MTC/TMA,
// which keep host time) expects is a guest's. The TSC offset of a VMCS is
// given (VmcsTable::parse) or learned: a guest TSC in a PSB+ of a continuous
// trace, minus the TSC the CTC expects there. The arithmetic, the heuristics
// and the messages follow perf 6.1's decoder, so that the same file gets the
// same bytes and the same report.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/error.h"
#include "intelpt/packet.h"
#include "intelpt/timing.h"

namespace perfkit::intelpt {

// A VMCS packet's payload when there is no VMCS (not in VMX non-root).
inline constexpr std::uint64_t kNoVmcs = 0xffffffffffULL;

struct VmcsInfo {
  std::uint64_t vmcs = 0;
  std::uint64_t tsc_offset = 0;  // 0: unknown
  bool reliable = false;         // given, or learned from a continuous trace
  bool error_printed = false;    // "Unknown TSC Offset" said once
};

// The TSC offsets of VMCSs, shared by the trace queues of one recording.
class VmcsTable {
 public:
  // perf's argument syntax: "[<TSC Offset> [: <VMCS> [, <VMCS>]...]]...",
  // numbers as strtoull reads them (base 0, a sign allowed). An offset
  // without VMCSs is the default for every VMCS. Errors (perf's errno, for
  // its exit status): a VMCS of 0 or missing after ':' or ',', or text that is
  // no number (EINVAL; perf 6.1 loops forever there); a number out of range
  // (ERANGE).
  static Expected<VmcsTable> parse(std::string_view args, int* err_no = nullptr);

  // The VMCS's entry, made with the default offset if new; nullptr for VMCS 0
  // (no VMCS packet seen) when there is no default (perf's findnew_vmcs_info).
  VmcsInfo* findnew(std::uint64_t vmcs);

 private:
  VmcsInfo* insert(std::uint64_t vmcs, std::uint64_t tsc_offset);

  std::uint64_t default_offset_ = 0;
  std::map<std::uint64_t, VmcsInfo> infos_;
};

// One AUXTRACE buffer of a queue: its bytes and reference TSC (perf's
// buf_timestamp: when perf record read it).
struct VmTimeBuffer {
  Bytes data;
  std::uint64_t reference = 0;
};

class VmTimeSink {
 public:
  virtual ~VmTimeSink() = default;
  // A line perf prints on stderr ("VMCS: 0x... TSC Offset 0x...", errors).
  virtual void message(std::string_view line) = 0;
  // New bytes for buffer `buffer` at `offset` (never in a dry run).
  virtual void patch(std::size_t buffer, std::size_t offset, const std::uint8_t* bytes,
                     std::size_t n) = 0;
};

struct VmTimeParams {
  TimerParams timer;
  bool dry_run = false;  // report, change nothing (no patch calls)
};

// The pass over one queue's buffers, in two steps as perf takes them: sync()
// when perf sets its queues up (finds the first PSB; no output), run() when
// it decodes the queue (the rest of the trace, every message and patch).
class VmTimeCorrelator {
 public:
  VmTimeCorrelator(std::span<const VmTimeBuffer> buffers, const VmTimeParams& params,
                   VmcsTable& vmcs, VmTimeSink& sink);

  // False when the queue has no PSB: perf never decodes it then.
  bool sync();
  void run();

 private:
  struct PsbInfo;  // what a look ahead found (perf's intel_pt_vm_tsc_info)

  // The next packet (PAD skipped), across buffers; false at the end of the
  // data or at a bad packet (then `bad_` is set and the step is one byte).
  bool next_packet();
  bool load_buffer(std::size_t index);
  // Packets after the current one in the current buffer (PAD left out),
  // each with the type of the one before it, until `visit` returns true.
  template <typename Visit>
  void look_ahead(Visit visit) const;
  bool in_range(std::uint64_t tsc) const;
  bool print_once(unsigned bit);

  void on_packet(PsbInfo& data);
  void on_psb(PsbInfo& data);
  // A TSC packet: host time put in (on_tsc), then the time taken from it.
  void on_tsc_packet(PsbInfo& data);
  void on_tsc(PsbInfo& data);
  // After an overflow: a FUP (timing packets aside) says tracing goes on.
  bool fup_follows() const;
  void on_tsc_guest(PsbInfo& data, VmcsInfo* info, std::uint64_t tsc_offset, bool reliable);
  void first_tsc(const PsbInfo& data, VmcsInfo* info, std::uint64_t host_tsc);
  void on_pebs_tsc();
  void on_mtc();
  void translate(std::uint64_t tsc_offset);
  std::uint64_t expected_tsc(const PsbInfo& data) const;

  std::span<const VmTimeBuffer> buffers_;
  VmTimeParams params_;
  VmcsTable& vmcs_table_;
  VmTimeSink& sink_;
  Timer timer_;

  std::size_t buf_ = 0;  // the buffer being read
  const std::uint8_t* data_ = nullptr;
  std::size_t len_ = 0, pos_ = 0, step_ = 0;  // the current packet: at pos_, step_ bytes
  Packet pkt_;
  PacketType last_type_ = PacketType::kBad;  // the packet before pkt_
  PacketContext ctx_ = PacketContext::kNone;
  bool bad_ = false;

  bool in_psb_ = false, pge_ = false;
  bool reliable_ = false, same_buf_ = false, continuous_ = false;
  std::uint64_t pip_payload_ = 0;
  std::uint64_t vmcs_ = 0;
  unsigned blk_type_ = 0;
  std::uint64_t last_reliable_ = 0;
  std::uint64_t buf_timestamp_ = 0;
  unsigned printed_ = 0;
};

}  // namespace perfkit::intelpt
