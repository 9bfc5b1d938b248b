// populate_for_write: maps the anonymous pages of [at, at + bytes) ready for
// writing in one call (MADV_POPULATE_WRITE, Linux 5.14) rather than one page
// fault for each page as they are first written: on a virtual machine a fault
// costs microseconds, and a table of a few megabytes takes thousands of them.
// The contents do not change (pages already there stay; new ones are zero,
// as the first write would have found them). Where the kernel lacks it the
// pages fault in as before. Only for memory this process may write.
//
// populate_for_read: the same for reading the pages of a file mapping that
// are in the page cache (MADV_POPULATE_READ), rather than a fault for every
// few pages as a reader walks them.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace perfkit::base {

#ifdef MADV_POPULATE_READ
inline constexpr int kPopulateRead = MADV_POPULATE_READ, kPopulateWrite = MADV_POPULATE_WRITE;
#else
inline constexpr int kPopulateRead = 22, kPopulateWrite = 23;
#endif

// madvise(advice) over the pages [at, at + bytes) touches; errors ignored.
inline void advise_pages(const void* at, std::size_t bytes, int advice) {
  if (bytes == 0) return;
  constexpr std::uintptr_t kPage = 4096;
  const auto a = reinterpret_cast<std::uintptr_t>(at);
  const std::uintptr_t from = a / kPage * kPage;
  (void)::madvise(reinterpret_cast<void*>(from), a + bytes - from, advice);
}

inline void populate_for_write(const void* at, std::size_t bytes) {
  advise_pages(at, bytes, kPopulateWrite);
}

inline void populate_for_read(const void* at, std::size_t bytes) {
  advise_pages(at, bytes, kPopulateRead);
}

}  // namespace perfkit::base
