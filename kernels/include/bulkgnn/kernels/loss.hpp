#pragma once

#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"

#include <cstdint>
#include <span>

namespace bulkgnn::kernels {

struct loss_result {
  double loss = 0;  // mean over the rows
  std::int64_t correct = 0;
  std::int64_t count = 0;
};

// Mean softmax cross-entropy over the rows (log-sum-exp in double, row losses
// summed in row order, rules/softmax.hpp) and argmax accuracy (ties → lowest
// class). If grad is not empty it must have the logits' shape, must not
// overlap them, and receives dLoss/dlogits = (softmax − onehot)/rows. A label
// outside [0, classes) is a bulkgnn::error naming the row and the label.
loss_result softmax_cross_entropy(const executor& exec, dense_view<const float> logits,
                                  std::span<const std::int32_t> labels, dense_view<float> grad);

// Rows whose argmax (ties → lowest class) equals the label.
[[nodiscard]] std::int64_t count_correct(const executor& exec, dense_view<const float> logits,
                                         std::span<const std::int32_t> labels);

}  // namespace bulkgnn::kernels
