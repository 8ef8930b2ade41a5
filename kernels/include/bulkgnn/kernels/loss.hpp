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

// Σ_r row_weights[r]·(softmax cross-entropy of row r), the terms summed in
// row order (GraphSAINT's normalised loss: loss_result::loss is this sum,
// not a mean), with argmax accuracy as above; grad, if not empty, receives
// row_weights[r]·(softmax − onehot) in row r. Weights must be finite and
// non-negative. Host back ends only so far.
loss_result weighted_softmax_cross_entropy(const executor& exec, dense_view<const float> logits,
                                           std::span<const std::int32_t> labels,
                                           std::span<const float> row_weights,
                                           dense_view<float> grad);

// Rows whose argmax (ties → lowest class) equals the label.
[[nodiscard]] std::int64_t count_correct(const executor& exec, dense_view<const float> logits,
                                         std::span<const std::int32_t> labels);

// Mean binary cross-entropy of scores (logits) against labels in [0, 1], as
// torch's binary_cross_entropy_with_logits (rules/logistic.hpp; the terms
// summed in double in order), and how many scores lie on their label's side
// of 0 (correct: s > 0 for a label above 1/2, s <= 0 otherwise). If grad is
// not empty it has the scores' size, does not overlap them, and receives
// dLoss/ds = (σ(s) − y)/n. A label outside [0, 1] is a bulkgnn::error naming
// its index.
loss_result binary_cross_entropy(const executor& exec, std::span<const float> scores,
                                 std::span<const float> labels, std::span<float> grad);

}  // namespace bulkgnn::kernels
