// FlowDecoder: the top layer. It walks the object code of the traced images
// (AddressSpace + BlockCache + InsnDecoder), asking the EventDecoder for a TNT
// bit at each conditional branch (and compressed return) and for a TIP at each
// indirect branch, and reports what ran as Steps to a FlowSink:
//
//   kRun     instructions that executed, first at `ip`, `ninsn` of them, with
//            how the last one left (`end`): fell through, branched to `to`,
//            or ended the trace (TIP.PGD); `from` is the last instruction's IP
//   kBegin   tracing (re)starts at `to` (TIP.PGE, PSB+ FUP after a gap)
//   kAsync   an asynchronous branch (interrupt, exception) from `from` to `to`
//            (`to` = 0 with end kDisabled when tracing stopped there)
//   kEvent   an event at `from` (see EventKind)
//   kError   the trace could not be followed at `from` (`error`, `offset`); the
//            decoder goes on at the next PSB, or, when the instruction could
//            not be had, at the next packet with a whole IP, as perf does.
//
// Return compression keeps a stack of return addresses (cleared at PSB and
// on overflow, as the hardware clears its own).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/bytes.h"
#include "intelpt/block_cache.h"
#include "intelpt/config.h"
#include "intelpt/event_decoder.h"
#include "intelpt/image.h"
#include "intelpt/insn.h"

namespace perfkit::intelpt {

enum class StepKind : std::uint8_t { kRun, kBegin, kAsync, kEvent, kError };

// Decode error classes, numbered as perf numbers them (INTEL_PT_ERR_*), so
// that error events carry perf's code and message.
enum class PtError : std::uint8_t {
  kNone = 0,
  kBadPacket = 3,         // "Bad packet"
  kNoInsn = 5,            // "Failed to get instruction"
  kMismatch = 6,          // "Trace doesn't match instruction"
  kOverflow = 7,          // "Overflow packet"
  kLost = 8,              // "Lost trace data"
  kNeverEndingLoop = 10,  // "Never-ending loop"
};

// perf's message for an error code.
const char* pt_error_message(PtError e);

enum class RunEnd : std::uint8_t {
  kFallThrough,  // the last instruction did not branch (or a conditional was not taken)
  kBranch,       // the last instruction branched to `to`
  kDisabled,     // tracing stopped at the last instruction (TIP.PGD); `to` if known
  kCut,          // stopped before `to`: the next step happens there (an event)
};

enum class EventKind : std::uint8_t {
  kOverflow,
  kPsb,
  kCbr,
  kTsx,
  kPtwrite,
  kExstop,
  kMwait,
  kPwre,
  kPwrx,
  kTraceStop,
  kPaging,
  kVmcs,
  kCfe,
  kEvd,
  kBlockEnd,
};

struct Step {
  StepKind kind = StepKind::kRun;
  RunEnd end = RunEnd::kFallThrough;
  EventKind event = EventKind::kPsb;
  ExecMode mode = ExecMode::k64;
  Insn last;                              // kRun: the last instruction
  std::uint32_t ninsn = 0;                // kRun
  const std::uint8_t* lengths = nullptr;  // kRun: instruction lengths (valid during the call)
  std::uint64_t ip = 0;                   // kRun: first instruction
  std::uint64_t from = 0, to = 0;
  bool has_ip = false;        // kEvent: `from` is where it happened
  std::uint16_t aux = 0;      // kEvent: item aux (TSX flags, CBR ratio, types)
  std::uint64_t payload = 0;  // kEvent
  std::uint64_t offset = 0;   // trace offset of the item behind this step
  // TSC ticks. For kRun, the time of every instruction but the last: the
  // time as of the last branch that took trace (perf's sample time); the
  // last instruction, and its branch, are at `last_timestamp`.
  std::uint64_t timestamp = 0;
  std::uint64_t last_timestamp = 0;
  // kRun: the time perf's decoder has when it walks the run, and how many
  // times it had been set then (Timer::updates). perf fetches the next
  // packet before it walks, so a run that ends in a direct branch with no
  // TNT bit left is walked at the time of the packet that comes next
  // (timing packets before it included); other runs at the time of the
  // last packet taken.
  std::uint64_t walk_timestamp = 0;
  std::uint32_t walk_time_updates = 0;
  // perf's IPC cycle count as of the trace taken for this step (for kRun, for
  // its last instruction), the points so far at which perf may sample it, and
  // whether it comes from CYC packets (Item::cycles).
  std::uint64_t cycles = 0, cycle_marks = 0;
  bool exact_cycles = false;
  bool tnt_done = false;  // kRun: no TNT bit is left to use after it
  // kRun: its instructions ran with bits of a TNT packet already used and
  // more left (perf's TNT_CONT state: each updates its sample time).
  bool in_tnt = false;
  const char* error = nullptr;  // kError: what went wrong, in detail
  // kError: 1 + the id of the image whose code could not be read (0: none);
  // perf reports only the first failures of one (see decode_itrace).
  std::uint32_t image = 0;
  PtError code = PtError::kNone;  // kError: the class of error
  bool from_psb = false;          // kBegin: synchronized at a PSB (perf makes no sample)
};

class FlowSink {
 public:
  virtual ~FlowSink() = default;
  virtual void on_step(const Step& step) = 0;
  // Polled between steps: true stops the decoder.
  virtual bool stop() const { return false; }
};

// Where the address space comes from when it changes with time (a per-cpu
// trace runs one thread, then another).
class SpaceProvider {
 public:
  virtual ~SpaceProvider() = default;
  // The address space in effect at `tsc` (nullptr: none known), and the TSC
  // at which it may change next (UINT64_MAX: never).
  virtual const AddressSpace* space_at(std::uint64_t tsc, std::uint64_t& next_change) = 0;
};

struct FlowOptions {
  bool return_compression = true;
  // Give up walking toward a FUP or a branch after this many blocks without
  // trace (a decode that went wrong can loop forever).
  std::uint32_t max_blocks_without_trace = 10000;
};

// One decoder per trace queue; it owns the block caches of the images it
// walks, so decoders of different queues share nothing and run in parallel.
class FlowDecoder {
 public:
  FlowDecoder(Bytes trace, const PtConfig& cfg, const AddressSpace* space, FlowOptions opts = {},
              std::uint64_t base = 0, std::uint64_t ref_tsc = 0);

