#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "bulkgnn/core/parallel.hpp"
#include "test_support.hpp"
#include "train_steps.hpp"

namespace bulkgnn::trainer {
namespace {

using testing::expect_same_steps;
using testing::train_two_steps;

const executor reference_exec{backend::reference};

// Under the sanitizers (memory, not bits, several times slower) two counts.
#ifdef BULKGNN_SANITIZED_BUILD
constexpr int step_thread_counts[] = {1, 3};
#else
constexpr int step_thread_counts[] = {1, 2, 3, 5};
#endif

TEST(TrainStep, ReferenceExecutorEqualsCpuBitForBit) {
  for (const auto kind : {layer_kind::sage, layer_kind::gcn})
    for (const int threads : step_thread_counts) {
      const thread_limit limit(threads);
      const auto reference = train_two_steps(reference_exec, kind, 11);
      const auto cpu = train_two_steps(testing::cpu_exec, kind, 11);
      const auto what = layer_kind_name(kind) + ", " + std::to_string(threads) + " threads";
      expect_same_steps(reference, cpu, what);
    }
}

}  // namespace
}  // namespace bulkgnn::trainer
