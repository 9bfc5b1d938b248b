#include "perfdata/reader.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "abi/names.h"
#include "base/cursor.h"
#include "base/populate.h"
#include "perfdata/features.h"
#include "record/records.h"

namespace perfkit::perfdata {

using namespace perfkit::abi;
using record::RecordView;

namespace {
constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t kStreamChunk = 1 << 20;
// A directory's data file gives this many bytes of records before the next
// one's turn (perf's READER_MAX_SIZE).
constexpr std::uint64_t kDirTurn = 2 << 20;
}  // namespace

Reader::Reader(std::string name, ReaderOptions opts)
    : name_(std::move(name)), opts_(std::move(opts)), decomp_(std::make_unique<Decompressor>()) {}

Reader::~Reader() = default;

void Reader::warn(const std::string& msg) const {
  if (barrier_) barrier_();  // after what the records before it made others say
  if (opts_.warn) opts_.warn(msg);
}

Expected<std::unique_ptr<Reader>> Reader::open(const std::string& path, ReaderOptions opts) {
  if (path == "-") return open_fd(STDIN_FILENO, "<stdin>", std::move(opts));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return open_dir(path, std::move(opts));
  return open_mapped(path, path, std::move(opts));
}

Expected<std::unique_ptr<Reader>> Reader::open_mapped(const std::string& file, std::string name,
                                                      ReaderOptions opts) {
  std::unique_ptr<Reader> r;
  if (opts.shared && opts.shared->file().path() == file) {
    r.reset(new Reader(std::move(name), std::move(opts)));
    r->whole_ = r->opts_.shared->file().bytes();
  } else {
    opts.shared = nullptr;
    PK_ASSIGN(MappedFile mapped, MappedFile::open(file));
    r.reset(new Reader(std::move(name), std::move(opts)));
    r->file_ = std::move(mapped);
    r->file_.advise_sequential();
    r->whole_ = r->file_.bytes();
  }
  r->data_ = r->whole_;
  auto init = r->init_file();
  if (!init) return std::move(init).error().with_context(file);
  return r;
}

Expected<std::unique_ptr<Reader>> Reader::open_dir(const std::string& path, ReaderOptions opts) {
  const std::string main = path + "/data";
  opts.shared = nullptr;  // (its files are mapped one by one)
  PK_ASSIGN(auto r, open_mapped(main, path, std::move(opts)));
  if (r->header_.pipe) return make_error("{}: a pipe-mode perf.data in a directory", main);
  // Its DIR_FORMAT says whether the data.* files belong to it: without one
  // (or version 0) perf reads the `data` file alone.
  std::uint64_t version = 0;
  if (auto f = r->feature(kFeatDirFormat); f && f->data.size() >= 8)
    version = load<std::uint64_t>(f->data.data(), r->header_.swap);
  if (version > 1)
    return make_error("{}: perf.data directory version {} is not supported (only 1)", main,
                      version);
  PK_TRY(r->open_parts(path, version == 1));
  return r;
}

// The directory's data files in its own order (perf's readdir), those with
// records only; the `data` file first (alone unless `with_files`).
Status Reader::open_parts(const std::string& dir, bool with_files) {
  parts_.emplace_back();
  parts_[0].name = dir + "/data";
  parts_left_ = 1;
  if (!with_files) return ok();
  DIR* d = ::opendir(dir.c_str());
  if (!d) return make_error("{}: cannot read the directory: {}", dir, std::strerror(errno));
  Status st = ok();
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (!name.starts_with("data.")) continue;
    const std::string path = dir + "/" + name;
    struct stat sb {};
    if (::stat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0) continue;
    auto file = MappedFile::open(path);
    if (!file) {
      st = std::move(file).error();
      break;
    }
    Part p;
    p.name = path;
    p.file = std::move(*file);
    p.file.advise_sequential();
    p.bytes = p.file.bytes();
    p.end = p.bytes.size();
    p.decomp = std::make_unique<Decompressor>();
    parts_.push_back(std::move(p));
  }
  ::closedir(d);
  parts_left_ = parts_.size();
  return st;
}

Expected<std::unique_ptr<Reader>> Reader::open_memory(Bytes data, std::string name,
                                                      ReaderOptions opts) {
  std::unique_ptr<Reader> r(new Reader(std::move(name), std::move(opts)));
  r->whole_ = data;
  r->data_ = data;
  auto st = r->init_file();
  if (!st) return std::move(st).error().with_context(r->name_);
  return r;
}

