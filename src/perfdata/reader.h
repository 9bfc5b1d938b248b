// Reader: a perf.data file (mapped) or stream (pipe mode, from a file
// descriptor or memory), giving its header, attrs, feature sections and its
// records in file order. Records are views; see RecordView::transient.
//
// COMPRESSED records are returned themselves, then the records they contain
// (with the COMPRESSED record's offset), so counts match perf's.
//
// A directory (perf record --threads, --kcore) is read as perf reads it: its
// `data` file gives the header and the first data, its `data.*` files (in
// the directory's own order) the rest, taken in turns of 2 MiB of records
// each until every file is done. Such files carry no FINISHED_ROUND: ordered
// delivery sorts them all at the end. Record offsets are within their file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"
#include "base/mapped_file.h"
#include "perfdata/decompressor.h"
#include "perfdata/event_set.h"
#include "perfdata/file_header.h"
#include "record/record_view.h"
#include "record/sample.h"

namespace perfkit::perfdata {

struct ReaderOptions {
  // Called for problems that do not stop reading (trailing bytes, ...).
  std::function<void(const std::string&)> warn;
  // A stream's first bytes, already read from its descriptor by the caller
  // (who looked at its header records): the reader takes them first.
  std::vector<std::uint8_t> stream_prefix;
  // A file (not a directory) already mapped for several readers side by
  // side: read there rather than mapped again, its pages released behind
  // the slowest (as reader `shared_slot`).
  std::shared_ptr<SharedMapping> shared;
  unsigned shared_slot = 0;
};

// A feature section's bytes: from the file header's table (file mode) or a
// HEADER_FEATURE record (pipe mode).
struct FeatureBlob {
  std::uint32_t id = 0;
  std::uint64_t offset = 0;  // file offset of the data
  Bytes data;
};

// One record as the reader returns it.
struct ReadRecord {
  record::RecordView view;
  // The bytes are valid only until the next call to next(): they live in a
  // stream or decompression buffer. False for views into a mapped file.
  bool transient = false;
  // The record came out of a COMPRESSED record.
  bool from_compressed = false;
  // Its event (EventSet::attr_index) when process_records has looked it up
  // to order it; kAttrNotLooked otherwise.
  static constexpr std::int32_t kAttrNotLooked = -2;
  std::int32_t attr = kAttrNotLooked;
  // Of a perf.data directory: which of its data files the record is in
  // (Reader::file_path); 0 for a single file.
  std::uint32_t file = 0;
  // A SAMPLE read ahead on another thread: record::callchain_digest of its
  // chain (not made: none).
  record::ChainDigest chain_digest;
};

// A record's fields kept compactly to deliver it again later (an ordering
// queue, a batch handed to another thread); its header is read back from its
// bytes. Copying a whole ReadRecord that was just written field by field
// would stall on store forwarding, at every record.
struct PackedRecord {
  const std::uint8_t* bytes = nullptr;
  const std::uint8_t* trailing = nullptr;
  std::uint64_t offset = 0;
  std::uint32_t trailing_size = 0;
  std::int32_t attr = ReadRecord::kAttrNotLooked;
  std::uint32_t file = 0;
  bool swap = false, from_compressed = false;
};
// Packs `r` into `p` (in place: a packed record returned whole would be
// copied back before its narrow stores land); `bytes`: where the record's
// bytes (then its trailing bytes) are kept now.
inline void pack(const ReadRecord& r, const std::uint8_t* bytes, PackedRecord& p) {
  p.bytes = bytes;
  p.trailing = r.view.trailing.empty()        ? nullptr
               : bytes == r.view.bytes.data() ? r.view.trailing.data()
                                              : bytes + r.view.bytes.size();
  p.trailing_size = static_cast<std::uint32_t>(r.view.trailing.size());
  p.offset = r.view.offset;
  p.attr = r.attr;
  p.file = r.file;
  p.swap = r.view.swap;
  p.from_compressed = r.from_compressed;
}
// The record `p` stands for, into `out` (not transient).
inline void unpack(const PackedRecord& p, ReadRecord& out) {
  record::RecordView& v = out.view;
  v.type = load<std::uint32_t>(p.bytes, p.swap);
  v.misc = load<std::uint16_t>(p.bytes + 4, p.swap);
  v.size = load<std::uint16_t>(p.bytes + 6, p.swap);
  v.swap = p.swap;
  v.bytes = Bytes(p.bytes, v.size);
  v.offset = p.offset;
  v.trailing = Bytes(p.trailing, p.trailing_size);
  out.transient = false;
  out.from_compressed = p.from_compressed;
  out.attr = p.attr;
  out.file = p.file;
}

class Reader {
 public:
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Opens `path` ("-" for stdin; a directory: its data files). File mode
  // maps the file; pipe-mode data in a regular file is read from the mapping too. Errors name the
  // path and what is wrong (header, sections outside the file, bad attrs).
  static Expected<std::unique_ptr<Reader>> open(const std::string& path, ReaderOptions opts = {});
  // Reads a pipe-mode stream from `fd` (not owned).
  static Expected<std::unique_ptr<Reader>> open_fd(int fd, std::string name,
                                                   ReaderOptions opts = {});
  // Reads a file or stream held in memory (tests, fuzzing); `data` must outlive the reader.
  static Expected<std::unique_ptr<Reader>> open_memory(Bytes data, std::string name,
                                                       ReaderOptions opts = {});

