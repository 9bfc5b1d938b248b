// GzipWriter: gzip output into an FdWriter, compressed in chunks on worker
// threads while the caller goes on producing the next chunk. Each chunk is
// a complete gzip member; RFC 1952 lets members follow one another, and
// gunzip, Go's compress/gzip (go tool pprof) and Python's gzip read them as
// one stream. The members are written in order, so the output is the same
// for any number of threads. A chunk is whole in memory, which is what the
// one-call (stateless) APIs want: ISA-L's igzip compresses levels 1-3 (about
// 2.8x libdeflate's level 1), libdeflate the higher levels and whatever
// igzip's bound refuses.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/output.h"

namespace perfkit::exports {

// Bytes a worker makes for a member: grown without zeroing (a std::string's
// resize writes every byte it adds, and a block of samples is megabytes).
class ByteBuffer {
 public:
  std::uint8_t* data() { return data_.get(); }
  std::size_t size() const { return size_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_.get()), size_}; }
  // Room for `n` bytes in all; what is there stays, what is added is not
  // initialised.
  void resize(std::size_t n) {
    if (n > capacity_) {
      const std::size_t cap = std::max(n, 2 * capacity_);
      std::unique_ptr<std::uint8_t[]> more(new std::uint8_t[cap]);
      if (size_) std::memcpy(more.get(), data_.get(), std::min(size_, n));
      data_ = std::move(more);
      capacity_ = cap;
    }
    size_ = n;
  }

 private:
  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

class GzipWriter {
 public:
  // `jobs`: chunks compressing at once (0: the cores available).
  explicit GzipWriter(FdWriter& out, int level = 1, std::size_t chunk = 4 << 20, unsigned jobs = 0);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  void write(const void* data, std::size_t n);
  // Bytes made on a worker: what was written so far becomes a member, then
  // `make`'s result (made and compressed off this thread) another, in
  // order. `make` must only read what stays unchanged until finish().
  void write_deferred(std::function<ByteBuffer()> make);
  // Compresses what is left and writes every member. Errors: the compressor's, the
  // output's.
  Status finish();

 private:
  void submit();
  void wait_for_room();
  void run_member(std::function<Expected<std::string>()> task);
  Status write_oldest();

  FdWriter& out_;
  int level_;
  std::size_t chunk_;
  unsigned jobs_;
  std::string current_;
  std::deque<std::future<Expected<std::string>>> pending_;
  bool failed_ = false;
};

// The whole of the file open at `fd` (read from its start), gzipped into
// `out`. Errors: the read's (naming `name`), the compressor's, the output's.
Status gzip_fd(int fd, const std::string& name, FdWriter& out, int level = 6);

// One gzip member of `data` at `level` (libdeflate's 1-12). Errors: libdeflate's.
Expected<std::string> gzip_member(std::string_view data, int level);

}  // namespace perfkit::exports
