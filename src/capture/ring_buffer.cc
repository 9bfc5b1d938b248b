#include "capture/ring_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace perfkit::capture {

namespace {

// The user page's head/tail words are shared with the kernel: they are read
// and written with atomics, never through a struct overlay.
std::uint64_t* word(std::uint8_t* page, std::size_t offset) {
  return reinterpret_cast<std::uint64_t*>(page + offset);
}

std::uint64_t load_acquire(std::uint8_t* page, std::size_t offset) {
  return __atomic_load_n(word(page, offset), __ATOMIC_ACQUIRE);
}

void store_release(std::uint8_t* page, std::size_t offset, std::uint64_t v) {
  __atomic_store_n(word(page, offset), v, __ATOMIC_RELEASE);
}

bool power_of_two(std::size_t n) { return n && !(n & (n - 1)); }

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

SplitBytes ring_view(const std::uint8_t* base, std::size_t size, std::uint64_t from,
                     std::uint64_t to) {
  std::uint64_t n = to - from;
  if (n == 0 || size == 0) return {};
  if (n > size) n = size;  // cannot happen with a sane head; never read past the ring
  std::size_t start = static_cast<std::size_t>(from & (size - 1));
  std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(n, size - start));
  return {Bytes(base + start, first), Bytes(base, static_cast<std::size_t>(n - first))};
}

RingBuffer::RingBuffer(RingBuffer&& o) noexcept { *this = std::move(o); }

RingBuffer& RingBuffer::operator=(RingBuffer&& o) noexcept {
  if (this != &o) {
    if (owns_ && base_) ::munmap(base_, mapped_size());
    base_ = std::exchange(o.base_, nullptr);
    page_size_ = o.page_size_;
    data_size_ = o.data_size_;
    tail_ = o.tail_;
    owns_ = std::exchange(o.owns_, false);
  }
  return *this;
}

RingBuffer::~RingBuffer() {
  if (owns_ && base_) ::munmap(base_, mapped_size());
}

Expected<RingBuffer> RingBuffer::map(int fd, std::size_t data_pages, bool backward) {
  if (!power_of_two(data_pages))
    return make_error("ring buffer of {} data pages: must be a power of two", data_pages);
  const std::size_t ps = page_size();
  const std::size_t len = ps * (data_pages + 1);
  void* p = ::mmap(nullptr, len, backward ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    if (err == EPERM)
      return make_error(
          "mmap of a {} KiB ring buffer: {}; the limit is /proc/sys/kernel/perf_event_mlock_kb "
          "(try a smaller -m, or raise the limit)",
          len / 1024, std::strerror(err));
    return make_error("mmap of a {} KiB ring buffer: {}", len / 1024, std::strerror(err));
  }
  RingBuffer rb;
  rb.base_ = static_cast<std::uint8_t*>(p);
  rb.page_size_ = ps;
  rb.data_size_ = ps * data_pages;
  rb.owns_ = true;
  rb.tail_ = rb.tail();
  return rb;
}

SplitBytes RingBuffer::backward(std::uint64_t& since) const {
  const std::uint64_t head = this->head();
  const std::uint64_t mask = data_size_ - 1;
  const std::uint8_t* data = base_ + page_size_;
  std::uint64_t end = since;
  since = head;
  if (end - head > data_size_) {
    // Overwritten since: the whole records from the head that fit in the
    // buffer, up to one never written (size 0).
    end = head;
    for (;;) {
      std::uint8_t hdr[8];
      for (std::size_t i = 0; i < sizeof hdr; ++i) hdr[i] = data[(end + i) & mask];
      const std::uint16_t size = load<std::uint16_t>(hdr + 6, false);
      if (size == 0 || end - head + size > data_size_) break;
      end += size;
    }
  }
  const std::size_t len = static_cast<std::size_t>(end - head);
  const std::size_t at = static_cast<std::size_t>(head & mask);
  const std::size_t first = std::min(len, data_size_ - at);
  return SplitBytes{Bytes(data + at, first), Bytes(data, len - first)};
}

RingBuffer RingBuffer::over(std::uint8_t* memory, std::size_t page_size, std::size_t data_size) {
  RingBuffer rb;
  rb.base_ = memory;
  rb.page_size_ = page_size;
  rb.data_size_ = data_size;
  rb.owns_ = false;
  rb.tail_ = rb.tail();
  return rb;
}

std::uint64_t RingBuffer::head() const { return load_acquire(base_, user_page::kDataHead); }
std::uint64_t RingBuffer::tail() const {
  return __atomic_load_n(word(base_, user_page::kDataTail), __ATOMIC_RELAXED);
}

SplitBytes RingBuffer::pending() {
  if (!base_) return {};
  // Acquire: the record bytes the kernel wrote before publishing head are
  // visible once we see head.
  const std::uint64_t head = load_acquire(base_, user_page::kDataHead);
  return ring_view(base_ + page_size_, data_size_, tail_, head);
}

