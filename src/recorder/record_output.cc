#include "recorder/record_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "abi/attr.h"
#include "base/mapped_file.h"
#include "perfdata/file_header.h"

namespace perfkit::recorder {

using namespace perfkit::abi;

Status RecordOutput::check(Status st) {
  if (!st && !failure_) failure_ = st.error();
  return st;
}

Status RecordOutput::write(Bytes records) { return check(writer_->write(records)); }

Status RecordOutput::write_ring(SplitBytes data) {
  if (!compressor_) {
    PK_TRY(check(writer_->write(data.first)));
    return data.second.empty() ? ok() : check(writer_->write(data.second));
  }
  PK_TRY(compressor_->compress(data, buffer_));
  return check(writer_->write(buffer_));
}

namespace {

Status pwrite_all(int fd, Bytes b, std::uint64_t offset, const std::string& path) {
  std::size_t done = 0;
  while (done < b.size()) {
    ssize_t n = ::pwrite(fd, b.data() + done, b.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error("{}: {}", path, std::strerror(n < 0 ? errno : ENOSPC));
    done += static_cast<std::size_t>(n);
  }
  return ok();
}

// The end of the last whole record in [data_offset, size) of the file.
std::uint64_t last_whole_record(const std::string& path, std::uint64_t data_offset) {
  auto file = MappedFile::open(path);
  if (!file) return data_offset;
  Bytes all = file->bytes();
  std::uint64_t at = data_offset;
  while (at + kHeaderSize <= all.size()) {
    std::uint32_t type = load<std::uint32_t>(all.data() + at, false);
    std::uint16_t size = load<std::uint16_t>(all.data() + at + 6, false);
    if (size < kHeaderSize || type == 0 || at + size > all.size()) break;
    at += size;
  }
  return at;
}

}  // namespace

Expected<std::uint64_t> salvage_recording(const std::string& path, const perfdata::EventSet& events,
                                          std::uint64_t data_offset,
                                          std::span<const perfdata::FeatureData> features) {
  const std::uint64_t end = last_whole_record(path, data_offset);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return make_error("{}: cannot reopen to save the recording: {}", path, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::ftruncate(fd, static_cast<off_t>(end)) != 0)
    return make_error("{}: cannot truncate: {}", path, std::strerror(errno));
  // The attrs and ids, laid out as the writer reserved them: every event's
  // ids, then each attr followed by its ids section.
  std::uint32_t attr_size = kAttrSizeVer7;
  for (const auto& e : events.events())
    if (e.attr.config3) attr_size = kAttrSizeVer8;
  std::vector<std::uint8_t> room;
  std::vector<std::uint64_t> id_offsets;
  for (const auto& e : events.events()) {
    id_offsets.push_back(perfdata::kFileHeaderSize + room.size());
    for (auto id : e.ids) append<std::uint64_t>(room, id);
  }
  const std::uint64_t attrs_offset = perfdata::kFileHeaderSize + room.size();
  for (std::size_t i = 0; i < events.size(); ++i) {
    encode_attr(events[i].attr, attr_size, false, room);
    append<std::uint64_t>(room, id_offsets[i]);
    append<std::uint64_t>(room, 8 * events[i].ids.size());
  }
  if (perfdata::kFileHeaderSize + room.size() > data_offset)
    return make_error("{}: no room for the attrs before the data", path);
  PK_TRY(pwrite_all(fd, room, perfdata::kFileHeaderSize, path));

  perfdata::FileHeader h;
  h.attr_size = attr_size + perfdata::kFileSectionSize;
  h.attrs = {attrs_offset, events.size() * h.attr_size};
  h.data = {data_offset, end - data_offset};
  // Features after the data when they still fit; a full disk leaves them out.
  std::vector<std::size_t> order(features.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](auto a, auto b) { return features[a].id < features[b].id; });
  std::vector<std::uint8_t> tail;
  std::uint64_t at = end + features.size() * perfdata::kFileSectionSize;
  for (std::size_t i : order) {
    append<std::uint64_t>(tail, at);
    append<std::uint64_t>(tail, features[i].bytes.size());
    at += features[i].bytes.size();
  }
  for (std::size_t i : order) append_bytes(tail, features[i].bytes);
  if (!features.empty() && pwrite_all(fd, tail, end, path)) {
    for (std::size_t i : order) h.features.set(features[i].id);
  } else if (::ftruncate(fd, static_cast<off_t>(end)) != 0) {
    return make_error("{}: cannot truncate: {}", path, std::strerror(errno));
  }
  PK_TRY(pwrite_all(fd, perfdata::encode_file_header(h), 0, path));
  ::fsync(fd);
  return end - data_offset;
}

}  // namespace perfkit::recorder
