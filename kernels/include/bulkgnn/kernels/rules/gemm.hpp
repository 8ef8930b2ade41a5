#pragma once

#include <cmath>
#include <cstdint>

#include "bulkgnn/core/host_device.hpp"

// The arithmetic of one element of C = alpha·op(A)·op(B) + beta·C, which
// every back end's GEMM computes exactly: one fma chain over p = 0, 1, ...,
// K-1 in increasing order from 0, then the alpha/beta epilogue. A back end
// may stop a chain after any p, store the float partial sum and continue from
// it later (blocking K): the result is the same, bit for bit.
namespace bulkgnn::kernels::rules {

// acc = fma(a[p·a_stride], b[p·b_stride], acc) for p = 0 .. k-1, from `acc`.
BULKGNN_HOST_DEVICE inline float gemm_chain(const float* a, std::int64_t a_stride, const float* b,
                                            std::int64_t b_stride, std::int64_t k,
                                            float acc = 0.0f) {
  for (std::int64_t p = 0; p < k; ++p) acc = fmaf(a[p * a_stride], b[p * b_stride], acc);
  return acc;
}

// With beta == 0 the old C is ignored, NaN included.
BULKGNN_HOST_DEVICE inline float gemm_epilogue(float acc, float alpha, float beta, float c_old) {
  const float scaled = alpha * acc;
  return beta == 0.0f ? scaled : fmaf(beta, c_old, scaled);
}

}  // namespace bulkgnn::kernels::rules
