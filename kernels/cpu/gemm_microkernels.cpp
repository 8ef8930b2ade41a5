#include "gemm_microkernel.hpp"

#include "bulkgnn/core/avx512.hpp"
#include "bulkgnn/kernels/rules/gemm.hpp"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bulkgnn::kernels::cpu::detail {
namespace {

// Written with std::fma and separate multiplies only: a contracted a·b + c
// would round differently from the vector paths.
template <int MR, int NR>
void portable_kernel(std::int64_t kc, const float* packed_a, const float* packed_b, float* c,
                     std::int64_t ldc, const float* c_old, std::int64_t ld_old,
                     const chain_step& step) {
  float acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) acc[r][j] = step.first ? 0.0f : c[r * ldc + j];
  for (std::int64_t p = 0; p < kc; ++p) {
    const float* a = packed_a + p * MR;
    const float* b = packed_b + p * NR;
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) acc[r][j] = std::fma(a[r], b[j], acc[r][j]);
  }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) {
      c[r * ldc + j] =
          step.last ? rules::gemm_epilogue(acc[r][j], step.alpha, step.beta, c_old[r * ld_old + j])
                    : acc[r][j];
    }
}

#if defined(__x86_64__)
// MR rows × two 8-float vectors: 12 accumulators, two B vectors and one
// broadcast fill AVX2's 16 registers. Every loop over the accumulators is
// unrolled: one left rolled makes GCC keep them in memory, storing each after
// every FMA (measured 2.5x slower).
template <int MR>
__attribute__((target("avx2,fma"))) void avx2_kernel(std::int64_t kc, const float* packed_a,
                                                     const float* packed_b, float* c,
                                                     std::int64_t ldc, const float* c_old,
                                                     std::int64_t ld_old, const chain_step& step) {
  __m256 acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < 2; ++v)
      acc[r][v] = step.first ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc + 8 * v);
#pragma GCC unroll 4
  for (std::int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(packed_b + p * 16);
    const __m256 b1 = _mm256_loadu_ps(packed_b + p * 16 + 8);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m256 a = _mm256_broadcast_ss(packed_a + p * MR + r);
      acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
    }
  }
  if (step.last) {
    const __m256 alpha = _mm256_set1_ps(step.alpha);
    const __m256 beta = _mm256_set1_ps(step.beta);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int v = 0; v < 2; ++v) {
        acc[r][v] = _mm256_mul_ps(alpha, acc[r][v]);
        if (step.beta != 0.0f)
          acc[r][v] = _mm256_fmadd_ps(beta, _mm256_loadu_ps(c_old + r * ld_old + 8 * v), acc[r][v]);
      }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < 2; ++v) _mm256_storeu_ps(c + r * ldc + 8 * v, acc[r][v]);
}

BULKGNN_AVX512_BEGIN

// MR rows × two 16-float vectors: 24 accumulators of AVX-512's 32 registers.
template <int MR>
__attribute__((target("avx512f"))) void avx512_kernel(std::int64_t kc, const float* packed_a,
                                                      const float* packed_b, float* c,
                                                      std::int64_t ldc, const float* c_old,
                                                      std::int64_t ld_old, const chain_step& step) {
  __m512 acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < 2; ++v)
      acc[r][v] = step.first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16 * v);
#pragma GCC unroll 4
  for (std::int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_loadu_ps(packed_b + p * 32);
    const __m512 b1 = _mm512_loadu_ps(packed_b + p * 32 + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(packed_a[p * MR + r]);
      acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
    }
  }
  if (step.last) {
    const __m512 alpha = _mm512_set1_ps(step.alpha);
    const __m512 beta = _mm512_set1_ps(step.beta);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int v = 0; v < 2; ++v) {
        acc[r][v] = _mm512_mul_ps(alpha, acc[r][v]);
        if (step.beta != 0.0f)
          acc[r][v] =
              _mm512_fmadd_ps(beta, _mm512_loadu_ps(c_old + r * ld_old + 16 * v), acc[r][v]);
      }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < 2; ++v) _mm512_storeu_ps(c + r * ldc + 16 * v, acc[r][v]);
}

BULKGNN_AVX512_END
#endif

}  // namespace

microkernel portable_microkernel() { return {"portable", 4, 8, &portable_kernel<4, 8>}; }

#if defined(__x86_64__)
microkernel avx2_microkernel() { return {"avx2", 6, 16, &avx2_kernel<6>}; }
microkernel avx512_microkernel() { return {"avx512", max_mr, max_nr, &avx512_kernel<max_mr>}; }
#endif

}  // namespace bulkgnn::kernels::cpu::detail
