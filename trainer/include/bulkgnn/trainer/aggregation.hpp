#pragma once

#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/trainer/layers.hpp"

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
};

// The whole block is in this process: one sparse product each way.
class local_aggregation final : public aggregation {
 public:
  void forward(const executor& exec, int layer, const aggregation_block& block,
               dense_view<const float> x, dense_view<float> out) override;
  void backward(const executor& exec, int layer, const aggregation_block& block,
                dense_view<const float> grad_out, dense_view<float> grad_x) override;
};

}  // namespace bulkgnn::trainer
