#pragma once

#include "bulkgnn/core/dense.hpp"

#include <cstdint>
#include <span>

namespace bulkgnn::trainer {

struct loss_result {
  double loss = 0;  // mean over the rows
  std::int64_t correct = 0;
  std::int64_t count = 0;
};

// Mean softmax cross-entropy over the rows (log-sum-exp, so large logits do
// not overflow) and argmax accuracy (ties → lowest class). If grad is not
// empty it must have the logits' shape and receives dLoss/dlogits =
// (softmax − onehot)/rows. A label outside [0, classes) is a bulkgnn::error
// naming the row and the label.
loss_result softmax_cross_entropy(dense_view<const float> logits,
                                  std::span<const std::int32_t> labels, dense_view<float> grad);

// Rows whose argmax (ties → lowest class) equals the label.
[[nodiscard]] std::int64_t count_correct(dense_view<const float> logits,
                                         std::span<const std::int32_t> labels);

}  // namespace bulkgnn::trainer
