#pragma once

#include <cmath>

#include "bulkgnn/core/host_device.hpp"
#include "bulkgnn/core/portable_math.hpp"

// Binary cross-entropy of one score (a logit) against a label in [0, 1],
// written so that large scores neither overflow nor lose the small term.
namespace bulkgnn::kernels::rules {

// max(s, 0) − s·y + log(1 + e^−|s|) in double (torch's
// binary_cross_entropy_with_logits); when grad is not null it receives
// (σ(s) − y)·scale. exp and log are the portable ones, so every back end
// gives the same bits.
BULKGNN_HOST_DEVICE inline double logistic_loss(float score, float label, float scale,
                                                float* grad) {
  const double s = score;
  const double y = label;
  const double e = portable_exp(-std::fabs(s));  // in (0, 1]
  if (grad != nullptr) {
    const double sigmoid = s >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    *grad = static_cast<float>(sigmoid - y) * scale;
  }
  return (s > 0 ? s : 0.0) - s * y + portable_log(1.0 + e);
}

}  // namespace bulkgnn::kernels::rules
