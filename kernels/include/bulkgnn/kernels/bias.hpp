#pragma once

#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/kernels/gemm.hpp"

#include <span>

namespace bulkgnn::kernels {

// Every row of `out` = bias (bias.size() == out.cols): a layer's output
// starts from its bias, and its GEMMs then add to it with beta = 1.
void fill_rows_with_bias(const executor& exec, std::span<const float> bias, dense_view<float> out);

// sums[j] = Σ_r m[r][j], added in float in row order on every back end (the
// bias gradient). sums.size() == m.cols and must not overlap m. With
// gemm_mode::fast the cuda back end asks cuBLAS (mᵀ times a vector of ones),
// which sums in an order of its own: within 2·γ_rows·Σ_r |m[r][j]| of the
// exact sum (gemm.hpp).
void column_sums(const executor& exec, dense_view<const float> m, std::span<float> sums,
                 gemm_mode mode = gemm_mode::exact);

}  // namespace bulkgnn::kernels
