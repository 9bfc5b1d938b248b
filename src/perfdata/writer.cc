#include "perfdata/writer.h"

#include <unistd.h>

#include <algorithm>

#include "perfdata/file_header.h"
#include "record/encode.h"

namespace perfkit::perfdata {

using namespace perfkit::abi;

Writer::Writer(FdWriter out, WriterOptions opts) : out_(std::move(out)), opts_(opts) {}
Writer::~Writer() = default;

Expected<std::unique_ptr<Writer>> Writer::create(const std::string& path, WriterOptions opts) {
  if (path == "-") {
    opts.pipe = true;
    return create_fd(STDOUT_FILENO, "<stdout>", opts);
  }
  PK_ASSIGN(FdWriter out, FdWriter::create(path));
  return std::unique_ptr<Writer>(new Writer(std::move(out), opts));
}

Expected<std::unique_ptr<Writer>> Writer::create_fd(int fd, std::string name, WriterOptions opts) {
  return std::unique_ptr<Writer>(new Writer(FdWriter(fd, std::move(name), false), opts));
}

std::uint32_t Writer::attr_size_for(const EventSet& events) const {
  if (opts_.attr_size) return opts_.attr_size;
  for (const auto& e : events.events())
    if (e.attr.config3 != 0) return kAttrSizeVer8;
  return kAttrSizeVer7;
}

std::vector<std::uint8_t> encode_header_attr(const EventAttr& attr, std::uint32_t attr_size,
                                             std::span<const std::uint64_t> ids, bool swap) {
  record::RecordBuilder b(kRecordHeaderAttr, 0, swap);
  std::vector<std::uint8_t> a;
  encode_attr(attr, attr_size, swap, a);
  b.bytes(a);
  for (std::uint64_t id : ids) b.u64(id);
  return std::move(b).finish();
}

std::vector<std::uint8_t> encode_header_feature(const FeatureData& f, bool swap) {
  record::RecordBuilder b(kRecordHeaderFeature, 0, swap);
  b.u64(f.id).bytes(f.bytes);
  return b.finish();
}

namespace {

// Features a pipe stream carries as HEADER_FEATURE records. perf's stream
// reader mishandles the others (it reads BUILD_ID and AUXTRACE data from the
// stream itself), so they go as their own record types or not at all.
// COMPRESSED does go: perf's reader sets up its decompressor from it.
bool pipe_feature(std::uint32_t id) {
  switch (id) {
    case kFeatTracingData:
    case kFeatBuildId:
    case kFeatAuxtrace:
    case kFeatDirFormat:
    case kFeatStat:
      return false;
    default:
      return true;
  }
}

// The BUILD_ID feature is a run of build_id_event entries; in a stream each
// becomes a HEADER_BUILD_ID record.
void write_build_id_records(FdWriter& out, Bytes table, bool swap) {
  std::size_t at = 0;
  while (at + kHeaderSize <= table.size()) {
    std::uint16_t size = load<std::uint16_t>(table.data() + at + 6, swap);
    if (size < kHeaderSize || size > table.size() - at) break;
    std::vector<std::uint8_t> rec(table.begin() + at, table.begin() + at + size);
    store<std::uint32_t>(rec.data(), kRecordHeaderBuildId, swap);
    out.write(rec);
    at += size;
  }
}

}  // namespace

Status Writer::begin(const EventSet& events, std::span<const FeatureData> pipe_features) {
  if (opts_.pipe) {
    out_.write(encode_pipe_header(opts_.swap));
    std::uint32_t asz = attr_size_for(events);
    for (const auto& e : events.events())
      out_.write(encode_header_attr(e.attr, asz, e.ids, opts_.swap));
    if (!pipe_features.empty()) {
      for (const auto& f : pipe_features)
        if (pipe_feature(f.id)) out_.write(encode_header_feature(f, opts_.swap));
      // perf ends the features with an empty record of the first unknown id.
      out_.write(encode_header_feature(FeatureData{kFeatLastKnown, {}}, opts_.swap));
      for (const auto& f : pipe_features) {
        if (f.id == kFeatTracingData) {
          record::RecordBuilder b(kRecordHeaderTracingData, 0, opts_.swap);
          // perf checks that size is the data's length rounded up to 8.
          b.u32(static_cast<std::uint32_t>(align_up(f.bytes.size(), 8))).u32(0);
          out_.write(b.finish());
          out_.write(f.bytes);
          out_.write_zeros(align_up(f.bytes.size(), 8) - f.bytes.size());
        } else if (f.id == kFeatBuildId) {
          write_build_id_records(out_, f.bytes, opts_.swap);
        }
      }
    }
    data_offset_ = out_.offset();
    return out_.status();
  }
  // Room for ids then attrs, as perf lays them out; finish() rewrites them.
  std::uint64_t room = 0;
  const std::uint64_t entry = attr_size_for(events) + kFileSectionSize;
  for (const auto& e : events.events()) room += 8 * e.ids.size() + entry;
  FileHeader h;
  h.swap = opts_.swap;
  out_.write(encode_file_header(h));
  out_.write_zeros(room);
  reserved_end_ = kFileHeaderSize + room;
  data_offset_ = out_.offset();
  return out_.status();
}

Status Writer::write(Bytes record, Bytes trailing) {
  out_.write(record);
  if (!trailing.empty()) out_.write(trailing);
  return out_.status();
}

std::vector<std::uint8_t> Writer::encode_attrs(const EventSet& events, std::uint64_t at,
                                               std::uint64_t* attrs_offset) const {
  // ids arrays first, then the attrs each pointing at its ids.
  std::vector<std::uint8_t> out;
  std::vector<std::uint64_t> id_offsets;
  for (const auto& e : events.events()) {
    id_offsets.push_back(at + out.size());
    for (std::uint64_t id : e.ids) append<std::uint64_t>(out, id, opts_.swap);
  }
  *attrs_offset = at + out.size();
  const std::uint32_t asz = attr_size_for(events);
  for (std::size_t i = 0; i < events.size(); ++i) {
    encode_attr(events[i].attr, asz, opts_.swap, out);
    append<std::uint64_t>(out, id_offsets[i], opts_.swap);
    append<std::uint64_t>(out, 8 * events[i].ids.size(), opts_.swap);
  }
  return out;
}

Status Writer::finish(const EventSet& events, std::span<const FeatureData> features) {
  if (opts_.pipe) return out_.flush();
  FileHeader h;
  h.swap = opts_.swap;
  h.attr_size = attr_size_for(events) + kFileSectionSize;
  h.data = {data_offset_, out_.offset() - data_offset_};
  // Feature table right after the data, in feature-id order, then the bytes.
  const std::uint64_t table = out_.offset();
  std::vector<std::size_t> order(features.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](auto a, auto b) { return features[a].id < features[b].id; });
  std::vector<std::uint8_t> sorted_tbl;
  std::uint64_t at = table + features.size() * kFileSectionSize;
  for (std::size_t i : order) {
    h.features.set(features[i].id);
    append<std::uint64_t>(sorted_tbl, at, opts_.swap);
    append<std::uint64_t>(sorted_tbl, features[i].bytes.size(), opts_.swap);
    at += features[i].bytes.size();
  }
  out_.write(sorted_tbl);
  for (std::size_t i : order) out_.write(features[i].bytes);
  // Attrs go in the room reserved at begin(), or after the features if they grew.
  std::uint64_t ids_at = kFileHeaderSize;
  std::uint64_t attrs_offset = 0;
  auto attrs = encode_attrs(events, ids_at, &attrs_offset);
  if (ids_at + attrs.size() > reserved_end_) {
    ids_at = out_.offset();
    attrs = encode_attrs(events, ids_at, &attrs_offset);
    out_.write(attrs);
  } else {
    PK_TRY(out_.pwrite(ids_at, attrs));
  }
  h.attrs = {attrs_offset, events.size() * h.attr_size};
  PK_TRY(out_.pwrite(0, encode_file_header(h)));
  return out_.close();
}

}  // namespace perfkit::perfdata
