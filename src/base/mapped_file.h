// A read-only memory mapping of a whole file; records are views into it.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"

namespace perfkit {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Maps `path`. Errors: the file cannot be opened (names the path and errno
  // text), is not a regular file, or mmap fails. `huge_pages`: map a large
  // file so that its 2 MiB folios are mapped whole (fast to read through);
  // false for a file read once and then touched here and there, where each
  // later touch should map a few pages rather than 2 MiB.
  static Expected<MappedFile> open(const std::string& path, bool huge_pages = true);

  Bytes bytes() const { return {data_, size_}; }
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Asks the kernel to read ahead sequentially.
  void advise_sequential() const;
  // Drops the resident pages of bytes [begin, end) (whole pages within it)
  // from this process: they stay readable (a later touch reads them again
  // from the file), so views stay valid; only the peak resident size of a
  // long sequential read shrinks.
  void release(std::uint64_t begin, std::uint64_t end) const;

 private:
  const std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0;
  std::string path_;
};

// One mapping read by several readers side by side (perf script's shards):
// each says how far it has read (and no longer needs the pages before);
// pages are released behind the slowest only.
class SharedMapping {
 public:
  SharedMapping(MappedFile file, unsigned readers) : file_(std::move(file)), done_(readers, 0) {}
  const MappedFile& file() const { return file_; }
  // Reader `reader` needs nothing of the file before `end` any more.
  void release(unsigned reader, std::uint64_t end);
  // How far the file was released (behind the slowest reader).
  std::uint64_t released() {
    std::lock_guard lock(mu_);
    return released_;
  }

 private:
  MappedFile file_;
  std::mutex mu_;
  std::vector<std::uint64_t> done_;
  std::uint64_t released_ = 0;
};

// Reads a whole (small) file such as one under /proc or /sys into a string.
Expected<std::string> read_text_file(const std::string& path);

}  // namespace perfkit
