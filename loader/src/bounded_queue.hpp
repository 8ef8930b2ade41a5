#pragma once

#include "bulkgnn/core/timer.hpp"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace bulkgnn::loader::detail {

// The hand-off between two pipeline stages: a FIFO of at most `capacity`
// items. Unlike tbb::concurrent_bounded_queue, whose abort() only wakes the
// calls already waiting, cancel() here also fails every later call, so a
// stage that fails can stop the others without a race; and every blocking
// call reports how long it waited, which is how the pipeline measures its
// stalls.
template <class T>
class bounded_queue {
 public:
  explicit bounded_queue(std::size_t capacity) : capacity_(capacity) {}

  // Blocks while the queue is full; false (item dropped) once cancelled.
  bool push(T item, double& wait_seconds) {
    std::unique_lock lock(mutex_);
    if (items_.size() >= capacity_ && !cancelled_) {
      const stopwatch waited;
      not_full_.wait(lock, [&] { return items_.size() < capacity_ || cancelled_; });
      wait_seconds += waited.seconds();
    }
    if (cancelled_) return false;
    items_.push_back(std::move(item));
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
    std::optional<T> item(std::move(items_.front()));
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

  void cancel() {
    const std::lock_guard lock(mutex_);
    cancelled_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

 private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<T> items_;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace bulkgnn::loader::detail
