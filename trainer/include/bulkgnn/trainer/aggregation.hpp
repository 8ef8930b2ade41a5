#pragma once

#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/trainer/layers.hpp"

#include <span>

namespace bulkgnn::trainer {

// How a layer combines its sources' rows into its destinations' rows. The
// model calls this and nothing else for the sparse step, so a distributed
// full-batch scheme (CAGNET's 1D/1.5D/2D SpMM, SAR's sequential aggregation)
// replaces the local product here without touching the model.
class aggregation {
 public:
  virtual ~aggregation() = default;
  // out = B·x with layer l's block B (out is B.rows × x.cols).
  virtual void forward(const executor& exec, int layer, const aggregation_block& block,
                       dense_view<const float> x, dense_view<float> out) = 0;
  // grad_x = Bᵀ·grad_out (grad_x is B.cols × grad_out.cols); the block was
  // built with_backward.
  virtual void backward(const executor& exec, int layer, const aggregation_block& block,
                        dense_view<const float> grad_out, dense_view<float> grad_x) = 0;

  // Per-edge values that a layer computes (an attention layer's
  // coefficients), given for the forward block's stored entries in its
  // order, in place of the block's own values.
  //
  // out = B_v·x, where B_v is layer l's forward block holding edge_values.
  virtual void forward_with_edge_values(const executor& exec, int layer,
                                        const aggregation_block& block,
                                        std::span<const float> edge_values,
                                        dense_view<const float> x, dense_view<float> out);
  // The backward of forward_with_edge_values: grad_x = B_vᵀ·grad_out, and
  // grad_edge_values[e] = grad_out[r]·x[c] for each entry e = (r, c) of the
  // forward block, so that the layer carries the gradient on to what made
  // the values. The block need not be built with_backward. These two
  // refuse by default (option_error): the distributed full-batch schemes do
  // not move per-edge values between ranks yet.
  virtual void backward_with_edge_values(const executor& exec, int layer,
                                         const aggregation_block& block,
                                         std::span<const float> edge_values,
                                         dense_view<const float> x,
                                         dense_view<const float> grad_out, dense_view<float> grad_x,
                                         std::span<float> grad_edge_values);
};

// The whole block is in this process: one sparse product each way.
class local_aggregation final : public aggregation {
 public:
  void forward(const executor& exec, int layer, const aggregation_block& block,
               dense_view<const float> x, dense_view<float> out) override;
  void backward(const executor& exec, int layer, const aggregation_block& block,
                dense_view<const float> grad_out, dense_view<float> grad_x) override;
  void forward_with_edge_values(const executor& exec, int layer, const aggregation_block& block,
                                std::span<const float> edge_values, dense_view<const float> x,
                                dense_view<float> out) override;
  // B_vᵀ is transposed afresh on each call, as the values change with
  // every step.
  void backward_with_edge_values(const executor& exec, int layer, const aggregation_block& block,
                                 std::span<const float> edge_values, dense_view<const float> x,
                                 dense_view<const float> grad_out, dense_view<float> grad_x,
                                 std::span<float> grad_edge_values) override;
};

}  // namespace bulkgnn::trainer
