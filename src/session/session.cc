#include "session/session.h"

#include <unistd.h>

#include <algorithm>

#include "abi/event_names.h"
#include "perfdata/record_stream.h"
#include "record/records.h"
#include "session/repeat_resolutions.h"

namespace perfkit::session {

using namespace perfkit::abi;

Expected<std::unique_ptr<Session>> Session::open(const std::string& path, SessionOptions opts) {
  std::unique_ptr<Session> s(new Session());
  s->opts_ = std::move(opts);
  s->guests_on_ = s->opts_.guest.enabled();
  perfdata::ReaderOptions ro;
  ro.warn = s->opts_.warn;
  ro.stream_prefix = std::move(s->opts_.stream_prefix);
  ro.shared = s->opts_.shared_mapping;
  ro.shared_slot = s->opts_.shared_slot;
  PK_ASSIGN(s->reader_, perfdata::Reader::open(path, std::move(ro)));
  if (!s->opts_.symbols.warn) s->opts_.symbols.warn = s->opts_.warn;
  s->symbolizer_ = std::make_unique<symbol::Symbolizer>(s->opts_.symbols);
  s->machine_ = std::make_unique<machine::Machine>(*s->symbolizer_);
  s->stats_.nr_events.assign(kRecordHeaderMax + 1, 0);
  s->read_build_id_table();
  if (s->opts_.reuse_resolutions)
    s->repeats_ = std::make_unique<RepeatResolutions>(s->opts_.resolve_callchains);
  return s;
}

Session::~Session() = default;

std::string Session::event_name(std::size_t event) const {
  const auto& d = reader_->events()[event];
  return d.name.empty() ? default_event_name(d.attr) : d.name;
}

void Session::read_build_id_table() {
  auto feat = reader_->feature(kFeatBuildId);
  if (!feat) return;
  Bytes b = feat->data;
  std::size_t at = 0;
  while (at + kHeaderSize <= b.size()) {
    record::RecordView v = record::view_header(b.data() + at, reader_->swapped());
    if (v.size < kHeaderSize || at + v.size > b.size()) break;
    v.bytes = b.subspan(at, v.size);
    v.offset = feat->offset + at;
    (void)apply_build_id_record(v);
    at += v.size;
  }
  if (opts_.prefetch_kernel) machine_->prefetch_kernel_symbols();
}

Status Session::apply_build_id_record(const record::RecordView& r) {
  PK_ASSIGN(auto b, record::parse_build_id(r));
  std::uint16_t mode = r.cpumode();
  bool kernel = mode == kMiscKernel || mode == kMiscGuestKernel;
  // (an entry names its machine by pid, as perf's findnew_machine: -1 the
  // host, another a guest's, made for it whether guests are read or not)
  machine::Machine* m = machine_.get();
  if (b.pid != machine::kHostMachine) m = findnew_guest(b.pid);
  if (m) m->add_build_id(b.filename, elf::BuildId::from_bytes(b.build_id), kernel);
  return ok();
}

machine::Machine* Session::findnew_guest(std::int32_t pid) {
  auto it = guests_.find(pid);
  if (it != guests_.end()) return it->second.machine.get();
  std::string root;
  if (pid != 0 && !opts_.guest.mount.empty()) {
    root = opts_.guest.mount + "/" + std::to_string(pid);
    if (::access(root.c_str(), R_OK) != 0) {
      if (unreachable_guests_.insert(root).second && opts_.warn)
        opts_.warn("Can't access file " + root);
      return nullptr;
    }
  }
  // perf's dso__load_guest_kernel_sym: the default guest's kernel from
  // --guestvmlinux or --guestkallsyms, another's from ROOT/proc/kallsyms
  symbol::SymbolizerOptions so = opts_.symbols;
  so.guest_kernel = true;
  so.kallsyms_share = nullptr;
  so.dso_share = nullptr;
  so.kallsyms = pid == 0 ? opts_.guest.kallsyms : root + "/proc/kallsyms";
  so.vmlinux = pid == 0 ? opts_.guest.vmlinux : std::string();
  if (!so.vmlinux.empty()) so.kallsyms.clear();  // (perf takes the vmlinux first)
  Guest g;
  g.symbolizer = std::make_unique<symbol::Symbolizer>(std::move(so));
  g.machine = std::make_unique<machine::Machine>(*g.symbolizer, pid);
  return guests_.emplace(pid, std::move(g)).first->second.machine.get();
}

machine::Machine* Session::machine_of(const record::RecordView& r) {
  if (!has_guests()) return machine_.get();
  // (an MMAP names its guest by pid; perf's machines__find_for_cpumode)
  std::int32_t pid = 0;
  if ((r.type == kRecordMmap || r.type == kRecordMmap2) && r.bytes.size() >= kHeaderSize + 4)
    pid = static_cast<std::int32_t>(load<std::uint32_t>(r.bytes.data() + kHeaderSize, r.swap));
  return machine_for(static_cast<std::uint8_t>(r.cpumode()), pid);
}

machine::Machine* Session::machine_for(std::uint8_t cpumode, std::int32_t pid) {
  if (!has_guests() || (cpumode != kMiscGuestKernel && cpumode != kMiscGuestUser))
    return machine_.get();
  // a guest's code machine per process; else perf's machines__find_guest:
  // the guest of that pid, else the default one
  if (opts_.guest.code) return findnew_guest(pid);
  auto it = guests_.find(pid);
  if (it != guests_.end()) return it->second.machine.get();
  return findnew_guest(0);
}

machine::Thread* Session::guest_code_thread(machine::Machine& guest, std::int32_t pid) {
  machine::Thread& t = guest.findnew_thread(-1, pid);
  if (!t.maps->maps().empty()) return &t;  // (perf: set up when it has maps)
  machine::Thread* host = machine_->find_thread(pid);
  if (!host) return nullptr;
  *t.maps = *host->maps;
  return &t;
}

namespace {
constexpr std::uint64_t kReleaseEvery = 1 << 20, kReleaseMargin = 2 << 20;
}  // namespace

Status Session::run(SampleVisitor& visitor) {
  perfdata::RecordStreamOptions so;
  so.ordered = !opts_.unordered;
  so.read_ahead = opts_.read_ahead;
  // (read ahead, the reading thread releases the pages behind)
  so.release_behind = kReleaseMargin;
  // (read ahead, the reading thread keeps it as of each batch; else it is
  // the reader's own, read here)
  std::uint64_t pos = 0;
  if (so.read_ahead) so.position = &pos;
  std::uint64_t next_progress = 0, next_release = kReleaseEvery, released = 0;
  const RecordSource::Deliver deliver = [&](Bytes bytes, int event) {
    perfdata::ReadRecord rec;
    rec.view = record::view_header(bytes.data(), false);
    rec.view.bytes = bytes;
    rec.transient = true;
    rec.attr = event;
    return on_record(rec, visitor);
  };
  PK_TRY(perfdata::process_records(
      *reader_, so, [&](const perfdata::ReadRecord& rec, std::uint64_t time) -> Status {
        if (!so.read_ahead) pos = reader_->position();
        if (opts_.progress && pos >= next_progress) {
          opts_.progress(pos, reader_->data_end());
          next_progress = pos + (1 << 20);
        }
        // Pages of the file read long ago leave the resident set; records
        // the ordering still holds lie in the last rounds, well within the
        // margin (and would be read again from the file if not).
        if (!so.read_ahead && pos >= next_release && pos > kReleaseMargin) {
          reader_->release(released, pos - kReleaseMargin);
          released = pos - kReleaseMargin;
          next_release = pos + kReleaseEvery;
        }
        if (source_) PK_TRY(source_->deliver_before(time, deliver));
        return on_record(rec, visitor);
      }));
  if (source_) PK_TRY(source_->finish(deliver));
  // (perf_session__warn_about_errors)
  if (stats_.nr_unprocessable_samples && opts_.warn)
    opts_.warn(
        fmt::format("Warning:\n{} unprocessable samples recorded.\nDo you have a KVM guest "
                    "running and not using 'perf kvm'?",
                    stats_.nr_unprocessable_samples));
  return ok();
}

Status Session::on_record(const perfdata::ReadRecord& rec, SampleVisitor& v) {
  const record::RecordView& r = rec.view;
  if (r.type < stats_.nr_events.size()) ++stats_.nr_events[r.type];
  PK_TRY(v.on_delivery(rec));
  switch (r.type) {
    case kRecordSample:
      return opts_.skip_samples ? ok() : on_sample(rec, v);
    case kRecordLostSamples: {
      PK_ASSIGN(auto l, record::parse_lost_samples(r));
      stats_.total_lost_samples += l.lost;
      break;
    }
    case kRecordLost: {
      PK_ASSIGN(auto l, record::parse_lost(r));
      stats_.total_lost += l.lost;
      break;
    }
    case kRecordHeaderBuildId:
      return apply_build_id_record(r);
    default:
      break;
  }
  PK_TRY(v.before_record(rec));
  const bool map = r.type == kRecordMmap || r.type == kRecordMmap2;
  if (r.type < kRecordUserTypeStart && !(map && opts_.skip_maps)) {
    if (machine::Machine* m = machine_of(r)) PK_TRY(m->apply(r));
  }
  return v.after_record(rec);
}

// One chain word as perf's add_callchain_ip takes it: a context marker
// switches the mode, anything else is a frame in the current mode.
// (Resolved later: the mode waits in loc.level.)
// False for an unknown marker: a corrupt chain, which perf drops whole.
bool Session::add_frame(std::uint64_t ip, std::uint8_t& cpumode) {
  if (ip >= kContextMax) {
    switch (ip) {
      case kContextHv:
        cpumode = kMiscHypervisor;
        return true;
      case kContextKernel:
        cpumode = kMiscKernel;
        return true;
      case kContextUser:
        cpumode = kMiscUser;
        return true;
      default:
        frames_.clear();
        return false;
    }
  }
  Frame& f = frames_.emplace_back();  // in place: a copy stalls on store forwarding
  f.ip = ip;
  f.loc.level = static_cast<char>(cpumode);  // the mode, until resolved
  return true;
}

void Session::resolve_frames(machine::Thread& t, bool defer_kernel) {
  for (Frame& f : frames_)
    f.loc = cur_->resolve(t, static_cast<std::uint8_t>(f.loc.level), f.ip, defer_kernel);
}

// --call-graph lbr (branch_sample_type CALL_STACK): perf takes the user
// part of the chain from the LBR call stack, the target of the newest
// branch then each branch's source, after the kernel part up to the user
// context marker (reversed in caller order). False when the chain has no
// user part (perf then uses the chain as it is).
bool Session::resolve_lbr_callchain(const record::Sample& s, machine::Thread& t,
                                    bool defer_kernel) {
  const auto& chain = s.callchain;
  const std::size_t n =
      std::min<std::size_t>(chain.size(), static_cast<std::size_t>(std::max(opts_.max_stack, 0)));
  std::size_t user = 0;
  while (user < n && chain[user] != kContextUser) ++user;
  if (user == n) return false;
  frames_.clear();
  const record::BranchStack& lbr = s.branch_stack;
  const bool has_lbr = (s.sample_type & kSampleBranchStack) && lbr.nr > 0;
  std::uint8_t mode = kMiscUser;
  for (std::size_t i = 0; i <= user; ++i)
    if (!add_frame(chain[i], mode)) return true;
  mode = kMiscUser;
  if (has_lbr) {
    add_frame(lbr.at(0).to, mode);
    for (std::uint64_t i = 0; i < lbr.nr; ++i) add_frame(lbr.at(i).from, mode);
  }
  if (opts_.caller_order) std::reverse(frames_.begin(), frames_.end());
  resolve_frames(t, defer_kernel);
  return true;
}

void Session::resolve_callchain(const record::Sample& s, machine::Thread& t, bool defer_kernel) {
  frames_.clear();
  const auto& chain = s.callchain;
  // First pass, callee first: each ip with the cpumode of the nearest
  // context marker before it (perf starts in user mode).
  std::uint8_t cpumode = kMiscUser;
  for (std::uint64_t i = 0; i < chain.size(); ++i)
    if (!add_frame(chain[i], cpumode)) return;
  if (opts_.caller_order) std::reverse(frames_.begin(), frames_.end());
  if (frames_.size() > static_cast<std::size_t>(opts_.max_stack))
    frames_.resize(static_cast<std::size_t>(std::max(opts_.max_stack, 0)));
  resolve_frames(t, defer_kernel);
}

// perf appends the unwound user frames after the recorded (kernel) chain,
// or before it in caller order, each part limited to max_stack on its own.
void Session::unwind_user_stack(const record::Sample& s, machine::Thread& t) {
  if (!opts_.caller_order) {
    opts_.unwinder->unwind(*cur_, t, s, false, opts_.max_stack, frames_);
    return;
  }
  unwound_.clear();
  opts_.unwinder->unwind(*cur_, t, s, true, opts_.max_stack, unwound_);
  frames_.insert(frames_.begin(), unwound_.begin(), unwound_.end());
}

Status Session::on_sample(const perfdata::ReadRecord& rec, SampleVisitor& v) {
  const record::RecordView& r = rec.view;
  int idx =
      rec.attr != perfdata::ReadRecord::kAttrNotLooked ? rec.attr : reader_->events().attr_index(r);
  if (idx < 0) {
    ++stats_.nr_unknown_id;
    return ok();
  }
  const auto& desc = reader_->events()[static_cast<std::size_t>(idx)];
  PK_TRY(record::decode_sample(r, desc.layout, sample_));
  bool own_frames = false;  // frames that the raw sample does not hold
  if (late_chain_ && !(sample_.sample_type & kSampleCallchain) &&
      static_cast<std::size_t>(idx) < late_chain_events_) {
    own_frames = true;
    const std::span<const std::uint64_t> chain = late_chain_(sample_);
    sample_.callchain =
        record::U64Array(reinterpret_cast<const std::uint8_t*>(chain.data()), chain.size(), false);
    sample_.sample_type |= kSampleCallchain;
  }
  const auto event = static_cast<std::size_t>(idx);
  const auto cpumode = static_cast<std::uint8_t>(r.cpumode());
  std::int32_t pid =
      (sample_.sample_type & kSampleTid) ? static_cast<std::int32_t>(sample_.pid) : -1;
  std::int32_t tid =
      (sample_.sample_type & kSampleTid) ? static_cast<std::int32_t>(sample_.tid) : -1;
  cur_ = machine_.get();
  machine::Thread* tp = nullptr;
  if (has_guests() && (cpumode == kMiscGuestKernel || cpumode == kMiscGuestUser)) {
    cur_ = machine_for(cpumode, pid);
    if (!cur_) {
      ++stats_.nr_unprocessable_samples;
      return ok();
    }
    tp = opts_.guest.code ? guest_code_thread(*cur_, pid) : &cur_->findnew_thread(pid, tid);
    // (perf's machine__resolve fails: its message, and it stops there)
    if (!tp) return make_error("problem processing {} event, skipping it.", kRecordSample);
  } else {
    tp = &cur_->findnew_thread(pid, tid);
  }
  machine::Thread& t = *tp;
  // (a chain given here is not the one read ahead: its hash is made anew)
  const RawSample raw{event, &sample_, cpumode, &t,
                      own_frames ? record::ChainDigest{} : rec.chain_digest};
  if (v.take_raw(raw)) return ok();
  // (Made only for a sample the visitor did not take: most are repeats.)
  ResolvedSample rs;
  rs.event = event;
  rs.sample = &sample_;
  rs.cpumode = cpumode;
  rs.machine = cur_;
  rs.thread = &t;
  rs.comm = t.comm;
  constexpr std::uint64_t kUserStack = kSampleRegsUser | kSampleStackUser;
  own_frames |= (desc.attr.branch_sample_type & kBranchCallStack) ||
                (opts_.unwinder && (sample_.sample_type & kUserStack) == kUserStack);
  const bool repeatable = repeats_ && repeats_->on() && !own_frames && cur_ == machine_.get();
  const bool defer = v.defers_kernel_symbols() && cur_->kernel_symbols_pending();
  bool found = false;
  if (repeatable) {
    const std::uint32_t id = repeats_->find(raw, cur_->generation());
    // (One that waited for the kernel's symbols stands for its repeats
    // while they load: resolved again, they would wait alike.)
    found = id != kNoResolution;
    if (found && (defer || !repeats_->pending(id))) {
      rs.resolution = id;
      rs.resolution_epoch = repeats_->epoch();
      rs.loc = repeats_->loc(id);
      rs.callchain = repeats_->frames(id);
      return v.on_sample(rs);
    }
  }
  rs.loc = cur_->resolve(t, rs.cpumode, sample_.ip, defer);
  if (opts_.resolve_callchains && (sample_.sample_type & kSampleCallchain)) {
    if (!(desc.attr.branch_sample_type & kBranchCallStack) ||
        !resolve_lbr_callchain(sample_, t, defer))
      resolve_callchain(sample_, t, defer);
    if (opts_.unwinder && (sample_.sample_type & kUserStack) == kUserStack) {
      const std::size_t recorded = frames_.size();
      unwind_user_stack(sample_, t);
      const std::size_t added = frames_.size() - recorded;
      rs.unwound_begin = opts_.caller_order ? 0 : recorded;
      rs.unwound_end = rs.unwound_begin + added;
    }
    rs.callchain = frames_;
  }
  if (repeatable && !found) {
    auto waits = [](const machine::Location& l) { return l.symbol == machine::kSymbolPending; };
    const bool pending = waits(rs.loc) || std::any_of(rs.callchain.begin(), rs.callchain.end(),
                                                      [&](const Frame& f) { return waits(f.loc); });
    rs.resolution = repeats_->keep(rs.loc, rs.callchain, pending);
    rs.resolution_epoch = repeats_->epoch();
  }
  return v.on_sample(rs);
}

}  // namespace perfkit::session
