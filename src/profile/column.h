// Column<T>: a growable array of a trivially copyable T, the storage of the
// profile's per-sample columns. Small ones live on the heap; past kMapBytes a
// column is a mapping of its own that grows by mremap, so a column that grows
// to hundreds of thousands of samples is neither copied at each doubling nor
// faulted in twice, as std::vector's allocate-copy-free growth makes it (and
// realloc's too, once malloc's dynamic mmap threshold has risen past the
// block). Each growth populates the new pages in one call rather than a page
// fault per page. Out of memory ends the process, as std::bad_alloc from
// std::vector would.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "base/populate.h"

namespace perfkit::profile {

template <class T>
class Column {
  static_assert(std::is_trivially_copyable_v<T>, "a Column's values are moved as bytes");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  Column() = default;
  Column(std::initializer_list<T> values) { insert(end(), values.begin(), values.end()); }
  Column(const Column& o) { insert(end(), o.begin(), o.end()); }
  Column(Column&& o) noexcept { swap(o); }
  Column& operator=(const Column& o) {
    if (this != &o) {
      clear();
      insert(end(), o.begin(), o.end());
    }
    return *this;
  }
  Column& operator=(Column&& o) noexcept {
    Column(std::move(o)).swap(*this);
    return *this;
  }
  ~Column() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void push_back(const T& v) {
    if (size_ == capacity_) grow(size_ + 1);
    data_[size_++] = v;
  }
  // Appends [first, last) at the end (the only position it takes).
  void insert(const T* /*end*/, const T* first, const T* last) {
    const auto n = static_cast<std::size_t>(last - first);
    if (n == 0) return;
    if (size_ + n > capacity_) grow(size_ + n);
    std::memcpy(data_ + size_, first, n * sizeof(T));
    size_ += n;
  }
  void reserve(std::size_t n) {
    if (n > capacity_) grow_to(n);
  }
  void resize(std::size_t n, const T& v = T()) {
    reserve(n);
    std::fill(data_ + std::min(n, size_), data_ + n, v);
    size_ = n;
  }
  void clear() { size_ = 0; }
  void swap(Column& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }

  friend bool operator==(const Column& a, const Column& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void grow(std::size_t need) { grow_to(std::max({need, 2 * capacity_, std::size_t{16}})); }
  static constexpr std::size_t kMapBytes = std::size_t{1} << 20;
  static constexpr std::size_t kPage = 4096;

  bool mapped() const { return capacity_ * sizeof(T) >= kMapBytes; }
  void release() {
    if (mapped())
      ::munmap(data_, capacity_ * sizeof(T));
    else
      std::free(data_);
  }
  void grow_to(std::size_t n) {
    std::size_t bytes = n * sizeof(T);
    if (bytes < kMapBytes) {
      void* p = std::realloc(data_, bytes);
      if (!p) std::abort();
      data_ = static_cast<T*>(p);
      capacity_ = n;
      return;
    }
    bytes = (bytes + kPage - 1) / kPage * kPage;
    const std::size_t old = capacity_ * sizeof(T);
    void* p;
    if (mapped()) {
      p = ::mremap(data_, old, bytes, MREMAP_MAYMOVE);
      if (p == MAP_FAILED) std::abort();
      base::populate_for_write(static_cast<char*>(p) + old, bytes - old);
    } else {
      p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) std::abort();
      base::populate_for_write(p, bytes);
      if (size_) std::memcpy(p, data_, size_ * sizeof(T));
      std::free(data_);
    }
    data_ = static_cast<T*>(p);
    capacity_ = bytes / sizeof(T);
  }

  T* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

}  // namespace perfkit::profile