  // Lets the address space change between runs (another process on the CPU).
  void set_address_space(const AddressSpace* space) { space_ = space; }
  // Asks `provider` for the address space as time goes on (per-cpu queues).
  void set_space_provider(SpaceProvider* provider) {
    provider_ = provider;
    next_change_ = 0;
  }
  // Where the trace's AUXTRACE buffers end, when it is several joined.
  void set_buffer_ends(std::vector<std::size_t> ends) { ev_.set_buffer_ends(std::move(ends)); }
  // Decodes the whole trace, reporting every step to `sink`.
  void run(FlowSink& sink) { (void)resume(sink); }
  // Decodes until the sink asks to stop (true: there is more to decode, and
  // a later call goes on where this one stopped) or the trace ends (false).
  bool resume(FlowSink& sink);

  std::uint64_t insn_count() const { return insns_; }
  std::size_t cached_blocks() const;

 private:
  enum class Need { kTnt, kTip };

  const Item& peek();
  void consume() { have_head_ = false; }
  // Decodes the block at ip_; nullptr (after reporting an error) if there is
  // no code there.
  const Block* block_at(std::uint64_t ip, const Mapping** map);
  // Runs code from ip_ until it needs trace, then applies the trace. Returns
  // false after an error (resync done).
  bool walk(FlowSink& sink);
  // Runs code without trace from ip_ up to `target`; false after an error
  // (reported, and followed by a resync at the next PSB if `resync_on_error`).
  bool walk_to(std::uint64_t target, FlowSink& sink, bool resync_on_error = true);
  bool take_tnt(bool& taken);
  bool branch_end(const Block& b, const Mapping& map, std::uint64_t start, FlowSink& sink);
  void emit_run(const Block& b, std::uint64_t start, std::uint32_t ninsn, RunEnd end,
                std::uint64_t to, FlowSink& sink, bool direct = false);
  void emit_event(EventKind k, const Item& it, FlowSink& sink, std::uint64_t to = 0);
  void error(PtError code, const char* what, std::uint64_t ip, FlowSink& sink,
             std::uint32_t image = 0);
  void handle_item(FlowSink& sink);
  // handle_item's parts: a PSB whose IP the flow has not reached (true when
  // the item is fully handled), a PSB, an overflow, and the events that
  // carry an IP the code before them ran up to (TSX, PTWRITE, EXSTOP, CFE,
  // block end).
  bool reach_psb(const Item& it, bool tracking, FlowSink& sink);
  void handle_psb(const Item& it, bool tracking, FlowSink& sink);
  void handle_overflow(const Item& it, bool tracking, FlowSink& sink);
  void handle_ip_event(const Item& it, bool tracking, std::uint64_t time_before, FlowSink& sink);
  // An asynchronous event at `fup`'s IP: the next item (TIP, TIP.PGD) says where to.
  void handle_fup(const Item& fup, FlowSink& sink);
  // Tracing is on at `ip` (TIP.PGE, PSB+ FUP, overflow FUP).
  void begin(std::uint64_t ip, ExecMode mode, const Item& it, FlowSink& sink,
             bool from_psb = false);
  void resync();
  // The instruction at `ip` cannot be had (no map, no code, no decode):
  // reported (with the image when its code cannot be read), and the IP is
  // lost until a packet gives a whole one (perf's NO_IP state; the call
  // stack stays).
  void no_insn(const char* what, std::uint64_t ip, FlowSink& sink);
  // One item while the IP is lost: a TIP, TIP.PGE or FUP with an IP that
  // needs no last IP (or any IP after a PSB) gives it back; a PSB reports
  // itself at IP 0.
  void scan_for_ip(FlowSink& sink);
  void push_return(std::uint64_t ip);

