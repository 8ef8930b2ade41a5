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

std::size_t allowed_threads() {
  return tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
}

TEST(ThreadLimit, OneThreadRunsEveryLoopOnTheCallingThread) {
  const thread_limit limit(1);
  EXPECT_EQ(allowed_threads(), 1u);
  EXPECT_EQ(threads_used_by_a_parallel_loop(), 1u);
}

// Inside a limit of 4 (above the cores of a 1-CPU machine, which TBB allows),
// so that the end of the inner limit shows on any machine.
TEST(ThreadLimit, TheLimitEndsWithItsScope) {
  const thread_limit outer(4);
  ASSERT_EQ(allowed_threads(), 4u);
  {
    const thread_limit inner(1);
    EXPECT_EQ(allowed_threads(), 1u);
  }
  EXPECT_EQ(allowed_threads(), 4u);
}

}  // namespace
}  // namespace bulkgnn