  const std::string& name() const { return name_; }
  const FileHeader& header() const { return header_; }
  bool is_pipe() const { return header_.pipe; }
  bool swapped() const { return header_.swap; }
  // Size of the file, or 0 for a stream.
  std::uint64_t file_size() const { return whole_.size(); }
  Bytes file_bytes() const { return whole_; }

  EventSet& events() { return events_; }
  const EventSet& events() const { return events_; }
  const std::vector<FeatureBlob>& features() const { return features_; }
  // The feature's bytes, or nullopt if the file does not have it.
  std::optional<FeatureBlob> feature(std::uint32_t id) const;
  // Trace event formats: the TRACING_DATA feature or a HEADER_TRACING_DATA record.
  Bytes tracing_data() const;

  // The next record in file order; false at the end of the data.
  // Errors: record size smaller than its header, a record running past the
  // end of the data section, a corrupt compressed record.
  Expected<bool> next(ReadRecord& out);
  // next() for most records, inline: a whole kernel record in the mapped
  // data (its pages populated), not from a compressed one, past the point
  // where the events are named. False when next() must read it instead.
  bool next_mapped(ReadRecord& out) {
    if (in_compressed_ || !names_complete_ || fd_ >= 0 || header_.pipe || !parts_.empty() ||
        data_end_ > data_.size() || pos_ >= populated_ || data_end_ - pos_ < abi::kHeaderSize ||
        !take_mapped(out))
      return false;
    out.file = 0;
    return true;
  }

  // Bytes consumed so far (data section offset for files), for progress.
  std::uint64_t position() const { return pos_; }
  std::uint64_t data_end() const { return data_end_; }
  // For a mapped file: drops the resident pages of file offsets [begin, end)
  // (MappedFile::release; records there stay readable). No-op for streams
  // and memory.
  void release(std::uint64_t begin, std::uint64_t end) const {
    if (opts_.shared)
      opts_.shared->release(opts_.shared_slot, end);
    else if (parts_.empty())
      file_.release(begin, end);
  }
  // A reader of a shared mapping reads no more: the others' pages may go.
  void leave_shared() const {
    if (opts_.shared) opts_.shared->release(opts_.shared_slot, UINT64_MAX);
  }
  // Whether this is a perf.data directory, and the file of its header
  // (`DIR/data`; the path itself for one file).
  bool is_dir() const { return !parts_.empty(); }
  const std::string& header_path() const { return parts_.empty() ? name_ : parts_[0].name; }
  // The path of data file `i` (ReadRecord::file).
  const std::string& file_path(std::uint32_t i) const {
    return i < parts_.size() ? parts_[i].name : name_;
  }
  // Called by next() before a record changes what the reader tells (its
  // events, their names, features, tracing data) and before it warns, on
  // next()'s thread: a reader running ahead of its records' users waits
  // there for them.
  void set_metadata_barrier(std::function<void()> barrier) { barrier_ = std::move(barrier); }

