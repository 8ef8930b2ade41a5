#include "gemm_microkernel.hpp"

#include "bulkgnn/core/avx512.hpp"
#include "bulkgnn/kernels/rules/gemm.hpp"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bulkgnn::kernels::cpu::detail {
namespace {

// Offsets of the tile's rows of op(A) from t.a; rows past t.rows repeat the
// last one, so that an unpacked A is never read past its end.
template <int MR>
void row_offsets(const microtile& t, std::int64_t (&offset)[MR]) {
  for (int r = 0; r < MR; ++r) offset[r] = std::min(r, t.rows - 1) * t.a_row_stride;
}

// Written with std::fma and separate multiplies only: a contracted a·b + c
// would round differently from the vector paths.
template <int MR, int NR>
void portable_kernel(const microtile& t, const chain_step& step) {
  std::int64_t a_offset[MR];
  row_offsets(t, a_offset);
  float acc[MR][NR] = {};
  if (!step.first)
    for (int r = 0; r < t.rows; ++r)
      for (int j = 0; j < t.cols; ++j) acc[r][j] = t.c[r * t.ldc + j];
  const float* a = t.a;
  for (std::int64_t p = 0; p < t.kc; ++p, a += t.a_step) {
    const float* b = t.packed_b + p * NR;
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) acc[r][j] = std::fma(a[a_offset[r]], b[j], acc[r][j]);
  }
  for (int r = 0; r < t.rows; ++r)
    for (int j = 0; j < t.cols; ++j) {
      t.c[r * t.ldc + j] = step.last ? rules::gemm_epilogue(acc[r][j], step.alpha, step.beta,
                                                            t.c_old[r * t.ld_old + j])
                                     : acc[r][j];
    }
}

#if defined(__x86_64__)
// Lanes below `count` (of 8) set.
__attribute__((target("avx2"))) inline __m256i avx2_lanes_below(int count) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), lane);
}

__attribute__((target("avx2"))) inline __m256 avx2_load(const float* src, bool full, __m256i mask) {
  return full ? _mm256_loadu_ps(src) : _mm256_maskload_ps(src, mask);
}

// MR rows × two 8-float vectors: 12 accumulators, two B vectors and one
// broadcast fill AVX2's 16 registers. Every loop over the accumulators is
// unrolled: one left rolled makes GCC keep them in memory, storing each after
// every FMA (measured 2.5x slower). A tile cut by C's edge loads and stores
// through lane masks and skips the missing rows; its arithmetic is the same.
template <int MR>
__attribute__((target("avx2,fma"))) void avx2_kernel(const microtile& t, const chain_step& step) {
  std::int64_t a_offset[MR];
  row_offsets(t, a_offset);
  const bool full_cols = t.cols == 16;
  const __m256i mask[2] = {avx2_lanes_below(t.cols), avx2_lanes_below(t.cols - 8)};
  __m256 acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < 2; ++v)
      acc[r][v] = step.first || r >= t.rows
                      ? _mm256_setzero_ps()
                      : avx2_load(t.c + r * t.ldc + 8 * v, full_cols, mask[v]);
  const float* a = t.a;
  const float* b = t.packed_b;
#pragma GCC unroll 4
  for (std::int64_t p = 0; p < t.kc; ++p, a += t.a_step, b += 16) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m256 a_r = _mm256_broadcast_ss(a + a_offset[r]);
      acc[r][0] = _mm256_fmadd_ps(a_r, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a_r, b1, acc[r][1]);
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
        if (step.beta != 0.0f && r < t.rows)
          acc[r][v] = _mm256_fmadd_ps(
              beta, avx2_load(t.c_old + r * t.ld_old + 8 * v, full_cols, mask[v]), acc[r][v]);
      }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (r >= t.rows) break;
#pragma GCC unroll 16
    for (int v = 0; v < 2; ++v) {
      float* dst = t.c + r * t.ldc + 8 * v;
      if (full_cols)
        _mm256_storeu_ps(dst, acc[r][v]);
      else
        _mm256_maskstore_ps(dst, mask[v], acc[r][v]);
    }
  }
}

BULKGNN_AVX512_BEGIN

// Lanes below `count` (of 16) set.
inline __mmask16 avx512_lanes_below(int count) {
  return count >= 16
             ? __mmask16{0xffff}
             : static_cast<__mmask16>((1u << static_cast<unsigned>(std::max(count, 0))) - 1);
}

// MR rows × two 16-float vectors: 24 accumulators of AVX-512's 32 registers.
// Masked loads and stores cost nothing extra here, so every tile uses them.
template <int MR>
__attribute__((target("avx512f"))) void avx512_kernel(const microtile& t, const chain_step& step) {
  std::int64_t a_offset[MR];
  row_offsets(t, a_offset);
  const __mmask16 mask[2] = {avx512_lanes_below(t.cols), avx512_lanes_below(t.cols - 16)};
  __m512 acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < 2; ++v)
      acc[r][v] = step.first || r >= t.rows
                      ? _mm512_setzero_ps()
                      : _mm512_maskz_loadu_ps(mask[v], t.c + r * t.ldc + 16 * v);
  const float* a = t.a;
  const float* b = t.packed_b;
#pragma GCC unroll 4
  for (std::int64_t p = 0; p < t.kc; ++p, a += t.a_step, b += 32) {
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 a_r = _mm512_set1_ps(a[a_offset[r]]);
      acc[r][0] = _mm512_fmadd_ps(a_r, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a_r, b1, acc[r][1]);
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
        if (step.beta != 0.0f && r < t.rows)
          acc[r][v] = _mm512_fmadd_ps(
              beta, _mm512_maskz_loadu_ps(mask[v], t.c_old + r * t.ld_old + 16 * v), acc[r][v]);
      }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (r >= t.rows) break;
#pragma GCC unroll 16
    for (int v = 0; v < 2; ++v) _mm512_mask_storeu_ps(t.c + r * t.ldc + 16 * v, mask[v], acc[r][v]);
  }
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
