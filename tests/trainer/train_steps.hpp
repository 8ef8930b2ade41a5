#pragma once

// Two full train steps on any executor, for the tests that compare back
// ends bit for bit (train_step_test: reference against cpu; the gpu tests:
// cuda against cpu). Inputs are made on the host and placed where the
// executor reads them, as the training run does.
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/trainer/adam.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "bulkgnn/trainer/placement.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace bulkgnn::trainer::testing {

// Everything one train step produces, copied to the host.
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
inline step_outcome train_two_steps(const executor& exec, layer_kind kind,
                                    std::mt19937_64::result_type seed) {
  std::mt19937_64 gen(seed);
  const std::vector<std::int64_t> sizes{900, 300, 100};
  std::vector<aggregation_block> blocks;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l)
    blocks.push_back(make_aggregation_block(
        exec, random_block(gen, sizes[l + 1], sizes[l], 6, kind == layer_kind::gcn), kind, true));
  const matrix host_features = random_matrix(gen, sizes.front(), 40);
  std::vector<std::int32_t> host_labels(static_cast<std::size_t>(sizes.back()));
  for (auto& l : host_labels) l = static_cast<std::int32_t>(gen() % 7);
  std::vector<vertex_t> host_ids(static_cast<std::size_t>(sizes.front()));
  for (std::size_t v = 0; v < host_ids.size(); ++v) host_ids[v] = static_cast<vertex_t>(5 * v);
  const placed_matrix features(exec, host_features.view());
  const placed<std::int32_t> labels(exec, host_labels, memory_space::host);
  const placed<vertex_t> vertex_ids(exec, host_ids, memory_space::host);

  gnn_model model({.kind = kind,
                   .in_features = 40,
                   .hidden = 48,
                   .num_classes = 7,
                   .dropout = 0.4f,
                   .gemm = kernels::gemm_mode::exact},
                  3, exec);
  adam optimiser(model.parameters().size(), {.lr = 0.01f, .weight_decay = 1e-4f}, exec);
  step_outcome out;
  for (std::uint32_t step = 0; step < 2; ++step) {
    const auto logits =
        model.forward(blocks, features.view(), kernels::dropout_key{7, 1, step, vertex_ids.span()});
    matrix grad(logits.rows, logits.cols, exec.memory());
    const auto loss = kernels::softmax_cross_entropy(exec, logits, labels.span(), grad.view());
    model.backward(grad.view(), true);
    optimiser.step(model.parameters(), model.gradients());
    out.logits.resize(logits.data.size());
    exec.memory().copy(out.logits.data(), logits.data.data(), logits.data.size_bytes());
    out.loss_bits = std::bit_cast<std::uint64_t>(loss.loss);
    out.correct = loss.correct;
  }
  out.gradients = model.gradients_on_host();
  const auto input_gradient = model.input_gradient().data;
  out.input_gradient.resize(input_gradient.size());
  exec.memory().copy(out.input_gradient.data(), input_gradient.data(), input_gradient.size_bytes());
  out.parameters = model.parameters_on_host();
  out.first_moment = optimiser.first_moment_on_host();
  out.second_moment = optimiser.second_moment_on_host();
  return out;
}

inline bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](float u, float v) {
    return std::bit_cast<std::uint32_t>(u) == std::bit_cast<std::uint32_t>(v);
  });
}

// Every output of two train_two_steps runs, bit for bit.
inline void expect_same_steps(const step_outcome& expected, const step_outcome& got,
                              const std::string& what) {
  EXPECT_FALSE(expected.logits.empty()) << what;
  EXPECT_TRUE(same_bits(expected.logits, got.logits)) << what;
  EXPECT_EQ(expected.loss_bits, got.loss_bits) << what;
  EXPECT_EQ(expected.correct, got.correct) << what;
  EXPECT_TRUE(same_bits(expected.gradients, got.gradients)) << what;
  EXPECT_TRUE(same_bits(expected.input_gradient, got.input_gradient)) << what;
  EXPECT_TRUE(same_bits(expected.parameters, got.parameters)) << what;
  EXPECT_TRUE(same_bits(expected.first_moment, got.first_moment)) << what;
  EXPECT_TRUE(same_bits(expected.second_moment, got.second_moment)) << what;
}

}  // namespace bulkgnn::trainer::testing
