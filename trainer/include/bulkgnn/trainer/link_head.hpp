#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/types.hpp"
#include "bulkgnn/kernels/gemm.hpp"
#include "bulkgnn/trainer/matrix.hpp"
#include "bulkgnn/trainer/model.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bulkgnn::trainer {

// How a link's score (a logit) is read from its endpoints' embeddings z_s,
// z_t, the rows the encoder's last layer gives them.
enum class link_head_kind {
  dot,  // ⟨z_s, z_t⟩, as PyG's link_pred example decodes
  mlp,  // OGB's LinkPredictor: Linear(h, h) → ReLU → Linear(h, 1) over z_s ⊙ z_t
};

// "dot" or "mlp"; anything else is an option_error naming `option`.
[[nodiscard]] link_head_kind parse_link_head(std::string_view name, std::string_view option);
[[nodiscard]] std::string_view link_head_name(link_head_kind kind);

// Pairs of rows of an embedding matrix: pair i is (source[i], target[i]),
// ids in host memory (the head copies them for a device executor).
struct node_pairs {
  std::span<const vertex_t> source;
  std::span<const vertex_t> target;

  [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(source.size()); }
};

// Scores node pairs from their embeddings, and differentiates the scores.
// Written with the dense kernels: the endpoints' rows gathered, multiplied
// entrywise, then summed (dot) or passed through the MLP; the backward
// scatters each pair's gradient to its two rows with one sparse product
// (rows × 2·pairs incidence pattern), which sums in pair order, so the
// gradient has the same bits for any thread count. Parameters (mlp only)
// live in one flat vector as gnn_model's, weights stored in × out.
class link_head {
 public:
  // Weights and biases U(−1/√fan_in, 1/√fan_in) as gnn_model draws them,
  // tensor i from the Philox stream keyed {seed, 0xFFFFFFFE, no_minibatch, i, 0}.
  link_head(link_head_kind kind, std::int64_t width, std::uint32_t seed, executor exec = {},
            kernels::gemm_mode gemm = kernels::gemm_mode::exact);

  // One score per pair of rows of `z` (width columns, in memory the executor
  // reaches), in the executor's memory, valid until the next forward; `z` and
  // `pairs` must stay alive until backward() has run.
  [[nodiscard]] std::span<const float> forward(dense_view<const float> z, node_pairs pairs);

  // dLoss/dz (z's shape) from dLoss/dscores of the last forward (in the
  // executor's memory); overwrites gradients().
  [[nodiscard]] dense_view<const float> backward(std::span<const float> grad_scores);

  [[nodiscard]] link_head_kind kind() const { return kind_; }
  [[nodiscard]] const executor& exec() const { return exec_; }
  [[nodiscard]] std::int64_t width() const { return width_; }
  [[nodiscard]] std::span<float> parameters() { return {parameters_.data(), parameters_.size()}; }
  [[nodiscard]] std::span<const float> parameters() const {
    return {parameters_.data(), parameters_.size()};
  }
  [[nodiscard]] std::span<const float> gradients() const {
    return {gradients_.data(), gradients_.size()};
  }
  // For data-parallel ranks, which sum gradients before the optimiser step.
  [[nodiscard]] std::span<float> mutable_gradients() {
    return {gradients_.data(), gradients_.size()};
  }
  [[nodiscard]] std::span<const parameter_tensor> tensors() const { return tensors_; }
  [[nodiscard]] std::vector<float> parameters_on_host() const;
  void set_parameters(std::span<const float> values);

 private:
  [[nodiscard]] dense_view<const float> tensor(std::size_t i) const;
  [[nodiscard]] dense_view<float> tensor_gradient(std::size_t i);
  void gemm(kernels::gemm_op op_a, kernels::gemm_op op_b, dense_view<const float> a,
            dense_view<const float> b, float beta, dense_view<float> c) const;
  // dLoss/d(z_s ⊙ z_t) from dLoss/dscores.
  void product_gradient(dense_view<const float> grad_scores);

  link_head_kind kind_;
  std::int64_t width_;
  executor exec_;
  kernels::gemm_mode gemm_mode_;
  std::vector<parameter_tensor> tensors_;
  buffer<float> parameters_;
  buffer<float> gradients_;
  matrix ones_;  // width × 1: a row sum as a product

  // The last forward's inputs and intermediates, for backward.
  dense_view<const float> z_;
  node_pairs pairs_;
  matrix source_rows_;  // z_s, pairs × width
  matrix target_rows_;  // z_t
  matrix product_;      // z_s ⊙ z_t
  matrix hidden_;       // mlp: ReLU(product·W1 + b1)
  matrix scores_;       // pairs × 1
  // Backward's buffers.
  matrix grad_product_;
  matrix grad_hidden_;
  matrix grad_rows_;  // [dLoss/dz_s; dLoss/dz_t], 2·pairs × width
  matrix grad_z_;
};

}  // namespace bulkgnn::trainer