  EventDecoder ev_;
  const AddressSpace* space_;
  SpaceProvider* provider_ = nullptr;
  std::uint64_t next_change_ = ~0ULL;
  FlowOptions opts_;
  InsnDecoder insn_decoder_;
  std::unordered_map<std::uint64_t, BlockCache> caches_;  // by image id and mode
  const Mapping* last_map_ = nullptr;
  std::uint64_t generation_ = 0;
  BlockCache* last_cache_ = nullptr;
  std::uint64_t last_cache_key_ = ~0ULL;
  std::size_t trace_size_ = 0;

  Item head_;
  bool have_head_ = false;
  std::uint64_t tnt_bits_ = 0;
  unsigned tnt_count_ = 0;
  // The time and cycle count as of the last item taken.
  void take_clock(const Item& it) {
    time_ = it.timestamp;
    time_updates_ = it.time_updates;
    cycles_ = it.cycles;
    cycle_marks_ = it.cycle_marks;
    exact_cycles_ = it.exact_cycles;
  }
  void stamp_cycles(Step& s) const {
    s.cycles = cycles_;
    s.cycle_marks = cycle_marks_;
    s.exact_cycles = exact_cycles_;
  }

  std::uint64_t time_ = 0;  // as of the last item taken
  std::uint32_t time_updates_ = 0;
  std::uint64_t cycles_ = 0, cycle_marks_ = 0;
  bool exact_cycles_ = false;
  bool in_tnt_ = false;            // the block being walked started inside a TNT packet
  bool to_event_ip_ = false;       // walk_to() is walking toward an event's IP
  std::uint64_t sample_time_ = 0;  // as of the last instruction reported
  std::uint64_t item_offset_ = 0;
  Step run_step_;  // emit_run's (its kind stays kRun, the event fields their defaults)

  bool enabled_ = false;              // PacketEn: tracing is on
  bool in_sync_ = false;              // ip_ is known
  bool started_ = false;              // resume() synchronized (or found no PSB)
  bool ended_ = false;                // resume() reached the end of the trace
  bool no_ip_ = false;                // lost after an instruction could not be had (scan_for_ip)
  bool walking_ = false;              // no_insn from walk(): the head item asked for it
  bool have_last_ip_ = true;          // while no_ip_: a PSB came, so compressed IPs count
  const Mapping* no_code_ = nullptr;  // block_at found this mapping, but no code in it
  std::uint64_t ip_ = 0;
  ExecMode mode_ = ExecMode::k64;
  std::vector<std::uint64_t> stack_;
  std::uint64_t insns_ = 0;
};

}  // namespace perfkit::intelpt
