#pragma once

#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"

#include <span>

namespace bulkgnn::kernels {

// x[i] = value for every i: zeroing gradients and moments wherever they live.
void fill(const executor& exec, std::span<float> x, float value);

// x[i] = x[i] · factor, one rounding per element, so every back end gives the
// same bits (a data-parallel slice's gradient weighted by its share).
void scale(const executor& exec, std::span<float> x, float factor);

// out = a ⊙ b, the entrywise (Hadamard) product, one rounding per element:
// the same bits on every back end. The three have one shape; out overlaps
// neither input.
void multiply(const executor& exec, dense_view<const float> a, dense_view<const float> b,
              dense_view<float> out);

}  // namespace bulkgnn::kernels
