#include "bulkgnn/core/avx512.hpp"
#include "bulkgnn/kernels/rules/dropout.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <array>

#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {
namespace {

rng_key row_stream(rng_key step, std::span<const vertex_t> row_ids, std::int64_t r) {
  return rules::dropout_row_stream(
      step, static_cast<std::uint32_t>(row_ids.empty() ? r : row_ids[static_cast<std::size_t>(r)]));
}

// Masks are built branch-free in a small buffer, since keep-or-drop is a coin
// flip no branch predictor can follow; drawing the words is most of the
// cost, which 16 bits per entry halves.
void relu_and_drop_rows(dense_view<float> x, rules::dropout_threshold threshold, rng_key step,
                        std::span<const vertex_t> row_ids, std::int64_t begin, std::int64_t end) {
  constexpr std::int64_t chunk = 256;  // entries per mask buffer; even
  std::array<std::uint32_t, chunk / 2> words;
  std::array<bool, chunk> keep;
  for (std::int64_t r = begin; r < end; ++r) {
    philox_stream stream(row_stream(step, row_ids, r));
    float* row = x.row(r).data();
    for (std::int64_t first = 0; first < x.cols; first += chunk) {
      const std::int64_t n = std::min(chunk, x.cols - first);
      stream.next_u32s(words.data(), static_cast<std::size_t>((n + 1) / 2));
      for (std::int64_t j = 0; j < n; ++j)
        keep[j] = rules::dropout_keeps(words[j / 2], j, threshold.bits);
      for (std::int64_t j = 0; j < n; ++j)
        row[first + j] = rules::relu_dropout(row[first + j], keep[j], threshold.scale);
    }
  }
}

#if defined(__x86_64__)
// The same masks, 16 Philox4x32-10 blocks at a time (philox_16_blocks, with
// AVX-512) and applied 16 entries at a time: the scalar stream above spends
// most of the dropout time in Philox's dependent multiply chains, one block
// (8 entries) at a time. Entry j of a row uses word j/2 of the row's stream,
// exactly as philox_stream hands them out, so the masks are bit-identical.

BULKGNN_AVX512_BEGIN

// Applies one group's mask to up to 16 entries at a time. Entry j's 16 bits
// are half j % 2 of word j / 2, i.e. the j-th uint16 of the words in memory
// (x86 is little-endian). The arithmetic is rules::relu_dropout's, lane by
// lane: (x < 0 ? 0 : x), which keeps NaN and −0 as they are, unlike MAXPS,
// times a mask of exactly scale or +0.
__attribute__((target("avx512f"))) void drop_group(float* values, std::int64_t n,
                                                   const std::uint32_t (&words)[64],
                                                   rules::dropout_threshold threshold) {
  const auto* bits = reinterpret_cast<const std::uint16_t*>(words);
  const __m512 zero = _mm512_setzero_ps();
  const __m512 scale = _mm512_set1_ps(threshold.scale);
  const __m512 dropped = _mm512_set1_ps(threshold.scale * 0.0f);
  const __m512i keep_from = _mm512_set1_epi32(static_cast<int>(threshold.bits));
  for (std::int64_t j = 0; j < n; j += 16) {
    const auto lanes = static_cast<__mmask16>(n - j >= 16 ? 0xFFFF : (1u << (n - j)) - 1);
    const __m512i draw =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits + j)));
    const __mmask16 keep = _mm512_cmpge_epu32_mask(draw, keep_from);
    const __m512 mask = _mm512_mask_blend_ps(keep, dropped, scale);
    const __m512 x = _mm512_maskz_loadu_ps(lanes, values + j);
    const __m512 relu = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, zero);
    _mm512_mask_storeu_ps(values + j, lanes, _mm512_mul_ps(relu, mask));
  }
}

BULKGNN_AVX512_END

void relu_and_drop_rows_avx512(dense_view<float> x, rules::dropout_threshold threshold,
                               rng_key step, std::span<const vertex_t> row_ids, std::int64_t begin,
                               std::int64_t end) {
  constexpr std::int64_t group = 128;  // entries per 16 blocks (8 per block)
  alignas(64) std::uint32_t words[64];
  for (std::int64_t r = begin; r < end; ++r) {
    const rng_key stream = row_stream(step, row_ids, r);
    float* row = x.row(r).data();
    for (std::int64_t first = 0; first < x.cols; first += group) {
      philox_16_blocks(stream, static_cast<std::uint32_t>(first / 8), words);
      drop_group(row + first, std::min(group, x.cols - first), words, threshold);
    }
  }
}

const bool use_avx512_dropout = cpu_runs_avx512();
#endif

}  // namespace

void relu(dense_view<float> x) {
  for_pieces(static_cast<std::int64_t>(x.data.size()), 1,
             [&](std::int64_t begin, std::int64_t end) {
               float* v = x.data.data();
               for (std::int64_t i = begin; i < end; ++i) v[i] = rules::relu(v[i]);
             });
}

void relu_dropout(dense_view<float> x, rules::dropout_threshold threshold, rng_key step,
                  std::span<const vertex_t> row_ids) {
  for_pieces(x.rows, x.cols, [&](std::int64_t begin, std::int64_t end) {
#if defined(__x86_64__)
    if (use_avx512_dropout) {
      relu_and_drop_rows_avx512(x, threshold, step, row_ids, begin, end);
      return;
    }
#endif
    relu_and_drop_rows(x, threshold, step, row_ids, begin, end);
  });
}

void relu_dropout_backward(dense_view<const float> y, float scale, dense_view<float> grad) {
  for_pieces(static_cast<std::int64_t>(y.data.size()), 1,
             [&](std::int64_t begin, std::int64_t end) {
               const float* out = y.data.data();
               float* g = grad.data.data();
               for (std::int64_t i = begin; i < end; ++i)
                 g[i] = rules::relu_dropout_backward(out[i], g[i], scale);
             });
}

}  // namespace bulkgnn::kernels::cpu
