// perf script with --jobs: the samples printed by several sessions of one
// recording, slice by slice (session/shards.h), the slices' text written
// in order: the same bytes as one session's.
#include <thread>

#include "abi/perf_event.h"
#include "script/script.h"
#include "script/script_printer.h"
#include "session/shards.h"

namespace perfkit::script {

namespace {

using Buf = fmt::memory_buffer;

// Output buffers handed back by the writer, for the shards to fill again
// (a fresh one of a few MB would be faulted in page by page).
class BufferPool {
 public:
  Buf get() {
    std::lock_guard lock(mu_);
    if (free_.empty()) return Buf();
    Buf b = std::move(free_.back());
    free_.pop_back();
    b.clear();
    return b;
  }
  void put(Buf b) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(b));
  }

 private:
  std::mutex mu_;
  std::vector<Buf> free_;
};

// Passes one shard's samples to its printer; the others are taken as they
// come (not resolved). Each slice's text goes to the writer when the next
// sample falls outside it.
class ShardVisitor : public session::SampleVisitor {
 public:
  ShardVisitor(ScriptPrinter& printer, FdWriter& text, session::SliceDeal deal, unsigned shard,
               session::OrderedWrites<Buf>& slices, BufferPool& pool)
      : printer_(printer), text_(text), deal_(deal), shard_(shard), slices_(slices), pool_(pool) {}

  bool take_raw(const session::RawSample& r) override {
    const session::SliceDeal::Step st = deal_.take(r.sample->user_stack.size());
    if (st.ended && !hand_over(st.ended_slice, true)) cancelled_ = true;
    if (cancelled_) return false;  // on_sample stops the session
    return !st.mine || printer_.take_raw(r);
  }
  Status on_sample(const session::ResolvedSample& s) override {
    if (cancelled_) return make_error("cancelled");
    PK_TRY(printer_.on_sample(s));
    // A part of the slice goes out once its buffer is full (unless kernel
    // frames wait in it for their symbols).
    if (text_.buffer().size() >= kPart && !printer_.has_pending() &&
        !hand_over(*deal_.open_slice(), false))
      cancelled_ = true;
    return ok();
  }
  Status before_record(const perfdata::ReadRecord& r) override {
    if (cancelled_) return make_error("cancelled");
    return printer_.before_record(r);
  }
  Status after_record(const perfdata::ReadRecord& r) override { return printer_.after_record(r); }
  bool defers_kernel_symbols() const override { return printer_.defers_kernel_symbols(); }
  Status on_delivery(const perfdata::ReadRecord& r) override { return printer_.on_delivery(r); }

  // After the session's run, that ended with `status`: the slice it was in
  // goes out (a failed one's output ends there).
  void close(Status status) {
    if (!status) slices_.fail(std::move(status), deal_.last_slice());
    if (auto open = deal_.open_slice(); open && !cancelled_) (void)hand_over(*open, true);
  }

 private:
  static constexpr std::size_t kPart = 256 << 10;  // bytes: stays in cache, recycled

  bool hand_over(std::uint64_t slice, bool last) {
    printer_.resolve_pending();  // (waits for the kernel's symbols if it must)
    Buf done = std::move(text_.buffer());
    text_.buffer() = pool_.get();
    // (a new one made big at once, rather than grown by copies)
    if (text_.buffer().capacity() < kPart + kPart / 2) text_.buffer().reserve(kPart + kPart / 2);
    return slices_.push(shard_, slice, std::move(done), last);
  }

  ScriptPrinter& printer_;
  FdWriter& text_;
  session::SliceDeal deal_;
  unsigned shard_;
  session::OrderedWrites<Buf>& slices_;
  BufferPool& pool_;
  bool cancelled_ = false;
};

// What perf script keeps from one sample to the next, none of which a
// shard may have: fields whose text depends on earlier samples (data_src's
// width, srccode's last line, callindent's depth) and the options that
// follow a run of samples or print the side-band.
bool options_allow(const ScriptOptions& o) {
  return !o.dump_raw && !o.per_event_dump && o.dlfilter.empty() && o.graph_functions.empty() &&
         o.evswitch.on.empty() && o.evswitch.off.empty() && !o.reltime && !o.deltatime &&
         !o.debug_mode && !o.show_task && !o.show_mmap && !o.show_switch && !o.show_namespace &&
         !o.show_cgroup && !o.show_lost && !o.show_round && !o.show_bpf && !o.show_text_poke;
}

bool recording_allows(const ScriptOptions& o, const perfdata::Reader& reader) {
  using F = ScriptField;
  constexpr FieldMask kCarried = field_bit(F::kDataSrc) | field_bit(F::kSrccode) |
                                 field_bit(F::kCallindent) | field_bit(F::kMetric);
  if (reader.is_pipe()) return false;
  for (const auto& ev : reader.events().events()) {
    // (PERF_SAMPLE_READ: each period is the difference from the last)
    if (ev.attr.sample_type & abi::kSampleRead) return false;
    if (o.fields.of(ev.attr.type).fields & kCarried) return false;
  }
  return true;
}

}  // namespace

bool can_shard(const ScriptOptions& opts) { return options_allow(opts); }

Status run_script_shards(std::span<session::Session* const> sessions, ScriptOptions opts,
                         FdWriter& out, session::ShardWarnings& warnings,
                         std::uint64_t slice_samples, std::uint64_t slice_bytes) {
  const auto n = static_cast<unsigned>(sessions.size());
  if (n < 2 || !options_allow(opts) || !recording_allows(opts, sessions[0]->reader())) {
    for (unsigned k = 1; k < n; ++k) sessions[k]->reader().leave_shared();
    opts.warn = warnings.for_shard(0);
    return run_script(*sessions[0], std::move(opts), out);
  }
  std::vector<FdWriter> texts;  // (each printer holds its own: made before them)
  std::vector<std::unique_ptr<ScriptPrinter>> printers;
  texts.reserve(n);
  for (unsigned k = 0; k < n; ++k) texts.push_back(FdWriter::memory());
  for (unsigned k = 0; k < n; ++k) {
    ScriptOptions mine = opts;
    mine.warn = warnings.for_shard(k);
    printers.push_back(std::make_unique<ScriptPrinter>(*sessions[k], std::move(mine), texts[k]));
    PK_TRY(printers[k]->prepare());  // (the same checks each time: the first fails alike)
    attach_callchains(*sessions[k], *printers[k], opts.max_stack, opts.inline_frames,
                      opts.full_source_path);
  }
  BufferPool pool;
  session::OrderedWrites<Buf> slices(n, 2, [&](Buf& text) {
    out.write_through(Bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
    pool.put(std::move(text));
    return out.status();
  });
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < n; ++k) {
    threads.emplace_back([&, k] {
      ShardVisitor v(*printers[k], texts[k], session::SliceDeal(k, n, slice_samples, slice_bytes),
                     k, slices, pool);
      Status st = sessions[k]->run(v);
      sessions[k]->reader().leave_shared();
      printers[k]->resolve_pending();
      if (st) st = printers[k]->finish();
      v.close(std::move(st));
    });
  }
  for (std::thread& t : threads) t.join();
  Status status = slices.status();
  return status;
}

}  // namespace perfkit::script