Expected<std::unique_ptr<Reader>> Reader::open_fd(int fd, std::string name, ReaderOptions opts) {
  std::unique_ptr<Reader> r(new Reader(std::move(name), std::move(opts)));
  r->fd_ = fd;
  r->stream_buf_ = std::move(r->opts_.stream_prefix);
  auto filled = r->fill(kPipeHeaderSize);
  if (!filled) return std::move(filled).error().with_context(r->name_);
  if (!*filled) return make_error("{}: stream ended before its perf.data header", r->name_);
  auto h = parse_file_header(r->peek(kPipeHeaderSize));
  if (!h) return std::move(h).error().with_context(r->name_);
  if (!h->pipe)
    return make_error("{}: a file-mode perf.data cannot be read from a pipe; use -i FILE",
                      r->name_);
  r->header_ = *h;
  r->pos_ = kPipeHeaderSize;
  r->data_end_ = kUnbounded;
  return r;
}

Status Reader::init_file() {
  PK_ASSIGN(header_, parse_file_header(whole_));
  if (header_.pipe) {
    pos_ = kPipeHeaderSize;
    data_end_ = whole_.size();
    return ok();
  }
  const std::uint64_t size = whole_.size();
  if (header_.data.offset > size || header_.data.size > size - header_.data.offset)
    return make_error(
        "offset 0x28: data section [{:#x}, {:#x}) runs past the end of the file ({:#x} bytes): "
        "truncated file?",
        header_.data.offset, header_.data.end(), size);
  if (header_.data.offset < header_.size)
    return make_error("offset 0x28: data section starts at {:#x}, inside the header",
                      header_.data.offset);
  PK_TRY(read_attrs());
  PK_TRY(read_event_types());
  PK_TRY(read_feature_table());
  if (header_.data.size == 0)
    warn(
        fmt::format("{}: the data size field is 0: was 'perf record' properly terminated?", name_));
  pos_ = header_.data.offset;
  data_end_ = header_.data.end();
  return ok();
}

Status Reader::read_attrs() {
  const FileSection& s = header_.attrs;
  const std::uint64_t size = whole_.size();
  if (s.offset > size || s.size > size - s.offset)
    return make_error("offset 0x18: attrs section [{:#x}, {:#x}) is outside the file ({:#x} bytes)",
                      s.offset, s.end(), size);
  const std::uint64_t n = s.size / header_.attr_size;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t at = s.offset + i * header_.attr_size;
    const std::uint64_t attr_bytes = header_.attr_size - kFileSectionSize;
    auto attr = parse_attr(whole_.subspan(at, attr_bytes), header_.swap);
    if (!attr) return std::move(attr).error().with_context(fmt::format("offset {:#x}", at));
    Cursor c(whole_.subspan(at + attr_bytes, kFileSectionSize), header_.swap, at + attr_bytes);
    std::uint64_t ids_off = c.u64(), ids_size = c.u64();
    if (ids_off > size || ids_size > size - ids_off || ids_size % 8 != 0)
      return make_error("offset {:#x}: ids of attr {} [{:#x}, +{:#x}) are outside the file",
                        at + attr_bytes, i, ids_off, ids_size);
    std::vector<std::uint64_t> ids(ids_size / 8);
    for (std::size_t k = 0; k < ids.size(); ++k)
      ids[k] = load<std::uint64_t>(whole_.data() + ids_off + 8 * k, header_.swap);
    events_.add(*attr, std::move(ids));
  }
  return ok();
}

Status Reader::read_event_types() {
  // Old perf stored tracepoint names here: {u64 event_id; char name[64]}.
  const FileSection& s = header_.event_types;
  if (s.size == 0) return ok();
  if (s.offset > whole_.size() || s.size > whole_.size() - s.offset) {
    warn(fmt::format("{}: event_types section [{:#x}, +{:#x}) is outside the file; ignored", name_,
                     s.offset, s.size));
    return ok();
  }
  Cursor c(whole_.subspan(s.offset, s.size), header_.swap, s.offset);
  while (c.remaining() >= 72) {
    std::uint64_t id = c.u64();
    std::string_view name = c.fixed_string(64);
    for (auto& e : events_.events())
      if (e.attr.type == kTypeTracepoint && e.attr.config == id && e.name.empty())
        events_[&e - events_.events().data()].name = std::string(name);
  }
  return ok();
}

