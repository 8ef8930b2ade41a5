#pragma once

#include "bulkgnn/core/memory_space.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace bulkgnn {

// An owning contiguous array of trivially copyable elements in one memory
// space, allocated by a memory_resource (host memory unless one is given).
// On the host it is a drop-in std::vector (the same members, new elements
// zero-initialised), so CSR matrices and vertex lists keep their code while
// saying where they live. A buffer in device memory can be created, moved,
// copied (through its resource) and viewed, but not read or written element
// by element: those calls throw, naming the operation, instead of touching
// memory the host cannot reach. A copy keeps the source's resource.
template <class T>
class buffer {
  static_assert(std::is_trivially_copyable_v<T>, "buffer holds trivially copyable elements");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  buffer() = default;
  explicit buffer(memory_resource& resource) : resource_(&resource) {}
  // `count` elements: zero in host-accessible memory, uninitialised in
  // device memory (a device backend fills them on its stream if it must).
  explicit buffer(size_type count, memory_resource& resource = host_memory())
      : resource_(&resource) {
    reserve(count);
    if (host_accessible(resource.space())) std::fill(data_, data_ + count, T{});
    size_ = count;
  }
  buffer(size_type count, const T& value, memory_resource& resource = host_memory())
      : resource_(&resource) {
    assign(count, value);
  }
  buffer(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  template <std::input_iterator It>
  buffer(It first, It last) {
    assign(first, last);
  }
  // A host copy of a vector (callers that build their arrays in one).
  buffer(const std::vector<T>& values)  // NOLINT(google-explicit-constructor)
      : buffer(values.begin(), values.end()) {}

  buffer(const buffer& other) : resource_(other.resource_) { copy_from(other); }
  buffer(buffer&& other) noexcept
      : resource_(other.resource_),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  buffer& operator=(const buffer& other) {
    if (this != &other) {
      if (resource_ != other.resource_) {
        release();
        resource_ = other.resource_;
      }
      copy_from(other);
    }
    return *this;
  }
  buffer& operator=(buffer&& other) noexcept {
    if (this != &other) {
      release();
      resource_ = other.resource_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }
  buffer& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~buffer() { release(); }

  [[nodiscard]] memory_space space() const noexcept { return resource_->space(); }
  [[nodiscard]] memory_resource& resource() const noexcept { return *resource_; }

  [[nodiscard]] size_type size() const noexcept { return size_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] size_type capacity() const noexcept { return capacity_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] iterator begin() noexcept { return data_; }
  [[nodiscard]] iterator end() noexcept { return data_ + size_; }
  [[nodiscard]] const_iterator begin() const noexcept { return data_; }
  [[nodiscard]] const_iterator end() const noexcept { return data_ + size_; }
  [[nodiscard]] const_iterator cbegin() const noexcept { return data_; }
  [[nodiscard]] const_iterator cend() const noexcept { return data_ + size_; }

  // Element access assumes host-accessible memory (unchecked, as in a vector).
  [[nodiscard]] T& operator[](size_type i) noexcept { return data_[i]; }
  [[nodiscard]] const T& operator[](size_type i) const noexcept { return data_[i]; }
  [[nodiscard]] T& front() noexcept { return data_[0]; }
  [[nodiscard]] const T& front() const noexcept { return data_[0]; }
  [[nodiscard]] T& back() noexcept { return data_[size_ - 1]; }
  [[nodiscard]] const T& back() const noexcept { return data_[size_ - 1]; }

  void reserve(size_type count) {
    if (count > capacity_) reallocate(count);
  }
  void shrink_to_fit() {
    if (capacity_ > size_) reallocate(size_);
  }
  void clear() noexcept { size_ = 0; }

  // New elements are zero (value-initialised), as std::vector makes them.
  void resize(size_type count) { resize(count, T{}); }
  void resize(size_type count, const T& value) {
    if (count > size_) {
      require_host("resize");
      grow_to(count);
      std::fill(data_ + size_, data_ + count, value);
    }
    size_ = count;
  }
  void assign(size_type count, const T& value) {
    clear();
    resize(count, value);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    insert(end(), first, last);
  }
  void assign(std::initializer_list<T> values) { assign(values.begin(), values.end()); }

  void push_back(const T& value) {
    require_host("push_back");
    if (size_ == capacity_) {
      const T copy = value;  // `value` may live in this buffer
      grow_to(size_ + 1);
      data_[size_++] = copy;
      return;
    }
    data_[size_++] = value;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() noexcept { --size_; }

  iterator insert(const_iterator position, const T& value) {
    return insert(position, &value, &value + 1);
  }
  // Inserts [first, last) before `position`; the range may not come from
  // this buffer.
  template <std::input_iterator It>
  iterator insert(const_iterator position, It first, It last) {
    require_host("insert");
    const auto at = static_cast<size_type>(position - data_);
    if constexpr (std::forward_iterator<It>) {
      const auto count = static_cast<size_type>(std::distance(first, last));
      // An empty buffer's data() is null, which memmove may not be given.
      if (count == 0) return data_ + at;
      grow_to(size_ + count);
      std::memmove(data_ + at + count, data_ + at, (size_ - at) * sizeof(T));
      std::copy(first, last, data_ + at);
      size_ += count;
    } else {
      buffer staged;
      for (; first != last; ++first) staged.push_back(*first);
      return insert(position, staged.begin(), staged.end());
    }
    return data_ + at;
  }
  iterator erase(const_iterator first, const_iterator last) {
    require_host("erase");
    const auto from = static_cast<size_type>(first - data_);
    const auto to = static_cast<size_type>(last - data_);
    if (from == to) return data_ + from;
    std::memmove(data_ + from, data_ + to, (size_ - to) * sizeof(T));
    size_ -= to - from;
    return data_ + from;
  }
  iterator erase(const_iterator position) { return erase(position, position + 1); }

  void swap(buffer& other) noexcept {
    std::swap(resource_, other.resource_);
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

  // Element-wise equality of host-accessible buffers (and with vectors, for
  // tests and callers that still hold one).
  friend bool operator==(const buffer& a, const buffer& b) { return equal(a, b); }
  friend bool operator==(const buffer& a, const std::vector<T>& b) { return equal(a, b); }

  // The contents as a std::vector (host-accessible buffers only).
  [[nodiscard]] std::vector<T> to_vector() const {
    require_host("to_vector");
    return std::vector<T>(begin(), end());
  }

 private:
  template <class Range>
  static bool equal(const buffer& a, const Range& b) {
    a.require_host("operator==");
    return std::equal(a.begin(), a.end(), std::begin(b), std::end(b));
  }

  void require_host(const char* operation) const {
    if (!host_accessible(space())) throw_host_access_error("buffer", operation, space());
  }

  void copy_from(const buffer& other) {
    if (other.size_ > capacity_) {
      release();
      reallocate(other.size_);
    }
    resource_->copy(data_, other.data_, other.size_ * sizeof(T));
    size_ = other.size_;
  }

  void grow_to(size_type count) {
    if (count > capacity_) reallocate(std::max(count, 2 * capacity_));
  }

  void reallocate(size_type count) {
    T* fresh = count == 0 ? nullptr : static_cast<T*>(resource_->allocate(count * sizeof(T)));
    if (data_ != nullptr) {
      resource_->copy(fresh, data_, size_ * sizeof(T));
      resource_->deallocate(data_, capacity_ * sizeof(T));
    }
    data_ = fresh;
    capacity_ = count;
  }

  void release() noexcept {
    if (data_ != nullptr) resource_->deallocate(data_, capacity_ * sizeof(T));
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

  memory_resource* resource_ = &host_memory();
  T* data_ = nullptr;
  size_type size_ = 0;
  size_type capacity_ = 0;
};

// Copies between memory spaces. The resource that reaches both ends copies:
// the target's when the source is host memory, the source's when the target
// is (a device resource copies to and from the host).

// A copy of host-readable `values` in `target`'s memory.
template <class T>
[[nodiscard]] buffer<T> copy_to(std::span<const T> values, memory_resource& target) {
  buffer<T> out(values.size(), target);
  target.copy(out.data(), values.data(), values.size_bytes());
  return out;
}

// A host copy of `values`, from any memory space.
template <class T>
[[nodiscard]] buffer<T> copy_to_host(const buffer<T>& values) {
  buffer<T> out(values.size());
  values.resource().copy(out.data(), values.data(), values.size() * sizeof(T));
  return out;
}

}  // namespace bulkgnn
