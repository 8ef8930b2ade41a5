#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "bulkgnn/core/parallel.hpp"
#include "test_support.hpp"
#include "train_steps.hpp"

namespace bulkgnn::trainer {
namespace {

using testing::same_bits;
using testing::train_two_steps;

const executor reference_exec{backend::reference};

TEST(TrainStep, ReferenceExecutorEqualsCpuBitForBit) {
  for (const auto kind : {layer_kind::sage, layer_kind::gcn})
    for (const int threads : {1, 2}) {
      const thread_limit limit(threads);
      const auto reference = train_two_steps(reference_exec, kind, 11);
      const auto cpu = train_two_steps(testing::cpu_exec, kind, 11);
      const auto what = layer_kind_name(kind) + ", " + std::to_string(threads) + " threads";
      EXPECT_FALSE(reference.logits.empty()) << what;
      EXPECT_TRUE(same_bits(reference.logits, cpu.logits)) << what;
      EXPECT_EQ(reference.loss_bits, cpu.loss_bits) << what;
      EXPECT_EQ(reference.correct, cpu.correct) << what;
      EXPECT_TRUE(same_bits(reference.gradients, cpu.gradients)) << what;
      EXPECT_TRUE(same_bits(reference.input_gradient, cpu.input_gradient)) << what;
      EXPECT_TRUE(same_bits(reference.parameters, cpu.parameters)) << what;
      EXPECT_TRUE(same_bits(reference.first_moment, cpu.first_moment)) << what;
      EXPECT_TRUE(same_bits(reference.second_moment, cpu.second_moment)) << what;
    }
}

}  // namespace
}  // namespace bulkgnn::trainer
