#include "perfdata/record_stream.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "record/sample.h"

namespace perfkit::perfdata {

using namespace perfkit::abi;

std::uint64_t record_timestamp(const EventSet& events, const record::RecordView& r) {
  return record_timestamp(events, r, events.attr_index(r));
}

namespace {

Status read_in_order(Reader& reader, const RecordStreamOptions& opts, const RecordSink& sink) {
  OrderedStream stream(sink);
  ReadRecord rec;
  for (;;) {
    if (!reader.next_mapped(rec)) {
      PK_ASSIGN(bool got, reader.next(rec));
      if (!got) break;
    }
    const auto& v = rec.view;
    if (v.type >= kRecordUserTypeStart || !opts.ordered) {
      PK_TRY(sink(rec, kNoTimestamp));
      if (v.type == kRecordFinishedRound && opts.ordered) PK_TRY(stream.round());
      continue;
    }
    rec.attr = reader.events().attr_index(v);
    PK_TRY(stream.push(rec, record_timestamp(reader.events(), v, rec.attr)));
    rec.attr = ReadRecord::kAttrNotLooked;
  }
  return stream.finish();
}

// Records as delivered, handed from the reading thread to the sink's.
// Records whose bytes lie outside the mapped file (decompressed ones) are
// copied, since their buffers are reused once delivered.
struct Batch {
  std::vector<PackedRecord> records;
  std::vector<std::uint64_t> stamps;
  std::vector<record::ChainDigest> chain_digests;  // of each record (not made: none)
  std::vector<std::uint8_t> bytes;
  struct Copy {
    std::size_t record, at, size;  // the record's bytes, then its trailing bytes, from `at`
  };
  std::vector<Copy> copies;
  std::uint64_t position = 0;
  std::size_t span = 0;  // bytes of its records, mapped or copied
  void clear() {
    span = 0;
    records.clear();
    stamps.clear();
    chain_digests.clear();
    bytes.clear();
    copies.clear();
  }
  // Points the copied records at their copies (bytes is complete now).
  void seal() {
    for (const Copy& c : copies) {
      PackedRecord& r = records[c.record];
      r.bytes = bytes.data() + c.at;
      if (r.trailing_size) r.trailing = r.bytes + c.size;
    }
  }
};

class ReadAhead {
 public:
  // A batch ends at 2048 records or 512 KiB of them (a DWARF recording's
  // samples carry 8 KiB stacks: the reader stays some 4 MiB ahead, so the
  // pages released behind the sink bound the resident set).
  static constexpr std::size_t kBatchRecords = 2048, kBatchBytes = 512 << 10, kBatchesAhead = 8;
  static constexpr std::uint64_t kReleaseEvery = 1 << 20;

  ReadAhead(Reader& reader, const RecordStreamOptions& opts)
      : reader_(reader), opts_(opts), position_(opts.position), file_(reader.file_bytes()) {
    opts_.read_ahead = false;
    opts_.position = nullptr;
  }

