#include "cli/stdin_peek.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "abi/perf_event.h"
#include "base/bytes.h"

namespace perfkit::cli {

namespace {

constexpr std::uint32_t kAuxtraceIntelPt = 1;  // PERF_AUXTRACE_INTEL_PT

// Appends up to `n` bytes of stdin to `buf`; false at the end of the stream.
Expected<bool> read_more(std::vector<std::uint8_t>& buf, std::size_t n) {
  const std::size_t at = buf.size();
  buf.resize(at + n);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(STDIN_FILENO, buf.data() + at + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      buf.resize(at + got);
      return make_error("<stdin>: read failed: {}", std::strerror(errno));
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  buf.resize(at + got);
  return got == n;
}

Status write_all(int fd, const std::uint8_t* p, std::size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return make_error("{}: write failed: {}", path, std::strerror(errno));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return ok();
}

// Copies what was read, then the rest of stdin, into memory: a memfd, which
// the decoder opens by its /proc/self/fd path like a file, and which goes
// with the process (no file is made; TMPDIR need not be writable). Only
// where memfds are not (kernels before 3.17), a temporary file.
Status spool(StdinPeek& out) {
  std::string path;
  int fd = ::memfd_create("perfkit-stdin", MFD_CLOEXEC);
  if (fd >= 0) {
    path = "/proc/self/fd/" + std::to_string(fd);
    out.memfd = fd;
  } else {
    const char* tmpdir = std::getenv("TMPDIR");
    path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/perfkit-stdin-XXXXXX";
    fd = ::mkstemp(path.data());
    if (fd < 0)
      return make_error("cannot create a temporary file in {}: {}", path, std::strerror(errno));
    out.temporary = true;
  }
  out.spooled = path;
  Status st = write_all(fd, out.prefix.data(), out.prefix.size(), path);
  std::vector<std::uint8_t> chunk;
  while (st) {
    chunk.clear();
    auto more = read_more(chunk, 1 << 20);
    if (!more) {
      st = more.error();
      break;
    }
    st = write_all(fd, chunk.data(), chunk.size(), path);
    if (!*more) break;
  }
  if (out.memfd < 0) ::close(fd);
  out.prefix.clear();
  return st;
}

}  // namespace

StdinPeek::~StdinPeek() {
  if (memfd >= 0) ::close(memfd);
  if (temporary) ::unlink(spooled.c_str());
}

Status peek_stdin_for_intel_pt(StdinPeek& out) {
  // The pipe header: "PERFILE2" and its size. Anything else is left to the
  // reader to report.
  PK_ASSIGN(bool whole, read_more(out.prefix, 16));
  if (!whole || std::memcmp(out.prefix.data(), "PERFILE2", 8) != 0) return ok();
  for (int records = 0; records < 100000 && out.prefix.size() < (64u << 20); ++records) {
    const std::size_t at = out.prefix.size();
    PK_ASSIGN(bool have_header, read_more(out.prefix, 8));
    if (!have_header) return ok();
    const std::uint32_t type = load<std::uint32_t>(out.prefix.data() + at, false);
    const std::uint16_t size = load<std::uint16_t>(out.prefix.data() + at + 6, false);
    if (size < 8) return ok();
    PK_ASSIGN(bool have_body, read_more(out.prefix, size - 8u));
    if (!have_body) return ok();
    if (type == abi::kRecordAuxtraceInfo) {
      if (size >= 12 && load<std::uint32_t>(out.prefix.data() + at + 8, false) == kAuxtraceIntelPt)
        return spool(out);
      return ok();
    }
    // Past the header records (or at one with data after it): no trace info.
    if (type < abi::kRecordUserTypeStart || type == abi::kRecordHeaderTracingData ||
        type == abi::kRecordAuxtrace)
      return ok();
  }
  return ok();
}

}  // namespace perfkit::cli
