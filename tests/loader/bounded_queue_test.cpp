#include "bounded_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace bulkgnn::loader::detail {
namespace {

// Items are their own size in bytes.
bounded_queue<std::size_t> bytes_queue(std::size_t items, std::size_t bytes) {
  return bounded_queue<std::size_t>(items, bytes, [](const std::size_t& b) { return b; });
}

TEST(BoundedQueue, AByteBoundHoldsBackAPushUntilAPopMakesRoom) {
  auto queue = bytes_queue(10, 100);
  double waited = 0;
  ASSERT_TRUE(queue.push(60, waited));
  std::atomic<bool> pushed = false;
  std::thread producer([&] {
    double producer_waited = 0;
    pushed = queue.push(60, producer_waited);
  });
  // The second item would make 120 bytes: it cannot be in the queue before
  // the first leaves (however long the producer takes to get there).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(pushed);
  EXPECT_EQ(queue.pop(waited), std::optional<std::size_t>(60));
  producer.join();
  EXPECT_TRUE(pushed);
  EXPECT_EQ(queue.pop(waited), std::optional<std::size_t>(60));
  EXPECT_EQ(queue.peak_bytes(), 60u);
}

TEST(BoundedQueue, AnEmptyQueueTakesAnItemLargerThanItsBound) {
  auto queue = bytes_queue(10, 100);
  double waited = 0;
  ASSERT_TRUE(queue.push(500, waited));  // would block forever otherwise
  queue.close();
  EXPECT_EQ(queue.pop(waited), std::optional<std::size_t>(500));
  EXPECT_EQ(queue.pop(waited), std::nullopt);
  EXPECT_EQ(queue.peak_bytes(), 500u);
}

TEST(BoundedQueue, ItemsWithinTheBoundQueueUpToTheCount) {
  auto queue = bytes_queue(3, 100);
  double waited = 0;
  for (const std::size_t b : {10, 20, 30}) ASSERT_TRUE(queue.push(b, waited));
  EXPECT_EQ(queue.peak_bytes(), 60u);
  queue.cancel();  // a full queue's producer is released, its item dropped
  EXPECT_FALSE(queue.push(1, waited));
}

TEST(BoundedQueue, WithoutAByteBoundBytesAreNotCounted) {
  bounded_queue<std::size_t> queue(4);
  double waited = 0;
  ASSERT_TRUE(queue.push(1000, waited));
  EXPECT_EQ(queue.peak_bytes(), 0u);
}

}  // namespace
}  // namespace bulkgnn::loader::detail
