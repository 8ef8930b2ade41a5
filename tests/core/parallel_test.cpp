#include "bulkgnn/core/parallel.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <mutex>
#include <set>
#include <thread>

namespace bulkgnn {
namespace {

std::size_t threads_used_by_a_parallel_loop() {
  std::mutex mutex;
  std::set<std::thread::id> ids;
  tbb::parallel_for(0, 2000, [&](int) {
    volatile double sink = 0;
    for (int k = 0; k < 20000; ++k) sink = sink + k;
    const std::lock_guard lock(mutex);
    ids.insert(std::this_thread::get_id());
  });
  return ids.size();
}

TEST(ThreadLimit, OneThreadRunsEveryLoopOnTheCallingThread) {
  const thread_limit limit(1);
  EXPECT_EQ(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism), 1u);
  EXPECT_EQ(threads_used_by_a_parallel_loop(), 1u);
}

TEST(ThreadLimit, TheLimitEndsWithItsScope) {
  { const thread_limit limit(1); }
  EXPECT_GT(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism), 1u);
}

}  // namespace
}  // namespace bulkgnn
