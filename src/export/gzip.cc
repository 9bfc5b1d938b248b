#include "export/gzip.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace perfkit::exports {

Expected<std::string> gzip_member(const std::string& data, int level) {
  z_stream z{};
  // 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return make_error("gzip: cannot start zlib");
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return make_error("gzip: zlib failed ({})", rc);
  return out;
}

Status gzip_fd(int fd, const std::string& name, FdWriter& out, int level) {
  GzipWriter zip(out, level);
  std::string buf(1 << 20, '\0');
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("{}: read failed: {}", name, std::strerror(errno));
    if (n == 0) break;
    zip.write(buf.data(), static_cast<std::size_t>(n));
    at += n;
  }
  return zip.finish();
}

GzipWriter::GzipWriter(FdWriter& out, int level, std::size_t chunk, unsigned jobs)
    : out_(out), level_(level), chunk_(chunk) {
  jobs_ = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
  current_.reserve(chunk_);
}

GzipWriter::~GzipWriter() {
  for (auto& f : pending_) f.wait();
}

void GzipWriter::write(const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n) {
    const std::size_t take = std::min(n, chunk_ - current_.size());
    current_.append(p, take);
    p += take, n -= take;
    if (current_.size() == chunk_) submit();
  }
}

void GzipWriter::submit() {
  // At most `jobs_` chunks in flight: the oldest is written first.
  while (pending_.size() >= jobs_) {
    if (!write_oldest()) failed_ = true;
  }
  // A thread that cannot be started (std::async throws then) leaves the
  // chunk to this thread: the library does not throw.
  try {
    pending_.push_back(std::async(std::launch::async, gzip_member, current_, level_));
  } catch (...) {
    std::promise<Expected<std::string>> done;
    done.set_value(gzip_member(current_, level_));
    pending_.push_back(done.get_future());
  }
  current_ = std::string();
  current_.reserve(chunk_);
}

Status GzipWriter::write_oldest() {
  Expected<std::string> member = pending_.front().get();
  pending_.pop_front();
  if (!member) return member.error();
  out_.write(std::string_view(*member));
  return ok();
}

Status GzipWriter::finish() {
  if (!current_.empty() || pending_.empty()) submit();
  Status first = ok();
  while (!pending_.empty()) {
    Status st = write_oldest();
    if (!st && first) first = st;
  }
  if (!first) return first;
  if (failed_) return make_error("gzip: compressing the output failed");
  return out_.flush();
}

}  // namespace perfkit::exports