Status Reader::read_feature_table() {
  auto ids = header_.feature_ids();
  const std::uint64_t table = header_.feature_offset();
  const std::uint64_t size = whole_.size();
  const std::uint64_t table_size = ids.size() * kFileSectionSize;
  if (table > size || table_size > size - table)
    return make_error(
        "offset {:#x}: feature section table ({} entries) runs past the end of the "
        "file ({:#x} bytes): truncated file?",
        table, ids.size(), size);
  Cursor c(whole_.subspan(table, table_size), header_.swap, table);
  for (std::uint32_t id : ids) {
    std::uint64_t at = c.file_offset();
    std::uint64_t off = c.u64(), len = c.u64();
    if (off > size || len > size - off) {
      auto fname = feature_name(id);
      return make_error(
          "offset {:#x}: feature {} section [{:#x}, +{:#x}) points outside the file "
          "({:#x} bytes)",
          at, fname.empty() ? fmt::format("#{}", id) : std::string(fname), off, len, size);
    }
    features_.push_back(FeatureBlob{id, off, whole_.subspan(off, len)});
  }
  if (auto td = feature(kFeatTracingData)) tracing_data_ = td->data;
  if (auto ed = feature(kFeatEventDesc)) {
    auto st = name_events_from_event_desc(*ed, header_.swap, events_);
    if (!st)
      warn(fmt::format("{}: {}; events keep perf's default names", name_, st.error().message()));
  }
  name_events_by_default(events_);
  names_complete_ = true;
  return ok();
}

std::optional<FeatureBlob> Reader::feature(std::uint32_t id) const {
  for (const auto& f : features_)
    if (f.id == id) return f;
  return std::nullopt;
}

Bytes Reader::tracing_data() const { return tracing_data_; }

Bytes Reader::peek(std::uint64_t n) const {
  if (fd_ < 0) return data_.subspan(pos_, n);
  return Bytes(stream_buf_.data() + (pos_ - stream_buf_pos_), n);
}

Expected<bool> Reader::fill(std::uint64_t n) {
  if (fd_ < 0) return pos_ <= data_.size() && n <= data_.size() - pos_;
  std::uint64_t have = stream_buf_pos_ + stream_buf_.size() - pos_;
  if (have >= n) return true;
  // Drop consumed bytes, then read until n bytes are there or the stream ends.
  std::size_t consumed = static_cast<std::size_t>(pos_ - stream_buf_pos_);
  stream_buf_.erase(stream_buf_.begin(), stream_buf_.begin() + consumed);
  stream_buf_pos_ = pos_;
  while (stream_buf_.size() < n && !stream_eof_) {
    std::size_t at = stream_buf_.size();
    std::size_t want = std::max<std::size_t>(kStreamChunk, n - at);
    stream_buf_.resize(at + want);
    ssize_t got = ::read(fd_, stream_buf_.data() + at, want);
    if (got < 0) {
      stream_buf_.resize(at);
      if (errno == EINTR) continue;
      return make_error("{}: read failed at offset {:#x}: {}", name_, stream_buf_pos_ + at,
                        std::strerror(errno));
    }
    stream_buf_.resize(at + static_cast<std::size_t>(got));
    if (got == 0) stream_eof_ = true;
  }
  return stream_buf_.size() >= n;
}

Expected<bool> Reader::next(ReadRecord& out) {
  bool got = false;
  if (in_compressed_) {
    PK_ASSIGN(got, next_from_compressed(out));
  }
  if (!got) {
    if (parts_.empty()) {
      PK_ASSIGN(got, next_raw(out));
    } else {
      PK_ASSIGN(got, next_in_dir(out));
    }
  }
  out.file = static_cast<std::uint32_t>(part_);
  // A stream names its events by HEADER_FEATURE and EVENT_UPDATE records
  // before the first kernel record; events still unnamed then get perf's names.
  if (got && !names_complete_ && out.view.type < kRecordUserTypeStart) {
    if (barrier_) barrier_();
    name_events_by_default(events_);
    names_complete_ = true;
  }
  return got;
}

