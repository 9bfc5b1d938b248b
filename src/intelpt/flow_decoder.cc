#include "intelpt/flow_decoder.h"

namespace perfkit::intelpt {

namespace {

constexpr std::size_t kMaxStack = 1 << 20;

void stamp_cycles_of(const Item& it, Step& s) {
  s.cycles = it.cycles;
  s.cycle_marks = it.cycle_marks;
  s.exact_cycles = it.exact_cycles;
}

}  // namespace

FlowDecoder::FlowDecoder(Bytes trace, const PtConfig& cfg, const AddressSpace* space,
                         FlowOptions opts, std::uint64_t base, std::uint64_t ref_tsc)
    : ev_(trace, cfg, base, ref_tsc), space_(space), opts_(opts), trace_size_(trace.size()) {}

std::size_t FlowDecoder::cached_blocks() const {
  std::size_t n = 0;
  for (const auto& [k, c] : caches_) n += c.size();
  return n;
}

const Item& FlowDecoder::peek() {
  if (!have_head_) {
    head_ = ev_.next();
    have_head_ = true;
  }
  return head_;
}

void FlowDecoder::resync() {
  tnt_count_ = 0;
  enabled_ = false;
  in_sync_ = false;
  stack_.clear();
  if (have_head_ && (head_.type == ItemType::kPsb || head_.type == ItemType::kEnd)) return;
  have_head_ = false;
  ev_.sync_forward();
}

void FlowDecoder::no_insn(const char* what, std::uint64_t ip, FlowSink& sink) {
  std::uint32_t image = 0;
  if (no_code_) {
    image = no_code_->image->id() + 1;
    what = "cannot read the code at this address";
  }
  // With no TNT bit left, perf had fetched the packet that asked for the
  // walk: its timing counts, and it is gone with the IP.
  const bool trigger = walking_ && tnt_count_ == 0 && have_head_ &&
                       (head_.type == ItemType::kTnt || head_.type == ItemType::kTip ||
                        head_.type == ItemType::kTipPgd);
  if (trigger && head_.timestamp > time_) time_ = head_.timestamp;
  error(PtError::kNoInsn, what, ip, sink, image);
  if (trigger) consume();
  tnt_count_ = 0;
  in_sync_ = false;
  no_ip_ = true;
  have_last_ip_ = false;
}

void FlowDecoder::scan_for_ip(FlowSink& sink) {
  const Item& head = peek();
  if (head.type == ItemType::kOverflow || head.type == ItemType::kError) {
    no_ip_ = false;  // handled as anywhere else
    handle_item(sink);
    return;
  }
  Item it = head_;
  consume();
  take_clock(it);
  item_offset_ = it.offset;
  if (it.type == ItemType::kTsx) {
    // The transaction state changes; perf makes no sample of it here.
    Item tx = it;
    tx.has_ip = false;
    tx.aux |= 0x100;
    emit_event(EventKind::kTsx, tx, sink);
  }
  switch (it.type) {
    case ItemType::kTsx:
    case ItemType::kPtwrite:
    case ItemType::kExstop:
    case ItemType::kCfe:
    case ItemType::kBlockEnd:
      // Their FUP, if any, gives the IP as a FUP alone does.
      if (!it.has_ip) return;
      [[fallthrough]];
    case ItemType::kTip:
    case ItemType::kTipPge:
    case ItemType::kTipPgd:
    case ItemType::kFup: {
      if (it.type == ItemType::kTipPgd) enabled_ = false;
      if (it.type == ItemType::kTip || it.type == ItemType::kTipPge) enabled_ = true;
      // Without a last IP only a sign-extended 48-bit or a 64-bit IP stands alone.
      const bool whole = have_last_ip_ || it.count == 3 || it.count == 6;
      if (!it.has_ip || !whole || !it.ip) return;
      no_ip_ = false;
      if (it.type == ItemType::kTipPgd) return;
      // Decoding goes on from there (perf's branch from 0: a trace begin);
      // a FUP's event is lost with the IP before it.
      begin(it.ip, it.mode, it, sink);
      return;
    }
    case ItemType::kPsb:
      stack_.clear();
      have_last_ip_ = true;
      sample_time_ = time_;
      // perf reports the PSB at IP 0 (the IP it had when it met it), with
      // the PSB+ FUP as its target.
      emit_event(EventKind::kPsb,
                 Item{.type = it.type,
                      .offset = it.offset,
                      .timestamp = it.timestamp,
                      .cycles = it.cycles,
                      .cycle_marks = it.cycle_marks,
                      .exact_cycles = it.exact_cycles},
                 sink, it.has_ip ? it.ip : 0);
      if (it.has_ip) {
        no_ip_ = false;
        begin(it.ip, it.mode, it, sink, true);
      }
      return;
    case ItemType::kCbr:
      emit_event(EventKind::kCbr, it, sink);
      return;
    case ItemType::kTraceStop:
      enabled_ = false;
      return;
    default:
      return;  // TNT bits and events without an IP to bind them to
  }
}

const char* pt_error_message(PtError e) {
  switch (e) {
    case PtError::kBadPacket:
      return "Bad packet";
    case PtError::kNoInsn:
      return "Failed to get instruction";
    case PtError::kMismatch:
      return "Trace doesn't match instruction";
    case PtError::kOverflow:
      return "Overflow packet";
    case PtError::kLost:
      return "Lost trace data";
    case PtError::kNeverEndingLoop:
      return "Never-ending loop";
    default:
      return "Unknown error!";
  }
}

void FlowDecoder::error(PtError code, const char* what, std::uint64_t ip, FlowSink& sink,
                        std::uint32_t image) {
  Step s;
  s.kind = StepKind::kError;
  s.code = code;
  s.image = image;
  s.from = ip;
  s.error = what;
  s.offset = item_offset_;
  s.timestamp = time_;
  stamp_cycles(s);
  s.mode = mode_;
  sink.on_step(s);
}

void FlowDecoder::push_return(std::uint64_t ip) {
  if (stack_.size() >= kMaxStack) stack_.erase(stack_.begin(), stack_.begin() + kMaxStack / 2);
  stack_.push_back(ip);
}

const Block* FlowDecoder::block_at(std::uint64_t ip, const Mapping** map) {
  if (provider_ && time_ >= next_change_) {
    space_ = provider_->space_at(time_, next_change_);
    last_map_ = nullptr;
  }
  const Mapping* m = last_map_;
  if (!m || ip < m->start || ip >= m->end || !space_ || generation_ != space_->generation()) {
    m = space_ ? space_->find(ip, time_) : nullptr;
    last_map_ = m;
    generation_ = space_ ? space_->generation() : 0;
    no_code_ = nullptr;
    if (!m) return nullptr;
  }
  std::uint32_t key_image = m->image->id();
  std::uint64_t key = static_cast<std::uint64_t>(key_image) << 2 | static_cast<unsigned>(mode_);
  if (key != last_cache_key_ || !last_cache_) {
    last_cache_ = &caches_[key];
    last_cache_key_ = key;
  }
  Bytes code = m->code_at(ip);
  if (code.empty()) {
    no_code_ = m;
    return nullptr;
  }
  *map = m;
  return &last_cache_->get(m->offset_of(ip), code, mode_, insn_decoder_);
}

void FlowDecoder::emit_run(const Block& b, std::uint64_t start, std::uint32_t ninsn, RunEnd end,
                           std::uint64_t to, FlowSink& sink, bool direct) {
  // One step object for every run, each of its run fields set below: a
  // fresh Step (160 bytes zeroed by rep stos) per basic block was a tenth
  // of a sparse decode's time.
  Step& s = run_step_;
  s.ip = start;
  s.ninsn = ninsn;
  s.lengths = last_cache_->lengths(b);
  s.end = end;
  s.to = to;
  s.mode = mode_;
  s.timestamp = sample_time_;
  // A run cut short (walked toward an event's IP, or up to an error) ends
  // with no branch of its own: perf does not update the sample time there,
  // nor anywhere on its way to an event's IP (its FUP states).
  if (end == RunEnd::kCut || to_event_ip_) {
    s.last_timestamp = sample_time_;
  } else {
    s.last_timestamp = time_;
    sample_time_ = time_;
  }
  s.walk_timestamp = time_;
  s.walk_time_updates = time_updates_;
  if (direct && tnt_count_ == 0) {
    const Item& next = peek();
    if (next.type != ItemType::kEnd) {
      s.walk_timestamp = next.timestamp;
      s.walk_time_updates = next.time_updates;
    }
  }
  stamp_cycles(s);
  s.tnt_done = tnt_count_ == 0;
  s.in_tnt = in_tnt_;
  s.offset = item_offset_;
  if (ninsn == b.ninsn && b.last.cls != InsnClass::kInvalid) {
    s.last = b.last;
    s.from = start + b.last_offset();
  } else {
    std::uint64_t at = start;
    for (std::uint32_t i = 0; i + 1 < ninsn; ++i) at += s.lengths[i];
    s.from = at;
    s.last = Insn{};
    s.last.cls = InsnClass::kOther;
    s.last.length = ninsn ? s.lengths[ninsn - 1] : 0;
  }
  insns_ += ninsn;
  sink.on_step(s);
}

void FlowDecoder::emit_event(EventKind k, const Item& it, FlowSink& sink, std::uint64_t to) {
  Step s;
  s.kind = StepKind::kEvent;
  s.event = k;
  s.to = to;
  s.has_ip = it.has_ip || in_sync_;
  s.from = it.has_ip ? it.ip : (in_sync_ ? ip_ : 0);
  s.aux = it.aux;
  s.payload = it.bits;
  s.offset = it.offset;
  s.timestamp = it.timestamp;
  stamp_cycles_of(it, s);
  s.mode = mode_;
  sink.on_step(s);
}

bool FlowDecoder::take_tnt(bool& taken) {
  if (tnt_count_ == 0) {
    const Item& it = peek();
    if (it.type != ItemType::kTnt) return false;
    tnt_bits_ = it.bits;
    tnt_count_ = it.count;
    take_clock(it);
    item_offset_ = it.offset;
    consume();
  }
  taken = tnt_bits_ >> 63;
  tnt_bits_ <<= 1;
  --tnt_count_;
  return true;
}

// Applies the last instruction of block `b` (run from `start`): follows
// direct branches, takes a TNT bit or a TIP for the others. Sets ip_.
bool FlowDecoder::branch_end(const Block& b, const Mapping& map, std::uint64_t start,
                             FlowSink& sink) {
  const Insn& in = b.last;
  const std::uint64_t last_ip = start + b.last_offset();
  const std::uint64_t next = start + b.size;
  switch (in.cls) {
    case InsnClass::kJump:
    case InsnClass::kCall: {
      std::uint64_t to = next + static_cast<std::uint64_t>(in.displacement);
      if (in.cls == InsnClass::kCall && in.displacement != 0) push_return(next);
      emit_run(b, start, b.ninsn, RunEnd::kBranch, to, sink, true);
      ip_ = to;
      return true;
    }
    case InsnClass::kCondJump: {
      bool taken;
      if (!take_tnt(taken)) {
        emit_run(b, start, b.ninsn - 1, RunEnd::kCut, last_ip, sink);
        if (peek().type == ItemType::kEnd) return false;  // the trace just ends here
        error(PtError::kMismatch, "trace has no TNT bit for a conditional branch", last_ip, sink);
        resync();
        return false;
      }
      std::uint64_t to = taken ? next + static_cast<std::uint64_t>(in.displacement) : next;
      emit_run(b, start, b.ninsn, taken ? RunEnd::kBranch : RunEnd::kFallThrough, to, sink);
      ip_ = to;
      return true;
    }
    case InsnClass::kReturn:
      if (opts_.return_compression && (tnt_count_ || peek().type == ItemType::kTnt)) {
        bool taken;
        take_tnt(taken);
        if (!taken || stack_.empty()) {
          emit_run(b, start, b.ninsn - 1, RunEnd::kCut, last_ip, sink);
          error(PtError::kMismatch,
                taken ? "compressed return with an empty call stack"
                      : "compressed return with a not-taken TNT bit",
                last_ip, sink);
          resync();
          return false;
        }
        std::uint64_t to = stack_.back();
        stack_.pop_back();
        emit_run(b, start, b.ninsn, RunEnd::kBranch, to, sink);
        ip_ = to;
        return true;
      }
      break;
    default:
      break;
  }
  (void)map;
  // Indirect branches, far transfers and uncompressed returns need a TIP;
  // it may come after the TNT packet that holds the bits of later branches
  // (a deferred TIP): take those bits now, they are used after the TIP.
  if (tnt_count_ == 0 && peek().type == ItemType::kTnt) {
    tnt_bits_ = head_.bits;
    tnt_count_ = head_.count;
    consume();
    if (peek().type != ItemType::kTip) {
      emit_run(b, start, b.ninsn - 1, RunEnd::kCut, last_ip, sink);
      error(PtError::kMismatch, "trace has a TNT bit where an indirect branch needs a TIP", last_ip,
            sink);
      resync();
      return false;
    }
  }
  const Item& it = peek();
  if (it.type == ItemType::kTip && it.has_ip) {
    take_clock(it);
    item_offset_ = it.offset;
    std::uint64_t to = it.ip;
    ExecMode mode = it.mode;
    consume();
    if (in.cls == InsnClass::kIndirectCall) push_return(next);
    if (in.cls == InsnClass::kReturn && !stack_.empty()) stack_.pop_back();
    emit_run(b, start, b.ninsn, RunEnd::kBranch, to, sink);
    ip_ = to;
    mode_ = mode;
    return true;
  }
  if (it.type == ItemType::kTipPgd || (it.type == ItemType::kTip && !it.has_ip)) {
    take_clock(it);
    item_offset_ = it.offset;
    std::uint64_t to = it.has_ip ? it.ip : 0;
    consume();
    emit_run(b, start, b.ninsn, RunEnd::kDisabled, to, sink);
    enabled_ = false;
    return true;
  }
  emit_run(b, start, b.ninsn - 1, RunEnd::kCut, last_ip, sink);
  if (it.type == ItemType::kEnd) return false;  // the trace just ends here
  error(PtError::kMismatch,
        it.type == ItemType::kTnt ? "trace has a TNT bit where an indirect branch needs a TIP"
                                  : "trace has no TIP for an indirect branch",
        last_ip, sink);
  resync();
  return false;
}

bool FlowDecoder::walk(FlowSink& sink) {
  std::uint32_t blocks = 0;
  while (true) {
    const Mapping* map = nullptr;
    const Block* b = block_at(ip_, &map);
    if (!b) {
      walking_ = true;
      no_insn("no code mapped at this address", ip_, sink);
      walking_ = false;
      return false;
    }
    const std::uint64_t start = ip_;
    in_tnt_ = tnt_count_ > 0;
    if (b->last.cls == InsnClass::kInvalid || b->last.cls == InsnClass::kOther) {
      emit_run(*b, start, b->ninsn, RunEnd::kFallThrough, start + b->size, sink);
      ip_ = start + b->size;
      if (b->last.cls == InsnClass::kInvalid) {
        no_code_ = nullptr;
        walking_ = true;
        no_insn("instruction does not decode", ip_, sink);
        walking_ = false;
        return false;
      }
    } else {
      bool traced = b->last.needs_trace();
      if (!branch_end(*b, *map, start, sink)) return false;
      if (!enabled_) return true;
      // Bits of one TNT packet are not separated by other packets: go on.
      if (traced && tnt_count_ == 0) return true;
    }
    if (++blocks > opts_.max_blocks_without_trace) {
      error(PtError::kNeverEndingLoop,
            "no trace for too many blocks (a loop with no branch in the trace?)", ip_, sink);
      resync();
      return false;
    }
  }
}

bool FlowDecoder::walk_to(std::uint64_t target, FlowSink& sink, bool resync_on_error) {
  struct Hold {
    bool& flag;
    explicit Hold(bool& f) : flag(f) { flag = true; }
    ~Hold() { flag = false; }
  } hold(to_event_ip_);
  std::uint32_t blocks = 0;
  while (ip_ != target) {
    const Mapping* map = nullptr;
    const Block* b = block_at(ip_, &map);
    if (!b) {
      no_insn("no code mapped at this address", ip_, sink);
      return false;
    }
    const std::uint64_t start = ip_;
    in_tnt_ = tnt_count_ > 0;
    if (target > start && target < start + b->size + (b->last.cls == InsnClass::kInvalid)) {
      const std::uint8_t* len = last_cache_->lengths(*b);
      std::uint64_t at = start;
      std::uint32_t n = 0;
      while (at < target && n < b->ninsn) at += len[n++];
      if (at != target) {
        error(PtError::kMismatch, "event IP is not on an instruction boundary", target, sink);
        if (resync_on_error) resync();
        return false;
      }
      emit_run(*b, start, n, RunEnd::kCut, target, sink);
      ip_ = target;
      return true;
    }
    if (b->last.cls == InsnClass::kInvalid) {
      emit_run(*b, start, b->ninsn, RunEnd::kFallThrough, start + b->size, sink);
      no_code_ = nullptr;
      no_insn("instruction does not decode", start + b->size, sink);
      return false;
    }
    if (b->last.cls == InsnClass::kOther) {
      emit_run(*b, start, b->ninsn, RunEnd::kFallThrough, start + b->size, sink);
      ip_ = start + b->size;
    } else if (b->last.needs_trace()) {
      emit_run(*b, start, b->ninsn - 1, RunEnd::kCut, start + b->last_offset(), sink);
      error(PtError::kMismatch, "branch needs trace before the event's IP is reached",
            start + b->last_offset(), sink);
      if (resync_on_error) resync();
      return false;
    } else if (!branch_end(*b, *map, start, sink)) {
      return false;
    }
    if (++blocks > opts_.max_blocks_without_trace) {
      error(PtError::kNeverEndingLoop, "event IP not reached (a loop with no branch in the trace?)",
            ip_, sink);
      if (resync_on_error) resync();
      return false;
    }
  }
  return true;
}

void FlowDecoder::handle_fup(const Item& fup, FlowSink& sink) {
  if (!enabled_ || !fup.has_ip) return;  // nothing to bind it to
  if (!in_sync_) {
    ip_ = fup.ip;
    mode_ = fup.mode;
    in_sync_ = true;
  } else if (!walk_to(fup.ip, sink)) {
    return;
  }
  const Item& nx = peek();
  Step s;
  s.kind = StepKind::kAsync;
  s.from = fup.ip;
  s.offset = nx.offset;
  s.timestamp = nx.timestamp;
  take_clock(nx);
  sample_time_ = time_;
  stamp_cycles(s);
  switch (nx.type) {
    case ItemType::kTip:
      s.to = nx.has_ip ? nx.ip : 0;
      s.end = nx.has_ip ? RunEnd::kBranch : RunEnd::kDisabled;
      if (nx.has_ip) {
        ip_ = nx.ip;
        mode_ = nx.mode;
      } else {
        in_sync_ = false;
      }
      consume();
      break;
    case ItemType::kTipPgd:
      s.to = nx.has_ip ? nx.ip : 0;
      s.end = RunEnd::kDisabled;
      enabled_ = false;
      consume();
      break;
    case ItemType::kTipPge:
      s.kind = StepKind::kBegin;
      s.from = 0;
      s.to = nx.ip;
      if (nx.has_ip) {
        ip_ = nx.ip;
        mode_ = nx.mode;
      }
      consume();
      break;
    default:
      error(PtError::kMismatch, "FUP is not followed by a TIP", fup.ip, sink);
      return;
  }
  s.mode = mode_;
  sink.on_step(s);
}

void FlowDecoder::begin(std::uint64_t ip, ExecMode mode, const Item& it, FlowSink& sink,
                        bool from_psb) {
  ip_ = ip;
  mode_ = mode;
  enabled_ = in_sync_ = true;
  sample_time_ = it.timestamp;
  Step s;
  s.kind = StepKind::kBegin;
  s.to = ip;
  s.offset = it.offset;
  s.timestamp = it.timestamp;
  stamp_cycles_of(it, s);
  s.mode = mode;
  s.from_psb = from_psb;
  sink.on_step(s);
}

bool FlowDecoder::reach_psb(const Item& it, bool tracking, FlowSink& sink) {
  if (it.type != ItemType::kPsb || !tracking || !it.has_ip || ip_ == it.ip) return false;
  // The code up to the PSB's IP ran before the PSB+ and its timing
  // packets (perf walks there first too).
  if (walk_to(it.ip, sink, false)) return false;
  if (!no_ip_) {
    begin(it.ip, it.mode, it, sink, true);
    return false;
  }
  // perf finds its IP again at the PSB+ FUP: a trace begin there, and no
  // PSB event.
  no_ip_ = false;
  take_clock(it);
  item_offset_ = it.offset;
  sample_time_ = time_;
  stack_.clear();
  tnt_count_ = 0;
  begin(it.ip, it.mode, it, sink);
  return true;
}

void FlowDecoder::handle_psb(const Item& it, bool tracking, FlowSink& sink) {
  stack_.clear();
  tnt_count_ = 0;
  if (it.has_ip) {
    // (Walked to its IP before; a flow that did not lead there restarted.)
    if (!tracking) begin(it.ip, it.mode, it, sink, true);
    mode_ = it.mode;
  } else {
    enabled_ = false;
  }
  emit_event(EventKind::kPsb, it, sink);
}

void FlowDecoder::handle_overflow(const Item& it, bool tracking, FlowSink& sink) {
  // The error is where decoding stood when the trace was lost.
  Item at = it;
  at.has_ip = tracking;
  at.ip = ip_;
  emit_event(EventKind::kOverflow, at, sink);
  stack_.clear();
  tnt_count_ = 0;
  if (it.has_ip)
    begin(it.ip, it.mode, it, sink);
  else
    enabled_ = in_sync_ = false;
}

void FlowDecoder::handle_ip_event(const Item& it, bool tracking, std::uint64_t time_before,
                                  FlowSink& sink) {
  if (it.has_ip && tracking) {
    // The code up to the event's IP ran before it (perf walks there with
    // the sample time it had).
    sample_time_ = time_before;
    if (!walk_to(it.ip, sink)) return;
    sample_time_ = time_;
    ip_ = it.ip;
  }
  EventKind k = it.type == ItemType::kTsx       ? EventKind::kTsx
                : it.type == ItemType::kPtwrite ? EventKind::kPtwrite
                : it.type == ItemType::kExstop  ? EventKind::kExstop
                : it.type == ItemType::kCfe     ? EventKind::kCfe
                                                : EventKind::kBlockEnd;
  emit_event(k, it, sink);
  // A transaction abort goes on as an asynchronous branch to the abort
  // handler (the TIP that follows).
  if (it.type == ItemType::kTsx && (it.aux & 2) && tracking && peek().type == ItemType::kTip) {
    Item fup = it;
    fup.has_ip = true;
    fup.ip = ip_;
    handle_fup(fup, sink);
  }
}

void FlowDecoder::handle_item(FlowSink& sink) {
  Item it = head_;
  consume();
  const bool tracking = enabled_ && in_sync_;
  if (reach_psb(it, tracking, sink)) return;
  take_clock(it);
  item_offset_ = it.offset;
  // Every item but a stray TNT/TIP is a point perf reports (an event, PSB,
  // error or enable): instructions after it are timed from it.
  const std::uint64_t time_before = sample_time_;
  if (it.type != ItemType::kTnt && it.type != ItemType::kTip && it.type != ItemType::kFup)
    sample_time_ = time_;
  switch (it.type) {
    case ItemType::kEnd:
      return;
    case ItemType::kError:
      error(PtError::kBadPacket, it.error, tracking ? ip_ : 0, sink);
      resync();
      return;
    case ItemType::kPsb:
      return handle_psb(it, tracking, sink);
    case ItemType::kTipPge:
      if (it.has_ip)
        begin(it.ip, it.mode, it, sink);
      else
        enabled_ = true, in_sync_ = false;
      return;
    case ItemType::kTipPgd:
      enabled_ = false;
      return;
    case ItemType::kTip:
      // Not in sync (the IP is unknown): a TIP gives it.
      if (enabled_ && it.has_ip) begin(it.ip, it.mode, it, sink);
      return;
    case ItemType::kTnt:
      if (!enabled_) error(PtError::kMismatch, "TNT packet while tracing is off", 0, sink);
      return;
    case ItemType::kFup:
      return handle_fup(it, sink);
    case ItemType::kOverflow:
      return handle_overflow(it, tracking, sink);
    case ItemType::kTraceStop:
      enabled_ = false;
      return emit_event(EventKind::kTraceStop, it, sink);
    case ItemType::kTsx:
    case ItemType::kPtwrite:
    case ItemType::kExstop:
    case ItemType::kCfe:
    case ItemType::kBlockEnd:
      return handle_ip_event(it, tracking, time_before, sink);
    case ItemType::kCbr:
      return emit_event(EventKind::kCbr, it, sink);
    case ItemType::kMwait:
      return emit_event(EventKind::kMwait, it, sink);
    case ItemType::kPwre:
      return emit_event(EventKind::kPwre, it, sink);
    case ItemType::kPwrx:
      return emit_event(EventKind::kPwrx, it, sink);
    case ItemType::kPip:
      return emit_event(EventKind::kPaging, it, sink);
    case ItemType::kVmcs:
      return emit_event(EventKind::kVmcs, it, sink);
    case ItemType::kEvd:
      return emit_event(EventKind::kEvd, it, sink);
  }
}

bool FlowDecoder::resume(FlowSink& sink) {
  if (ended_) return false;
  if (!started_) {
    started_ = true;
    if (!ev_.sync_forward()) {
      if (trace_size_) error(PtError::kBadPacket, "no PSB packet in the trace", 0, sink);
      ended_ = true;
      return false;
    }
  }
  while (!sink.stop()) {
    if (no_ip_) {
      if (peek().type == ItemType::kEnd) break;
      scan_for_ip(sink);
      continue;
    }
    if (enabled_ && in_sync_) {
      // A walk that stops at the end of the trace leaves what it could not
      // use (TNT bits for branches past the end): decoding is over.
      ItemType t = peek().type;
      if (tnt_count_ || t == ItemType::kTnt || t == ItemType::kTip || t == ItemType::kTipPgd) {
        if (!walk(sink) && peek().type == ItemType::kEnd) break;
        continue;
      }
    }
    if (peek().type == ItemType::kEnd) break;
    handle_item(sink);
  }
  if (sink.stop()) return true;
  ended_ = true;
  return false;
}

}  // namespace perfkit::intelpt
