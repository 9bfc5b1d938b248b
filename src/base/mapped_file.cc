#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace perfkit {

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ && size_) munmap(const_cast<std::uint8_t*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ && size_) munmap(const_cast<std::uint8_t*>(data_), size_);
}

namespace {

constexpr std::uint64_t kHugePage = 2 << 20;

// Maps `size` bytes of `fd` read-only. A file of 2 MiB or more is mapped at
// a 2 MiB boundary: where the page cache holds it in 2 MiB folios (as
// readahead makes them from disk), each is then mapped by one page-table
// entry rather than 512 (a 30 MB recording: ~0.3 ms to map and unmap rather
// than ~3.5 ms), and readahead is asked for such folios (MADV_HUGEPAGE).
void* map_aligned(int fd, std::uint64_t size) {
  if (size < kHugePage) return mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  void* room = mmap(nullptr, size + kHugePage, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (room == MAP_FAILED) return mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const auto base = reinterpret_cast<std::uintptr_t>(room);
  const std::uintptr_t at = (base + kHugePage - 1) / kHugePage * kHugePage;
  void* p = mmap(reinterpret_cast<void*>(at), size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    munmap(room, size + kHugePage);
    return mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  // The room around the file's pages goes back.
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t end = at + (size + page - 1) / page * page;
  if (at > base) munmap(room, at - base);
  if (base + size + kHugePage > end)
    munmap(reinterpret_cast<void*>(end), base + size + kHugePage - end);
#ifdef MADV_HUGEPAGE
  madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

// Maps `size` bytes of `fd` read-only in 4 KiB pages: the kernel places a
// large mapping at a 2 MiB boundary and maps a 2 MiB folio of the page
// cache whole on one touch, unless told not to.
void* map_small(int fd, std::uint64_t size) {
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
#ifdef MADV_NOHUGEPAGE
  if (p != MAP_FAILED) madvise(p, size, MADV_NOHUGEPAGE);
#endif
  return p;
}

}  // namespace

Expected<MappedFile> MappedFile::open(const std::string& path, bool huge_pages) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return make_error("{}: cannot stat: {}", path, std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error("{}: not a regular file", path);
  }
  MappedFile f;
  f.path_ = path;
  f.size_ = static_cast<std::uint64_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = huge_pages ? map_aligned(fd, f.size_) : map_small(fd, f.size_);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      f.size_ = 0;
      return make_error("{}: cannot map: {}", path, std::strerror(e));
    }
    f.data_ = static_cast<const std::uint8_t*>(p);
  }
  ::close(fd);
  return f;
}

void MappedFile::release(std::uint64_t begin, std::uint64_t end) const {
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  begin = (begin + page - 1) / page * page;
  end = std::min(end, size_) / page * page;
  if (data_ && end > begin)
    madvise(const_cast<std::uint8_t*>(data_) + begin, end - begin, MADV_DONTNEED);
}

void SharedMapping::release(unsigned reader, std::uint64_t end) {
  std::lock_guard lock(mu_);
  done_[reader] = std::max(done_[reader], end);
  const std::uint64_t slowest = *std::min_element(done_.begin(), done_.end());
  if (slowest <= released_) return;
  file_.release(released_, slowest);
  released_ = slowest;
}

void MappedFile::advise_sequential() const {
  if (data_ && size_) madvise(const_cast<std::uint8_t*>(data_), size_, MADV_SEQUENTIAL);
}

Expected<std::string> read_text_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("{}: cannot open: {}", path, std::strerror(errno));
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return make_error("{}: read failed: {}", path, std::strerror(e));
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace perfkit