// The mapped file's next pages, in one call rather than a page fault for
// every few of them (on a virtual machine each costs microseconds).
void Reader::populate_ahead() {
  constexpr std::uint64_t kWindow = 1 << 20;
  const std::uint64_t end = std::min<std::uint64_t>(data_end_, pos_ + kWindow);
  base::populate_for_read(data_.data() + pos_, end - pos_);
  populated_ = end;
}

Expected<bool> Reader::next_raw(ReadRecord& out) {
  if (pos_ >= data_end_) return false;
  // The common case first: a whole kernel record inside a mapped data
  // section, with nothing after it.
  if (fd_ < 0 && !header_.pipe && data_end_ - pos_ >= kHeaderSize && data_end_ <= data_.size()) {
    if (pos_ >= populated_) populate_ahead();
    if (take_mapped(out)) return true;
  }
  const bool stream = header_.pipe;
  PK_ASSIGN(bool have_header, fill(kHeaderSize));
  if (!have_header || (!stream && data_end_ - pos_ < kHeaderSize)) {
    if (!stream)
      return make_error(
          "offset {:#x}: record header runs past the end of the data "
          "section at {:#x}",
          pos_, data_end_);
    std::uint64_t left = (fd_ < 0 ? data_.size() : stream_buf_pos_ + stream_buf_.size()) - pos_;
    if (left > 0)
      warn(fmt::format("{}: offset {:#x}: ignoring {} trailing bytes that are not a record", name_,
                       pos_, left));
    return false;
  }
  RecordView v = record::view_header(peek(kHeaderSize).data(), header_.swap);
  if (v.size < kHeaderSize)
    return make_error("offset {:#x}: record size {} is smaller than its 8-byte header (type {})",
                      pos_, v.size, v.type);
  v.offset = pos_;
  PK_ASSIGN(bool have_body, fill(v.size));
  if (!have_body || (!stream && data_end_ - pos_ < v.size)) {
    if (!stream)
      return make_error(
          "offset {:#x}: record of {} bytes (type {}) runs past the end of the data "
          "section at {:#x}",
          pos_, v.size, v.type, data_end_);
    warn(
        fmt::format("{}: offset {:#x}: unexpected end of stream inside a record of {} bytes "
                    "(type {}); the rest is ignored",
                    name_, pos_, v.size, v.type));
    return false;
  }
  const std::uint64_t trailing = record::trailing_payload_size(
      RecordView{v.type, v.misc, v.size, v.swap, peek(v.size), v.offset, {}});
  PK_ASSIGN(bool have_all, fill(v.size + trailing));
  if (!have_all || (!stream && data_end_ - pos_ < v.size + trailing))
    return make_error("offset {:#x}: the {} bytes of data after this {} record run past the end",
                      pos_, trailing, record_type_name(v.type));
  Bytes all = peek(v.size + trailing);
  v.bytes = all.subspan(0, v.size);
  v.trailing = all.subspan(v.size);
  pos_ += v.size + trailing;
  out.view = v;
  out.transient = fd_ >= 0;
  out.from_compressed = false;
  if (v.type >= kRecordUserTypeStart) PK_TRY(apply_user_record(v));
  return true;
}

// perf's turns: a file reads until 2 MiB of its records are through (a
// COMPRESSED record counts its own size, and the records in it all come out
// before the turn passes), then the next file that is not done; a file at
// its end is done and passes the turn.
Expected<bool> Reader::next_in_dir(ReadRecord& out) {
  while (parts_left_ > 0) {
    Part& cur = parts_[part_];
    if (!cur.done && part_read_ < kDirTurn) {
      const std::uint64_t before = pos_;
      auto got = next_raw(out);
      if (!got) return std::move(got).error().with_context(cur.name);
      if (*got) {
        part_read_ += pos_ - before;
        return true;
      }
      cur.done = true;
      --parts_left_;
    }
    part_read_ = 0;
    if (parts_left_ == 0) break;
    std::size_t to = (part_ + 1) % parts_.size();
    while (parts_[to].done) to = (to + 1) % parts_.size();
    switch_part(to);
  }
  return false;
}

