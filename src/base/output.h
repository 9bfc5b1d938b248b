// FdWriter: buffered output to a file descriptor with a sticky error. Used for
// perf.data output (file or pipe) and for streamed text output of commands.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/error.h"

namespace perfkit {

class FdWriter {
 public:
  FdWriter() = default;
  // Does not take ownership of fd unless `owns` is set.
  FdWriter(int fd, std::string name, bool owns, std::size_t buffer_size = 1 << 20);
  FdWriter(FdWriter&& other) noexcept;
  FdWriter& operator=(FdWriter&& other) noexcept;
  FdWriter(const FdWriter&) = delete;
  FdWriter& operator=(const FdWriter&) = delete;
  ~FdWriter();

  // Creates (truncates) `path` for writing. Errors name the path and errno.
  static Expected<FdWriter> create(const std::string& path, std::size_t buffer_size = 1 << 20);
  static FdWriter stdout_writer(std::size_t buffer_size = 1 << 16);
  // A writer that holds everything it is given, to be moved on with
  // move_to(): it never writes by itself, however much it holds.
  static FdWriter memory();
  // Appends what this writer holds to `to` and empties it.
  void move_to(FdWriter& to);

  void write(Bytes b);
  void write(std::string_view s) { write(as_bytes(s)); }
  // Writes `b` at once, after what is buffered (not copied into the buffer).
  void write_through(Bytes b);
  void write_zeros(std::size_t n);
  template <class... Args>
  void print(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(buffer_), format, std::forward<Args>(args)...);
    if (buffer_.size() >= limit_) flush_buffer();
  }
  // Direct access for hot formatting loops: append then call maybe_flush().
  fmt::memory_buffer& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= limit_) flush_buffer();
  }
  // Whether maybe_flush() would write.
  bool full() const { return buffer_.size() >= limit_; }

  // Writes `b` at absolute `offset` (files only), after flushing the buffer.
  Status pwrite(std::uint64_t offset, Bytes b);
  Status flush();
  // Flushes and closes an owned descriptor; reports the first error seen.
  Status close();
  // The first write error, if any (ENOSPC, EPIPE, EIO ...).
  Status status() const;
  // Bytes accepted so far (written or buffered).
  std::uint64_t offset() const { return written_ + buffer_.size(); }
  const std::string& name() const { return name_; }
  int fd() const { return fd_; }

 private:
  void flush_buffer();
  void write_direct(Bytes b);

  int fd_ = -1;
  bool owns_ = false;
  std::string name_;
  fmt::memory_buffer buffer_;
  std::size_t limit_ = 1 << 20;
  std::uint64_t written_ = 0;
  std::optional<Error> error_;
};

// An output file written under a temporary name beside its own (PATH.tmpXXXXXX)
// and renamed to PATH by commit(): an export that fails or is abandoned
// leaves nothing under the final name. "-" writes to stdout instead.
class OutputFile {
 public:
  // Errors: the temporary file cannot be made (naming PATH and errno).
  static Expected<OutputFile> create(const std::string& path, std::size_t buffer_size = 1 << 20);
  OutputFile(OutputFile&& o) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();  // removes the temporary file unless committed

  FdWriter& writer() { return writer_; }
  // Flushes, closes and renames the file to its final name. Errors: a write
  // that failed before (ENOSPC ...) or the rename, naming PATH.
  Status commit();

 private:
  OutputFile(FdWriter w, std::string path, std::string temp)
      : writer_(std::move(w)), path_(std::move(path)), temp_(std::move(temp)) {}
  FdWriter writer_;
  std::string path_, temp_;  // temp_ empty: stdout, or committed
};

}  // namespace perfkit
