#pragma once

#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"

#include <string_view>

namespace bulkgnn::kernels {

// How a GEMM operand is read: as stored, or transposed.
enum class gemm_op { plain, transposed };

// How C is computed. exact: the definition below, the same bits on every back
// end. fast: cuBLAS's SGEMM on the cuda back end (float32 throughout, TF32
// off), which sums in an order of its own, so each element lies within
// 2·γ_K·(|alpha|·Σ_p |op(A)[i][p]·op(B)[p][j]| + |beta·C[i][j]|) of the exact
// result, γ_K = K·u / (1 − K·u), u = 2^-24 (both are within γ_K of the real
// product). The cpu back end has one GEMM, the exact one, for both modes.
enum class gemm_mode { exact, fast };

[[nodiscard]] std::string_view gemm_mode_name(gemm_mode mode);
// A back end's GEMM when none is asked for: fast on cuda, where cuBLAS is
// several times the exact kernel; exact on the host back ends, which have
// only that one.
[[nodiscard]] gemm_mode default_gemm_mode(const executor& exec);
// "exact" or "fast"; anything else is refused, naming `option`.
[[nodiscard]] gemm_mode parse_gemm_mode(std::string_view name, std::string_view option);

// C = alpha·op(A)·op(B) + beta·C in single precision, op(X) being X or its
// transpose. The result is defined exactly, so that it depends on neither the
// back end, the thread count, the blocking nor the instruction set: every
// element is
//   acc = 0; for p = 0, 1, ..., K-1: acc = fma(op(A)[i][p], op(B)[p][j], acc)
//   C[i][j] = beta == 0 ? alpha·acc : fma(beta, C[i][j], alpha·acc)
// (rules/gemm.hpp); with beta == 0, C's old contents are ignored, NaN
// included. Every view must hold exactly rows × cols elements, the shapes
// must agree, and C must not overlap A or B.
void gemm(const executor& exec, gemm_op op_a, gemm_op op_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c,
          gemm_mode mode = gemm_mode::exact);

// Which microkernel the cpu back end's gemm() runs on this machine: "avx512"
// (with cpu_runs_avx512()), else "avx2" (x86-64 with AVX2 and FMA), else
// "portable" (std::fma). BULKGNN_PORTABLE_GEMM=1 forces "portable",
// BULKGNN_NO_AVX512=1 rules out "avx512", so that the tests check every path
// on any machine. All of them give the same bits.
[[nodiscard]] std::string_view cpu_gemm_kernel_name();

}  // namespace bulkgnn::kernels