 private:
  // A data file of a directory: its reading state while another is read.
  struct Part {
    std::string name;
    MappedFile file;
    Bytes bytes;
    std::uint64_t pos = 0, end = 0, populated = 0;
    std::unique_ptr<Decompressor> decomp;
    std::uint64_t decomp_offset = 0;
    bool in_compressed = false;
    bool done = false;
  };

  Reader(std::string name, ReaderOptions opts);
  static Expected<std::unique_ptr<Reader>> open_dir(const std::string& path, ReaderOptions opts);
  // `file` mapped and its header read, the reader named `name`.
  static Expected<std::unique_ptr<Reader>> open_mapped(const std::string& file, std::string name,
                                                       ReaderOptions opts);
  Status open_parts(const std::string& dir, bool with_files);
  Expected<bool> next_in_dir(ReadRecord& out);
  void switch_part(std::size_t to);
  Status init_file();
  Status init_stream_from(std::uint64_t pos);
  Status read_attrs();
  Status read_event_types();
  Status read_feature_table();
  Status apply_user_record(const record::RecordView& r);
  Expected<bool> next_raw(ReadRecord& out);
  void populate_ahead();
  // The kernel record at pos_ (at least a header's worth of mapped data
  // left), taken whole when it fits before data_end_; false otherwise.
  bool take_mapped(ReadRecord& out) {
    const std::uint8_t* p = data_.data() + pos_;
    const bool swap = header_.swap;
    const auto type = load<std::uint32_t>(p, swap);
    const auto size = load<std::uint16_t>(p + 6, swap);
    if (size < abi::kHeaderSize || size > data_end_ - pos_ || type >= abi::kRecordUserTypeStart)
      return false;
    // Field by field: a RecordView built aside and copied whole would be
    // read back before its narrow stores land (a stall on every record).
    record::RecordView& v = out.view;
    v.type = type;
    v.misc = load<std::uint16_t>(p + 4, swap);
    v.size = size;
    v.swap = swap;
    v.bytes = Bytes(p, size);
    v.offset = pos_;
    v.trailing = {};
    pos_ += size;
    out.transient = false;
    out.from_compressed = false;
    return true;
  }
  Expected<bool> next_from_compressed(ReadRecord& out);
  // Makes `n` bytes at pos_ available; false at a clean end of stream.
  Expected<bool> fill(std::uint64_t n);
  Bytes peek(std::uint64_t n) const;
  void warn(const std::string& msg) const;

  std::string name_;
  ReaderOptions opts_;
  MappedFile file_;
  Bytes whole_;                  // the mapped file or memory (empty for fd streams)
  Bytes data_;                   // what records are read from: whole_, or a directory's data file
  std::uint64_t populated_ = 0;  // whole_'s pages mapped in ahead of pos_ up to here
  int fd_ = -1;                  // stream source when reading a descriptor
  std::vector<std::uint8_t> stream_buf_;
  std::uint64_t stream_buf_pos_ = 0;  // stream offset of stream_buf_[0]
  bool stream_eof_ = false;
  FileHeader header_;
  EventSet events_;
  std::vector<FeatureBlob> features_;
  std::vector<std::vector<std::uint8_t>> owned_;  // copies for stream-mode metadata
  Bytes tracing_data_;
  std::uint64_t pos_ = 0;
  std::uint64_t data_end_ = 0;  // UINT64_MAX for an unbounded stream
  std::unique_ptr<Decompressor> decomp_;
  std::uint64_t decomp_offset_ = 0;
  bool in_compressed_ = false;
  bool names_complete_ = false;  // every event has a name (see next())
  std::function<void()> barrier_;
  std::vector<Part> parts_;  // a directory's data files, [0] the `data` file
  std::size_t part_ = 0;     // the one being read (its state in the fields above)
  std::size_t parts_left_ = 0;
  std::uint64_t part_read_ = 0;  // bytes read from it since its turn began
};

}  // namespace perfkit::perfdata
