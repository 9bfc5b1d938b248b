#include "base/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace perfkit {

FdWriter::FdWriter(int fd, std::string name, bool owns, std::size_t buffer_size)
    : fd_(fd), owns_(owns), name_(std::move(name)), limit_(buffer_size) {
  buffer_.reserve(buffer_size);
}

FdWriter::FdWriter(FdWriter&& other) noexcept { *this = std::move(other); }

FdWriter& FdWriter::operator=(FdWriter&& other) noexcept {
  if (this != &other) {
    if (owns_ && fd_ >= 0) {
      flush_buffer();
      ::close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
    owns_ = std::exchange(other.owns_, false);
    name_ = std::move(other.name_);
    buffer_ = std::move(other.buffer_);
    limit_ = other.limit_;
    written_ = other.written_;
    error_ = std::move(other.error_);
  }
  return *this;
}

FdWriter::~FdWriter() {
  if (fd_ >= 0) {
    flush_buffer();
    if (owns_) ::close(fd_);
  }
}

Expected<FdWriter> FdWriter::create(const std::string& path, std::size_t buffer_size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return make_error("{}: cannot create: {}", path, std::strerror(errno));
  return FdWriter(fd, path, true, buffer_size);
}

FdWriter FdWriter::stdout_writer(std::size_t buffer_size) {
  return FdWriter(STDOUT_FILENO, "<stdout>", false, buffer_size);
}

FdWriter FdWriter::memory() {
  FdWriter w(-1, "<memory>", false, 1 << 16);
  w.limit_ = SIZE_MAX;
  return w;
}

void FdWriter::move_to(FdWriter& to) {
  if (buffer_.size() == 0) return;
  to.write(Bytes(reinterpret_cast<const std::uint8_t*>(buffer_.data()), buffer_.size()));
  buffer_.clear();
}

void FdWriter::write(Bytes b) {
  if (buffer_.size() + b.size() > limit_) flush_buffer();
  if (b.size() >= limit_) {
    write_direct(b);  // Large payloads (AUX data, compressed blocks) bypass the buffer.
    return;
  }
  buffer_.append(reinterpret_cast<const char*>(b.data()),
                 reinterpret_cast<const char*>(b.data() + b.size()));
}

void FdWriter::write_through(Bytes b) {
  if (fd_ < 0) {
    buffer_.append(reinterpret_cast<const char*>(b.data()),
                   reinterpret_cast<const char*>(b.data() + b.size()));
    return;
  }
  if (buffer_.size()) flush_buffer();
  write_direct(b);
}

void FdWriter::write_direct(Bytes b) {
  const std::uint8_t* p = b.data();
  std::size_t n = b.size();
  while (n > 0 && !error_) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      error_ = make_error("{}: write failed: {}", name_, std::strerror(errno));
      break;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
    written_ += static_cast<std::uint64_t>(w);
  }
}

void FdWriter::write_zeros(std::size_t n) {
  static constexpr std::uint8_t kZeros[64] = {};
  while (n > 0) {
    std::size_t k = n < sizeof kZeros ? n : sizeof kZeros;
    write(Bytes(kZeros, k));
    n -= k;
  }
}

void FdWriter::flush_buffer() {
  if (fd_ >= 0)
    write_direct(Bytes(reinterpret_cast<const std::uint8_t*>(buffer_.data()), buffer_.size()));
  buffer_.clear();
}

Status FdWriter::pwrite(std::uint64_t offset, Bytes b) {
  flush_buffer();
  if (error_) return *error_;
  std::size_t done = 0;
  while (done < b.size()) {
    ssize_t w = ::pwrite(fd_, b.data() + done, b.size() - done, static_cast<off_t>(offset + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      error_ = make_error("{}: write failed: {}", name_, std::strerror(errno));
      return *error_;
    }
    done += static_cast<std::size_t>(w);
  }
  return ok();
}

Status FdWriter::flush() {
  flush_buffer();
  return status();
}

Status FdWriter::close() {
  flush_buffer();
  if (owns_ && fd_ >= 0) {
    if (::close(fd_) != 0 && !error_)
      error_ = make_error("{}: close failed: {}", name_, std::strerror(errno));
  }
  fd_ = -1;
  return status();
}

Status FdWriter::status() const {
  if (error_) return *error_;
  return ok();
}

Expected<OutputFile> OutputFile::create(const std::string& path, std::size_t buffer_size) {
  if (path == "-") return OutputFile(FdWriter::stdout_writer(buffer_size), path, "");
  // Something that is no regular file (/dev/null, a FIFO) is written as it
  // is: a file renamed over it would replace it.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return make_error("{}: is a directory", path);
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return make_error("{}: cannot open: {}", path, std::strerror(errno));
    return OutputFile(FdWriter(fd, path, true, buffer_size), path, "");
  }
  // Through a symbolic link, the file it names is the one replaced.
  std::string target = path;
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) target = real;
    std::free(real);
  }
  std::string temp = target + ".tmpXXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0) return make_error("{}: cannot create: {}", path, std::strerror(errno));
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  ::fchmod(fd, 0644);
  return OutputFile(FdWriter(fd, path, true, buffer_size), target, std::move(temp));
}

OutputFile::OutputFile(OutputFile&& o) noexcept
    : writer_(std::move(o.writer_)), path_(std::move(o.path_)), temp_(std::move(o.temp_)) {
  o.temp_.clear();
}

OutputFile::~OutputFile() {
  if (!temp_.empty()) {
    (void)writer_.close();
    ::unlink(temp_.c_str());
  }
}

Status OutputFile::commit() {
  if (temp_.empty()) return path_ == "-" ? writer_.flush() : writer_.close();
  Status st = writer_.close();
  if (st && std::rename(temp_.c_str(), path_.c_str()) != 0)
    st = make_error("{}: cannot write: {}", path_, std::strerror(errno));
  if (!st) ::unlink(temp_.c_str());
  temp_.clear();
  return st;
}

}  // namespace perfkit
