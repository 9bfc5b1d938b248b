#include "report/report_keys.h"

#include <fmt/format.h>

#include <cstring>

#include "abi/perf_event.h"
#include "perfdata/features.h"
#include "report/report_branch.h"
#include "report/report_mem.h"

namespace perfkit::report {

namespace {

// perf's A2L_FAIL_LIMIT.
constexpr int kFailLimit = 123;

bool has(const ReportOptions& o, SortKey k) {
  for (SortKey x : o.sort)
    if (x == k) return true;
  return false;
}

}  // namespace

ExtKeys::~ExtKeys() {
  if (regex_ok_) regfree(&regex_);
}

Status ExtKeys::setup(session::Session& session, const ReportOptions& o,
                      std::shared_ptr<symbol::SourceLines> lines) {
  session_ = &session;
  time_ = has(o, SortKey::kTime);
  socket_ = has(o, SortKey::kSocket);
  parent_ = has(o, SortKey::kParent);
  srcline_ = has(o, SortKey::kSrcline);
  srcfile_ = has(o, SortKey::kSrcfile);
  symoff_ = has(o, SortKey::kSymoff);
  trace_ = has(o, SortKey::kTrace);
  for (SortKey k : o.sort) {
    branch_ |= is_branch_key(k);
    weight_ |= is_weight_key(k);
    mem_ |= is_mem_key(k);
  }
  sym_size_ = has(o, SortKey::kSymSize);
  dso_size_ = has(o, SortKey::kDsoSize);
  addr_ = has(o, SortKey::kAddr);
  page_ = has(o, SortKey::kCodePageSize);
  txn_ = has(o, SortKey::kTransaction);
  cgroup_ = has(o, SortKey::kCgroup);
  cgroup_id_ = has(o, SortKey::kCgroupId);
  active_ = time_ || socket_ || parent_ || srcline_ || srcfile_ || symoff_ || trace_ || branch_ ||
            weight_ || mem_ || sym_size_ || dso_size_ || addr_ || page_ || txn_ || cgroup_ ||
            cgroup_id_;
  quantum_ = o.time_quantum;
  raw_trace_ = o.raw_trace;
  lines_ = std::move(lines);
  keys_.assign(1, ExtKey{});
  key_index_.insert(ExtKey{}, 0);
  unknown_ = session.machine().intern("??:0");
  empty_ = session.machine().intern("");
  if (parent_) {
    if (regcomp(&regex_, o.parent_regex.c_str(), REG_EXTENDED | REG_NOSUB) != 0)
      return make_error("parent regex '{}' does not compile", o.parent_regex);
    regex_ok_ = true;
  }
  if (socket_) sockets_ = cpu_sockets(session.reader());
  return ok();
}

namespace {

struct TxBit {
  std::uint64_t flag;
  const char* name;
  bool skip_for_len;
};
constexpr TxBit kTxBits[] = {{1 << 0, "EL ", false},       {1 << 1, "TX ", true},
                             {1 << 2, "SYNC ", true},      {1 << 3, "ASYNC ", false},
                             {1 << 4, "RETRY ", false},    {1 << 5, "CON ", false},
                             {1 << 6, "CAP-WRITE ", true}, {1 << 7, "CAP-READ ", false}};
constexpr std::uint64_t kTxnSync = 1 << 2, kTxnAsync = 1 << 3;
constexpr std::uint64_t kTxnAbortMask = 0xffffffffULL << 32;

}  // namespace

std::string transaction_text(std::uint64_t t) {
  std::string out;
  for (const TxBit& b : kTxBits)
    if (t & b.flag) out += b.name;
  if (t && !(t & (kTxnSync | kTxnAsync))) out += "NEITHER ";
  if (t & kTxnAbortMask) out += fmt::format(":{:x}", (t & kTxnAbortMask) >> 32);
  return out;
}

std::size_t transaction_text_len() {
  std::size_t len = 0;
  for (const TxBit& b : kTxBits)
    if (!b.skip_for_len) len += std::strlen(b.name);
  return len + 4;  // ":XX "
}

// perf's env->cpu[]: the per-cpu ids CPU_TOPOLOGY carries since perf 4.1.
std::vector<std::int32_t> cpu_sockets(perfdata::Reader& reader) {
  std::vector<std::int32_t> sockets;
  perfdata::Features feats;
  for (std::uint32_t id : {abi::kFeatNrcpus, abi::kFeatCpuTopology})
    if (auto blob = reader.feature(id))
      (void)perfdata::parse_feature(id, blob->data, reader.swapped(), blob->offset, feats);
  if (feats.cpu_topology && feats.cpu_topology->has_cpu_ids)
    for (const auto& c : feats.cpu_topology->cpus) sockets.push_back(c.socket_id);
  return sockets;
}

std::string_view ExtKeys::cgroup_name(std::uint64_t id) const {
  const std::string* path = session_->machine().cgroup_path(id);
  return path ? std::string_view(*path) : std::string_view("unknown");
}

const std::string* ExtKeys::parent_of(const session::Frame& f) {
  const machine::Dso* d = f.loc.dso;
  auto k = static_cast<std::uint64_t>(d->index) << 32 | static_cast<std::uint32_t>(f.loc.symbol);
  std::uint32_t v = parent_cache_.find(k);
  if (v == FlatMap<std::uint64_t, U64Hash>::kNone) {
    std::string name(session_->machine().symbol_name(f.loc));
    v = 0;
    if (regexec(&regex_, name.c_str(), 0, nullptr, 0) == 0) {
      parent_names_.push_back(session_->machine().intern(name));
      v = static_cast<std::uint32_t>(parent_names_.size());
    }
    parent_cache_.insert(k, v);
  }
  return v ? parent_names_[v - 1] : nullptr;
}

const std::string* ExtKeys::trace_of(const session::ResolvedSample& s) {
  const record::Sample& smp = *s.sample;
  const auto& attr = session_->reader().events()[s.event].attr;
  if (attr.type != abi::kTypeTracepoint) return nullptr;
  if (!tracepoints_tried_) {
    tracepoints_tried_ = true;
    tracepoints_ = session::session_tracepoint_formatter(*session_, nullptr);
  }
  trace_text_.clear();
  if (tracepoints_ && (smp.sample_type & abi::kSampleRaw))
    tracepoints_->format(attr.config, static_cast<int>(smp.cpu), smp.raw, trace_text_, raw_trace_);
  return session_->machine().intern(std::string_view(trace_text_.data(), trace_text_.size()));
}

void ExtKeys::begin_sample(const session::ResolvedSample& s) {
  const record::Sample& smp = *s.sample;
  sample_ = ExtKey{};
  if (time_) {
    // perf's time is all ones when samples carry none.
    std::uint64_t t = (smp.sample_type & abi::kSampleTime) ? smp.time : ~0ULL;
    sample_.time = quantum_ ? t / quantum_ * quantum_ : t;
  }
  if (socket_ && (smp.sample_type & abi::kSampleCpu) && smp.cpu < sockets_.size())
    sample_.socket = sockets_[smp.cpu];
  if (trace_) sample_.trace = trace_of(s);
  if (page_) sample_.code_page_size = smp.code_page_size;
  if (txn_) sample_.transaction = smp.transaction;
  if (cgroup_ && (smp.sample_type & abi::kSampleCgroup)) sample_.cgroup = smp.cgroup;
  if (cgroup_id_ && s.thread)
    sample_.cgroup_dev = s.thread->cgroup_ns_dev, sample_.cgroup_ino = s.thread->cgroup_ns_ino;
  if (weight_) sample_.weight = smp.perf_weight(), sample_.ins_lat = smp.perf_ins_lat();
  if (parent_) {
    // add_callchain_ip checks the frames the sample's callchain gives, not
    // the functions inlined at them.
    for (const session::Frame& f : s.callchain) {
      if (f.inlined || f.loc.symbol < 0 || !f.loc.dso) continue;
      if ((sample_.parent = parent_of(f))) break;
    }
  }
}

const ExtKeys::Answer& ExtKeys::answer(const machine::Location& loc, const char* inlined) {
  const machine::Dso* d = loc.dso;
  AddrKey k{loc.addr, loc.symbol >= 0 ? inlined : nullptr, d->index};
  std::uint32_t at = answer_index_.find(k);
  if (at != FlatMap<AddrKey, AddrKeyHash>::kNone) return answers_[at];
  if (line_dsos_.size() <= d->index) line_dsos_.resize(d->index + 1, nullptr);
  auto*& h = line_dsos_[d->index];
  if (!h) h = lines_->dso(d->long_name, d->short_name, d->build_id);
  machine::Machine& m = session_->machine();
  Answer a;
  auto frames = lines_->inlines(h, loc.addr);
  if (!frames.empty()) {
    std::string_view text = frames[0].srcline;
    a.found = m.intern(text);
    std::size_t colon = text.find(':');
    a.file = text == "??:0" || colon == std::string_view::npos || colon == 0
                 ? empty_
                 : m.intern(text.substr(0, colon));
  }
  if (loc.symbol >= 0) {
    const symbol::Symbol& sym = d->symbols->at(static_cast<std::size_t>(loc.symbol));
    std::string_view name = inlined ? std::string_view(inlined) : m.symbol_name(loc);
    a.fallback = m.intern(fmt::format("{}+{}", name, loc.addr - sym.start));
  } else {
    // "dso[objdump address]": SourceLines words its fallback that way.
    std::string_view text = lines_->srcline(h, loc.addr);
    a.fallback = a.found && text == *a.found
                     ? m.intern(fmt::format("{}[{:x}]", d->short_name, loc.addr))
                     : m.intern(text);
  }
  answers_.push_back(a);
  answer_index_.insert(k, static_cast<std::uint32_t>(answers_.size() - 1));
  return answers_.back();
}

bool ExtKeys::lookup(const machine::Location& loc, const Answer& a) {
  if (dso_state_.size() <= loc.dso->index) dso_state_.resize(loc.dso->index + 1);
  DsoState& st = dso_state_[loc.dso->index];
  const bool hit = st.has_srcline && a.found;
  if (hit)
    st.fails = 0;
  else if (st.fails && ++st.fails > kFailLimit)
    st.has_srcline = false;
  return hit;
}

const std::string* ExtKeys::source(const machine::Location& loc, const char* inlined, int lookups,
                                   bool file) {
  if (!loc.map || !loc.dso) return file ? empty_ : unknown_;
  const Answer& a = answer(loc, inlined);
  if (dso_state_.size() <= loc.dso->index) dso_state_.resize(loc.dso->index + 1);
  const bool hit = dso_state_[loc.dso->index].has_srcline && a.found;
  for (int i = 0; i < lookups; ++i) (void)lookup(loc, a);
  if (file) return hit ? a.file : fallback_file(loc, a);
  return hit ? a.found : a.fallback;
}

// perf cuts the source file from the line it falls back to, at its first
// colon: nothing where that is "symbol+offset" (it names no symbol there),
// but the part of "dso[address]" before a colon in the DSO's name
// ("memfd:name (deleted)" gives "memfd").
const std::string* ExtKeys::fallback_file(const machine::Location& loc, const Answer& a) {
  if (loc.symbol >= 0 || !a.fallback || a.fallback->empty()) return empty_;
  const std::size_t colon = a.fallback->find(':');
  if (colon == std::string::npos) return empty_;
  return session_->machine().intern(std::string_view(*a.fallback).substr(0, colon));
}

std::uint32_t ExtKeys::history_of(const machine::Location& loc) {
  const AddrKey k{loc.addr, nullptr, loc.dso->index};
  std::uint32_t at = history_index_.find(k);
  if (at != FlatMap<AddrKey, AddrKeyHash>::kNone) return at;
  machine::Machine& m = session_->machine();
  const Answer& a = answer(loc, nullptr);
  const std::string* line = a.fallback;
  const bool found = lookup(loc, a);
  if (found) {
    line = a.found;
  } else if (loc.symbol >= 0) {
    const symbol::Symbol& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
    line = m.intern(fmt::format("+{}", loc.addr - sym.start));
  }
  const std::string* name = nullptr;
  if (loc.symbol >= 0) name = m.intern(fmt::format("{} {}", m.symbol_name(loc), *line));
  history_.push_back(History{line, name, found});
  history_index_.insert(k, static_cast<std::uint32_t>(history_.size() - 1));
  return static_cast<std::uint32_t>(history_.size() - 1);
}

const std::string* ExtKeys::history_srcline(const machine::Location& loc) {
  if (!loc.map || !loc.dso) return nullptr;
  return history_[history_of(loc)].line;
}

const std::string* ExtKeys::chain_line(const machine::Location& loc) {
  if (!loc.map || !loc.dso) return nullptr;
  const History& h = history_[history_of(loc)];
  return h.found ? h.line : nullptr;
}

std::string_view ExtKeys::history_name(const machine::Location& loc, const char* inlined,
                                       const char* srcline) {
  if (loc.symbol < 0 || !loc.dso) return {};
  // A frame with its own line (the unwinder's inline records) or an
  // inlined function's: named once per (interned) line, function and place.
  if (inlined || srcline) {
    const FrameKey k{srcline, inlined, srcline ? 0 : loc.addr, loc.dso->index, loc.symbol};
    std::uint32_t at = frame_index_.find(k);
    if (at != FlatMap<FrameKey, FrameKeyHash>::kNone) return *frame_names_[at];
    machine::Machine& m = session_->machine();
    const std::string* line = srcline ? nullptr : history_srcline(loc);
    frame_names_.push_back(
        m.intern(fmt::format("{} {}{}", inlined ? std::string_view(inlined) : m.symbol_name(loc),
                             srcline ? srcline
                             : line  ? line->c_str()
                                     : "??:0",
                             inlined ? " (inlined)" : "")));
    frame_index_.insert(k, static_cast<std::uint32_t>(frame_names_.size() - 1));
    return *frame_names_.back();
  }
  // (a symbol without a map has no source line: its name alone)
  if (!loc.map) return session_->machine().symbol_name(loc);
  return *history_[history_of(loc)].name;
}

std::string ExtKeys::block_range(const machine::Location& loc, std::uint64_t sym_start,
                                 std::uint64_t start, std::uint64_t end) {
  machine::Location at = loc;
  at.addr = sym_start + start;
  const std::string* first = source(at, nullptr, 1, false);
  at.addr = sym_start + end;
  const std::string* last = source(at, nullptr, 1, false);
  if (!first->starts_with("??:0") && !last->starts_with("??:0"))
    return fmt::format("[{} -> {}]", *first, *last);
  return fmt::format("[{:7x} -> {:7x}]", start, end);
}

std::uint32_t ExtKeys::key(const machine::Location& loc, const char* inlined, int lookups,
                           const char* srcline) {
  ExtKey k = sample_;
  last_found_ = srcline_ && (srcline || (loc.map && loc.dso && answer(loc, inlined).found));
  if (srcline_ && srcline) {
    auto p = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(srcline));
    std::uint32_t at = preset_index_.find(p);
    if (at == FlatMap<std::uint64_t, U64Hash>::kNone) {
      presets_.push_back(session_->machine().intern(srcline));
      at = static_cast<std::uint32_t>(presets_.size() - 1);
      preset_index_.insert(p, at);
    }
    k.srcline = presets_[at];
  } else if (srcline_) {
    k.srcline = source(loc, inlined, lookups, false);
  }
  if (srcfile_) k.srcfile = source(loc, inlined, lookups, true);
  if (symoff_) k.symoff_ip = loc.addr;
  // (perf unmaps the entry's ip: a callchain entry's raw one too)
  if (addr_) k.addr = loc.map ? loc.map->unmap_ip(loc.addr) : loc.addr;
  if (sym_size_ && loc.symbol >= 0 && loc.dso) {
    const symbol::Symbol& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
    k.has_sym = true;
    k.sym_size = sym.end - sym.start;
  }
  if (dso_size_ && loc.map && loc.dso) k.has_map = true, k.dso_size = loc.map->end - loc.map->start;
  return intern(k);
}

std::uint32_t ExtKeys::dedup_key(std::uint32_t id) {
  ExtKey k = keys_[id];
  k.time = 0;
  if (socket_) k.socket = 0;  // (-1 without the key)
  k.transaction = k.code_page_size = 0;
  k.cgroup = k.cgroup_dev = k.cgroup_ino = 0;
  return intern(k);
}

std::uint32_t ExtKeys::intern(const ExtKey& k) {
  std::uint32_t id = key_index_.find(k);
  if (id != FlatMap<ExtKey, ExtKeyHash>::kNone) return id;
  keys_.push_back(k);
  id = static_cast<std::uint32_t>(keys_.size() - 1);
  key_index_.insert(k, id);
  return id;
}

}  // namespace perfkit::report