void RingBuffer::consume(std::uint64_t bytes) {
  if (!base_ || bytes == 0) return;
  tail_ += bytes;
  // Release: our reads of the records are done before the kernel may
  // overwrite them.
  store_release(base_, user_page::kDataTail, tail_);
}

TimeConversion RingBuffer::time_conversion() const {
  TimeConversion t;
  if (!base_) return t;
  const std::uint8_t* p = base_;
  std::uint64_t caps = load<std::uint64_t>(p + user_page::kCapabilities, false);
  t.cap_user_time_zero = caps & user_page::kCapUserTimeZero;
  t.cap_user_time_short = caps & user_page::kCapUserTimeShort;
  t.time_shift = load<std::uint16_t>(p + user_page::kTimeShift, false);
  t.time_mult = load<std::uint32_t>(p + user_page::kTimeMult, false);
  t.time_zero = load<std::uint64_t>(p + user_page::kTimeZero, false);
  t.time_cycles = load<std::uint64_t>(p + user_page::kTimeCycles, false);
  t.time_mask = load<std::uint64_t>(p + user_page::kTimeMask, false);
  return t;
}

bool RecordCursor::next(Bytes& record, std::vector<std::uint8_t>& scratch) {
  if (failed_) return false;
  const std::size_t total = data_.size();
  if (total - pos_ < 8) return false;
  std::uint8_t header[8];
  data_.copy_to(pos_, 8, header);
  const std::uint16_t size = load<std::uint16_t>(header + 6, false);
  if (size < 8 || size > total - pos_) {
    // A zero or oversized header means the kernel's head moved past data it
    // has not finished, or the buffer is corrupt: stop here.
    failed_ = size < 8;
    return false;
  }
  SplitBytes rec = data_.subview(pos_, size);
  if (rec.contiguous()) {
    record = rec.first;
  } else {
    scratch.resize(size);
    rec.copy_to(0, size, scratch.data());
    record = Bytes(scratch.data(), size);
  }
  pos_ += size;
  return true;
}

AuxBuffer::AuxBuffer(AuxBuffer&& o) noexcept { *this = std::move(o); }

AuxBuffer& AuxBuffer::operator=(AuxBuffer&& o) noexcept {
  if (this != &o) {
    if (owns_ && base_) ::munmap(base_, size_);
    user_page_ = std::exchange(o.user_page_, nullptr);
    base_ = std::exchange(o.base_, nullptr);
    size_ = o.size_;
    tail_ = o.tail_;
    owns_ = std::exchange(o.owns_, false);
  }
  return *this;
}

AuxBuffer::~AuxBuffer() {
  if (owns_ && base_) ::munmap(base_, size_);
}

Expected<AuxBuffer> AuxBuffer::map(RingBuffer& rb, int fd, std::size_t aux_pages) {
  if (!power_of_two(aux_pages))
    return make_error("AUX area of {} pages: must be a power of two", aux_pages);
  if (!rb.mapped()) return make_error("AUX area needs the event's ring buffer mapped first");
  const std::size_t len = aux_pages * page_size();
  const std::uint64_t offset = rb.mapped_size();
  // The kernel reads aux_offset and aux_size from the user page at mmap time.
  store<std::uint64_t>(rb.user_page() + user_page::kAuxOffset, offset, false);
  store<std::uint64_t>(rb.user_page() + user_page::kAuxSize, len, false);
  void* p =
      ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED)
    return make_error("mmap of a {} KiB AUX area: {}", len / 1024, std::strerror(errno));
  AuxBuffer a;
  a.user_page_ = rb.user_page();
  a.base_ = static_cast<std::uint8_t*>(p);
  a.size_ = len;
  a.owns_ = true;
  a.tail_ = a.tail();
  return a;
}

AuxBuffer AuxBuffer::over(std::uint8_t* user_page, std::uint8_t* aux, std::size_t size) {
  AuxBuffer a;
  a.user_page_ = user_page;
  a.base_ = aux;
  a.size_ = size;
  a.owns_ = false;
  a.tail_ = a.tail();
  return a;
}

std::uint64_t AuxBuffer::head() const { return load_acquire(user_page_, user_page::kAuxHead); }
std::uint64_t AuxBuffer::tail() const {
  return __atomic_load_n(word(user_page_, user_page::kAuxTail), __ATOMIC_RELAXED);
}

SplitBytes AuxBuffer::pending() {
  if (!base_) return {};
  return ring_view(base_, size_, tail_, head());
}

void AuxBuffer::consume(std::uint64_t bytes) {
  if (!base_ || bytes == 0) return;
  tail_ += bytes;
  store_release(user_page_, user_page::kAuxTail, tail_);
}

SplitBytes AuxBuffer::range(std::uint64_t offset, std::uint64_t size) const {
  return ring_view(base_, size_, offset, offset + size);
}

}  // namespace perfkit::capture
