#pragma once

#include <cmath>
#include <cstdint>

#include "bulkgnn/core/host_device.hpp"
#include "bulkgnn/core/portable_math.hpp"

// Softmax cross-entropy of one row of logits, by log-sum-exp so that large
// logits do not overflow, and its argmax.
namespace bulkgnn::kernels::rules {

// The first largest entry (ties → lowest column), as std::max_element finds it.
BULKGNN_HOST_DEVICE inline std::int64_t argmax(const float* row, std::int64_t cols) {
  std::int64_t best = 0;
  for (std::int64_t j = 1; j < cols; ++j)
    if (row[best] < row[j]) best = j;
  return best;
}

// −log softmax(row)[label], summed in double; when grad is not null it
// receives (softmax − onehot(label))·scale. exp and log are the portable
// ones, so every back end, the GPU's included, gives the same bits.
BULKGNN_HOST_DEVICE inline double softmax_cross_entropy_row(const float* row, std::int64_t cols,
                                                            std::int32_t label, float scale,
                                                            float* grad) {
  const float max = row[argmax(row, cols)];
  double sum = 0.0;
  for (std::int64_t j = 0; j < cols; ++j) sum += portable_exp(static_cast<double>(row[j] - max));
  const double log_sum = portable_log(sum);
  if (grad != nullptr) {
    for (std::int64_t j = 0; j < cols; ++j)
      grad[j] =
          static_cast<float>(portable_exp(static_cast<double>(row[j] - max) - log_sum)) * scale;
    grad[label] -= scale;
  }
  return log_sum - static_cast<double>(row[label] - max);
}

}  // namespace bulkgnn::kernels::rules