void Reader::switch_part(std::size_t to) {
  Part& from = parts_[part_];
  from.bytes = data_;
  from.pos = pos_;
  from.end = data_end_;
  from.populated = populated_;
  from.decomp = std::move(decomp_);
  from.decomp_offset = decomp_offset_;
  from.in_compressed = in_compressed_;
  Part& p = parts_[to];
  data_ = p.bytes;
  pos_ = p.pos;
  data_end_ = p.end;
  populated_ = p.populated;
  decomp_ = std::move(p.decomp);
  decomp_offset_ = p.decomp_offset;
  in_compressed_ = p.in_compressed;
  part_ = to;
}

Expected<bool> Reader::next_from_compressed(ReadRecord& out) {
  Bytes p = decomp_->pending();
  if (p.size() < kHeaderSize) {
    in_compressed_ = false;
    return false;
  }
  RecordView v = record::view_header(p.data(), header_.swap);
  if (v.size < kHeaderSize)
    return make_error(
        "offset {:#x}: record size {} inside a compressed record is smaller than its "
        "header",
        decomp_offset_, v.size);
  if (v.size > p.size()) {  // continues in the next compressed record
    in_compressed_ = false;
    return false;
  }
  v.offset = decomp_offset_;
  v.bytes = p.subspan(0, v.size);
  std::uint64_t trailing = record::trailing_payload_size(v);
  if (trailing > p.size() - v.size) {
    in_compressed_ = false;
    return false;
  }
  v.trailing = p.subspan(v.size, trailing);
  decomp_->take(v.size + trailing);
  out.view = v;
  out.transient = true;
  out.from_compressed = true;
  if (v.type >= kRecordUserTypeStart) PK_TRY(apply_user_record(v));
  return true;
}

Status Reader::apply_user_record(const RecordView& r) {
  switch (r.type) {
    case kRecordHeaderAttr:
    case kRecordHeaderFeature:
    case kRecordHeaderTracingData:
    case kRecordEventUpdate:
    case kRecordHeaderEventType:
      if (barrier_) barrier_();
      break;
    default:
      break;
  }
  switch (r.type) {
    case kRecordHeaderAttr: {
      PK_ASSIGN(auto a, record::parse_header_attr(r));
      std::vector<std::uint64_t> ids(a.ids.size());
      for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = a.ids[i];
      events_.add(a.attr, std::move(ids));
      return ok();
    }
    case kRecordHeaderFeature: {
      PK_ASSIGN(auto f, record::parse_header_feature(r));
      owned_.emplace_back(f.data.begin(), f.data.end());
      features_.push_back(FeatureBlob{static_cast<std::uint32_t>(f.feat_id),
                                      r.offset + kHeaderSize + 8, owned_.back()});
      if (f.feat_id == kFeatEventDesc &&
          !name_events_from_event_desc(features_.back(), header_.swap, events_))
        warn(fmt::format("{}: offset {:#x}: unreadable EVENT_DESC record", name_, r.offset));
      return ok();
    }
    case kRecordHeaderTracingData: {
      PK_ASSIGN(auto t, record::parse_tracing_data(r));
      Bytes data = r.trailing.empty() ? r.bytes.subspan(std::min<std::size_t>(12, r.bytes.size()))
                                      : r.trailing;
      owned_.emplace_back(data.begin(), data.begin() + std::min<std::size_t>(t.size, data.size()));
      tracing_data_ = owned_.back();
      return ok();
    }
    case kRecordEventUpdate: {
      PK_ASSIGN(auto u, record::parse_event_update(r));
      int idx = events_.index_of_id(u.id);
      if (idx >= 0 && u.type == record::EventUpdateRecord::kName)
        events_[static_cast<std::size_t>(idx)].name = std::string(u.text);
      return ok();
    }
    case kRecordHeaderEventType: {
      PK_ASSIGN(auto t, record::parse_event_type(r));
      for (std::size_t i = 0; i < events_.size(); ++i) {
        auto& e = events_[i];
        if (e.attr.type == kTypeTracepoint && e.attr.config == t.event_id && e.name.empty())
          e.name = std::string(t.name);
      }
      return ok();
    }
    case kRecordCompressed:
    case kRecordCompressed2: {
      PK_ASSIGN(auto c, record::parse_compressed(r));
      PK_TRY(decomp_->feed(c.data, r.offset));
      decomp_offset_ = r.offset;
      in_compressed_ = true;
      return ok();
    }
    default:
      return ok();
  }
}

}  // namespace perfkit::perfdata
