#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/trainer/adam.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

const executor reference_exec{backend::reference};

// Everything one train step produces.
struct step_outcome {
  std::vector<float> logits;
  std::uint64_t loss_bits = 0;
  std::int64_t correct = 0;
  std::vector<float> gradients;
  std::vector<float> input_gradient;
  std::vector<float> parameters;
  std::vector<float> first_moment;
  std::vector<float> second_moment;
};

// Two steps (so that Adam's moments are used, not only set) of forward with
// dropout, softmax cross-entropy, backward with the input gradient and an
// Adam update, every piece of arithmetic on `exec`.
step_outcome train_two_steps(const executor& exec, layer_kind kind,
                             std::mt19937_64::result_type seed) {
  std::mt19937_64 gen(seed);
  const std::vector<std::int64_t> sizes{900, 300, 100};
  std::vector<aggregation_block> blocks;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l)
    blocks.push_back(make_aggregation_block(
        exec, testing::random_block(gen, sizes[l + 1], sizes[l], 6, kind == layer_kind::gcn), kind,
        true));
  const matrix features = testing::random_matrix(gen, sizes.front(), 40);
  std::vector<std::int32_t> labels(static_cast<std::size_t>(sizes.back()));
  for (auto& l : labels) l = static_cast<std::int32_t>(gen() % 7);
  std::vector<vertex_t> vertex_ids(static_cast<std::size_t>(sizes.front()));
  for (std::size_t v = 0; v < vertex_ids.size(); ++v) vertex_ids[v] = static_cast<vertex_t>(5 * v);

  gnn_model model(
      {.kind = kind, .in_features = 40, .hidden = 48, .num_classes = 7, .dropout = 0.4f}, 3, exec);
  adam optimiser(model.parameters().size(), {.lr = 0.01f, .weight_decay = 1e-4f}, exec);
  step_outcome out;
  for (std::uint32_t step = 0; step < 2; ++step) {
    const auto logits =
        model.forward(blocks, features.view(), kernels::dropout_key{7, 1, step, vertex_ids});
    matrix grad(logits.rows, logits.cols);
    const auto loss = kernels::softmax_cross_entropy(exec, logits, labels, grad.view());
    model.backward(grad.view(), true);
    optimiser.step(model.parameters(), model.gradients());
    out.logits.assign(logits.data.begin(), logits.data.end());
    out.loss_bits = std::bit_cast<std::uint64_t>(loss.loss);
    out.correct = loss.correct;
  }
  out.gradients.assign(model.gradients().begin(), model.gradients().end());
  const auto input_gradient = model.input_gradient().data;
  out.input_gradient.assign(input_gradient.begin(), input_gradient.end());
  out.parameters.assign(model.parameters().begin(), model.parameters().end());
  out.first_moment.assign(optimiser.first_moment().begin(), optimiser.first_moment().end());
  out.second_moment.assign(optimiser.second_moment().begin(), optimiser.second_moment().end());
  return out;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](float u, float v) {
    return std::bit_cast<std::uint32_t>(u) == std::bit_cast<std::uint32_t>(v);
  });
}

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
