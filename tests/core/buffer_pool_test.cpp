#include "bulkgnn/core/buffer_pool.hpp"

#include "bulkgnn/core/error.hpp"
#include "fake_device_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace bulkgnn {
namespace {

TEST(BufferPool, ADroppedBufferIsTakenAgainForARequestWithinItsCapacity) {
  buffer_pool<float> pool(4);
  const float* first = nullptr;
  {
    auto buffer = pool.take(1000);
    ASSERT_EQ(buffer.size(), 1000u);
    ASSERT_GE(buffer.capacity(), 1000u);
    first = buffer.data();
    EXPECT_EQ(pool.kept(), 0u);
  }
  EXPECT_EQ(pool.kept(), 1u);
  auto again = pool.take(1050);  // within the 1/8 headroom of the first
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(again.size(), 1050u);
  EXPECT_EQ(pool.kept(), 0u);
}

TEST(BufferPool, TakesTheSmallestKeptBufferThatFits) {
  buffer_pool<std::int32_t> pool(4);
  auto small = pool.take(100);
  auto large = pool.take(10000);
  const auto* small_data = small.data();
  const auto* large_data = large.data();
  small = {};
  large = {};
  EXPECT_EQ(pool.kept(), 2u);
  EXPECT_EQ(pool.take(50).data(), small_data);
  EXPECT_EQ(pool.take(5000).data(), large_data);
}

TEST(BufferPool, KeepsAtMostItsLimitDroppingTheSmallest) {
  buffer_pool<float> pool(2);
  std::vector<pooled_buffer<float>> buffers;
  for (const std::size_t size : {10u, 2000u, 300u}) buffers.push_back(pool.take(size));
  const auto* largest = buffers[1].data();
  buffers.clear();
  EXPECT_EQ(pool.kept(), 2u);
  auto big = pool.take(1500);
  EXPECT_EQ(big.data(), largest);
  const auto medium = pool.take(200);
  EXPECT_GE(medium.capacity(), 300u);  // the 300-entry buffer was kept, the 10-entry one freed
  EXPECT_EQ(pool.kept(), 0u);
}

TEST(BufferPool, ContentsSurviveMovesAndBuffersMayOutliveThePool) {
  pooled_buffer<float> kept;
  {
    buffer_pool<float> pool(1);
    auto buffer = pool.take(3);
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i) + 0.5f;
    kept = std::move(buffer);
    EXPECT_TRUE(buffer.empty());
  }
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept.span()[2], 2.5f);
}

TEST(BufferPool, BuffersTakenOnOneThreadMayBeDroppedOnAnotherConcurrently) {
  buffer_pool<std::int64_t> pool(3);
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<pooled_buffer<std::int64_t>> queue;
  bool done = false;
  std::int64_t checked = 0;
  bool all_intact = true;
  std::thread consumer([&] {
    while (true) {
      std::unique_lock lock(mutex);
      ready.wait(lock, [&] { return !queue.empty() || done; });
      if (queue.empty()) break;
      auto buffer = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      // Each buffer holds its own index in every entry, written by the producer.
      for (std::size_t i = 0; i < buffer.size(); ++i) all_intact &= buffer[i] == checked;
      ++checked;
    }  // each buffer is dropped here, while the producer takes more
  });
  for (std::int64_t k = 0; k < 2000; ++k) {
    auto buffer = pool.take(static_cast<std::size_t>(500 + k % 13));
    std::fill(buffer.data(), buffer.data() + buffer.size(), k);
    {
      const std::scoped_lock lock(mutex);
      queue.push_back(std::move(buffer));
    }
    ready.notify_one();
  }
  {
    const std::scoped_lock lock(mutex);
    done = true;
  }
  ready.notify_one();
  consumer.join();
  EXPECT_EQ(checked, 2000);
  EXPECT_TRUE(all_intact) << "a buffer was handed out again while still in use";
  EXPECT_LE(pool.kept(), 3u);
}

TEST(BufferPool, BuffersComeFromAndGoBackToTheGivenResource) {
  testing::fake_pinned_memory pinned;
  {
    buffer_pool<float> pool(1, pinned);
    {
      auto a = pool.take(100);
      auto b = pool.take(100);
      a[99] = 1.0f;
      EXPECT_EQ(pinned.allocations, 2);
    }
    // One kept for reuse, the other freed through the resource.
    EXPECT_EQ(pinned.deallocations, 1);
    auto again = pool.take(100);
    EXPECT_EQ(pinned.allocations, 2);
  }
  EXPECT_EQ(pinned.deallocations, 2);
}

TEST(BufferPool, RefusesMemoryTheHostCannotWrite) {
  testing::fake_device_memory device;
  EXPECT_THROW(buffer_pool<float>(1, device), error);
}

}  // namespace
}  // namespace bulkgnn
