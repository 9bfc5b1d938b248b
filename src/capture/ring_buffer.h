// RingBuffer: the kernel's mmap'ed record buffer of a perf event (one user
// page, then 2^n data pages), read the way the ABI asks: load data_head with
// acquire ordering, read the records between data_tail and data_head (a
// record that wraps the end comes back as two slices), then store data_tail
// with release ordering so the kernel may reuse the space. AuxBuffer does the
// same for an AUX area (aux_head/aux_tail, placed by aux_offset/aux_size in
// the user page), e.g. Intel PT trace data.
//
//   SplitBytes data = rb.pending();       // acquire-load of data_head
//   for (RecordCursor c(data); c.next(rec);) ...
//   rb.consume(data.size());             // release-store of data_tail
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"

namespace perfkit::capture {

// Offsets in struct perf_event_mmap_page (include/uapi/linux/perf_event.h).
namespace user_page {
inline constexpr std::size_t kCapabilities = 40;
inline constexpr std::size_t kTimeShift = 50;  // u16
inline constexpr std::size_t kTimeMult = 52;   // u32
inline constexpr std::size_t kTimeOffset = 56;
inline constexpr std::size_t kTimeZero = 64;
inline constexpr std::size_t kTimeCycles = 80;
inline constexpr std::size_t kTimeMask = 88;
inline constexpr std::size_t kDataHead = 1024;
inline constexpr std::size_t kDataTail = 1032;
inline constexpr std::size_t kDataOffset = 1040;
inline constexpr std::size_t kDataSize = 1048;
inline constexpr std::size_t kAuxHead = 1056;
inline constexpr std::size_t kAuxTail = 1064;
inline constexpr std::size_t kAuxOffset = 1072;
inline constexpr std::size_t kAuxSize = 1080;
// capabilities bits
inline constexpr std::uint64_t kCapUserTime = 1ULL << 3;
inline constexpr std::uint64_t kCapUserTimeZero = 1ULL << 4;
inline constexpr std::uint64_t kCapUserTimeShort = 1ULL << 5;
}  // namespace user_page

// The clock conversion the user page publishes (for PERF_RECORD_TIME_CONV).
struct TimeConversion {
  std::uint16_t time_shift = 0;
  std::uint32_t time_mult = 0;
  std::uint64_t time_zero = 0;
  std::uint64_t time_cycles = 0;
  std::uint64_t time_mask = 0;
  bool cap_user_time_zero = false;
  bool cap_user_time_short = false;
};

class RingBuffer {
 public:
  RingBuffer() = default;
  RingBuffer(RingBuffer&& o) noexcept;
  RingBuffer& operator=(RingBuffer&& o) noexcept;
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;
  ~RingBuffer();

  // Maps the user page and `data_pages` data pages (a power of two) of `fd`.
  // Errors: data_pages not a power of two; mmap failure (EPERM names
  // perf_event_mlock_kb, the usual cause).
  // `backward`: a write_backward buffer (perf record --overwrite), mapped
  // read-only so that the kernel overwrites what is not read.
  static Expected<RingBuffer> map(int fd, std::size_t data_pages, bool backward = false);
  // A buffer over memory the caller owns and keeps alive (tests): `memory`
  // holds the user page (page_size bytes) then `data_size` bytes of data.
  static RingBuffer over(std::uint8_t* memory, std::size_t page_size, std::size_t data_size);

  bool mapped() const { return base_ != nullptr; }
  std::size_t data_size() const { return data_size_; }
  std::size_t mapped_size() const { return page_size_ + data_size_; }
  std::uint8_t* user_page() const { return base_; }

  // The bytes between data_tail and data_head: acquire-loads data_head.
  // The view stays valid until consume().
  SplitBytes pending();
  // Gives `bytes` (from the last pending()) back to the kernel: release-store
  // of data_tail. Consuming less keeps the rest for the next pending().
  void consume(std::uint64_t bytes);

  // A backward buffer, its output paused: the records written since the
  // head `since` (0 at first), newest first, at most a buffer's worth of
  // whole records, as perf's overwrite reading takes them. `since` becomes
  // the head.
  SplitBytes backward(std::uint64_t& since) const;

  std::uint64_t head() const;
  std::uint64_t tail() const;
  TimeConversion time_conversion() const;

 private:
  std::uint8_t* base_ = nullptr;
  std::size_t page_size_ = 0;
  std::size_t data_size_ = 0;
  std::uint64_t tail_ = 0;  // our copy of data_tail
  bool owns_ = false;
};

// Walks whole records in a pending view. A record's 8-byte header may itself
// straddle the wrap; `scratch` receives a copy of any record that does, so
// callers always get one contiguous span.
class RecordCursor {
 public:
  explicit RecordCursor(SplitBytes data) : data_(data) {}
  // The next record, contiguous (pointing into the buffer, or into `scratch`
  // when it wraps). False at the end, or on a corrupt size (then failed()).
  bool next(Bytes& record, std::vector<std::uint8_t>& scratch);
  std::size_t offset() const { return pos_; }
  bool failed() const { return failed_; }

 private:
  SplitBytes data_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

class AuxBuffer {
 public:
  AuxBuffer() = default;
  AuxBuffer(AuxBuffer&& o) noexcept;
  AuxBuffer& operator=(AuxBuffer&& o) noexcept;
  AuxBuffer(const AuxBuffer&) = delete;
  AuxBuffer& operator=(const AuxBuffer&) = delete;
  ~AuxBuffer();

  // Writes aux_offset (just past the data area) and aux_size into `rb`'s user
  // page and maps `aux_pages` pages (a power of two) of `fd` there.
  // Errors: not a power of two, mmap failure.
  static Expected<AuxBuffer> map(RingBuffer& rb, int fd, std::size_t aux_pages);
  // Over memory the caller owns (tests): the user page of a RingBuffer::over
  // buffer and `size` bytes of AUX area.
  static AuxBuffer over(std::uint8_t* user_page, std::uint8_t* aux, std::size_t size);

  std::size_t size() const { return size_; }
  // The bytes between aux_tail and aux_head (acquire-load of aux_head).
  SplitBytes pending();
  // Release-store of aux_tail.
  void consume(std::uint64_t bytes);
  // The data of a PERF_RECORD_AUX: `size` bytes at `offset` (a position that
  // grows without wrapping; taken modulo the area).
  SplitBytes range(std::uint64_t offset, std::uint64_t size) const;
  // A backward buffer, its output paused: the records written since the
  // head `since` (0 at first), newest first, at most a buffer's worth of
  // whole records, as perf's overwrite reading takes them. `since` becomes
  // the head.
  SplitBytes backward(std::uint64_t& since) const;

  std::uint64_t head() const;
  std::uint64_t tail() const;

 private:
  std::uint8_t* user_page_ = nullptr;
  std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0;
  std::uint64_t tail_ = 0;
  bool owns_ = false;
};

// The bytes [from, to) of a ring of `size` bytes (a power of two) at `base`,
// positions taken modulo size: one slice, or two when it wraps.
SplitBytes ring_view(const std::uint8_t* base, std::size_t size, std::uint64_t from,
                     std::uint64_t to);

}  // namespace perfkit::capture
