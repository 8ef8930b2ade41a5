#include "bulkgnn/trainer/layers.hpp"

#include "bulkgnn/core/avx512.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/kernels/spmm.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <array>
#include <cmath>

#include "elementwise.hpp"

namespace bulkgnn::trainer {

namespace {

void check_block(csr_view block, std::string_view function) {
  const auto problem = find_csr_problem(block);
  BULKGNN_EXPECTS(problem.empty(), "{}: block: {}", function, problem);
  BULKGNN_EXPECTS(block.rows <= block.cols,
                  "{}: block has {} destinations but only {} sources; destinations must be "
                  "the first sources",
                  function, block.rows, block.cols);
}

csr_matrix pattern_copy(csr_view m) {
  csr_matrix copy;
  copy.rows = m.rows;
  copy.cols = m.cols;
  copy.indptr.resize(m.indptr.size());
  for (std::size_t r = 0; r < m.indptr.size(); ++r) copy.indptr[r] = m.indptr[r] - m.indptr[0];
  copy.indices.assign(m.indices.begin(), m.indices.end());
  return copy;
}

csr_matrix row_means(const executor& exec, csr_view m) {
  csr_matrix mean = pattern_copy(m);
  mean.values.assign(mean.indices.size(), 1.0f);
  kernels::normalize_rows(exec, mean);
  return mean;
}

csr_matrix identity(std::int64_t n) {
  csr_matrix id;
  id.rows = n;
  id.cols = n;
  id.indptr.resize(static_cast<std::size_t>(n + 1));
  id.indices.resize(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v <= n; ++v) id.indptr[v] = v;
  for (std::int64_t v = 0; v < n; ++v) id.indices[v] = static_cast<vertex_t>(v);
  return id;
}

aggregation_block with_transpose(const executor& exec, csr_matrix forward,
                                 bool with_backward) {
  aggregation_block block{.forward = std::move(forward), .backward = {}};
  if (with_backward) block.backward = kernels::transpose(exec, block.forward.view());
  return block;
}

void relu(dense_view<float> x) {
  detail::for_pieces(static_cast<std::int64_t>(x.data.size()), 1,
                     [&](std::int64_t begin, std::int64_t end) {
                       float* v = x.data.data();
                       for (std::int64_t i = begin; i < end; ++i) v[i] = std::max(v[i], 0.0f);
                     });
}

// Dropout keeps an entry when its 16 random bits are at least p·2^16, so one
// 32-bit word decides two entries (low half first). p is thus resolved to
// 1/65536 and the kept entries are scaled by 1/(1 − that p), which keeps the
// layer unbiased. Masks are built branch-free in a small buffer, since
// keep-or-drop is a coin flip no branch predictor can follow; drawing the
// words is most of the cost, which 16 bits per entry halves.
struct dropout_threshold {
  std::uint32_t bits;  // p·2^16, rounded
  float scale;         // 1 / (1 − bits/2^16)
};

dropout_threshold threshold_for(float p) {
  const auto bits = static_cast<std::uint32_t>(std::lround(std::ldexp(static_cast<double>(p), 16)));
  return {bits, static_cast<float>(1.0 / (1.0 - std::ldexp(static_cast<double>(bits), -16)))};
}

// Row r's stream is keyed by its vertex id when the caller gives them, so a
// vertex draws the same mask in a rank's slice as in the whole minibatch.
rng_key row_stream_key(const dropout_key& key, std::uint32_t layer, std::int64_t r) {
  const auto row = static_cast<std::uint32_t>(
      key.row_ids.empty() ? r : key.row_ids[static_cast<std::size_t>(r)]);
  return {key.seed, key.epoch, key.minibatch, layer, row};
}

void relu_and_drop_rows(dense_view<float> x, float p, dropout_key key, std::uint32_t layer,
                        std::int64_t begin, std::int64_t end) {
  constexpr std::int64_t chunk = 256;  // entries per mask buffer; even
  const auto threshold = threshold_for(p);
  std::array<std::uint32_t, chunk / 2> words;
  std::array<float, chunk> mask;
  for (std::int64_t r = begin; r < end; ++r) {
    philox_stream stream(row_stream_key(key, layer, r));
    float* row = x.row(r).data();
    for (std::int64_t first = 0; first < x.cols; first += chunk) {
      const std::int64_t n = std::min(chunk, x.cols - first);
      stream.next_u32s(words.data(), static_cast<std::size_t>((n + 1) / 2));
      for (std::int64_t j = 0; j < n; ++j) {
        const std::uint32_t bits = (words[j / 2] >> (16 * (j % 2))) & 0xFFFFu;
        mask[j] = threshold.scale * static_cast<float>(bits >= threshold.bits);
      }
      for (std::int64_t j = 0; j < n; ++j)
        row[first + j] = std::max(row[first + j], 0.0f) * mask[j];
    }
  }
}

#if defined(__x86_64__)
// The same masks, 16 Philox4x32-10 blocks at a time (philox_16_blocks, with
// AVX-512) and applied 16 entries at a time: the scalar stream above spends
// most of the dropout time in Philox's dependent multiply chains, one block
// (8 entries) at a time. Entry j of a row uses word j/2 of the row's stream,
// exactly as philox_stream hands them out, so the masks (and the trained
// weights) are bit-identical.

BULKGNN_AVX512_BEGIN

// Applies one group's mask to up to 16 entries at a time. Entry j's 16 bits
// are half j % 2 of word j / 2, i.e. the j-th uint16 of the words in memory
// (x86 is little-endian). The arithmetic is the scalar path's, lane by lane:
// (x < 0 ? 0 : x) — std::max's rule, which keeps NaN and −0 as they are, unlike
// MAXPS — times a mask of exactly scale or +0.
__attribute__((target("avx512f"))) void drop_group(float* values, std::int64_t n,
                                                   const std::uint32_t (&words)[64],
                                                   dropout_threshold threshold) {
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

void relu_and_drop_rows_avx512(dense_view<float> x, float p, dropout_key key, std::uint32_t layer,
                               std::int64_t begin, std::int64_t end) {
  constexpr std::int64_t group = 128;  // entries per 16 blocks (8 per block)
  const auto threshold = threshold_for(p);
  alignas(64) std::uint32_t words[64];
  for (std::int64_t r = begin; r < end; ++r) {
    const rng_key stream = row_stream_key(key, layer, r);
    float* row = x.row(r).data();
    for (std::int64_t first = 0; first < x.cols; first += group) {
      philox_16_blocks(stream, static_cast<std::uint32_t>(first / 8), words);
      drop_group(row + first, std::min(group, x.cols - first), words, threshold);
    }
  }
}

const bool use_avx512_dropout = cpu_runs_avx512();
#endif

void relu_and_drop_rows_fastest(dense_view<float> x, float p, dropout_key key, std::uint32_t layer,
                                std::int64_t begin, std::int64_t end) {
#if defined(__x86_64__)
  if (use_avx512_dropout) {
    relu_and_drop_rows_avx512(x, p, key, layer, begin, end);
    return;
  }
#endif
  relu_and_drop_rows(x, p, key, layer, begin, end);
}

}  // namespace

layer_kind parse_layer_kind(const std::string& name) {
  if (name == "sage") return layer_kind::sage;
  if (name == "gcn") return layer_kind::gcn;
  throw option_error(fmt::format("--model: unknown layer kind '{}' (expected sage or gcn)", name));
}

std::string layer_kind_name(layer_kind kind) { return kind == layer_kind::sage ? "sage" : "gcn"; }

aggregation_block make_aggregation_block(const executor& exec, const csr_matrix& block,
                                         layer_kind kind, bool with_backward) {
  check_block(block.view(), "make_aggregation_block");
  if (kind == layer_kind::sage)
    return with_transpose(exec, row_means(exec, block.view()), with_backward);
  BULKGNN_EXPECTS(block.view().weighted(),
                  "make_aggregation_block: a gcn layer needs a weighted block (LADIES or FastGCN "
                  "sampling), got a pattern");
  return with_transpose(exec, block, with_backward);
}

aggregation_block full_graph_block(const executor& exec, csr_view graph, layer_kind kind,
                                   bool with_backward) {
  BULKGNN_EXPECTS(graph.rows == graph.cols, "full_graph_block: graph is {}x{}, not square",
                  graph.rows, graph.cols);
  const auto problem = find_csr_problem(graph);
  BULKGNN_EXPECTS(problem.empty(), "full_graph_block: graph: {}", problem);
  graph.values = {};
  if (kind == layer_kind::sage) return with_transpose(exec, row_means(exec, graph), with_backward);
  csr_matrix normalised = kernels::add(exec, graph, identity(graph.rows).view());
  kernels::normalize_rows(exec, normalised);
  return with_transpose(exec, std::move(normalised), with_backward);
}

void relu_dropout(dense_view<float> x, float p, std::optional<dropout_key> key, int layer) {
  BULKGNN_EXPECTS(p >= 0.0f && p < 1.0f, "relu_dropout: p = {} is outside [0, 1)", p);
  if (!key || p == 0.0f) {
    relu(x);
    return;
  }
  BULKGNN_EXPECTS(key->row_ids.empty() || static_cast<std::int64_t>(key->row_ids.size()) >= x.rows,
                  "relu_dropout: {} row ids for {} rows", key->row_ids.size(), x.rows);
  const auto stream_layer = dropout_stream_base + static_cast<std::uint32_t>(layer);
  detail::for_pieces(x.rows, x.cols, [&](std::int64_t begin, std::int64_t end) {
    relu_and_drop_rows_fastest(x, p, *key, stream_layer, begin, end);
  });
}

void relu_dropout_backward(dense_view<const float> y, float p, bool dropout,
                           dense_view<float> grad) {
  BULKGNN_EXPECTS(y.rows == grad.rows && y.cols == grad.cols,
                  "relu_dropout_backward: output is {}x{} but its gradient is {}x{}", y.rows,
                  y.cols, grad.rows, grad.cols);
  const float scale = dropout && p > 0.0f ? threshold_for(p).scale : 1.0f;
  detail::for_pieces(static_cast<std::int64_t>(y.data.size()), 1,
                     [&](std::int64_t begin, std::int64_t end) {
                       const float* out = y.data.data();
                       float* g = grad.data.data();
                       for (std::int64_t i = begin; i < end; ++i)
                         g[i] = out[i] > 0.0f ? g[i] * scale : 0.0f;
                     });
}

}  // namespace bulkgnn::trainer
