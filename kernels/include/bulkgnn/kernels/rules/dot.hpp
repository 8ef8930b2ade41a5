#pragma once

#include <cstdint>

#include "bulkgnn/core/host_device.hpp"

// One entry of sddmm, for every back end.
namespace bulkgnn::kernels::rules {

// Σ_k x[k]·y[k] summed from k = 0 in float, each product rounded before it
// is added (the CUDA target compiles with --fmad=false, the host targets
// without FMA contraction), so every back end gets the same bits.
BULKGNN_HOST_DEVICE inline float dot_in_order(const float* x, const float* y, std::int64_t n) {
  float sum = 0.0f;
  for (std::int64_t k = 0; k < n; ++k) sum += x[k] * y[k];
  return sum;
}

}  // namespace bulkgnn::kernels::rules
