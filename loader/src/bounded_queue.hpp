#pragma once

#include "bulkgnn/core/timer.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

namespace bulkgnn::loader::detail {

// The hand-off between two pipeline stages: a FIFO of at most `capacity`
// items and, where `byte_capacity` is not 0, of at most that many bytes by
// `bytes_of` (an empty queue takes any one item, so one larger than the bound
// still passes and no stage waits forever). Unlike tbb::concurrent_bounded_queue, whose abort()
// only wakes the calls already waiting, cancel() here also fails every later call, so a stage that
// fails can stop the others without a race; and every blocking call reports how long it waited,
// which is how the pipeline measures its stalls.
template <class T>
class bounded_queue {
 public:
  explicit bounded_queue(std::size_t capacity, std::size_t byte_capacity = 0,
                         std::function<std::size_t(const T&)> bytes_of = {})
      : capacity_(capacity), byte_capacity_(byte_capacity), bytes_of_(std::move(bytes_of)) {}

  // Blocks while the queue has no room for the item; false (item dropped)
  // once cancelled.
  bool push(T item, double& wait_seconds) {
    const std::size_t bytes = byte_capacity_ > 0 ? bytes_of_(item) : 0;
    std::unique_lock lock(mutex_);
    const auto room = [&] {
      return items_.size() < capacity_ &&
             (byte_capacity_ == 0 || items_.empty() || bytes_ + bytes <= byte_capacity_);
    };
    if (!room() && !cancelled_) {
      const stopwatch waited;
      not_full_.wait(lock, [&] { return room() || cancelled_; });
      wait_seconds += waited.seconds();
    }
    if (cancelled_) return false;
    items_.emplace_back(std::move(item), bytes);
    bytes_ += bytes;
    peak_bytes_ = std::max(peak_bytes_, bytes_);
    not_empty_.notify_one();
    return true;
  }

  // Blocks while the queue is empty and open; nullopt once it is closed and
  // drained, or cancelled.
  std::optional<T> pop(double& wait_seconds) {
    std::unique_lock lock(mutex_);
    if (items_.empty() && !closed_ && !cancelled_) {
      const stopwatch waited;
      not_empty_.wait(lock, [&] { return !items_.empty() || closed_ || cancelled_; });
      wait_seconds += waited.seconds();
    }
    if (cancelled_ || items_.empty()) return std::nullopt;
    std::optional<T> item(std::move(items_.front().first));
    bytes_ -= items_.front().second;
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // The producer is done: pop() drains what is left, then returns nullopt.
  void close() {
    const std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
  }

  // The most bytes it has held at once (0 without a byte bound).
  [[nodiscard]] std::size_t peak_bytes() {
    const std::lock_guard lock(mutex_);
    return peak_bytes_;
  }

  void cancel() {
    const std::lock_guard lock(mutex_);
    cancelled_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

 private:
  std::size_t capacity_;
  std::size_t byte_capacity_;
  std::function<std::size_t(const T&)> bytes_of_;
  std::mutex mutex_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<std::pair<T, std::size_t>> items_;  // with their bytes
  std::size_t bytes_ = 0;
  std::size_t peak_bytes_ = 0;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace bulkgnn::loader::detail
