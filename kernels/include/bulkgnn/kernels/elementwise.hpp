#pragma once

#include "bulkgnn/core/executor.hpp"

#include <span>

namespace bulkgnn::kernels {

// x[i] = value for every i: zeroing gradients and moments wherever they live.
void fill(const executor& exec, std::span<float> x, float value);

// x[i] = x[i] · factor, one rounding per element, so every back end gives the
// same bits (a data-parallel slice's gradient weighted by its share).
void scale(const executor& exec, std::span<float> x, float factor);

}  // namespace bulkgnn::kernels
