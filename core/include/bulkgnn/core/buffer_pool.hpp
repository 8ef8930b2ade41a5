#pragma once

#include "bulkgnn/core/memory_space.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace bulkgnn {

namespace detail {

// Frees a pool's array through the resource that allocated it.
template <class T>
struct resource_deleter {
  memory_resource* resource = nullptr;
  std::size_t capacity = 0;
  void operator()(T* data) const noexcept { resource->deallocate(data, capacity * sizeof(T)); }
};

template <class T>
using pool_array = std::unique_ptr<T[], resource_deleter<T>>;

// Storage of the buffers that were dropped and wait to be taken again. Shared
// by the pool and every buffer it handed out, so either may go first.
template <class T>
struct free_buffers {
  struct stored {
    pool_array<T> data;
    std::size_t capacity = 0;
  };
  std::mutex mutex;
  std::vector<stored> buffers;
  std::size_t max_kept = 0;
};

}  // namespace detail

// An array of T whose entries start uninitialised (the producer overwrites all
// of them) and whose storage goes back to its pool when the buffer is dropped.
// Move-only, like the std::vector it stands in for.
template <class T>
class pooled_buffer {
 public:
  pooled_buffer() = default;
  pooled_buffer(pooled_buffer&& other) noexcept { *this = std::move(other); }
  pooled_buffer& operator=(pooled_buffer&& other) noexcept {
    if (this != &other) {
      give_back();
      data_ = std::move(other.data_);
      capacity_ = std::exchange(other.capacity_, 0);
      size_ = std::exchange(other.size_, 0);
      home_ = std::move(other.home_);
    }
    return *this;
  }
  pooled_buffer(const pooled_buffer&) = delete;
  pooled_buffer& operator=(const pooled_buffer&) = delete;
  ~pooled_buffer() { give_back(); }

  [[nodiscard]] T* data() { return data_.get(); }
  [[nodiscard]] const T* data() const { return data_.get(); }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] T& operator[](std::size_t i) { return data_[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const { return data_[i]; }
  [[nodiscard]] std::span<T> span() { return {data_.get(), size_}; }
  [[nodiscard]] std::span<const T> span() const { return {data_.get(), size_}; }

 private:
  template <class>
  friend class buffer_pool;

  void give_back() {
    if (!data_ || !home_) return;
    const std::scoped_lock lock(home_->mutex);
    auto& kept = home_->buffers;
    kept.push_back({std::move(data_), capacity_});
    if (kept.size() > home_->max_kept) {
      // The smallest is the least likely to fit the next request.
      kept.erase(std::min_element(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
        return a.capacity < b.capacity;
      }));
    }
  }

  detail::pool_array<T> data_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
  std::shared_ptr<detail::free_buffers<T>> home_;
};

// Hands out buffers for a stream of similar-sized, short-lived arrays (one
// minibatch's features, tens of MiB each) and takes them back when they are
// dropped, so their pages are faulted in and cleared once, not once per
// minibatch: glibc serves a fresh buffer above its mmap threshold (32 MiB once
// keep_freed_buffers_for_reuse() has run) from a new mapping, and filling it
// costs a page fault per 4 KiB in the producing thread, which on a 2-core
// machine cost the loader more than the gather itself. A buffer is never
// zero-filled either, since the producer writes every entry. Thread-safe:
// buffers may be taken on one thread and dropped on another.
template <class T>
class buffer_pool {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                "buffer_pool: entries are left uninitialised");

 public:
  // At most `max_kept` dropped buffers are kept for reuse; more are freed.
  // Buffers come from `resource` (pinned host memory, say, for arrays a GPU
  // copies in), which must outlive every buffer; host memory is the host's.
  explicit buffer_pool(std::size_t max_kept, memory_resource& resource = host_memory())
      : free_(std::make_shared<detail::free_buffers<T>>()), resource_(&resource) {
    // The producer writes the entries from host code.
    if (!host_accessible(resource.space()))
      throw_host_access_error("buffer_pool", "buffer_pool", resource.space());
    free_->max_kept = max_kept;
    // give_back() runs in destructors and must not need to allocate.
    free_->buffers.reserve(max_kept + 1);
  }

  // A buffer of `size` uninitialised entries: the smallest kept one that is
  // large enough, or a new one with 1/8 headroom so that the next, slightly
  // larger request still fits it.
  [[nodiscard]] pooled_buffer<T> take(std::size_t size) {
    pooled_buffer<T> buffer;
    buffer.home_ = free_;
    buffer.size_ = size;
    {
      const std::scoped_lock lock(free_->mutex);
      auto& kept = free_->buffers;
      auto best = kept.end();
      for (auto it = kept.begin(); it != kept.end(); ++it)
        if (it->capacity >= size && (best == kept.end() || it->capacity < best->capacity))
          best = it;
      if (best != kept.end()) {
        buffer.data_ = std::move(best->data);
        buffer.capacity_ = best->capacity;
        kept.erase(best);
        return buffer;
      }
    }
    buffer.capacity_ = std::max<std::size_t>(size + size / 8, 1);
    buffer.data_ =
        detail::pool_array<T>(static_cast<T*>(resource_->allocate(buffer.capacity_ * sizeof(T))),
                              {resource_, buffer.capacity_});
    return buffer;
  }

  // Buffers waiting to be taken again.
  [[nodiscard]] std::size_t kept() const {
    const std::scoped_lock lock(free_->mutex);
    return free_->buffers.size();
  }

 private:
  std::shared_ptr<detail::free_buffers<T>> free_;
  memory_resource* resource_;
};

}  // namespace bulkgnn
