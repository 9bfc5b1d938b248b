// The code the flow decoder walks: Images (the bytes of an executable file,
// mapped once, or of a memory buffer such as the vdso) and the AddressSpace
// of a traced process, which maps address ranges onto images as the
// recording's MMAP/MMAP2 records said, from the time of each record on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"
#include "base/mapped_file.h"

namespace perfkit::intelpt {

class Image {
 public:
  // Maps the file at `path`. Errors name the path.
  static Expected<std::shared_ptr<Image>> open_file(const std::string& path);
  // An image of bytes held in memory (the vdso, tests).
  static std::shared_ptr<Image> from_bytes(std::string name, std::vector<std::uint8_t> bytes);

  const std::string& name() const { return name_; }
  Bytes bytes() const { return bytes_; }
  // A number unique among the images of a process (keys block caches).
  std::uint32_t id() const { return id_; }

 private:
  friend class ImageSet;
  std::string name_;
  MappedFile file_;
  std::vector<std::uint8_t> owned_;
  Bytes bytes_;
  std::uint32_t id_ = 0;
};

// One mapping: addresses [start, end) show image bytes from `pgoff` on.
struct Mapping {
  std::uint64_t start = 0, end = 0, pgoff = 0;
  const Image* image = nullptr;
  std::uint64_t time = 0;  // TSC from which it is in place (0: from the start)

  // The code bytes from `ip` to the end of the mapping (empty past the image).
  Bytes code_at(std::uint64_t ip) const {
    Bytes b = image->bytes();
    std::uint64_t off = ip - start + pgoff;
    if (off >= b.size()) return {};
    std::uint64_t n = std::min<std::uint64_t>(end - ip, b.size() - off);
    return b.subspan(static_cast<std::size_t>(off), static_cast<std::size_t>(n));
  }
  // The image offset of `ip`.
  std::uint64_t offset_of(std::uint64_t ip) const { return ip - start + pgoff; }
};

// The executable mappings of one process over time. A mapping added later
// hides older ones it overlaps, from its time on.
class AddressSpace {
 public:
  // Adds a mapping. Pointers from find() are invalid after this (see generation()).
  void add(const Mapping& m) {
    maps_.push_back(m);
    ++generation_;
  }
  // Changes whenever a mapping is added.
  std::uint64_t generation() const { return generation_; }
  // The mapping that covers `ip` at `time` (0: the latest), or nullptr.
  const Mapping* find(std::uint64_t ip, std::uint64_t time = 0) const {
    for (auto it = maps_.rbegin(); it != maps_.rend(); ++it)
      if (ip >= it->start && ip < it->end && (!time || !it->time || it->time <= time)) return &*it;
    return nullptr;
  }
  const std::vector<Mapping>& mappings() const { return maps_; }
  bool empty() const { return maps_.empty(); }

 private:
  std::vector<Mapping> maps_;
  std::uint64_t generation_ = 0;
};

// Opens each file once and hands out Images with distinct ids.
class ImageSet {
 public:
  // The image of `path`, opened on first use. Errors name the path.
  Expected<const Image*> file(const std::string& path);
  const Image* add(std::shared_ptr<Image> image);
  std::size_t size() const { return images_.size(); }

 private:
  std::vector<std::shared_ptr<Image>> images_;
  std::unordered_map<std::string, const Image*> by_path_;
  std::unordered_map<std::string, std::string> failed_;
};

}  // namespace perfkit::intelpt