  Status run(const RecordSink& sink) {
    reader_.set_metadata_barrier([this] { barrier(); });
    std::thread producer([this] { produce(); });
    Status st = consume(sink);
    {
      std::lock_guard lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    producer.join();
    reader_.set_metadata_barrier(nullptr);
    PK_TRY(std::move(st));
    return std::move(read_status_);
  }

 private:
  void produce() {
    Status st = read_in_order(reader_, opts_, [this](const ReadRecord& rec, std::uint64_t ts) {
      return accept(rec, ts);
    });
    if (cur_ && !cur_->records.empty() && !stopped()) (void)publish();
    std::lock_guard lock(m_);
    read_status_ = std::move(st);
    done_ = true;
    cv_.notify_all();
  }

  // Pages of the file well behind the batches the sink has taken go.
  void release_behind() {
    const std::uint64_t margin = opts_.release_behind;
    const std::uint64_t taken = taken_position_.load(std::memory_order_relaxed);
    if (!margin || taken < margin || taken - margin < released_ + kReleaseEvery) return;
    reader_.release(released_, taken - margin);
    released_ = taken - margin;
  }

  // A sample's call-chain digest, made here rather than on the sink's
  // thread (raw sample keys: session/raw_key.h); none for other records.
  record::ChainDigest chain_digest(const ReadRecord& rec) {
    if (rec.view.type != abi::kRecordSample) return {};
    const EventSet& events = reader_.events();
    const int idx = rec.attr != ReadRecord::kAttrNotLooked ? rec.attr : events.attr_index(rec.view);
    if (idx < 0) return {};
    const auto& desc = events[static_cast<std::size_t>(idx)];
    if (!(desc.attr.sample_type & abi::kSampleCallchain)) return {};
    if (!record::decode_sample(rec.view, desc.layout, sample_)) return {};
    return record::callchain_digest(sample_.callchain.bytes());
  }

  bool stopped() {
    std::lock_guard lock(m_);
    return stop_;
  }

  Status accept(const ReadRecord& rec, std::uint64_t ts) {
    if (!cur_) {
      std::unique_lock lock(m_);
      if (stop_) return make_error("stopped");
      if (free_.empty()) {
        cur_ = std::make_unique<Batch>();
        cur_->records.reserve(kBatchRecords);
        cur_->stamps.reserve(kBatchRecords);
      } else {
        cur_ = std::move(free_.back());
        free_.pop_back();
        cur_->clear();
      }
    }
    Batch& b = *cur_;
    const auto* lo = file_.data();
    const auto* hi = lo + file_.size();
    const auto* p = rec.view.bytes.data();
    const bool mapped =
        p >= lo && p + rec.view.bytes.size() <= hi &&
        (rec.view.trailing.empty() || (rec.view.trailing.data() >= lo &&
                                       rec.view.trailing.data() + rec.view.trailing.size() <= hi));
    if (!mapped) {
      b.copies.push_back({b.records.size(), b.bytes.size(), rec.view.bytes.size()});
      b.bytes.insert(b.bytes.end(), rec.view.bytes.begin(), rec.view.bytes.end());
      b.bytes.insert(b.bytes.end(), rec.view.trailing.begin(), rec.view.trailing.end());
    }
    pack(rec, rec.view.bytes.data(), b.records.emplace_back());
    b.stamps.push_back(ts);
    b.chain_digests.push_back(chain_digest(rec));
    b.span += rec.view.bytes.size() + rec.view.trailing.size();
    if (b.records.size() >= kBatchRecords || b.span >= kBatchBytes) return publish();
    return ok();
  }

  // Hands the current batch over, waiting while the sink is far behind.
  Status publish() {
    release_behind();
    cur_->position = reader_.position();
    cur_->seal();
    std::unique_lock lock(m_);
    cv_.wait(lock, [this] { return stop_ || full_.size() < kBatchesAhead; });
    if (stop_) return make_error("stopped");
    full_.push_back(std::move(cur_));
    ++published_;
    cv_.notify_all();
    return ok();
  }

  // Before the reader changes its metadata: every record delivered so far
  // taken by the sink.
  void barrier() {
    if (cur_ && !cur_->records.empty() && !publish()) return;
    std::unique_lock lock(m_);
    cv_.wait(lock, [this] { return stop_ || taken_ == published_; });
  }

  Status consume(const RecordSink& sink) {
    ReadRecord out;
    for (;;) {
      std::unique_ptr<Batch> b;
      {
        std::unique_lock lock(m_);
        cv_.wait(lock, [this] { return !full_.empty() || done_; });
        if (full_.empty()) return ok();
        b = std::move(full_.front());
        full_.pop_front();
        cv_.notify_all();
      }
      if (position_) *position_ = b->position;
      for (std::size_t i = 0; i < b->records.size(); ++i) {
        unpack(b->records[i], out);
        out.chain_digest = b->chain_digests[i];
        PK_TRY(sink(out, b->stamps[i]));
      }
      taken_position_.store(b->position, std::memory_order_relaxed);
      std::lock_guard lock(m_);
      free_.push_back(std::move(b));
      ++taken_;
      cv_.notify_all();
    }
  }

  Reader& reader_;
  RecordStreamOptions opts_;
  std::uint64_t* position_;
  Bytes file_;
  std::unique_ptr<Batch> cur_;                    // the reading thread's
  record::Sample sample_;                         // the reading thread's
  std::uint64_t released_ = 0;                    // the reading thread's: file released up to here
  std::atomic<std::uint64_t> taken_position_{0};  // of the last batch the sink took
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Batch>> full_, free_;
  std::uint64_t published_ = 0, taken_ = 0;
  bool done_ = false, stop_ = false;
  Status read_status_ = ok();
};

}  // namespace

Status process_records(Reader& reader, const RecordStreamOptions& opts, const RecordSink& sink) {
  if (opts.read_ahead && !reader.is_pipe() && reader.file_size() > 0) {
    ReadAhead ahead(reader, opts);
    return ahead.run(sink);
  }
  if (!opts.position) return read_in_order(reader, opts, sink);
  return read_in_order(reader, opts, [&](const ReadRecord& rec, std::uint64_t ts) {
    *opts.position = reader.position();
    return sink(rec, ts);
  });
}

}  // namespace perfkit::perfdata
